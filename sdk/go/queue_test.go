package queue

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// server starts quince-server (QUINCE_SERVER_BIN) or redis-server on a free loopback port and
// stops it, by pid, when the test ends.
func server(t *testing.T, kind string) *redis.Client {
	t.Helper()
	var bin string
	switch kind {
	case "quince":
		bin = os.Getenv("QUINCE_SERVER_BIN")
		if bin == "" {
			t.Skip("QUINCE_SERVER_BIN is not set (sdk/go/test.sh sets it to cargo's build)")
		}
	case "redis":
		path, err := exec.LookPath("redis-server")
		if err != nil {
			if os.Getenv("QUINCE_REQUIRE_REDIS") == "1" {
				t.Fatal("QUINCE_REQUIRE_REDIS=1 but redis-server is not on PATH")
			}
			t.Skip("SKIPPED: redis-server not found on PATH")
		}
		bin = path
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", kind)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func eachServer(t *testing.T, test func(t *testing.T, rdb *redis.Client)) {
	for _, kind := range []string{"quince", "redis"} {
		t.Run(kind, func(t *testing.T) { test(t, server(t, kind)) })
	}
}

func TestSubmitFetchAck(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		q, err := New(ctx, rdb, "go")
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range []int{PriorityLow, PriorityNormal, PriorityHigh} {
			if _, err := q.SubmitJob(ctx, "t", []byte(fmt.Sprint(i)), p); err != nil {
				t.Fatal(err)
			}
		}
		jobs, _, err := q.Fetch(ctx, "w", 10, time.Minute)
		if err != nil || len(jobs) != 3 {
			t.Fatalf("fetch: %v %v", jobs, err)
		}
		if got := string(jobs[0].Payload) + string(jobs[1].Payload) + string(jobs[2].Payload); got != "210" {
			t.Fatalf("priority order: %s", got)
		}
		acks, err := q.Ack(ctx, []Completion{{jobs[0], []byte("r")}, {jobs[1], nil}, {jobs[2], nil}})
		if err != nil || !acks[0] || !acks[1] || !acks[2] {
			t.Fatalf("ack: %v %v", acks, err)
		}
		again, _ := q.Ack(ctx, []Completion{{jobs[0], nil}})
		if again[0] {
			t.Fatal("a second ack must be refused")
		}
		info, _ := q.JobInfo(ctx, jobs[0].ID)
		if info["state"] != "completed" || info["result"] != "r" {
			t.Fatalf("job: %v", info)
		}
		counts, _ := q.Counts(ctx)
		if counts["completed"] != 3 || counts["stale"] != 1 {
			t.Fatalf("counts: %v", counts)
		}
		if _, err := q.Enqueue(ctx, JobSpec{Type: "t", Priority: 5000}); err == nil {
			t.Fatal("priority 5000 must be refused")
		}
		if id, _ := q.ScheduleTick(ctx, "s", 1000, JobSpec{Type: "t"}); id == "" {
			t.Fatal("the first tick is enqueued")
		}
		if id, _ := q.ScheduleTick(ctx, "s", 1000, JobSpec{Type: "t"}); id != "" {
			t.Fatal("a tick is enqueued once")
		}
	})
}

func TestWorkerPool(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		q, _ := New(ctx, rdb, "pool")
		var specs []JobSpec
		for i := 0; i < 30; i++ {
			specs = append(specs, JobSpec{Type: "upper", Payload: []byte(fmt.Sprintf("job %d", i))})
		}
		specs = append(specs,
			JobSpec{Type: "flaky", Backoff: 10 * time.Millisecond},
			JobSpec{Type: "fatal"},
			JobSpec{Type: "panics", MaxAttempts: 1},
			JobSpec{Type: "slow", MaxAttempts: 1, Timeout: 50 * time.Millisecond},
			JobSpec{Type: "unknown"})
		if _, err := q.EnqueueBulk(ctx, specs); err != nil {
			t.Fatal(err)
		}
		pool := NewWorkerPool(q, WorkerOptions{Concurrency: 5, PollMax: 50 * time.Millisecond})
		pool.Handle("upper", func(ctx context.Context, job *Job) ([]byte, error) {
			return []byte(strings.ToUpper(string(job.Payload))), nil
		})
		pool.Handle("flaky", func(ctx context.Context, job *Job) ([]byte, error) {
			if job.Attempt < 2 {
				return nil, errors.New("try again")
			}
			return []byte("finally"), nil
		})
		pool.Handle("fatal", func(ctx context.Context, job *Job) ([]byte, error) {
			return nil, Fatal(errors.New("cannot decode"))
		})
		pool.Handle("panics", func(ctx context.Context, job *Job) ([]byte, error) { panic("handler bug") })
		pool.Handle("slow", func(ctx context.Context, job *Job) ([]byte, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Second):
				return nil, nil
			}
		})
		runCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		report, err := pool.Run(runCtx, 36)
		if err != nil {
			t.Fatal(err)
		}
		if report.Completed != 31 || report.Retried != 1 || report.DeadLettered != 4 {
			t.Fatalf("report: %+v", report)
		}
		info, _ := q.JobInfo(ctx, "1")
		if info["result"] != "JOB 0" {
			t.Fatalf("job 1: %v", info)
		}
		dead, _ := q.List(ctx, "dead", 0, 10)
		var reasons []string
		for _, id := range dead {
			info, _ := q.JobInfo(ctx, id)
			reasons = append(reasons, info["error"])
		}
		sort.Strings(reasons)
		want := "cannot decode|handler panicked: handler bug|no handler for job type \"unknown\"|timed out after 50 ms"
		if strings.Join(reasons, "|") != want {
			t.Fatalf("dead letters: %q", reasons)
		}
	})
}

// A job enqueued from Go is processed by the Rust CLI's worker, and the reverse.
func TestAcrossLanguages(t *testing.T) {
	cli := os.Getenv("QUINCE_QUEUE_BIN")
	if cli == "" {
		t.Skip("QUINCE_QUEUE_BIN is not set (sdk/go/test.sh sets it to cargo's build)")
	}
	rdb := server(t, "quince")
	ctx := context.Background()
	url := "redis://" + rdb.Options().Addr + "/"
	q, _ := New(ctx, rdb, "xlang")
	id, _ := q.SubmitJob(ctx, "shout", []byte("from go"), PriorityNormal)
	out, err := exec.Command(cli, "--url", url, "work", "xlang", "--type", "shout", "--jobs", "1", "--", "tr", "a-z", "A-Z").CombinedOutput()
	if err != nil {
		t.Fatalf("rust worker: %v %s", err, out)
	}
	if info, _ := q.JobInfo(ctx, id); info["result"] != "FROM GO" {
		t.Fatalf("processed by rust: %v", info)
	}
	out, err = exec.Command(cli, "--url", url, "enqueue", "xlang", "reverse", "from rust").Output()
	if err != nil {
		t.Fatal(err)
	}
	rid := strings.TrimSpace(string(out))
	pool := NewWorkerPool(q, WorkerOptions{Concurrency: 1, PollMax: 50 * time.Millisecond})
	pool.Handle("reverse", func(ctx context.Context, job *Job) ([]byte, error) {
		b := []byte(string(job.Payload))
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return b, nil
	})
	if _, err := pool.Run(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if info, _ := q.JobInfo(ctx, rid); info["result"] != "tsur morf" {
		t.Fatalf("processed by go: %v", info)
	}
}

func TestWorkerWarnsAboutEviction(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		q, _ := New(ctx, rdb, "evict")
		rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru")
		runCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		report, _ := NewWorkerPool(q, WorkerOptions{PollMax: 20 * time.Millisecond}).Run(runCtx, 0)
		if report.UnsafeEvictionPolicy != "allkeys-lru" {
			t.Fatalf("report: %+v", report)
		}
	})
}

// Three scheduler instances on one interval: one job per tick, none missed.
func TestSchedulers(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		q, _ := New(ctx, rdb, "sched")
		if err := NewScheduler(q).Cron("bad", "every tuesday", JobSpec{Type: "t"}); err == nil {
			t.Fatal("a bad cron expression must be refused")
		}
		runCtx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		results := make(chan int, 3)
		for i := 0; i < 3; i++ {
			s := NewScheduler(q)
			if err := s.Every("beat", 100*time.Millisecond, JobSpec{Type: "beat"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Cron("second", "* * * * * *", JobSpec{Type: "second"}); err != nil {
				t.Fatal(err)
			}
			go func() { results <- s.Run(runCtx) }()
		}
		total := <-results + <-results + <-results
		ids, _ := q.List(ctx, "ready", 0, 1000)
		if total != len(ids) {
			t.Fatalf("enqueued %d, ready %d", total, len(ids))
		}
		var beats []int
		for _, id := range ids {
			info, _ := q.JobInfo(ctx, id)
			if info["schedule"] == "beat" {
				tick, _ := strconv.Atoi(info["tick"])
				beats = append(beats, tick)
			}
		}
		sort.Ints(beats)
		if len(beats) < 10 {
			t.Fatalf("beats: %v", beats)
		}
		for i := 1; i < len(beats); i++ {
			if beats[i]-beats[i-1] != 100 {
				t.Fatalf("one job per tick, none missed: %v", beats)
			}
		}
	})
}
