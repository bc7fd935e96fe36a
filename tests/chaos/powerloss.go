package main

import (
	"bufio"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The power-loss fault: a SIGKILL followed by cutting every file of the server's directory
// back to what fsync made durable (shim/powerloss.c notes it), so writes the policy had not
// synced yet are gone, as after a machine crash. A process crash alone loses nothing the
// kernel already has, whatever appendfsync says.

//go:embed shim/powerloss.c
var powerlossSource string

// buildShim compiles shim/powerloss.c into dir and returns the library's path.
func buildShim(dir string) (string, error) {
	src := filepath.Join(dir, "powerloss.c")
	lib := filepath.Join(dir, "powerloss.so")
	if err := os.WriteFile(src, []byte(powerlossSource), 0o644); err != nil {
		return "", err
	}
	out, err := exec.Command("gcc", "-shared", "-fPIC", "-O2", "-Wall", "-o", lib, src, "-ldl", "-lpthread").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("compiling the power-loss library: %v: %s", err, out)
	}
	return lib, nil
}

// losePageCache cuts each file under dir to its last synced size (nothing, if never
// synced), then starts the sync log afresh from what is left: all of it is durable now.
func losePageCache(dir, syncLog string) (cutBytes int64, err error) {
	synced := map[uint64]int64{}
	if f, err := os.Open(syncLog); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 2 {
				continue
			}
			ino, _ := strconv.ParseUint(fields[0], 10, 64)
			size, _ := strconv.ParseInt(fields[1], 10, 64)
			synced[ino] = size
		}
		f.Close()
	}
	var baseline strings.Builder
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			return err
		}
		keep := synced[st.Ino]
		if st.Size > keep {
			if err := os.Truncate(path, keep); err != nil {
				return err
			}
			cutBytes += st.Size - keep
			st.Size = keep
		}
		fmt.Fprintf(&baseline, "%d %d\n", st.Ino, st.Size)
		return nil
	})
	if err != nil {
		return cutBytes, err
	}
	return cutBytes, os.WriteFile(syncLog, []byte(baseline.String()), 0o644)
}
