package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// outcome of an operation as the client saw it, in Jepsen's terms.
type outcome int

const (
	ok   outcome = iota // a reply: it took effect (for a read, it saw what it returned)
	fail                // it certainly did not take effect (refused connection, an error reply)
	info                // unknown: sent, and the connection broke before the reply
)

// never is the return time of an operation that may still take effect at any later time.
const never = math.MaxInt64

// recorder collects the operations of every client, with invocation and completion times on
// one monotonic clock, as Porcupine wants them.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   map[string][]porcupine.Operation // by workload
	// failed operations (not in the histories: they took no effect), with their errors,
	// kept to explain a refused history
	failed map[string][]porcupine.Operation
	events []string           // the nemesis's faults, with their times
	count  map[string]*[3]int // ok, fail, info per workload
}

func newRecorder() *recorder {
	return &recorder{start: time.Now(), ops: map[string][]porcupine.Operation{}, failed: map[string][]porcupine.Operation{}, count: map[string]*[3]int{}}
}

func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

// add records one operation. Failed operations took no effect and are left out of the
// history (they still count); unknown ones stay, with an output that says so.
func (r *recorder) add(workload string, client int, input, output any, call, ret int64, o outcome, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count[workload] == nil {
		r.count[workload] = &[3]int{}
	}
	r.count[workload][o]++
	if o == fail {
		if !refused(err) {
			r.failed[workload] = append(r.failed[workload], porcupine.Operation{ClientId: client, Input: input, Call: call, Return: ret, Metadata: err.Error()})
		}
		return
	}
	r.ops[workload] = append(r.ops[workload], porcupine.Operation{ClientId: client, Input: input, Output: output, Call: call, Return: ret})
}

// event notes a fault in the log written next to a refused history.
func (r *recorder) event(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%10d  ", r.now()/1000)+fmt.Sprintf(format, args...))
}

// classify decides what an error means for the operation that got it, and when an unknown
// operation could at the latest have taken effect.
//
// A refused connection never reached the server. An error reply means the command was
// refused or (for our scripts, which cannot fail half-way) did nothing. A connection that
// broke after the request was written is unknown; when the server was killed, whatever it
// received happened before it died, so the time the client saw the break bounds the
// operation. A timeout is different: a paused server may still run the command later.
func classify(err error, seen int64) (outcome, int64) {
	if err == nil {
		return ok, seen
	}
	if errors.Is(err, errNotReplicated) {
		// The master ran it before WAIT answered; whether that survives a failover is
		// unknown (lost is "never happened", which the models allow for unknowns).
		return info, seen
	}
	var redisErr redis.Error
	if errors.As(err, &redisErr) && !errors.Is(err, redis.ErrClosed) {
		msg := redisErr.Error()
		// Replies that only say the connection is going away are not refusals.
		if !strings.HasPrefix(msg, "ERR max number of clients") {
			return fail, seen
		}
	}
	if refused(err) {
		return fail, seen
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return info, never
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return info, never
	}
	return info, seen
}

// refused says whether the connection could not even be made.
func refused(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}
