package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// server is one quince-server process the harness starts, kills, pauses and restarts on the
// same port and directory, so clients reconnect to "the same server" after each fault.
type server struct {
	binary string
	dir    string // the server's files
	logs   string // its stdout and log (outside dir, which may be a filesystem the run unmounts)
	port   int
	args   []string // extra configuration, as `--name value` pairs
	env    []string // added to the harness's environment
	// host and netns: where it listens (default 127.0.0.1 in the harness's namespace); a
	// server in a namespace is reached through dial.
	host   string
	netns  string
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) addr() string { return net.JoinHostPort(s.hostname(), fmt.Sprint(s.port)) }

func (s *server) hostname() string {
	if s.host == "" {
		return "127.0.0.1"
	}
	return s.host
}

// start launches the server and waits until it answers PING with PONG (not -LOADING).
func (s *server) start() error {
	args := append([]string{"--port", fmt.Sprint(s.port), "--bind", s.hostname(), "--dir", s.dir,
		"--logfile", filepath.Join(s.logs, "quince.log")}, s.args...)
	var lastErr error
	// After SIGKILL the kernel may hold the port for a moment: retry the start. (No
	// Pdeathsig: it fires when the forking OS thread ends, and the namespace dialers end
	// theirs.)
	for attempt := 0; attempt < 50; attempt++ {
		log, err := os.OpenFile(filepath.Join(s.logs, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		cmd := exec.Command(s.binary, args...)
		if s.netns != "" {
			// `ip netns exec` execs the server itself: the pid is the server's.
			cmd = exec.Command("ip", append([]string{"netns", "exec", s.netns, s.binary}, args...)...)
		}
		cmd.Stdout, cmd.Stderr = log, log
		cmd.Env = append(os.Environ(), s.env...)
		if err := cmd.Start(); err != nil {
			log.Close()
			return err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		s.cmd, s.exited, s.log = cmd, exited, log
		if lastErr = s.waitReady(30 * time.Second); lastErr == nil {
			return nil
		}
		s.kill()
		if lastErr != errExitedAtStart {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("server did not start: %v (log in %s)", lastErr, s.logs)
}

var errExitedAtStart = errors.New("exited at start")

func (s *server) waitReady(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Dialer: s.dial, MaxRetries: -1, DialTimeout: time.Second, Protocol: 2, DisableIdentity: true, DialerRetries: 1})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-s.exited:
			return errExitedAtStart
		default:
		}
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		var refusal redis.Error
		if errors.As(err, &refusal) && !strings.HasPrefix(err.Error(), "LOADING") {
			return err
		}
		if !strings.HasPrefix(err.Error(), "LOADING") {
			time.Sleep(20 * time.Millisecond)
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// kill sends SIGKILL and returns once the process is gone: nothing it received can take
// effect afterwards.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.log.Close()
	s.cmd = nil
}

func (s *server) signal(sig syscall.Signal) {
	if s.cmd != nil {
		s.cmd.Process.Signal(sig)
	}
}

// alive says whether the process is still running (it may exit by itself, e.g. on a full disk
// under appendfsync always, as Redis does).
func (s *server) alive() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop shuts the server down without saving (the AOF is the state) and waits for it.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
	}
	s.log.Close()
	s.cmd = nil
}
