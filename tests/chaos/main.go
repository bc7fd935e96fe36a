// Command chaos runs clients against quince-server while a nemesis kills, pauses and restarts
// it, records every operation's history and checks it with Porcupine (linearizability of
// registers and counters, strict serializability of list-append transactions).
//
//	go run . -server ../../target/release/quince-server -fsync always -cycles 200
//
// docs/guarantees.md says what was run and found.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// quietLogger drops go-redis's own log lines (a refused dial per client per restart).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// cleanups undo what a run set up (processes, namespaces, mounts) if the harness is
// interrupted before its own deferred calls run.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

func atInterrupt(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

func init() { redis.SetLogger(quietLogger{}) }

func main() {
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-interrupted
		cleanupMu.Lock()
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
		os.Exit(130)
	}()
	var o options
	flag.StringVar(&o.binary, "server", os.Getenv("QUINCE_SERVER_BIN"), "quince-server binary")
	flag.StringVar(&o.fsync, "fsync", "always", "appendfsync: always, everysec or no")
	flag.BoolVar(&o.noPersistence, "no-persistence", false, "run without AOF or snapshots (the checkers must then find losses)")
	flag.IntVar(&o.cycles, "cycles", 20, "kill/restart cycles")
	flag.IntVar(&o.minOps, "ops", 0, "keep cycling past -cycles until this many operations were checked")
	flag.IntVar(&o.clients, "clients", 16, "concurrent clients")
	flag.IntVar(&o.threads, "threads", 2, "server worker threads")
	flag.Float64Var(&o.pauseShare, "pauses", 0.3, "share of faults that are SIGSTOP/SIGCONT pauses instead of kills")
	flag.IntVar(&o.diskMB, "disk-mb", 0, "put the server's directory on a tmpfs of this many MB (root only)")
	flag.Float64Var(&o.diskShare, "full-disk", 0, "share of faults that fill that disk for a while (needs -disk-mb)")
	flag.BoolVar(&o.powerLoss, "power-loss", false, "each kill also loses what was not fsynced (a machine crash)")
	flag.DurationVar(&o.lossBound, "loss-bound", 2*time.Second, "with -power-loss and a policy other than always: the oldest a lost write may be")
	flag.BoolVar(&o.replicated, "replicated", false, "a master, two replicas and three sentinels in network namespaces, under partitions (root only)")
	flag.IntVar(&o.wait, "wait", 0, "with -replicated: acknowledge writes by WAIT for this many replicas")
	flag.DurationVar(&o.interval, "interval", 700*time.Millisecond, "mean time between faults")
	flag.Int64Var(&o.seed, "seed", time.Now().UnixNano(), "random seed of clients and nemesis")
	flag.BoolVar(&o.brief, "brief", false, "don't explain refused histories (their shortest refused prefixes and visualizations take minutes in replicated runs)")
	flag.StringVar(&o.out, "out", "", "directory for the server's files and, on failure, Porcupine's visualizations (default: a temporary one)")
	flag.Parse()
	if o.binary == "" {
		fmt.Fprintln(os.Stderr, "chaos: -server or QUINCE_SERVER_BIN must name quince-server")
		os.Exit(2)
	}
	if o.out == "" {
		dir, err := os.MkdirTemp("", "quince-chaos-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o.out = dir
	}
	rep, err := execute(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	fmt.Print(rep.String())
	if !rep.valid() {
		fmt.Printf("histories and visualizations: %s\n", filepath.Join(o.out))
		os.Exit(1)
	}
}
