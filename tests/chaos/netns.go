package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lan is a small network of the run's own: one namespace per node and one for the clients,
// joined by a bridge in a "switch" namespace, so partitions (blackhole routes) and delays
// (netem) touch nothing outside the run. Root only.
type lan struct {
	prefix string // namespace names start with it
	subnet string // the first three octets
	nodes  int
}

func (l *lan) ns(i int) string         { return fmt.Sprintf("%sn%d", l.prefix, i) }
func (l *lan) clientNS() string        { return l.prefix + "cl" }
func (l *lan) switchNS() string        { return l.prefix + "sw" }
func (l *lan) ip(i int) string         { return fmt.Sprintf("%s.%d", l.subnet, i+1) }
func (l *lan) clientIP() string        { return l.subnet + ".100" }
func (l *lan) nsPath(ns string) string { return "/var/run/netns/" + ns }

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func newLAN(nodes int) (*lan, error) {
	id := os.Getpid() % 10000
	l := &lan{prefix: fmt.Sprintf("qc%d", id), subnet: fmt.Sprintf("10.%d.%d", 200+id%50, id%250), nodes: nodes}
	steps := [][]string{{"netns", "add", l.switchNS()}, {"-n", l.switchNS(), "link", "add", "br0", "type", "bridge"},
		{"-n", l.switchNS(), "link", "set", "br0", "up"}}
	members := []struct{ ns, ip string }{{l.clientNS(), l.clientIP()}}
	for i := range nodes {
		members = append(members, struct{ ns, ip string }{l.ns(i), l.ip(i)})
	}
	for k, m := range members {
		peer := fmt.Sprintf("p%d", k)
		steps = append(steps,
			[]string{"netns", "add", m.ns},
			[]string{"-n", m.ns, "link", "set", "lo", "up"},
			[]string{"-n", m.ns, "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", l.switchNS()},
			[]string{"-n", m.ns, "addr", "add", m.ip + "/24", "dev", "eth0"},
			[]string{"-n", m.ns, "link", "set", "eth0", "up"},
			[]string{"-n", l.switchNS(), "link", "set", peer, "master", "br0"},
			[]string{"-n", l.switchNS(), "link", "set", peer, "up"})
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			l.remove()
			return nil, err
		}
	}
	return l, nil
}

func (l *lan) remove() {
	for i := range l.nodes {
		exec.Command("ip", "netns", "del", l.ns(i)).Run()
	}
	exec.Command("ip", "netns", "del", l.clientNS()).Run()
	exec.Command("ip", "netns", "del", l.switchNS()).Run()
}

// cut drops traffic between two members both ways (a node index, or -1 for the clients).
func (l *lan) cut(a, b int) error {
	if err := ipCmd("-n", l.memberNS(a), "route", "add", "blackhole", l.memberIP(b)+"/32"); err != nil {
		return err
	}
	return ipCmd("-n", l.memberNS(b), "route", "add", "blackhole", l.memberIP(a)+"/32")
}

// heal removes every cut.
func (l *lan) heal() {
	for m := -1; m < l.nodes; m++ {
		for o := -1; o < l.nodes; o++ {
			if o != m {
				exec.Command("ip", "-n", l.memberNS(m), "route", "del", "blackhole", l.memberIP(o)+"/32").Run()
			}
		}
	}
}

func (l *lan) memberNS(i int) string {
	if i < 0 {
		return l.clientNS()
	}
	return l.ns(i)
}

func (l *lan) memberIP(i int) string {
	if i < 0 {
		return l.clientIP()
	}
	return l.ip(i)
}

// dialer connects from a member's namespace (-1: the clients'): the dial runs on an OS
// thread moved into it, which then ends with its goroutine (a thread is never handed back
// in another namespace); the socket stays in the namespace it was made in.
func (l *lan) dialer(member int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	path := l.nsPath(l.memberNS(member))
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			conn net.Conn
			err  error
		}
		done := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				done <- result{nil, err}
				return
			}
			defer unix.Close(fd)
			if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
				done <- result{nil, err}
				return
			}
			d := net.Dialer{Timeout: time.Second}
			conn, err := d.DialContext(ctx, network, addr)
			done <- result{conn, err}
		}()
		r := <-done
		return r.conn, r.err
	}
}
