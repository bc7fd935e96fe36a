package queue

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

// Handler runs one job; its result is stored with the job. Return Fatal(err) for a failure
// no retry can fix (dead-lettered at once); any other error is retried while attempts remain.
type Handler func(ctx context.Context, job *Job) ([]byte, error)

type fatalError struct{ err error }

func (f fatalError) Error() string { return f.err.Error() }
func (f fatalError) Unwrap() error { return f.err }

// Fatal marks err as not worth retrying.
func Fatal(err error) error { return fatalError{err} }

// WorkerOptions configure a WorkerPool; zero values mean the defaults.
type WorkerOptions struct {
	Concurrency   int           // handlers at once (default 10)
	Lease         time.Duration // renewed every third of it (default 30 s)
	PollMax       time.Duration // longest idle wait (default 1 s)
	ShutdownGrace time.Duration // running handlers may finish for this long (default 10 s)
	Name          string        // shown in leases (default host-pid)
}

// Report is what a pool did.
type Report struct {
	Completed, Retried, DeadLettered, Cancelled, Stale, Lost, Released int
	// UnsafeEvictionPolicy is the server's maxmemory-policy when it may evict queue keys
	// (a warning was logged).
	UnsafeEvictionPolicy string
}

// WorkerPool leases jobs from a queue and runs their handlers in goroutines.
type WorkerPool struct {
	q        *Queue
	opts     WorkerOptions
	handlers map[string]Handler

	mu      sync.Mutex
	running map[string]*inFlight
	report  Report
}

type inFlight struct {
	job       *Job
	cancel    context.CancelFunc
	reporting bool
}

type outcome struct {
	job    *Job
	result []byte
	err    error
}

// NewWorkerPool makes a pool for q.
func NewWorkerPool(q *Queue, opts WorkerOptions) *WorkerPool {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 10
	}
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	if opts.PollMax <= 0 {
		opts.PollMax = time.Second
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 10 * time.Second
	}
	if opts.Name == "" {
		host, _ := os.Hostname()
		opts.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	return &WorkerPool{q: q, opts: opts, handlers: map[string]Handler{}, running: map[string]*inFlight{}}
}

// Handle registers the handler of jobs of type name.
func (p *WorkerPool) Handle(name string, h Handler) { p.handlers[name] = h }

func (p *WorkerPool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.running)
}

// Run works until ctx is cancelled (or maxJobs outcomes were reported, if > 0), then lets
// running handlers finish for ShutdownGrace and releases the rest.
func (p *WorkerPool) Run(ctx context.Context, maxJobs int) (Report, error) {
	// Reports and heartbeats outlive ctx so shutdown can still talk to the server.
	bg := context.WithoutCancel(ctx)
	if policy, err := p.q.rdb.ConfigGet(bg, "maxmemory-policy").Result(); err == nil && policy["maxmemory-policy"] != "noeviction" {
		log.Printf("quince-queue: warning: maxmemory-policy is %s: under memory pressure the server may evict queue keys and lose jobs; set maxmemory-policy noeviction", policy["maxmemory-policy"])
		p.mu.Lock()
		p.report.UnsafeEvictionPolicy = policy["maxmemory-policy"]
		p.mu.Unlock()
	}
	handlerCtx, stopHandlers := context.WithCancel(bg)
	defer stopHandlers()
	done := make(chan outcome, p.opts.Concurrency)
	freed := make(chan struct{}, 1)
	reported := 0
	var reporter sync.WaitGroup
	reporter.Add(1)
	reachedMax := make(chan struct{})
	go func() {
		defer reporter.Done()
		for o := range done {
			batch := []outcome{o}
		more:
			for len(batch) < 1000 {
				select {
				case o2, ok := <-done:
					if !ok {
						break more
					}
					batch = append(batch, o2)
				default:
					break more
				}
			}
			p.reportBatch(bg, batch)
			reported += len(batch)
			if maxJobs > 0 && reported >= maxJobs {
				select {
				case <-reachedMax:
				default:
					close(reachedMax)
				}
			}
			select {
			case freed <- struct{}{}:
			default:
			}
		}
	}()
	beat := time.NewTicker(p.opts.Lease / 3)
	defer beat.Stop()
	var beating sync.WaitGroup
	beating.Add(1)
	go func() {
		defer beating.Done()
		for {
			select {
			case <-handlerCtx.Done():
				return
			case <-beat.C:
				p.heartbeat(bg, done)
			}
		}
	}()

	// pause waits for d or a freed slot; false once the pool must stop.
	pause := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-reachedMax:
			return false
		case <-freed:
			return true
		case <-time.After(d):
			return true
		}
	}
	stopping := func() bool {
		select {
		case <-reachedMax:
			return true
		default:
			return ctx.Err() != nil
		}
	}
	var wg sync.WaitGroup
	var runErr error
	for !stopping() {
		free := p.opts.Concurrency - p.count()
		if free <= 0 {
			if !pause(p.opts.PollMax) {
				break
			}
			continue
		}
		jobs, hint, err := p.q.Fetch(bg, p.opts.Name, free, p.opts.Lease)
		if err != nil {
			runErr = err
			if !pause(100 * time.Millisecond) {
				break
			}
			continue
		}
		runErr = nil
		for _, job := range jobs {
			jctx, cancel := context.WithCancel(handlerCtx)
			p.mu.Lock()
			p.running[job.ID] = &inFlight{job: job, cancel: cancel}
			p.mu.Unlock()
			wg.Add(1)
			go func(job *Job) {
				defer wg.Done()
				result, err := p.runOne(jctx, job)
				if jctx.Err() != nil && errors.Is(err, context.Canceled) {
					return // stopped (lease lost, cancelled, shutdown): reported elsewhere
				}
				done <- outcome{job, result, err}
			}(job)
		}
		if len(jobs) > 0 {
			continue
		}
		wait := p.opts.PollMax
		if hint > 0 && hint < wait {
			wait = hint
		}
		if p.count() > 0 {
			// Jobs running: look again soon (their completions free slots).
			if !pause(wait) {
				break
			}
			continue
		}
		p.q.rdb.BLPop(bg, wait, p.q.base+":signal")
	}
	// Shutdown: running handlers may finish; then the rest are stopped and released.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(p.opts.ShutdownGrace):
		p.mu.Lock()
		var rest []*Job
		for id, f := range p.running {
			if !f.reporting {
				f.cancel()
				rest = append(rest, f.job)
				delete(p.running, id)
			}
		}
		p.mu.Unlock()
		if len(rest) > 0 {
			if n, err := p.q.Release(bg, rest); err == nil {
				p.mu.Lock()
				p.report.Released += n
				p.mu.Unlock()
			}
		}
		<-finished
	}
	stopHandlers()
	beating.Wait()
	close(done)
	reporter.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report, runErr
}

func (p *WorkerPool) runOne(ctx context.Context, job *Job) (result []byte, err error) {
	h, ok := p.handlers[job.Type]
	if !ok {
		return nil, Fatal(fmt.Errorf("no handler for job type %q", job.Type))
	}
	if job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, job.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	result, err = h(ctx, job)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %d ms", job.Timeout.Milliseconds())
	}
	return result, err
}

func (p *WorkerPool) reportBatch(ctx context.Context, batch []outcome) {
	var completions []Completion
	var failures []outcome
	p.mu.Lock()
	for _, o := range batch {
		f, ok := p.running[o.job.ID]
		if !ok || f.reporting {
			continue
		}
		f.reporting = true
		if o.err == nil {
			completions = append(completions, Completion{o.job, o.result})
		} else {
			failures = append(failures, o)
		}
	}
	p.mu.Unlock()
	if len(completions) > 0 {
		if acks, err := p.q.Ack(ctx, completions); err == nil {
			p.mu.Lock()
			for _, ok := range acks {
				if ok {
					p.report.Completed++
				} else {
					p.report.Stale++
				}
			}
			p.mu.Unlock()
		}
	}
	for _, o := range failures {
		retry := time.Duration(-1)
		var fatal fatalError
		if !errors.As(o.err, &fatal) && o.job.Attempt < o.job.MaxAttempts {
			retry = o.job.RetryDelay()
		}
		if res, err := p.q.Fail(ctx, o.job, o.err.Error(), retry); err == nil {
			p.mu.Lock()
			switch res {
			case "retry":
				p.report.Retried++
			case "dead":
				p.report.DeadLettered++
			case "cancelled":
				p.report.Cancelled++
			default:
				p.report.Stale++
			}
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	for _, o := range batch {
		if f, ok := p.running[o.job.ID]; ok && f.reporting {
			f.cancel()
			delete(p.running, o.job.ID)
		}
	}
	p.mu.Unlock()
}

func (p *WorkerPool) heartbeat(ctx context.Context, done chan<- outcome) {
	p.mu.Lock()
	var jobs []*Job
	for _, f := range p.running {
		jobs = append(jobs, f.job)
	}
	p.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	statuses, err := p.q.Heartbeat(ctx, jobs, p.opts.Lease)
	if err != nil {
		return
	}
	for i, status := range statuses {
		if status == 1 {
			continue
		}
		p.mu.Lock()
		f, ok := p.running[jobs[i].ID]
		if ok && !f.reporting {
			f.cancel()
			if status == 0 {
				delete(p.running, jobs[i].ID)
				p.report.Lost++
			}
		}
		p.mu.Unlock()
		if ok && status == 2 {
			done <- outcome{jobs[i], nil, Fatal(errors.New("cancelled while running"))}
		}
	}
}
