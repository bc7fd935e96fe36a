package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A master and two replicas (quince-server), each with a redis-sentinel beside it in its own
// network namespace, clients in another; the nemesis partitions, kills and pauses nodes.
// Clients write to whichever node the sentinels' majority names master. Redis replication is
// asynchronous: a failover can lose writes the old master acknowledged, and an isolated old
// master serves stale reads. The run reports what the checkers find; with WAIT (o.wait > 0) a
// write counts as acknowledged only once WAIT confirmed the replicas have it, and no such
// write may be lost.

const sentinelPort = 26379

func runReplicated(o options) (*report, error) {
	l, err := newLAN(3)
	if err != nil {
		return nil, err
	}
	defer l.remove()
	atInterrupt(l.remove)
	rec := newRecorder()
	rep := &report{opts: o}

	nodes := make([]*server, 3)
	for i := range nodes {
		dir := filepath.Join(o.out, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args := []string{"--save", "", "--appendonly", "yes", "--appendfsync", o.fsync, "--threads", fmt.Sprint(o.threads),
			"--repl-diskless-sync-delay", "0", "--auto-aof-rewrite-min-size", "4mb", "--protected-mode", "no",
			"--enable-debug-command", "yes"}
		if i > 0 {
			args = append(args, "--replicaof", l.ip(0), "6379")
		}
		nodes[i] = &server{binary: o.binary, dir: dir, logs: dir, port: 6379, host: l.ip(i), netns: l.ns(i), dial: l.dialer(i), args: args}
		if err := nodes[i].start(); err != nil {
			return nil, err
		}
		defer nodes[i].kill()
		atInterrupt(nodes[i].kill)
	}
	for i := range nodes {
		sentinel, err := startSentinel(l, i, o.out)
		if err != nil {
			return nil, err
		}
		stopSentinel := func() { sentinel.Process.Kill(); sentinel.Wait() }
		defer stopSentinel()
		atInterrupt(stopSentinel)
	}

	// The master as the clients' side sees it: what most sentinels they reach say.
	var master atomic.Value
	master.Store(nodes[0].addr())
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if m := askSentinels(l, -1); m != "" && m != master.Load().(string) {
				master.Store(m)
				rec.event("sentinels name %s master", m)
			}
		}
	}()

	// Short-lived groups: with WAIT, every append made while a replica is cut off is of
	// unknown fate, and Porcupine's search grows with the unknowns a group holds.
	cfg := workloadConfig{registers: 64, counters: 16, groups: 8, groupLife: 400}
	stopClients := startClients(o, rec, cfg, clientNet{
		master:  func() string { return master.Load().(string) },
		dialer:  l.dialer(-1),
		timeout: 2 * time.Second,
		wait:    o.wait,
	})

	rng := rand.New(rand.NewSource(o.seed))
	began := time.Now()
	nodeOf := func(addr string) int {
		for i, n := range nodes {
			if n.addr() == addr {
				return i
			}
		}
		return 0
	}
	for fault := 0; fault < o.cycles; fault++ {
		time.Sleep(time.Duration(1000+rng.Intn(2000)) * time.Millisecond)
		m := nodeOf(master.Load().(string))
		others := []int{(m + 1) % 3, (m + 2) % 3}
		hold := time.Duration(1000+rng.Intn(7000)) * time.Millisecond
		if o.splitBrain {
			hold = 6 * time.Second // past down-after-milliseconds and the failover
		}
		kind := rng.Intn(5)
		if o.splitBrain {
			kind = 0
		}
		switch kind {
		case 0: // the master alone with the clients: the split brain
			for _, n := range others {
				l.cut(m, n)
			}
			rec.event("partition: master node%d | node%d node%d (clients with the master)", m, others[0], others[1])
			time.Sleep(hold)
		case 1: // a replica alone
			r := others[rng.Intn(2)]
			l.cut(r, m)
			l.cut(r, others[0]+others[1]-r)
			l.cut(r, -1)
			rec.event("partition: replica node%d alone", r)
			time.Sleep(hold)
		case 2: // the clients cut from the master
			l.cut(-1, m)
			rec.event("partition: clients | master node%d", m)
			time.Sleep(hold)
		case 3:
			nodes[m].kill()
			rep.kills++
			rep.crashes = append(rep.crashes, rec.now())
			rec.event("SIGKILL master node%d", m)
			time.Sleep(hold)
			if err := nodes[m].start(); err != nil {
				return nil, err
			}
			rec.event("restarted node%d", m)
		case 4:
			nodes[m].signal(syscall.SIGSTOP)
			rec.event("SIGSTOP master node%d", m)
			time.Sleep(hold)
			nodes[m].signal(syscall.SIGCONT)
			rep.pauses++
			rec.event("SIGCONT node%d", m)
		}
		l.heal()
		rec.event("healed")
		for i, n := range nodes {
			if !n.alive() {
				rep.unexpectedExits++
				rec.event("node%d found gone", i)
				if err := n.start(); err != nil {
					return nil, err
				}
			}
		}
	}
	stopClients()
	rep.ran = time.Since(began)
	// Let the sentinels settle on one master with both replicas caught up, then read.
	settled := waitSettled(l, nodes, 60*time.Second)
	close(stopWatch)
	<-watched
	if !settled {
		rec.event("no settled master after 60 s")
		fmt.Print(strings.Join(rec.events, "\n") + "\n")
		return rep, fmt.Errorf("the sentinels did not settle on a master with two replicas in sync (logs in %s)", o.out)
	}
	rep.digests = digests(l, nodes)
	finalReads(master.Load().(string), l.dialer(-1), rec, cfg, rep)
	check(o, rec, rep)
	return rep, nil
}

func startSentinel(l *lan, i int, out string) (*exec.Cmd, error) {
	dir := filepath.Join(out, fmt.Sprintf("sentinel%d", i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf(`port %d
protected-mode no
bind %s
dir %s
logfile %s
sentinel monitor m %s 6379 2
sentinel down-after-milliseconds m 2000
sentinel failover-timeout m 6000
sentinel parallel-syncs m 2
`, sentinelPort, l.ip(i), dir, filepath.Join(dir, "sentinel.log"), l.ip(0))
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("ip", "netns", "exec", l.ns(i), "redis-sentinel", conf)
	return cmd, cmd.Start()
}

// askSentinels returns the master most sentinels reachable from member name, or "" when
// there is no majority.
func askSentinels(l *lan, member int) string {
	votes := map[string]int{}
	for i := range l.nodes {
		c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("%s:%d", l.ip(i), sentinelPort), Dialer: l.dialer(member),
			MaxRetries: -1, DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, Protocol: 2,
			DisableIdentity: true, DialerRetries: 1})
		addr, err := c.Do(context.Background(), "SENTINEL", "get-master-addr-by-name", "m").StringSlice()
		c.Close()
		if err == nil && len(addr) == 2 {
			votes[addr[0]+":"+addr[1]]++
		}
	}
	for addr, n := range votes {
		if n >= 2 {
			return addr
		}
	}
	return ""
}

// waitSettled waits until the sentinels agree on a master that has both replicas connected
// at its own replication offset.
func waitSettled(l *lan, nodes []*server, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		m := askSentinels(l, -1)
		if m == "" {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: m, Dialer: l.dialer(-1), MaxRetries: -1, Protocol: 2, DisableIdentity: true, DialerRetries: 1})
		info, err := c.Info(context.Background(), "replication").Result()
		c.Close()
		if err == nil && strings.Contains(info, "role:master") && inSync(info) == 2 {
			return true
		}
	}
	return false
}

// digests are the nodes' DEBUG DIGEST once the master and both replicas are at one offset:
// replicas in sync hold the master's data, whatever faults came before.
func digests(l *lan, nodes []*server) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		c := redis.NewClient(&redis.Options{Addr: n.addr(), Dialer: l.dialer(-1), MaxRetries: -1, Protocol: 2, DisableIdentity: true, DialerRetries: 1})
		d, err := c.Do(context.Background(), "DEBUG", "DIGEST").Text()
		c.Close()
		if err != nil {
			d = "error: " + err.Error()
		}
		out[i] = d
	}
	return out
}

// inSync counts the replicas INFO lists as online at the master's offset.
func inSync(info string) int {
	var offset string
	for _, line := range strings.Split(info, "\r\n") {
		if v, found := strings.CutPrefix(line, "master_repl_offset:"); found {
			offset = v
		}
	}
	n := 0
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "state=online") && strings.Contains(line, "offset="+offset+",") {
			n++
		}
	}
	return n
}
