package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// A small filesystem of the harness's own (tmpfs, mounted by the run: root only) holds the
// server's directory, so the nemesis can fill it to the last byte and free it again.
func mountTmpfs(dir string, megabytes int) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dm", megabytes))
}

func unmount(dir string) { syscall.Unmount(dir, syscall.MNT_DETACH) }

// fillDisk takes every free byte of the filesystem holding dir; the returned function gives
// them back.
func fillDisk(dir string) (func(), error) {
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Grow the file by halving steps until not even a page fits: the server keeps writing
	// meanwhile, so "the free space" is a moving target.
	var size int64
	for step := int64(1 << 20); step >= 4096; step /= 2 {
		for syscall.Fallocate(int(f.Fd()), 0, size, step) == nil {
			size += step
		}
	}
	return func() { os.Remove(path) }, nil
}
