package main

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

type options struct {
	binary string
	fsync  string
	// noPersistence runs the server with neither AOF nor snapshots: a kill loses everything,
	// which the checkers must notice (the harness's own test).
	noPersistence bool
	cycles        int
	minOps        int
	clients       int
	threads       int
	pauseShare    float64
	// diskMB > 0 puts the server's directory on a tmpfs of that size, and diskShare of the
	// faults fill it to the last byte for a while.
	diskMB    int
	diskShare float64
	minFills  int // keep going until the disk filled this often
	// powerLoss makes every kill a simulated machine crash: what was not fsynced is lost.
	powerLoss bool
	// lossBound: with powerLoss and a policy other than always, the longest a lost write
	// may have been acknowledged before the crash (everysec: Redis documents up to 2 s).
	lossBound time.Duration
	// replicated runs a master, two replicas and three sentinels in network namespaces
	// (runReplicated) instead of one server; wait > 0 acknowledges writes by WAIT.
	replicated bool
	wait       int
	splitBrain bool // replicated runs: every fault isolates the master with the clients
	interval   time.Duration
	seed       int64
	out        string
	// brief skips the explanation of refused histories (the shortest refused prefix of
	// each key, Porcupine's visualization): minutes for a replicated run, whose histories
	// are refused by design.
	brief bool
}

type checked struct {
	workload string
	result   porcupine.CheckResult
	ops      int // in the history Porcupine checked
	counts   [3]int
	keys     int // partitions
	took     time.Duration
}

type report struct {
	opts            options
	kills, pauses   int
	fills           int // the disk filled up
	unexpectedExits int
	ran             time.Duration
	checks          []checked
	acked, lost     int // acknowledged appends, and those missing from the final reads
	lostExamples    []string
	lossAge         time.Duration // the longest a lost append was acknowledged before its crash
	cutBytes        int64         // bytes the power losses took from the server's files
	crashes         []int64       // times of the kills (recorder clock)
	digests         []string      // replicated runs: each node's DEBUG DIGEST once in sync
}

// diverged says whether nodes in sync at one offset hold different data.
func (r *report) diverged() bool {
	for _, d := range r.digests {
		if d != r.digests[0] {
			return true
		}
	}
	return false
}

// lossy says whether the run may lose acknowledged writes by design: power losses under a
// policy that acknowledges before fsync. Such a run is judged by how old its lost writes
// were, not by the histories (which then show the loss as anomalies).
func (r *report) lossy() bool {
	return r.opts.powerLoss && r.opts.fsync != "always" && !r.opts.noPersistence
}

func (r *report) valid() bool {
	if r.opts.replicated {
		// Asynchronous replication allows anomalies; with WAIT, acknowledged writes stay.
		return r.unexpectedExits == 0 && !r.diverged() && (r.opts.wait == 0 || r.lost == 0)
	}
	if r.lossy() {
		return r.unexpectedExits == 0 && r.lossAge <= r.opts.lossBound
	}
	for _, c := range r.checks {
		if c.result != porcupine.Ok {
			return false
		}
	}
	return r.lost == 0 && r.unexpectedExits == 0
}

func (r *report) total() (n int) {
	for _, c := range r.checks {
		n += c.ops
	}
	return n
}

func (r *report) String() string {
	var b strings.Builder
	persistence := "appendfsync " + r.opts.fsync
	if r.opts.replicated {
		persistence = fmt.Sprintf("master + 2 replicas + 3 sentinels, WAIT %d, %s", r.opts.wait, persistence)
	}
	if r.opts.noPersistence {
		persistence = "no persistence"
	}
	fmt.Fprintf(&b, "%s, %d clients, %d server threads, seed %d: %d kills, %d pauses, %d full disks, %d unexpected exits in %.1f s\n",
		persistence, r.opts.clients, r.opts.threads, r.opts.seed, r.kills, r.pauses, r.fills, r.unexpectedExits, r.ran.Seconds())
	fmt.Fprintf(&b, "%-9s %-8s %9s %9s %8s %7s %6s %8s\n", "workload", "result", "checked", "ok", "failed", "unknown", "keys", "check s")
	for _, c := range r.checks {
		fmt.Fprintf(&b, "%-9s %-8s %9d %9d %8d %7d %6d %8.1f\n", c.workload, c.result, c.ops, c.counts[ok], c.counts[fail], c.counts[info], c.keys, c.took.Seconds())
	}
	fmt.Fprintf(&b, "checked operations: %d; acknowledged appends: %d, missing at the end: %d\n", r.total(), r.acked, r.lost)
	if r.opts.powerLoss {
		fmt.Fprintf(&b, "power losses cut %d bytes that were not fsynced; the oldest lost append was acknowledged %d ms before its crash\n",
			r.cutBytes, r.lossAge.Milliseconds())
	}
	if len(r.digests) > 0 {
		verdict := "the same"
		if r.diverged() {
			verdict = "DIFFERENT"
		}
		fmt.Fprintf(&b, "nodes in sync hold %s data (DEBUG DIGEST %s)\n", verdict, strings.Join(r.digests, " "))
	}
	if len(r.lostExamples) > 0 {
		fmt.Fprintf(&b, "missing, for example: %s\n", strings.Join(r.lostExamples, ", "))
	}
	if r.valid() {
		b.WriteString("VALID\n")
	} else {
		b.WriteString("INVALID\n")
	}
	return b.String()
}

// checkTimeout bounds Porcupine's search per workload: past it the verdict is Unknown.
func (o options) checkTimeout() time.Duration {
	return 5 * time.Minute
}

// execute runs what the options describe: one server, or the replicated set.
func execute(o options) (*report, error) {
	if o.replicated {
		return runReplicated(o)
	}
	return run(o)
}

func run(o options) (*report, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(o.out, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if o.diskMB > 0 {
		if err := mountTmpfs(data, o.diskMB); err != nil {
			return nil, fmt.Errorf("mounting a %d MB tmpfs at %s: %v", o.diskMB, data, err)
		}
		defer unmount(data)
		atInterrupt(func() { unmount(data) })
	}
	appendonly := "yes"
	if o.noPersistence {
		appendonly = "no"
	}
	syncLog := filepath.Join(o.out, "synced.log")
	var env []string
	if o.powerLoss {
		lib, err := buildShim(o.out)
		if err != nil {
			return nil, err
		}
		env = []string{"LD_PRELOAD=" + lib, "QUINCE_CHAOS_SYNC_LOG=" + syncLog}
	}
	srv := &server{binary: o.binary, dir: data, logs: o.out, port: port, env: env, args: []string{
		"--save", "", "--appendonly", appendonly, "--appendfsync", o.fsync,
		"--threads", fmt.Sprint(o.threads),
		// Rewrites every few MB, so kills and full disks also land during rewrites.
		"--auto-aof-rewrite-min-size", "4mb",
	}}
	if err := srv.start(); err != nil {
		return nil, err
	}
	defer srv.kill()
	atInterrupt(srv.kill)

	rec := newRecorder()
	rep := &report{opts: o}
	cfg := workloadConfig{registers: 64, counters: 16, groups: 8, groupLife: 2000}
	stopClients := startClients(o, rec, cfg, clientNet{
		master:  srv.addr,
		timeout: 20 * time.Second, // longer than any pause: only a dead server breaks a call
	})

	rng := rand.New(rand.NewSource(o.seed))
	began := time.Now()
	for rep.kills < o.cycles || rep.fills < o.minFills || recorded(rec) < o.minOps {
		time.Sleep(time.Duration(rng.ExpFloat64() * float64(o.interval)))
		fault := rng.Float64()
		if !srv.alive() {
			rep.unexpectedExits++
			rec.event("found the server gone")
		} else if fault < o.diskShare {
			free, err := fillDisk(data)
			if err != nil {
				return nil, err
			}
			rec.event("disk full")
			time.Sleep(time.Duration(200+rng.Intn(1300)) * time.Millisecond)
			free()
			rec.event("disk freed")
			rep.fills++
			continue
		} else if fault < o.diskShare+o.pauseShare {
			srv.signal(syscall.SIGSTOP)
			rec.event("SIGSTOP")
			time.Sleep(time.Duration(100+rng.Intn(900)) * time.Millisecond)
			srv.signal(syscall.SIGCONT)
			rec.event("SIGCONT")
			rep.pauses++
			continue
		} else {
			srv.kill()
			rep.crashes = append(rep.crashes, rec.now())
			rep.kills++
			if o.powerLoss {
				cut, err := losePageCache(data, syncLog)
				if err != nil {
					return nil, err
				}
				rep.cutBytes += cut
				rec.event("SIGKILL and power loss (%d bytes not fsynced)", cut)
			} else {
				rec.event("SIGKILL")
			}
			time.Sleep(time.Duration(rng.Intn(200)) * time.Millisecond)
		}
		err := srv.start()
		rec.event("restarted")
		if err != nil {
			stopClients()
			return nil, err
		}
	}
	stopClients()
	rep.ran = time.Since(began)
	if !srv.alive() {
		rep.unexpectedExits++
		if err := srv.start(); err != nil {
			return nil, err
		}
	}
	finalReads(srv.addr(), nil, rec, cfg, rep)
	srv.stop()

	check(o, rec, rep)
	return rep, nil
}

// check runs Porcupine on each workload's history (visualizations and text on refusal).
func check(o options, rec *recorder, rep *report) {
	for _, w := range []struct {
		name  string
		model porcupine.NondeterministicModel
	}{{"register", registerModel}, {"counter", counterModel}, {"txn", txnModel}} {
		model := w.model.ToModel()
		history := rec.ops[w.name]
		start := time.Now()
		// The plain check returns at its timeout; the verbose one (for the visualization)
		// waits for every partition's search to notice, so it only runs on a refusal.
		result := porcupine.CheckOperationsTimeout(model, history, o.checkTimeout())
		c := checked{workload: w.name, result: result, ops: len(history), keys: len(model.Partition(history)), took: time.Since(start)}
		if n := rec.count[w.name]; n != nil {
			c.counts = *n
		}
		fmt.Fprintf(os.Stderr, "checked %s: %s in %.1f s\n", w.name, result, c.took.Seconds())
		if result == porcupine.Illegal && !o.brief {
			// The text has every refused key; the visualization, the first one's shortest
			// refused prefix (small: Porcupine's verbose search waits for every partition).
			first := writeIllegal(model, history, rec.failed[w.name], rec.events, filepath.Join(o.out, w.name+"-illegal.txt"))
			if first != nil {
				_, info := porcupine.CheckOperationsVerbose(model, first, time.Minute)
				if err := porcupine.VisualizePath(model, info, filepath.Join(o.out, w.name+".html")); err != nil {
					fmt.Fprintln(os.Stderr, "visualization:", err)
				}
			}
		}
		rep.checks = append(rep.checks, c)
	}
}

func recorded(rec *recorder) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, ops := range rec.ops {
		n += len(ops)
	}
	return n
}

// finalReads reads every key once more, as operations of the history (so Porcupine checks
// that nothing acknowledged went missing), and counts acknowledged appends that are absent.
func finalReads(addr string, dial func(context.Context, string, string) (net.Conn, error), rec *recorder, cfg workloadConfig, rep *report) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr, Dialer: dial, PoolSize: 1, MaxRetries: -1, Protocol: 2, DisableIdentity: true, DialerRetries: 1})
	defer rdb.Close()
	reader := rep.opts.clients // a client id of its own
	for i := range cfg.registers {
		key := fmt.Sprintf("r:%d", i)
		call := rec.now()
		v, err := getInt(ctx, rdb, key)
		o, ret := classify(err, rec.now())
		rec.add("register", reader, regInput{kind: regRead, key: key}, regOutput{value: v}, call, ret, o, err)
	}
	for i := range cfg.counters {
		key := fmt.Sprintf("c:%d", i)
		call := rec.now()
		v, err := getInt(ctx, rdb, key)
		o, ret := classify(err, rec.now())
		rec.add("counter", reader, ctrInput{key: key}, ctrOutput{value: v}, call, ret, o, err)
	}
	rec.mu.Lock()
	type ack struct {
		value int
		at    int64
	}
	acked := map[string][]ack{} // group key -> appends acknowledged, and when
	groups := map[string]bool{}
	for _, op := range rec.ops["txn"] {
		in := op.Input.(txnInput)
		groups[in.group] = true
		if op.Output.(txnOutput).unknown {
			continue
		}
		for _, m := range in.ops {
			if m.append != 0 {
				k := fmt.Sprintf("{%s}:%d", in.group, m.key)
				acked[k] = append(acked[k], ack{m.append, op.Return})
			}
		}
	}
	rec.mu.Unlock()
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		in := txnInput{group: g, how: "final"}
		out := txnOutput{reads: make([][]int, groupKeys)}
		call := rec.now()
		var err error
		for k := range groupKeys {
			in.ops = append(in.ops, microOp{key: k})
			var vals []string
			key := fmt.Sprintf("{%s}:%d", g, k)
			vals, err = rdb.LRange(ctx, key, 0, -1).Result()
			if err != nil {
				break
			}
			out.reads[k] = atoi(vals)
			present := map[int]bool{}
			for _, v := range out.reads[k] {
				present[v] = true
			}
			for _, a := range acked[key] {
				rep.acked++
				if !present[a.value] {
					rep.lost++
					if len(rep.lostExamples) < 10 {
						rep.lostExamples = append(rep.lostExamples, fmt.Sprintf("%d in %s", a.value, key))
					}
					// Its age when lost: from its acknowledgement to the next crash.
					for _, crash := range rep.crashes {
						if crash >= a.at {
							rep.lossAge = max(rep.lossAge, time.Duration(crash-a.at))
							break
						}
					}
				}
			}
		}
		o, ret := classify(err, rec.now())
		// The three reads are one operation only because nothing else runs now.
		rec.add("txn", reader, in, out, call, ret, o, err)
	}
	fmt.Fprintf(os.Stderr, "final reads: %d acknowledged appends, %d missing\n", rep.acked, rep.lost)
}

// writeIllegal writes, as text, the history of each partition Porcupine refuses, in call
// order, with times in microseconds: the counterexample to read by hand. It returns the
// first one's shortest refused prefix.
func writeIllegal(model porcupine.Model, history, failed []porcupine.Operation, events []string, path string) (first []porcupine.Operation) {
	var b strings.Builder
	b.WriteString("--- faults (times in microseconds)\n" + strings.Join(events, "\n") + "\n")
	for _, part := range model.Partition(history) {
		if porcupine.CheckOperationsTimeout(model, part, time.Minute) != porcupine.Illegal {
			continue
		}
		sort.Slice(part, func(i, j int) bool { return part[i].Call < part[j].Call })
		// The shortest prefix (in call order) that is already refused: the anomaly is near its end.
		lo, hi := 1, len(part)
		for lo < hi {
			mid := (lo + hi) / 2
			if porcupine.CheckOperationsTimeout(model, part[:mid], 10*time.Second) != porcupine.Illegal {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if first == nil {
			first = part[:lo]
		}
		fmt.Fprintf(&b, "--- a partition that is not linearizable; its first %d operations already are not\n", lo)
		for i, op := range part {
			if i == lo {
				b.WriteString("--- (the rest)\n")
			}
			ret := "never"
			if op.Return != never {
				ret = fmt.Sprint(op.Return / 1000)
			}
			fmt.Fprintf(&b, "client %3d  %10d .. %-10s  %s\n", op.ClientId, op.Call/1000, ret, model.DescribeOperation(op.Input, op.Output))
		}
		// Operations of the same key (group) that failed, which a checker ignores.
		key := model.Partition(append([]porcupine.Operation{part[0]}, failed...))[0]
		for _, op := range key[1:] {
			fmt.Fprintf(&b, "failed %3d  %10d .. %-10d  %v: %v\n", op.ClientId, op.Call/1000, op.Return/1000, op.Input, op.Metadata)
		}
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	return first
}
