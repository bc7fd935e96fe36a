// Package queue is quince-queue for Go: the same job queue as the Rust crate and the Python
// package, on quince-server, redis-server 7 or Valkey, through go-redis.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	q, err := queue.New(ctx, rdb, "emails")
//	id, err := q.SubmitJob(ctx, "welcome", []byte(`{"to":"ada"}`), queue.PriorityHigh)
//
//	pool := queue.NewWorkerPool(q, queue.WorkerOptions{Concurrency: 10})
//	pool.Handle("welcome", func(ctx context.Context, job *queue.Job) ([]byte, error) {
//		return nil, send(job.Payload)
//	})
//	report, err := pool.Run(ctx, 0) // until ctx is cancelled; then finishes or releases running jobs
//
//	sched := queue.NewScheduler(q) // run one per process: each tick is enqueued once
//	sched.Cron("nightly", "0 0 3 * * *", queue.JobSpec{Type: "report"})
//	go sched.Run(ctx)
//
// Every state change is one function of the queue's FUNCTION library (quince_queue.lua,
// a copy of crates/queue/lua/quince_queue.lua that a Rust test keeps identical), loaded by
// the client when the server has none or another version. Delivery is at-least-once with
// leases renewed by heartbeats; completion is exactly-once: every report carries the
// lease's fencing token and the server refuses a stale one. docs/queue.md has the layout.
package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed quince_queue.lua
var Library string

// LibraryVersion is the library's VERSION; a client finding an older one (or none) loads its
// own (versions only add functions).
const LibraryVersion = 2

// RegistryKey is the set of queue names (New adds to it).
const RegistryKey = "qq:queues"

// Priorities in Bananas's three levels; any integer from -1000 to 1000 works, higher first.
const (
	PriorityHigh   = 100
	PriorityNormal = 0
	PriorityLow    = -100
)

// Queue is one named queue on a go-redis client.
type Queue struct {
	rdb  redis.UniversalClient
	name string
	base string
}

// New opens queue name, loading the library if needed.
func New(ctx context.Context, rdb redis.UniversalClient, name string) (*Queue, error) {
	if name == "" || len(name) > 200 || strings.ContainsAny(name, "{} \t\r\n") {
		return nil, fmt.Errorf("queue name %q: 1 to 200 characters, no braces or whitespace", name)
	}
	q := &Queue{rdb: rdb, name: name, base: "qq:{" + name + "}"}
	v, err := q.call(ctx, "qq_version").Int()
	if err != nil || v < LibraryVersion {
		var redisErr redis.Error
		if err != nil && !errors.As(err, &redisErr) {
			return nil, err
		}
		if err := rdb.FunctionLoadReplace(ctx, Library).Err(); err != nil {
			return nil, err
		}
	}
	if err := rdb.SAdd(ctx, RegistryKey, name).Err(); err != nil {
		return nil, err
	}
	return q, nil
}

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

func (q *Queue) call(ctx context.Context, function string, args ...interface{}) *redis.Cmd {
	return q.rdb.FCall(ctx, function, []string{q.base}, args...)
}

// JobSpec describes a job to enqueue. Zero values mean the defaults: priority 0, no delay,
// 3 attempts, no timeout, 1 s backoff.
type JobSpec struct {
	Type        string
	Payload     []byte
	Priority    int
	Delay       time.Duration
	RunAt       time.Time
	MaxAttempts int
	Timeout     time.Duration
	Backoff     time.Duration
	// Unique is an idempotency key: while held (for UniqueTTL, forever if zero), enqueueing
	// another job with it returns the holder's id.
	Unique    string
	UniqueTTL time.Duration
	// After lists parent job ids (same queue) that must complete first.
	After []string
}

func (s JobSpec) fields() ([]interface{}, error) {
	if s.Type == "" {
		return nil, errors.New("a job needs a type")
	}
	if s.Priority < -1000 || s.Priority > 1000 {
		return nil, fmt.Errorf("priority %d is outside -1000..=1000", s.Priority)
	}
	attempts := s.MaxAttempts
	if attempts == 0 {
		attempts = 3
	}
	if attempts < 1 {
		return nil, errors.New("max attempts must be at least 1")
	}
	backoff := s.Backoff
	if backoff == 0 {
		backoff = time.Second
	}
	var runAt int64
	if !s.RunAt.IsZero() {
		runAt = s.RunAt.UnixMilli()
	}
	for _, p := range s.After {
		if p == "" || strings.ContainsAny(p, " \t\r\n") {
			return nil, errors.New("a parent id is empty or has whitespace")
		}
	}
	return []interface{}{
		s.Type, s.Payload, s.Priority, s.Delay.Milliseconds(), runAt, attempts, s.Timeout.Milliseconds(),
		s.Unique, s.UniqueTTL.Milliseconds(), strings.Join(s.After, " "), backoff.Milliseconds(),
	}, nil
}

// SubmitJob enqueues a job in Bananas's shape and returns its id.
func (q *Queue) SubmitJob(ctx context.Context, name string, payload []byte, priority int) (string, error) {
	return q.Enqueue(ctx, JobSpec{Type: name, Payload: payload, Priority: priority})
}

// Enqueue enqueues one job and returns its id (or the unique key holder's).
func (q *Queue) Enqueue(ctx context.Context, spec JobSpec) (string, error) {
	ids, err := q.EnqueueBulk(ctx, []JobSpec{spec})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// EnqueueBulk enqueues jobs atomically, in one round trip.
func (q *Queue) EnqueueBulk(ctx context.Context, specs []JobSpec) ([]string, error) {
	args := []interface{}{len(specs)}
	for _, s := range specs {
		f, err := s.fields()
		if err != nil {
			return nil, err
		}
		args = append(args, f...)
	}
	reply, err := q.call(ctx, "qq_enqueue", args...).Slice()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(specs))
	for i := 0; i+1 < len(reply); i += 2 {
		ids = append(ids, fmt.Sprint(reply[i]))
	}
	return ids, nil
}

// Job is a job leased to this worker.
type Job struct {
	Queue       string
	ID          string
	Token       string
	Type        string
	Payload     []byte
	Attempt     int
	MaxAttempts int
	Timeout     time.Duration
	Backoff     time.Duration
}

// RetryDelay is the wait before the next attempt: backoff doubled per attempt (capped at an
// hour), half fixed and half random.
func (j *Job) RetryDelay() time.Duration {
	shift := j.Attempt - 1
	if shift > 30 {
		shift = 30
	}
	full := j.Backoff * time.Duration(1<<uint(shift))
	if full > time.Hour || full < 0 {
		full = time.Hour
	}
	return full/2 + time.Duration(rand.Int64N(int64(full/2)+1))
}

func toString(v interface{}) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	default:
		return fmt.Sprint(x)
	}
}

func toInt(v interface{}) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	default:
		n, _ := strconv.Atoi(toString(v))
		return n
	}
}

// Fetch leases up to count jobs for lease. hint is how long to wait when none was leased
// (-1: unknown, -2: the queue is paused).
func (q *Queue) Fetch(ctx context.Context, worker string, count int, lease time.Duration) ([]*Job, time.Duration, error) {
	reply, err := q.call(ctx, "qq_fetch", worker, count, maxInt64(lease.Milliseconds(), 1)).Slice()
	if err != nil {
		return nil, 0, err
	}
	hint := time.Duration(toInt(reply[0])) * time.Millisecond
	var jobs []*Job
	for i := 1; i+5 < len(reply); i += 6 {
		opts := strings.Fields(toString(reply[i+5]))
		for len(opts) < 3 {
			opts = append(opts, "0")
		}
		maxAttempts, _ := strconv.Atoi(opts[0])
		timeout, _ := strconv.Atoi(opts[1])
		backoff, _ := strconv.Atoi(opts[2])
		jobs = append(jobs, &Job{
			Queue: q.name, ID: toString(reply[i]), Token: toString(reply[i+1]), Type: toString(reply[i+2]),
			Payload: []byte(toString(reply[i+3])), Attempt: toInt(reply[i+4]), MaxAttempts: maxInt(maxAttempts, 1),
			Timeout: time.Duration(timeout) * time.Millisecond, Backoff: time.Duration(backoff) * time.Millisecond,
		})
	}
	return jobs, hint, nil
}

// Completion is one finished job and its result, for Ack.
type Completion struct {
	Job    *Job
	Result []byte
}

// Ack records jobs as completed; per job true, or false if its lease was stale.
func (q *Queue) Ack(ctx context.Context, done []Completion) ([]bool, error) {
	args := []interface{}{len(done)}
	for _, c := range done {
		args = append(args, c.Job.ID, c.Job.Token, c.Job.Attempt, c.Result)
	}
	reply, err := q.call(ctx, "qq_ack", args...).Slice()
	if err != nil {
		return nil, err
	}
	ok := make([]bool, len(reply))
	for i, v := range reply {
		ok[i] = toInt(v) == 1
	}
	return ok, nil
}

// Fail records a failed attempt, retried after retryIn (negative: dead-letter it now).
// The outcome is "retry", "dead", "cancelled" or "stale".
func (q *Queue) Fail(ctx context.Context, job *Job, reason string, retryIn time.Duration) (string, error) {
	delay := int64(-1)
	if retryIn >= 0 {
		delay = retryIn.Milliseconds()
	}
	return q.call(ctx, "qq_fail", job.ID, job.Token, job.Attempt, reason, delay).Text()
}

// Heartbeat extends leases; per job 1 (held), 0 (lost) or 2 (cancellation requested).
func (q *Queue) Heartbeat(ctx context.Context, jobs []*Job, lease time.Duration) ([]int, error) {
	args := []interface{}{maxInt64(lease.Milliseconds(), 1)}
	for _, j := range jobs {
		args = append(args, j.ID, j.Token)
	}
	reply, err := q.call(ctx, "qq_heartbeat", args...).Slice()
	if err != nil {
		return nil, err
	}
	out := make([]int, len(reply))
	for i, v := range reply {
		out[i] = toInt(v)
	}
	return out, nil
}

// Release gives leased jobs back without spending an attempt.
func (q *Queue) Release(ctx context.Context, jobs []*Job) (int, error) {
	var args []interface{}
	for _, j := range jobs {
		args = append(args, j.ID, j.Token)
	}
	return q.call(ctx, "qq_release", args...).Int()
}

// Cancel cancels a job: "cancelled", "requested" (running), "finished" or "missing".
func (q *Queue) Cancel(ctx context.Context, id string) (string, error) {
	return q.call(ctx, "qq_cancel", id).Text()
}

// Pause stops leasing jobs until Resume.
func (q *Queue) Pause(ctx context.Context) error  { return q.call(ctx, "qq_pause").Err() }
func (q *Queue) Resume(ctx context.Context) error { return q.call(ctx, "qq_resume").Err() }

// Counts returns jobs per state and the counters since the queue was created.
func (q *Queue) Counts(ctx context.Context) (map[string]int, error) {
	reply, err := q.call(ctx, "qq_counts").Slice()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for i := 0; i+1 < len(reply); i += 2 {
		out[toString(reply[i])] = toInt(reply[i+1])
	}
	return out, nil
}

// JobInfo returns every field of a job, or nil if there is none.
func (q *Queue) JobInfo(ctx context.Context, id string) (map[string]string, error) {
	reply, err := q.call(ctx, "qq_job", id).Slice()
	if err != nil || len(reply) == 0 {
		return nil, err
	}
	out := map[string]string{}
	for i := 0; i+1 < len(reply); i += 2 {
		out[toString(reply[i])] = toString(reply[i+1])
	}
	return out, nil
}

// List returns job ids in a state (ready, delayed, active, blocked, dead, done).
func (q *Queue) List(ctx context.Context, state string, offset, count int) ([]string, error) {
	reply, err := q.call(ctx, "qq_list", state, offset, count).Slice()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(reply))
	for i, v := range reply {
		ids[i] = toString(v)
	}
	return ids, nil
}

// ScheduleTick enqueues spec for tick tickMs of schedule name unless that tick (or a later
// one) was enqueued already, by this or any other scheduler. Returns the id, or "".
func (q *Queue) ScheduleTick(ctx context.Context, name string, tickMs int64, spec JobSpec) (string, error) {
	f, err := spec.fields()
	if err != nil {
		return "", err
	}
	args := append([]interface{}{name, tickMs}, f...)
	id, err := q.call(ctx, "qq_schedule", args...).Text()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return id, err
}

// ServerTime is the server's clock (what leases and delays are measured by).
func (q *Queue) ServerTime(ctx context.Context) (time.Time, error) {
	ms, err := q.call(ctx, "qq_time").Int64()
	return time.UnixMilli(ms), err
}

// Names lists the queues on a server.
func Names(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	names, err := rdb.SMembers(ctx, RegistryKey).Result()
	sort.Strings(names)
	return names, err
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
