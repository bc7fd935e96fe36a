//! Deterministic simulation of the engine writing its AOF to a simulated disk.
//!
//! One seed is one run, in one thread, with nothing left to chance outside the seed: the
//! engine (its clock a `ManualClock`), the real AOF writer (`quince_persist::aof::writer`)
//! appending through `disk::SimFile`, and a scheduler that interleaves simulated clients
//! (single commands, MULTI/EXEC built step by step, scripts), the writer's periodic duties,
//! the disk's faults and crashes. After a crash the file the disk kept is loaded by the
//! real loader into a new engine, and the run goes on from there.
//!
//! What is checked at each crash: the log loads, and the dataset it gives is the one some
//! prefix of the executed writes gave (DEBUG DIGEST after each write) — no torn
//! transaction, no write twice, nothing out of order — holding every write acknowledged:
//! under `appendfsync always` each client's write is acknowledged once `make_durable_upto`
//! succeeded for it (as the server holds the reply until then); under `everysec` the writes
//! replied to more than two simulated seconds before the crash.
//!
//! A failure names its seed; `run` of that seed alone replays it exactly, with its trace.

pub mod disk;

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use disk::{Crash, Faults, SimFile};
use quince_engine::persistence::{Effects, Persistence};
use quince_engine::{Client, Clock, Engine, EngineOptions, ManualClock};
use quince_persist::aof::writer::{AofWriter, FsyncPolicy};
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;

/// What one seed runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub policy: FsyncPolicy,
    pub clients: usize,
    /// Scheduler steps.
    pub steps: usize,
    /// Chance of a crash at each step.
    pub crash_rate: f64,
    pub faults: Faults,
}

impl Options {
    /// The mix a seed number chooses: even seeds `always` with a faulty disk (full, failing
    /// fsyncs that may drop pages), odd ones `everysec` on a sound disk — its two-second
    /// bound is about timing; with a failing disk Redis's everysec loses more too (later
    /// writes get MISCONF, earlier ones are gone).
    pub fn for_seed(seed: u64) -> Options {
        let always = seed.is_multiple_of(2);
        Options {
            policy: if always { FsyncPolicy::Always } else { FsyncPolicy::EverySec },
            clients: 3,
            steps: 120,
            crash_rate: 0.02,
            faults: if always {
                Faults { full_disk: 0.02, fsync_error: 0.03, drop_on_fsync_error: 0.5 }
            } else {
                Faults::none()
            },
        }
    }
}

/// A run that held.
#[derive(Debug, Default, Clone)]
pub struct Report {
    pub writes: usize,
    pub acknowledged: usize,
    pub crashes: usize,
}

/// A run that broke a guarantee: its seed replays it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub seed: u64,
    pub message: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "seed {}: {}", self.seed, self.message)?;
        writeln!(f, "replay it alone: cargo run -p quince-sim -- --seed {}", self.seed)?;
        let from = self.trace.len().saturating_sub(40);
        for line in &self.trace[from..] {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

/// The persistence layer of a simulated engine: its writes go to the writer.
struct SimLayer {
    writer: Arc<AofWriter>,
}

impl Persistence for SimLayer {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn wants_effects(&self) -> bool {
        true
    }

    fn feed(&self, effects: &Effects) {
        self.writer.append(effects);
    }
}

/// One write the engine executed: where the log ends after it, the dataset's digest then,
/// and when it was acknowledged (simulated ms; None: not yet).
struct Point {
    position: u64,
    digest: String,
    acked_ms: Option<i64>,
}

#[derive(Clone, Copy)]
enum ClientState {
    Idle,
    /// Inside MULTI, with this many commands still to queue.
    Queuing(usize),
    /// Its write (this point) waits to be durable before the reply.
    Waiting(usize),
}

struct SimClient {
    client: Client,
    state: ClientState,
}

struct World {
    options: Options,
    rng: XorShiftRng,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    writer: Arc<AofWriter>,
    file: SimFile,
    clients: Vec<SimClient>,
    /// The writes since the dataset was last loaded; points[0] is the loaded dataset.
    points: Vec<Point>,
    last_fsync_ms: i64,
    last_tick_ms: i64,
    next_value: u64,
    report: Report,
    trace: Vec<String>,
    dir: PathBuf,
}

const SCRIPT: &str = "redis.call('rpush', KEYS[1], ARGV[1]); redis.call('incrby', KEYS[2], 1); return 1";

/// Runs one seed.
pub fn run(seed: u64, options: &Options) -> Result<Report, Failure> {
    let dir = std::env::temp_dir().join(format!("quince-sim-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure { seed, message: format!("temp dir: {e}"), trace: vec![] })?;
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let file = SimFile::new(Vec::new(), options.faults, XorShiftRng::seed_from_u64(rng.random()));
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let (engine, writer) = start(&clock, &file, 0, options.policy);
    let mut world = World {
        options: *options,
        rng,
        clock,
        engine,
        writer,
        file,
        clients: Vec::new(),
        points: Vec::new(),
        last_fsync_ms: 0,
        last_tick_ms: 0,
        next_value: 0,
        report: Report::default(),
        trace: Vec::new(),
        dir,
    };
    world.reset_clients();
    let first = Point { position: 0, digest: world.digest(), acked_ms: Some(0) };
    world.points.push(first);
    let result = world.simulate();
    if result.is_ok() || std::env::var_os("QUINCE_SIM_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&world.dir);
    }
    result.map(|()| world.report.clone()).map_err(|message| {
        let mut trace = world.trace;
        trace.extend(world.file.take_trace());
        Failure { seed, message, trace }
    })
}

/// An engine whose writes go to `file` (holding `size` bytes of log).
fn start(clock: &Arc<ManualClock>, file: &SimFile, size: u64, policy: FsyncPolicy) -> (Arc<Engine>, Arc<AofWriter>) {
    let engine = new_engine(clock);
    let writer = Arc::new(AofWriter::on(Box::new(file.clone()), size, policy).expect("a simulated file opens"));
    engine.set_persistence(Arc::new(SimLayer { writer: writer.clone() }));
    (engine, writer)
}

fn new_engine(clock: &Arc<ManualClock>) -> Arc<Engine> {
    let mut config = quince_engine::config::Config::default();
    config.set("enable-debug-command", &["yes".to_string()]).expect("a known directive");
    Arc::new(Engine::new(EngineOptions { config, clock: clock.clone(), shards: 4, extra_commands: Vec::new() }))
}

impl World {
    fn simulate(&mut self) -> Result<(), String> {
        for step in 0..self.options.steps {
            self.clock.advance_ms(self.rng.random_range(0..40));
            let now = self.clock.now_ms();
            // The writer's periodic duty, as the server's cron runs it every 100 ms: write
            // what is buffered; under everysec, fsync once a second.
            if now - self.last_tick_ms >= 100 {
                self.last_tick_ms = now;
                self.writer.write_buffered();
                if self.options.policy == FsyncPolicy::EverySec && now - self.last_fsync_ms >= 1000 {
                    self.writer.fsync_now();
                    self.last_fsync_ms = now;
                    self.trace.push(format!("step {step}: fsync at {now} ms, log at {}", self.writer.position()));
                }
            }
            let c = self.rng.random_range(0..self.clients.len());
            self.client_step(c);
            for line in self.file.take_trace() {
                self.trace.push(format!("step {step}: {line}"));
            }
            if self.rng.random_bool(self.options.crash_rate) {
                let how = if self.rng.random_bool(0.5) { Crash::Process } else { Crash::Power };
                self.trace.push(format!("step {step}: crash"));
                self.crash(how)?;
            }
        }
        self.crash(Crash::Power)
    }

    fn client_step(&mut self, c: usize) {
        match self.clients[c].state {
            ClientState::Waiting(point) => self.await_durable(c, point),
            ClientState::Idle => {
                let before = self.writer.position();
                match self.rng.random_range(0..8) {
                    0 => {
                        self.execute(c, &["MULTI".to_string()]);
                        let queued = self.rng.random_range(1..4);
                        self.clients[c].state = ClientState::Queuing(queued);
                        return;
                    }
                    1 => {
                        let (list, counter, value) = (self.key("l"), self.key("n"), self.value());
                        let args = ["EVAL", SCRIPT, "2", &list, &counter, &value].map(String::from);
                        self.execute(c, &args);
                    }
                    _ => {
                        let command = self.write_command();
                        self.execute(c, &command);
                    }
                }
                self.after_command(c, before);
            }
            ClientState::Queuing(0) => {
                let before = self.writer.position();
                self.execute(c, &["EXEC".to_string()]);
                self.after_command(c, before);
            }
            ClientState::Queuing(left) => {
                let command = self.write_command();
                self.execute(c, &command);
                self.clients[c].state = ClientState::Queuing(left - 1);
            }
        }
    }

    /// A write made the log grow: a new point, and the client waits for its durability.
    fn after_command(&mut self, c: usize, before: u64) {
        let position = self.writer.position();
        if position == before {
            self.clients[c].state = ClientState::Idle;
            return;
        }
        self.report.writes += 1;
        let digest = self.digest();
        self.points.push(Point { position, digest, acked_ms: None });
        self.clients[c].state = ClientState::Waiting(self.points.len() - 1);
        self.await_durable(c, self.points.len() - 1);
    }

    /// The server's reply path: under always the reply waits until the write is fsynced
    /// (retried at the client's later steps); otherwise it goes once the log was written to.
    fn await_durable(&mut self, c: usize, point: usize) {
        let position = self.points[point].position;
        if self.writer.make_durable_upto(position).is_ok() {
            self.points[point].acked_ms = Some(self.clock.now_ms());
            self.report.acknowledged += 1;
            self.clients[c].state = ClientState::Idle;
        }
    }

    fn crash(&mut self, how: Crash) -> Result<(), String> {
        self.report.crashes += 1;
        let image = self.file.crash(how);
        let path = self.dir.join("appendonly.aof");
        std::fs::write(&path, &image).map_err(|e| format!("writing the crashed file: {e}"))?;
        let engine = new_engine(&self.clock);
        let mut log_lines = Vec::new();
        let loaded = quince_persist::aof::load::load_command_file(
            &engine,
            &path,
            true,
            true,
            &mut |line| log_lines.push(line.to_string()),
            &mut |_| {},
        );
        self.trace.extend(log_lines.iter().map(|l| format!("load: {l}")));
        if let Err(e) = loaded {
            return Err(format!("after a crash ({how:?}) the log does not load: {}", e.0));
        }
        let digest = digest_of(&engine);
        // The dataset must be one the writes gave, at or after the last one that had to stay.
        let now = self.clock.now_ms();
        let must_keep = self
            .points
            .iter()
            .rposition(|p| match (self.options.policy, p.acked_ms) {
                (_, None) => false,
                (FsyncPolicy::Always, Some(_)) => true,
                (_, Some(at)) => now - at > 2000,
            })
            .unwrap_or(0);
        let Some(matched) = self.points.iter().rposition(|p| p.digest == digest) else {
            return Err(format!(
                "after a crash ({how:?}) the dataset is none the writes gave (digest {digest}; {} writes since the last load, the last {} that had to stay)",
                self.points.len() - 1,
                must_keep
            ));
        };
        if matched < must_keep {
            return Err(format!(
                "after a crash ({how:?}) the dataset is the one after write {matched}, but write {must_keep} was acknowledged{}",
                if self.options.policy == FsyncPolicy::Always { "".to_string() } else { " more than 2 s before".to_string() }
            ));
        }
        self.trace.push(format!(
            "crash ({how:?}) at {now} ms: {} of {} bytes loaded, the dataset after write {matched} of {}",
            std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
            image.len(),
            self.points.len() - 1
        ));
        // Go on from the file the loader left (its torn tail cut), durable now.
        let kept = std::fs::read(&path).map_err(|e| format!("reading the loaded file: {e}"))?;
        let size = kept.len() as u64;
        self.file = SimFile::new(kept, self.options.faults, XorShiftRng::seed_from_u64(self.rng.random()));
        let writer = Arc::new(AofWriter::on(Box::new(self.file.clone()), size, self.options.policy).expect("opens"));
        engine.set_persistence(Arc::new(SimLayer { writer: writer.clone() }));
        self.engine = engine;
        self.writer = writer;
        self.points = vec![Point { position: 0, digest, acked_ms: Some(now) }];
        self.reset_clients();
        Ok(())
    }

    fn reset_clients(&mut self) {
        self.clients = (0..self.options.clients)
            .map(|_| SimClient { client: self.engine.new_client(), state: ClientState::Idle })
            .collect();
    }

    fn execute(&mut self, c: usize, args: &[String]) {
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut reply = Vec::new();
        let mut out = quince_resp::Encoder::new(&mut reply, quince_resp::Protocol::Resp2);
        self.engine.execute(&mut self.clients[c].client, &refs, &mut out);
    }

    fn digest(&self) -> String {
        digest_of(&self.engine)
    }

    fn key(&mut self, kind: &str) -> String {
        format!("{kind}:{}", self.rng.random_range(0..4))
    }

    fn value(&mut self) -> String {
        self.next_value += 1;
        if self.rng.random_bool(0.02) {
            // Now and then a long one: a write that a full disk cuts in its middle.
            return format!("{}-{}", self.next_value, "x".repeat(self.rng.random_range(100..1000)));
        }
        self.next_value.to_string()
    }

    fn write_command(&mut self) -> Vec<String> {
        match self.rng.random_range(0..5) {
            0 => vec!["SET".into(), self.key("s"), self.value()],
            1 => vec!["INCRBY".into(), self.key("n"), self.rng.random_range(1..100u32).to_string()],
            2 => vec!["DEL".into(), self.key("l")],
            _ => vec!["RPUSH".into(), self.key("l"), self.value()],
        }
    }
}

/// DEBUG DIGEST: Redis's digest of the whole dataset.
fn digest_of(engine: &Engine) -> String {
    let mut client = engine.new_client();
    let mut reply = Vec::new();
    let mut out = quince_resp::Encoder::new(&mut reply, quince_resp::Protocol::Resp2);
    engine.execute(&mut client, &[b"DEBUG", b"DIGEST"], &mut out);
    String::from_utf8_lossy(&reply).trim().trim_start_matches('+').to_string()
}

/// Runs seeds `from..from + count`, stopping at the first failure.
pub fn run_seeds(from: u64, count: u64) -> Result<Report, Failure> {
    let mut total = Report::default();
    for seed in from..from + count {
        let report = run(seed, &Options::for_seed(seed))?;
        total.writes += report.writes;
        total.acknowledged += report.acknowledged;
        total.crashes += report.crashes;
    }
    Ok(total)
}
