package queue

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/robfig/cron/v3"
)

// Scheduler enqueues jobs on intervals and cron expressions. Run any number of instances:
// each tick's job is enqueued once, by whichever instance gets there first (the queue's
// qq_schedule records the last tick per schedule), so no scheduler is a single point of
// failure.
type Scheduler struct {
	q         *Queue
	schedules []*schedule
	// CatchUp: ticks missed while no scheduler ran are enqueued late if younger than this
	// (default one minute); older ones are skipped.
	CatchUp time.Duration
}

type schedule struct {
	name string
	next func(after time.Time) time.Time
	spec JobSpec
	at   time.Time // next tick; zero until the first look
}

// NewScheduler makes a scheduler for q.
func NewScheduler(q *Queue) *Scheduler { return &Scheduler{q: q, CatchUp: time.Minute} }

// Every enqueues spec at every multiple of interval since the Unix epoch.
func (s *Scheduler) Every(name string, interval time.Duration, spec JobSpec) error {
	if interval < time.Millisecond {
		return fmt.Errorf("schedule %s: the interval must be at least 1 ms", name)
	}
	return s.add(name, func(after time.Time) time.Time {
		ms := interval.Milliseconds()
		return time.UnixMilli((after.UnixMilli()/ms + 1) * ms)
	}, spec)
}

// Cron enqueues spec at the times of a cron expression with seconds, in UTC
// ("sec min hour day-of-month month day-of-week", as the Rust Scheduler).
func (s *Scheduler) Cron(name, expression string, spec JobSpec) error {
	parser := cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	sched, err := parser.Parse(expression)
	if err != nil {
		return fmt.Errorf("schedule %s: cron expression %q: %w", name, expression, err)
	}
	return s.add(name, func(after time.Time) time.Time { return sched.Next(after.UTC()) }, spec)
}

func (s *Scheduler) add(name string, next func(time.Time) time.Time, spec JobSpec) error {
	if _, err := spec.fields(); err != nil {
		return err
	}
	for _, existing := range s.schedules {
		if existing.name == name {
			return fmt.Errorf("schedule %s is defined twice", name)
		}
	}
	s.schedules = append(s.schedules, &schedule{name: name, next: next, spec: spec})
	return nil
}

// Run enqueues due ticks until ctx is cancelled; it returns how many this instance enqueued.
func (s *Scheduler) Run(ctx context.Context) int {
	enqueued := 0
	for {
		wait, n, err := s.tick(ctx)
		enqueued += n
		if ctx.Err() != nil {
			return enqueued
		}
		if err != nil {
			log.Printf("quince-queue: scheduler: %v", err)
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return enqueued
		case <-time.After(wait):
		}
	}
}

func (s *Scheduler) tick(ctx context.Context) (time.Duration, int, error) {
	now, err := s.q.ServerTime(ctx)
	if err != nil {
		return 0, 0, err
	}
	oldest := now.Add(-s.CatchUp)
	soonest, enqueued := time.Second, 0
	for _, sc := range s.schedules {
		if sc.at.IsZero() {
			// A new instance goes on after the last tick any instance enqueued (within the
			// catch-up window); a schedule never run starts now.
			last, err := s.lastTick(ctx, sc.name)
			if err != nil {
				return 0, enqueued, err
			}
			from := now.Add(-time.Millisecond)
			if !last.IsZero() {
				from = last
				if from.Before(oldest) {
					from = oldest.Add(-time.Millisecond)
				}
			}
			sc.at = sc.next(from)
		}
		for !sc.at.After(now) {
			if !sc.at.Before(oldest) {
				id, err := s.q.ScheduleTick(ctx, sc.name, sc.at.UnixMilli(), sc.spec)
				if err != nil {
					return 0, enqueued, err
				}
				if id != "" {
					enqueued++
				}
			}
			sc.at = sc.next(sc.at)
		}
		if d := sc.at.Sub(now); d < soonest {
			soonest = d
		}
	}
	if soonest < time.Millisecond {
		soonest = time.Millisecond
	}
	return soonest, enqueued, nil
}

func (s *Scheduler) lastTick(ctx context.Context, name string) (time.Time, error) {
	reply, err := s.q.call(ctx, "qq_schedules").Slice()
	if err != nil {
		return time.Time{}, err
	}
	for i := 0; i+1 < len(reply); i += 2 {
		if toString(reply[i]) == name {
			return time.UnixMilli(int64(toInt(reply[i+1]))), nil
		}
	}
	return time.Time{}, nil
}
