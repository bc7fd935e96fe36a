//! The dashboard: a web page over every queue of a store (counts, throughput and latency
//! over time, dead letters with retry and delete, schedules, pause/resume) and Prometheus
//! `/metrics`. `quince-queue dashboard` serves it; `serve` does it for any store.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State as AxumState};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use parking_lot::Mutex;
use serde_json::{json, Value as JsonValue};

use crate::queue::{Queue, State};
use crate::store::Store;
use crate::Error;

const PAGE: &str = include_str!("dashboard.html");
/// Throughput samples kept per queue (one a second).
const HISTORY_MAX: usize = 120;
/// Finished jobs sampled for the latency figures.
const LATENCY_SAMPLES: u64 = 50;
const DEAD_SHOWN: u64 = 50;

struct Dashboard<S: Store> {
    store: S,
    queues: Mutex<HashMap<String, Queue<S>>>,
    /// Per queue, once a second: the time (unix ms), the completed counter, and the p50 and
    /// p95 latency (enqueue to finish, ms) of the jobs finished since the previous sample.
    history: Mutex<HashMap<String, VecDeque<Sample>>>,
}

#[derive(Clone, Copy)]
struct Sample {
    at_ms: u64,
    completed: u64,
    latency: Option<(u64, u64)>,
}

/// The p50 and p95 of `values` (sorted here), if any.
fn percentiles(values: &mut [u64]) -> Option<(u64, u64)> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let at = |p: f64| values[((values.len() as f64 - 1.0) * p).round() as usize];
    Some((at(0.5), at(0.95)))
}

impl<S: Store> Dashboard<S> {
    async fn queue(&self, name: &str) -> Result<Queue<S>, Error> {
        if let Some(q) = self.queues.lock().get(name) {
            return Ok(q.clone());
        }
        let q = Queue::new(self.store.clone(), name).await?;
        self.queues.lock().insert(name.to_string(), q.clone());
        Ok(q)
    }

    async fn sample(&self) -> Result<(), Error> {
        for name in Queue::names(&self.store).await? {
            let q = self.queue(&name).await?;
            let (now, counts) = (q.server_time_ms().await?, q.counts().await?);
            let since = self.history.lock().get(&name).and_then(|h| h.back().map(|s| s.at_ms));
            let latency = match since {
                Some(since) => percentiles(&mut self.recent_latencies(&q, since).await?),
                None => None,
            };
            let mut history = self.history.lock();
            let points = history.entry(name).or_default();
            points.push_back(Sample { at_ms: now, completed: counts.completed, latency });
            while points.len() > HISTORY_MAX + 1 {
                points.pop_front();
            }
        }
        Ok(())
    }

    /// Latencies (ms, enqueue to finish) of up to LATENCY_SAMPLES jobs that finished after
    /// `since_ms`, read from the queue's `done` set and job hashes.
    async fn recent_latencies(&self, q: &Queue<S>, since_ms: u64) -> Result<Vec<u64>, Error> {
        let done = format!("{}:done", q.base_key());
        let ids = self
            .store
            .command(vec![
                b"ZRANGEBYSCORE".to_vec(),
                done.into_bytes(),
                format!("({since_ms}").into_bytes(),
                b"+inf".to_vec(),
                b"LIMIT".to_vec(),
                b"0".to_vec(),
                LATENCY_SAMPLES.to_string().into_bytes(),
            ])
            .await?
            .into_array("ZRANGEBYSCORE")?
            .into_iter()
            .map(|id| id.into_string("job id"))
            .collect::<Result<Vec<_>, _>>()?;
        self.latencies(q, &ids).await
    }

    /// Enqueue-to-finish times (ms) of the finished jobs `ids`, read with one HMGET each.
    async fn latencies(&self, q: &Queue<S>, ids: &[String]) -> Result<Vec<u64>, Error> {
        let mut latencies = Vec::with_capacity(ids.len());
        for id in ids {
            let key = format!("{}:job:{id}", q.base_key());
            let fields = self
                .store
                .command(vec![b"HMGET".to_vec(), key.into_bytes(), b"created_ms".to_vec(), b"finished_ms".to_vec()])
                .await?
                .into_array("HMGET")?;
            let mut times = fields.iter().map(|v| v.as_int("a time").ok());
            if let (Some(Some(created)), Some(Some(finished))) = (times.next(), times.next()) {
                latencies.push(finished.saturating_sub(created).max(0) as u64);
            }
        }
        Ok(latencies)
    }

    /// Jobs per second between consecutive samples.
    fn throughput(&self, name: &str) -> Vec<(u64, f64)> {
        let history = self.history.lock();
        let Some(points) = history.get(name) else { return Vec::new() };
        points
            .iter()
            .zip(points.iter().skip(1))
            .map(|(a, b)| {
                let seconds = (b.at_ms.saturating_sub(a.at_ms)).max(1) as f64 / 1000.0;
                (b.at_ms, b.completed.saturating_sub(a.completed) as f64 / seconds)
            })
            .collect()
    }

    /// (time, p50, p95) per sample that saw jobs finish.
    fn latency_history(&self, name: &str) -> Vec<(u64, u64, u64)> {
        let history = self.history.lock();
        let Some(points) = history.get(name) else { return Vec::new() };
        points.iter().filter_map(|s| s.latency.map(|(p50, p95)| (s.at_ms, p50, p95))).collect()
    }
}

fn fail(e: Error) -> Response {
    (StatusCode::BAD_GATEWAY, format!("{e}\n")).into_response()
}

/// Serves the dashboard on `listener` until the process ends.
pub async fn serve<S: Store>(store: S, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    let dashboard =
        Arc::new(Dashboard { store, queues: Mutex::new(HashMap::new()), history: Mutex::new(HashMap::new()) });
    let sampler = dashboard.clone();
    tokio::spawn(async move {
        loop {
            if let Err(e) = sampler.sample().await {
                eprintln!("quince-queue dashboard: {e}");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let app = Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/api/overview", get(overview::<S>))
        .route("/api/queues/{name}/dead/{id}/retry", post(dead_retry::<S>))
        .route("/api/queues/{name}/dead/{id}/delete", post(dead_delete::<S>))
        .route("/api/queues/{name}/pause", post(pause::<S>))
        .route("/api/queues/{name}/resume", post(resume::<S>))
        .route("/metrics", get(metrics::<S>))
        .with_state(dashboard);
    axum::serve(listener, app).await
}

async fn overview<S: Store>(AxumState(d): AxumState<Arc<Dashboard<S>>>) -> Response {
    match overview_json(&d).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => fail(e),
    }
}

async fn overview_json<S: Store>(d: &Dashboard<S>) -> Result<JsonValue, Error> {
    let mut queues = Vec::new();
    let mut eviction = json!({"policy": "", "safe": true});
    for name in Queue::names(&d.store).await? {
        let q = d.queue(&name).await?;
        if queues.is_empty() {
            let check = q.eviction_check().await?;
            eviction = json!({"policy": check.policy, "safe": check.safe()});
        }
        let c = q.counts().await?;
        let mut dead = Vec::new();
        for id in q.list(State::Dead, 0, DEAD_SHOWN).await? {
            if let Some(info) = q.job(&id).await? {
                dead.push(json!({
                    "id": id,
                    "type": info.text("type").unwrap_or(""),
                    "attempts": info.attempts(),
                    "error": info.error().unwrap_or(""),
                }));
            }
        }
        // The most recently finished jobs: the end of `done`.
        let done = q.list(State::Done, c.done.saturating_sub(LATENCY_SAMPLES), LATENCY_SAMPLES).await?;
        let mut latencies = d.latencies(&q, &done).await?;
        let samples = latencies.len();
        let (p50, p95) = percentiles(&mut latencies).unwrap_or((0, 0));
        queues.push(json!({
            "name": name,
            "counts": {
                "ready": c.ready, "delayed": c.delayed, "active": c.active, "blocked": c.blocked,
                "dead": c.dead, "done": c.done, "paused": c.paused, "enqueued": c.enqueued,
                "completed": c.completed, "failed": c.failed, "retried": c.retried, "expired": c.expired,
                "dead_lettered": c.dead_lettered, "cancelled": c.cancelled, "stale": c.stale,
            },
            "throughput": d.throughput(&name),
            "latency": {"p50_ms": p50, "p95_ms": p95, "samples": samples},
            "latency_history": d.latency_history(&name),
            "dead": dead,
            "schedules": q.schedules().await?,
        }));
    }
    Ok(json!({"queues": queues, "eviction": eviction}))
}

async fn dead_retry<S: Store>(
    AxumState(d): AxumState<Arc<Dashboard<S>>>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    match async { d.queue(&name).await?.retry_dead(&[&id], 1).await }.await {
        Ok(n) => Json(json!({"moved": n})).into_response(),
        Err(e) => fail(e),
    }
}

async fn dead_delete<S: Store>(
    AxumState(d): AxumState<Arc<Dashboard<S>>>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    match async { d.queue(&name).await?.purge_dead(&[&id], 1).await }.await {
        Ok(n) => Json(json!({"purged": n})).into_response(),
        Err(e) => fail(e),
    }
}

async fn pause<S: Store>(AxumState(d): AxumState<Arc<Dashboard<S>>>, Path(name): Path<String>) -> Response {
    match async { d.queue(&name).await?.pause().await }.await {
        Ok(()) => Json(json!({"paused": true})).into_response(),
        Err(e) => fail(e),
    }
}

async fn resume<S: Store>(AxumState(d): AxumState<Arc<Dashboard<S>>>, Path(name): Path<String>) -> Response {
    match async { d.queue(&name).await?.resume().await }.await {
        Ok(()) => Json(json!({"paused": false})).into_response(),
        Err(e) => fail(e),
    }
}

/// Prometheus text format: jobs per state, counters, paused, and whether the store may
/// evict queue keys.
async fn metrics<S: Store>(AxumState(d): AxumState<Arc<Dashboard<S>>>) -> Response {
    match metrics_text(&d).await {
        Ok(text) => ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response(),
        Err(e) => fail(e),
    }
}

async fn metrics_text<S: Store>(d: &Dashboard<S>) -> Result<String, Error> {
    use std::fmt::Write;
    let mut jobs = String::from("# HELP quince_queue_jobs Jobs in each state.\n# TYPE quince_queue_jobs gauge\n");
    let mut events = String::from(
        "# HELP quince_queue_events_total Job events since the queue was created.\n# TYPE quince_queue_events_total counter\n",
    );
    let mut paused =
        String::from("# HELP quince_queue_paused 1 while the queue is paused.\n# TYPE quince_queue_paused gauge\n");
    let names = Queue::names(&d.store).await?;
    for name in &names {
        let c = d.queue(name).await?.counts().await?;
        let label = name.replace('\\', "\\\\").replace('"', "\\\"");
        for (state, n) in [
            ("ready", c.ready),
            ("delayed", c.delayed),
            ("active", c.active),
            ("blocked", c.blocked),
            ("dead", c.dead),
            ("done", c.done),
        ] {
            let _ = writeln!(jobs, "quince_queue_jobs{{queue=\"{label}\",state=\"{state}\"}} {n}");
        }
        for (event, n) in [
            ("enqueued", c.enqueued),
            ("completed", c.completed),
            ("failed", c.failed),
            ("retried", c.retried),
            ("expired", c.expired),
            ("dead_lettered", c.dead_lettered),
            ("cancelled", c.cancelled),
            ("stale", c.stale),
        ] {
            let _ = writeln!(events, "quince_queue_events_total{{queue=\"{label}\",event=\"{event}\"}} {n}");
        }
        let _ = writeln!(paused, "quince_queue_paused{{queue=\"{label}\"}} {}", c.paused as u8);
    }
    let mut out = jobs + &events + &paused;
    if let Some(name) = names.first() {
        let check = d.queue(name).await?.eviction_check().await?;
        let _ = write!(
            out,
            "# HELP quince_queue_eviction_unsafe 1 when maxmemory-policy may evict queue keys.\n\
             # TYPE quince_queue_eviction_unsafe gauge\nquince_queue_eviction_unsafe{{policy=\"{}\"}} {}\n",
            check.policy,
            !check.safe() as u8
        );
    }
    Ok(out)
}
