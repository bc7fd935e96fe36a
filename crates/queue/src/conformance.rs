//! The queue's behaviour as tests that run on any [`Store`]: the embedded Db, quince-server
//! and redis-server run the same cases (`conformance_tests!`), so the library behaves the
//! same everywhere. Each case takes a fresh queue name.

use std::time::Duration;

use crate::{CancelOutcome, Error, FailOutcome, JobError, JobSpec, LeaseStatus, Queue, Settings, State, Store};
use crate::{UnknownJobs, Worker, WorkerOptions};

async fn open<S: Store>(store: S, name: &str) -> Queue<S> {
    Queue::new(store, name).await.expect("open the queue")
}

const LEASE: Duration = Duration::from_secs(30);

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// Priorities first, then FIFO; an ack records the result once.
pub async fn fetch_order_and_ack<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let ids: Vec<String> = q
        .enqueue_bulk(&[
            JobSpec::new("t", "low").priority(-5),
            JobSpec::new("t", "first"),
            JobSpec::new("t", "urgent").priority(10),
            JobSpec::new("t", "second"),
        ])
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids.len(), 4);
    let fetched = q.fetch("w", 10, LEASE).await.unwrap();
    let payloads: Vec<&[u8]> = fetched.jobs.iter().map(|j| j.payload.as_slice()).collect();
    assert_eq!(payloads, [&b"urgent"[..], b"first", b"second", b"low"]);
    assert!(fetched.jobs.iter().all(|j| j.attempt == 1 && j.max_attempts == 3));
    let leased = q.job(&fetched.jobs[0].id).await.unwrap().unwrap();
    assert_eq!(leased.state(), "active");
    assert_eq!(leased.text("lease"), Some(fetched.jobs[0].token.as_str()));
    assert_eq!(leased.text("worker"), Some("w"));
    assert_eq!(q.job(&fetched.jobs[1].id).await.unwrap().unwrap().state(), "active");
    let done: Vec<(&crate::Job, &[u8])> = fetched.jobs.iter().map(|j| (j, &b"ok"[..])).collect();
    assert_eq!(q.ack(&done).await.unwrap(), vec![true; 4]);
    assert_eq!(q.ack(&done[..1]).await.unwrap(), vec![false], "a second ack is refused");
    let c = q.counts().await.unwrap();
    assert_eq!((c.ready, c.active, c.done, c.completed, c.enqueued, c.stale), (0, 0, 4, 4, 4, 1));
    let info = q.job(&ids[2]).await.unwrap().unwrap();
    assert_eq!(info.state(), "completed");
    assert_eq!(info.result(), Some(&b"ok"[..]));
    assert_eq!(info.payload(), b"urgent");
    assert!(q.job("999999").await.unwrap().is_none());
}

/// A lease that ran out is taken back by the next fetch; the old holder's ack is refused,
/// so the job is completed once although it ran twice.
pub async fn expired_lease_is_fenced<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.enqueue(&JobSpec::new("t", "x")).await.unwrap();
    let first = q.fetch("w1", 1, Duration::from_millis(50)).await.unwrap().jobs.remove(0);
    sleep_ms(120).await;
    // Refused even before anyone took the job back.
    assert_eq!(q.heartbeat(&[(&first.id, &first.token)], LEASE).await.unwrap(), vec![LeaseStatus::Lost]);
    let second = q.fetch("w2", 1, LEASE).await.unwrap().jobs.remove(0);
    assert_eq!(second.id, first.id);
    assert_eq!(second.attempt, 2);
    assert_ne!(second.token, first.token);
    assert_eq!(q.ack(&[(&first, b"late")]).await.unwrap(), vec![false]);
    assert_eq!(q.fail(&first, "late", None).await.unwrap(), FailOutcome::Stale);
    assert_eq!(q.ack(&[(&second, b"ok")]).await.unwrap(), vec![true]);
    let c = q.counts().await.unwrap();
    assert_eq!((c.completed, c.expired, c.stale), (1, 1, 2));
    assert_eq!(q.job(&first.id).await.unwrap().unwrap().result(), Some(&b"ok"[..]));
}

/// A job whose lease keeps expiring (its worker dies each time) is dead-lettered after its
/// attempts, with the reason.
pub async fn expired_leases_use_attempts<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.enqueue(&JobSpec::new("t", "poison").max_attempts(2)).await.unwrap();
    for _ in 0..2 {
        assert_eq!(q.fetch("w", 1, Duration::from_millis(20)).await.unwrap().jobs.len(), 1);
        sleep_ms(60).await;
    }
    assert!(q.fetch("w", 1, LEASE).await.unwrap().jobs.is_empty());
    let c = q.counts().await.unwrap();
    assert_eq!((c.dead, c.dead_lettered, c.expired), (1, 1, 2));
    let id = &q.list(State::Dead, 0, 10).await.unwrap()[0];
    let info = q.job(id).await.unwrap().unwrap();
    assert_eq!(info.error(), Some("lease expired on attempt 2 of 2"));
}

/// Failures retry after their delay while attempts remain, then go to the dead-letter set,
/// from which they can be retried or purged.
pub async fn retries_then_dead_letters<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let id = q.enqueue(&JobSpec::new("t", "x").max_attempts(2)).await.unwrap().id;
    let job = q.fetch("w", 1, LEASE).await.unwrap().jobs.remove(0);
    assert_eq!(q.fail(&job, "boom 1", Some(Duration::from_millis(100))).await.unwrap(), FailOutcome::Retry);
    let info = q.job(&id).await.unwrap().unwrap();
    assert_eq!((info.state(), info.error()), ("delayed", Some("boom 1")));
    let early = q.fetch("w", 1, LEASE).await.unwrap();
    assert!(early.jobs.is_empty());
    let hint = early.retry_in.expect("a hint to the delayed job");
    assert!(hint <= Duration::from_millis(100), "{hint:?}");
    sleep_ms(130).await;
    let job = q.fetch("w", 1, LEASE).await.unwrap().jobs.remove(0);
    assert_eq!(job.attempt, 2);
    assert_eq!(q.fail(&job, "boom 2", Some(Duration::ZERO)).await.unwrap(), FailOutcome::Dead);
    let c = q.counts().await.unwrap();
    assert_eq!((c.dead, c.failed, c.retried, c.dead_lettered), (1, 2, 1, 1));
    assert_eq!(q.list(State::Dead, 0, 10).await.unwrap(), vec![id.clone()]);
    assert_eq!(q.retry_dead(&[], 100).await.unwrap(), 1);
    let job = q.fetch("w", 1, LEASE).await.unwrap().jobs.remove(0);
    assert_eq!(job.attempt, 1, "attempts start over");
    assert_eq!(q.fail(&job, "fatal", None).await.unwrap(), FailOutcome::Dead, "no retry asked: dead at once");
    assert_eq!(q.purge_dead(&[&id], 100).await.unwrap(), 1);
    assert_eq!(q.counts().await.unwrap().dead, 0);
    assert!(q.job(&id).await.unwrap().is_none());
}

/// Delayed and scheduled-at jobs wait; the fetch says how long.
pub async fn delayed_jobs_wait<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let now = q.server_time_ms().await.unwrap();
    q.enqueue(&JobSpec::new("t", "later").delay(Duration::from_millis(150))).await.unwrap();
    q.enqueue(&JobSpec::new("t", "at").run_at_ms(now + 100)).await.unwrap();
    let f = q.fetch("w", 5, LEASE).await.unwrap();
    assert!(f.jobs.is_empty());
    assert_eq!(q.counts().await.unwrap().delayed, 2);
    sleep_ms(200).await;
    let f = q.fetch("w", 5, LEASE).await.unwrap();
    assert_eq!(f.jobs.len(), 2);
}

/// A unique key makes enqueueing idempotent while it lives.
pub async fn unique_jobs<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let a = q.enqueue(&JobSpec::new("t", "1").unique("order-7", Duration::from_millis(100))).await.unwrap();
    let b = q.enqueue(&JobSpec::new("t", "2").unique("order-7", Duration::from_millis(100))).await.unwrap();
    assert!(a.created && !b.created);
    assert_eq!(a.id, b.id);
    sleep_ms(150).await;
    let c = q.enqueue(&JobSpec::new("t", "3").unique("order-7", Duration::ZERO)).await.unwrap();
    assert!(c.created);
    assert_eq!(q.counts().await.unwrap().ready, 2);
}

/// A job runs after all its parents completed; a dead parent dead-letters it.
pub async fn dependencies<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let a = q.enqueue(&JobSpec::new("t", "a")).await.unwrap().id;
    let b = q.enqueue(&JobSpec::new("t", "b")).await.unwrap().id;
    let child = q.enqueue(&JobSpec::new("t", "child").after([a.clone(), b.clone()])).await.unwrap().id;
    assert_eq!(q.job(&child).await.unwrap().unwrap().state(), "blocked");
    let parents = q.fetch("w", 10, LEASE).await.unwrap().jobs;
    assert_eq!(parents.len(), 2, "the child is not ready");
    q.ack(&[(&parents[0], b"")]).await.unwrap();
    assert_eq!(q.job(&child).await.unwrap().unwrap().state(), "blocked");
    q.ack(&[(&parents[1], b"")]).await.unwrap();
    let next = q.fetch("w", 10, LEASE).await.unwrap().jobs;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].id, child);
    // A completed parent counts as done at enqueue; a dead one dead-letters the child.
    let late = q.enqueue(&JobSpec::new("t", "late").after([a.clone()])).await.unwrap().id;
    assert_eq!(q.job(&late).await.unwrap().unwrap().state(), "ready");
    let p = q.enqueue(&JobSpec::new("t", "p").max_attempts(1)).await.unwrap().id;
    let orphan = q.enqueue(&JobSpec::new("t", "orphan").after([p.clone()])).await.unwrap().id;
    let jobs = q.fetch("w", 10, LEASE).await.unwrap().jobs;
    let pj = jobs.iter().find(|j| j.id == p).unwrap();
    assert_eq!(q.fail(pj, "no", None).await.unwrap(), FailOutcome::Dead);
    let info = q.job(&orphan).await.unwrap().unwrap();
    assert_eq!(info.state(), "dead");
    assert_eq!(info.error(), Some(format!("parent {p} did not complete").as_str()));
}

/// Cancelling a waiting job removes it; a running one is told at its heartbeat.
pub async fn cancellation<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let waiting = q.enqueue(&JobSpec::new("t", "w").delay(Duration::from_secs(60))).await.unwrap().id;
    assert_eq!(q.cancel(&waiting).await.unwrap(), CancelOutcome::Cancelled);
    assert_eq!(q.job(&waiting).await.unwrap().unwrap().state(), "cancelled");
    assert_eq!(q.cancel(&waiting).await.unwrap(), CancelOutcome::Finished);
    assert_eq!(q.cancel("424242").await.unwrap(), CancelOutcome::Missing);
    let running = q.enqueue(&JobSpec::new("t", "r")).await.unwrap().id;
    let job = q.fetch("w", 1, LEASE).await.unwrap().jobs.remove(0);
    assert_eq!(q.cancel(&running).await.unwrap(), CancelOutcome::Requested);
    assert_eq!(q.heartbeat(&[(&job.id, &job.token)], LEASE).await.unwrap(), vec![LeaseStatus::CancelRequested]);
    assert_eq!(q.fail(&job, "stopped", None).await.unwrap(), FailOutcome::Cancelled);
    let c = q.counts().await.unwrap();
    assert_eq!((c.cancelled, c.dead, c.done), (2, 0, 2));
}

/// A paused queue leases nothing until resumed.
pub async fn pause_and_resume<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.enqueue(&JobSpec::new("t", "x")).await.unwrap();
    q.pause().await.unwrap();
    let f = q.fetch("w", 1, LEASE).await.unwrap();
    assert!(f.paused && f.jobs.is_empty());
    assert!(q.counts().await.unwrap().paused);
    q.resume().await.unwrap();
    assert_eq!(q.fetch("w", 1, LEASE).await.unwrap().jobs.len(), 1);
}

/// At most `max` leases per window.
pub async fn rate_limit<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.configure(&Settings { rate_limit: Some((2, Duration::from_millis(300))), ..Settings::default() }).await.unwrap();
    q.enqueue_bulk(&vec![JobSpec::new("t", "x"); 5]).await.unwrap();
    assert_eq!(q.fetch("w", 5, LEASE).await.unwrap().jobs.len(), 2);
    let f = q.fetch("w", 5, LEASE).await.unwrap();
    assert!(f.jobs.is_empty());
    assert!(f.retry_in.is_some_and(|d| d <= Duration::from_millis(300)), "{:?}", f.retry_in);
    sleep_ms(350).await;
    assert_eq!(q.fetch("w", 5, LEASE).await.unwrap().jobs.len(), 2);
}

/// Finished jobs beyond the retention limit are deleted, oldest first.
pub async fn retention<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.configure(&Settings { keep_done: Some(Some(2)), ..Settings::default() }).await.unwrap();
    let ids: Vec<String> =
        q.enqueue_bulk(&vec![JobSpec::new("t", "x"); 5]).await.unwrap().into_iter().map(|e| e.id).collect();
    for job in q.fetch("w", 5, LEASE).await.unwrap().jobs {
        q.ack(&[(&job, b"r")]).await.unwrap();
    }
    let c = q.counts().await.unwrap();
    assert_eq!((c.done, c.completed), (2, 5));
    assert!(q.job(&ids[0]).await.unwrap().is_none());
    assert!(q.job(&ids[4]).await.unwrap().is_some());
    // An age limit: results live that long (a TTL for results).
    q.configure(&Settings {
        keep_done: Some(None),
        keep_done_for: Some(Duration::from_millis(100)),
        ..Settings::default()
    })
    .await
    .unwrap();
    sleep_ms(150).await;
    let fresh = q.enqueue(&JobSpec::new("t", "x")).await.unwrap().id;
    let job = q.fetch("w", 1, LEASE).await.unwrap().jobs.remove(0);
    q.ack(&[(&job, b"r")]).await.unwrap();
    assert!(q.job(&ids[4]).await.unwrap().is_none(), "older than 100 ms: gone");
    assert_eq!(q.job(&fresh).await.unwrap().unwrap().result(), Some(&b"r"[..]));
    assert_eq!(q.counts().await.unwrap().done, 1);
}

/// Progress is stored with the running job (refused once the lease is stale).
pub async fn progress<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.enqueue(&JobSpec::new("t", "x")).await.unwrap();
    let job = q.fetch("w", 1, Duration::from_millis(100)).await.unwrap().jobs.remove(0);
    assert!(q.progress(&job, b"50%").await.unwrap());
    assert_eq!(q.job(&job.id).await.unwrap().unwrap().get("progress"), Some(&b"50%"[..]));
    sleep_ms(150).await;
    assert!(!q.progress(&job, b"60%").await.unwrap());
}

/// A worker on two queues with weights 3 and 1 takes about three jobs from the first for
/// each from the second while both have jobs.
pub async fn weighted_fairness<S: Store>(store: S, name: &str) {
    let a = open(store.clone(), &format!("{name}-a")).await;
    let b = open(store, &format!("{name}-b")).await;
    a.enqueue_bulk(&vec![JobSpec::new("t", ""); 600]).await.unwrap();
    b.enqueue_bulk(&vec![JobSpec::new("t", ""); 600]).await.unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = done.clone();
    let worker = Worker::new(worker_options(1)).queue(a.clone(), 3).queue(b.clone(), 1).handle("t", move |_| {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move { Ok(Vec::new()) }
    });
    worker
        .run(async move {
            while done.load(std::sync::atomic::Ordering::SeqCst) < 400 {
                sleep_ms(2).await;
            }
        })
        .await
        .unwrap();
    let (from_a, from_b) = (a.counts().await.unwrap().completed, b.counts().await.unwrap().completed);
    // Expected 3:1 (300:100 of 400); below 2:1 would be 3.8 standard deviations off.
    assert!(from_a > 2 * from_b && from_b > 0, "a {from_a}, b {from_b}");
}

/// Three schedulers racing over 100 ticks produce exactly 100 jobs.
pub async fn schedulers_enqueue_each_tick_once<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let mut tasks = Vec::new();
    for instance in 0..3 {
        let q = q.clone();
        tasks.push(tokio::spawn(async move {
            let mut made = 0;
            for tick in 1..=100u64 {
                let job = JobSpec::new("report", format!("tick {tick} by {instance}"));
                if q.schedule_tick("hourly", tick * 1000, &job).await.unwrap().is_some() {
                    made += 1;
                }
                if tick % 10 == instance {
                    tokio::task::yield_now().await;
                }
            }
            made
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    assert_eq!(total, 100);
    assert_eq!(q.counts().await.unwrap().ready, 100);
}

/// Three `Scheduler` instances on one interval schedule: one job per tick, no tick missed.
pub async fn scheduler_instances_share_ticks<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let interval = Duration::from_millis(100);
    assert!(matches!(
        crate::Scheduler::new(q.clone()).cron("bad", "every tuesday", JobSpec::new("t", "")),
        Err(Error::Invalid(_))
    ));
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let scheduler = crate::Scheduler::new(q.clone())
            .every("beat", interval, JobSpec::new("beat", ""))
            .unwrap()
            .cron("each-second", "* * * * * *", JobSpec::new("second", ""))
            .unwrap();
        tasks.push(tokio::spawn(scheduler.run(sleep_ms(1_500))));
    }
    let mut enqueued = 0;
    for t in tasks {
        enqueued += t.await.unwrap().unwrap().enqueued;
    }
    let ids = q.list(State::Ready, 0, 1000).await.unwrap();
    assert_eq!(enqueued, ids.len() as u64);
    let mut beats = Vec::new();
    let mut seconds = Vec::new();
    for id in ids {
        let info = q.job(&id).await.unwrap().unwrap();
        let tick: u64 = info.text("tick").unwrap().parse().unwrap();
        match info.text("schedule").unwrap() {
            "beat" => beats.push(tick),
            _ => seconds.push(tick),
        }
    }
    beats.sort();
    assert!(beats.len() >= 10, "{beats:?}");
    for pair in beats.windows(2) {
        assert_eq!(pair[1] - pair[0], 100, "one job per tick, none missed: {beats:?}");
    }
    assert!(beats.iter().all(|t| t % 100 == 0));
    assert!(!seconds.is_empty() && seconds.iter().all(|t| t % 1000 == 0), "{seconds:?}");
    seconds.dedup();
    assert_eq!(q.schedules().await.unwrap()["beat"], *beats.last().unwrap());
}

/// Observers read the event stream: one entry per kind per call, with the job ids.
pub async fn event_stream<S: Store>(store: S, name: &str) {
    let q = open(store.clone(), name).await;
    q.enqueue_bulk(&vec![JobSpec::new("t", ""); 3]).await.unwrap();
    let jobs = q.fetch("w", 3, LEASE).await.unwrap().jobs;
    q.ack(&[(&jobs[0], b""), (&jobs[1], b"")]).await.unwrap();
    q.fail(&jobs[2], "no", None).await.unwrap();
    let key = format!("{}:events", q.base_key()).into_bytes();
    let entries = store.command(vec![b"XRANGE".to_vec(), key.clone(), b"-".to_vec(), b"+".to_vec()]).await.unwrap();
    let mut seen = Vec::new();
    for entry in entries.into_array("XRANGE").unwrap() {
        let fields = entry.into_array("entry").unwrap().pop().unwrap().into_array("fields").unwrap();
        let text: Vec<String> = fields.into_iter().map(|v| v.into_string("field").unwrap()).collect();
        seen.push(format!("{}={}", text[1], text[3]));
    }
    assert_eq!(seen, ["enqueued=1 2 3", "completed=1 2", "dead=3"]);
    q.configure(&Settings { events: Some(false), ..Settings::default() }).await.unwrap();
    q.enqueue(&JobSpec::new("t", "")).await.unwrap();
    let len = store.command(vec![b"XLEN".to_vec(), key]).await.unwrap();
    assert_eq!(len, crate::Value::Int(3), "no events once turned off");
}

/// A worker on a store that may evict keys says so (and reports it).
pub async fn worker_warns_about_eviction<S: Store>(store: S, name: &str) {
    let q = open(store.clone(), name).await;
    let set = |policy: &str| {
        let store = store.clone();
        let policy = policy.to_string();
        async move {
            store
                .command(vec![b"CONFIG".to_vec(), b"SET".to_vec(), b"maxmemory-policy".to_vec(), policy.into_bytes()])
                .await
                .unwrap();
        }
    };
    set("allkeys-lru").await;
    let check = q.eviction_check().await.unwrap();
    assert!(!check.safe() && check.policy == "allkeys-lru");
    let worker = Worker::new(worker_options(1)).queue(q.clone(), 1).handle("t", |_| async move { Ok(Vec::new()) });
    let report = worker.run(sleep_ms(50)).await.unwrap();
    assert_eq!(report.unsafe_eviction_policy.as_deref(), Some("allkeys-lru"));
    set("noeviction").await;
    assert!(q.eviction_check().await.unwrap().safe());
}

/// Bad arguments are refused before anything is sent, or by the library with an error.
pub async fn bad_input<S: Store>(store: S, name: &str) {
    assert!(matches!(Queue::new(store.clone(), "a{b}").await, Err(Error::Invalid(_))));
    let q = open(store.clone(), name).await;
    assert!(matches!(q.enqueue(&JobSpec::new("t", "x").priority(5000)).await, Err(Error::Invalid(_))));
    assert!(matches!(q.enqueue(&JobSpec::new("t", "x").max_attempts(0)).await, Err(Error::Invalid(_))));
    assert!(matches!(q.enqueue(&JobSpec::new("", "x")).await, Err(Error::Invalid(_))));
    let e = store.fcall("qq_enqueue", q.base_key(), vec![b"2".to_vec()]).await.unwrap_err();
    assert!(matches!(&e, Error::Reply(m) if m.contains("qq_enqueue: expected")), "{e:?}");
    let e = store.fcall("qq_configure", q.base_key(), vec![b"nope".to_vec(), b"1".to_vec()]).await.unwrap_err();
    assert!(matches!(&e, Error::Reply(m) if m.contains("unknown option nope")), "{e:?}");
    assert_eq!(q.counts().await.unwrap().enqueued, 0);
}

fn worker_options(concurrency: usize) -> WorkerOptions {
    WorkerOptions { concurrency, poll_max: Duration::from_millis(100), ..WorkerOptions::default() }
}

async fn until<S: Store>(q: &Queue<S>, what: impl Fn(&crate::Counts) -> bool) {
    for _ in 0..1000 {
        let c = q.counts().await.unwrap();
        if what(&c) {
            return;
        }
        sleep_ms(10).await;
    }
    panic!("timed out; counts {:?}", q.counts().await.unwrap());
}

/// A worker runs handlers: errors retry, panics and timeouts fail the attempt, fatal errors
/// and unknown types are dead-lettered; the worker goes on.
pub async fn worker_outcomes<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let mut jobs = vec![JobSpec::new("ok", "x"); 50];
    jobs.push(JobSpec::new("flaky", "x").backoff(Duration::from_millis(10)));
    jobs.push(JobSpec::new("panics", "x").max_attempts(1));
    jobs.push(JobSpec::new("slow", "x").max_attempts(1).timeout(Duration::from_millis(50)));
    jobs.push(JobSpec::new("bad-payload", "x"));
    jobs.push(JobSpec::new("nobody-knows", "x"));
    q.enqueue_bulk(&jobs).await.unwrap();
    let flaky_runs = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let runs = flaky_runs.clone();
    let worker = Worker::new(worker_options(8))
        .queue(q.clone(), 1)
        .handle("ok", |ctx| async move { Ok(ctx.payload().to_vec()) })
        .handle("flaky", move |ctx| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if ctx.job.attempt < 2 {
                    Err(JobError::retry("try again"))
                } else {
                    Ok(b"finally".to_vec())
                }
            }
        })
        .handle("panics", |_| async move { panic!("handler bug") })
        .handle("slow", |_| async move {
            sleep_ms(5_000).await;
            Ok(Vec::new())
        })
        .handle("bad-payload", |_| async move { Err(JobError::fatal("cannot decode payload")) });
    let watch = q.clone();
    let report = worker.run(async move { until(&watch, |c| c.completed == 51 && c.dead == 4).await }).await.unwrap();
    assert_eq!(report.completed, 51);
    assert_eq!(report.retried, 1);
    assert_eq!(report.dead_lettered, 4);
    assert_eq!(flaky_runs.load(std::sync::atomic::Ordering::SeqCst), 2);
    let mut errors = Vec::new();
    for id in q.list(State::Dead, 0, 10).await.unwrap() {
        errors.push(q.job(&id).await.unwrap().unwrap().error().unwrap().to_string());
    }
    errors.sort();
    assert_eq!(
        errors,
        [
            "cannot decode payload",
            "handler panicked: handler bug",
            "no handler for job type \"nobody-knows\"",
            "timed out after 50 ms",
        ]
    );
}

/// Heartbeats keep a long job's lease; a cancelled running job is stopped; on shutdown the
/// jobs still running are released with their attempt given back.
pub async fn worker_leases_cancel_and_shutdown<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    let long = q.enqueue(&JobSpec::new("long", "")).await.unwrap().id;
    let forever = q.enqueue(&JobSpec::new("forever", "")).await.unwrap().id;
    let stuck = q.enqueue(&JobSpec::new("stuck", "")).await.unwrap().id;
    let worker = Worker::new(WorkerOptions {
        // Long enough that a loaded CI machine renews it in time (every third of it).
        lease: Duration::from_millis(900),
        shutdown_grace: Duration::from_millis(100),
        ..worker_options(4)
    })
    .queue(q.clone(), 1)
    .handle("long", |_| async move {
        sleep_ms(2_000).await; // over two lease lengths
        Ok(b"done".to_vec())
    })
    .handle("forever", |_| async move {
        sleep_ms(60_000).await;
        Ok(Vec::new())
    })
    .handle("stuck", |_| async move {
        sleep_ms(60_000).await;
        Ok(Vec::new())
    });
    let watch = q.clone();
    let forever_id = forever.clone();
    let report = worker
        .run(async move {
            until(&watch, |c| c.active == 3).await;
            assert_eq!(watch.cancel(&forever_id).await.unwrap(), CancelOutcome::Requested);
            until(&watch, |c| c.completed == 1 && c.cancelled == 1).await;
        })
        .await
        .unwrap();
    assert_eq!((report.completed, report.cancelled, report.released, report.lost), (1, 1, 1, 0));
    assert_eq!(q.job(&long).await.unwrap().unwrap().attempts(), 1, "heartbeats kept the first lease");
    assert_eq!(q.job(&forever).await.unwrap().unwrap().state(), "cancelled");
    let info = q.job(&stuck).await.unwrap().unwrap();
    assert_eq!((info.state(), info.attempts()), ("ready", 0));
}

/// A worker that knows no handler for a type can leave such jobs to others.
pub async fn worker_leaves_unknown_types<S: Store>(store: S, name: &str) {
    let q = open(store, name).await;
    q.enqueue(&JobSpec::new("other", "")).await.unwrap();
    q.enqueue(&JobSpec::new("mine", "")).await.unwrap();
    let worker = Worker::new(WorkerOptions { unknown_jobs: UnknownJobs::Leave, ..worker_options(2) })
        .queue(q.clone(), 1)
        .handle("mine", |_| async move { Ok(Vec::new()) });
    let watch = q.clone();
    let report = worker.run(async move { until(&watch, |c| c.completed == 1).await }).await.unwrap();
    assert!(report.released >= 1);
    let c = q.counts().await.unwrap();
    assert_eq!((c.ready, c.dead), (1, 0));
}

/// Weighted queues: a worker on two queues takes from both.
pub async fn worker_serves_several_queues<S: Store>(store: S, name: &str) {
    let a = open(store.clone(), &format!("{name}-a")).await;
    let b = open(store, &format!("{name}-b")).await;
    a.enqueue_bulk(&vec![JobSpec::new("t", ""); 30]).await.unwrap();
    b.enqueue_bulk(&vec![JobSpec::new("t", ""); 30]).await.unwrap();
    let worker = Worker::new(worker_options(5))
        .queue(a.clone(), 3)
        .queue(b.clone(), 1)
        .handle("t", |_| async move { Ok(Vec::new()) });
    let (wa, wb) = (a.clone(), b.clone());
    let report = worker
        .run(async move {
            until(&wa, |c| c.completed == 30).await;
            until(&wb, |c| c.completed == 30).await;
        })
        .await
        .unwrap();
    assert_eq!(report.completed, 60);
}

/// One test per case above, for a store made by `$setup` (an async fn returning
/// `Option<(guard, store)>`; None skips, e.g. when redis-server is not installed).
#[macro_export]
macro_rules! conformance_tests {
    ($setup:path) => {
        $crate::conformance_tests!(@cases $setup;
            fetch_order_and_ack, expired_lease_is_fenced, expired_leases_use_attempts,
            retries_then_dead_letters, delayed_jobs_wait, unique_jobs, dependencies, cancellation,
            pause_and_resume, rate_limit, retention, schedulers_enqueue_each_tick_once,
            scheduler_instances_share_ticks, event_stream, progress, weighted_fairness, worker_warns_about_eviction, bad_input,
            worker_outcomes, worker_leases_cancel_and_shutdown, worker_leaves_unknown_types,
            worker_serves_several_queues);
    };
    (@cases $setup:path; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some((_guard, store)) = $setup().await else { return };
                $crate::conformance::$case(store, stringify!($case)).await;
            }
        )*
    };
}
