//! `quince-server`: a drop-in Redis 7 server on the Quince engine.
//!
//! Usage: `quince-server [/path/to/quince.conf] [--port 6380] [--bind ...] [--name value ...]`

mod alloc;
mod config;
mod connection;
mod crash;
mod listening;
mod log;
mod socket;
mod tls;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_engine::{Engine, EngineOptions, QUINCE_VERSION, REDIS_VERSION};

use crate::log::Level;

#[global_allocator]
static GLOBAL: alloc::CountingAlloc = alloc::CountingAlloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-v" || a == "--version") {
        println!("Quince server v={QUINCE_VERSION} (redis {REDIS_VERSION} compatible)");
        return;
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("Usage: quince-server [/path/to/quince.conf] [--port 6380] [--bind addr ...] [--threads N] [--<directive> <value> ...]");
        return;
    }
    let startup = match config::load(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = run(startup) {
        log::log(Level::Warning, &e);
        std::process::exit(1);
    }
}

/// Cluster mode: the bus, nodes.conf and the CLUSTER commands (crates/cluster).
fn start_cluster(engine: &Arc<Engine>, config: &quince_engine::Config, port: u16) -> Result<(), String> {
    if config.get_int("cluster-port") == 0 && port > 55535 {
        return Err("Redis port number too high. Cluster communication port is 10,000 port numbers higher than your Redis port. Your Redis port number must be 55535 or less.".into());
    }
    if config.get_bool("tls-cluster") {
        // Refused rather than a plaintext bus where TLS was asked for.
        return Err("tls-cluster yes is set, but quince's cluster bus has no TLS yet: remove it or set it to no".into());
    }
    let bind = config.get("bind").unwrap_or("").to_string();
    if bind.trim().is_empty() {
        return Err("No bind address is configured, but it is required for the Cluster bus.".into());
    }
    let log_fn: quince_cluster::LogFn = Arc::new(|level: &str, line: &str| {
        let level = match level {
            "warning" => Level::Warning,
            "notice" => Level::Notice,
            "verbose" => Level::Verbose,
            _ => Level::Verbose,
        };
        log::log(level, line);
    });
    quince_cluster::start(engine, port, &bind, log_fn)
}

fn run(startup: config::StartupConfig) -> Result<(), String> {
    let mut config = startup.config;
    // A relative log file lives in `dir`, as Redis opens it after changing into `dir`.
    let logfile = match config.get("logfile").unwrap_or("") {
        "" => String::new(),
        path if std::path::Path::new(path).is_absolute() => path.to_string(),
        path => std::path::Path::new(config.get("dir").unwrap_or(".")).join(path).display().to_string(),
    };
    log::init(&logfile, config.get("loglevel").unwrap_or("notice"))
        .map_err(|e| format!("Can't open the log file: {e}"))?;
    crash::set_enabled(config.get_bool("crash-log-enabled"));
    crash::install();
    adjust_open_files_limit(&mut config)?;
    if config.get_bool("daemonize") {
        return Err("daemonize yes is not supported: run quince-server under a supervisor (systemd, runit)".into());
    }
    let threads = match config.get_int("threads") {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n as usize,
    };
    let mut backend = match config.get_int("io-backend") {
        1 => worker::Backend::IoUring,
        2 => worker::Backend::Epoll,
        _ => worker::Backend::Auto,
    };
    // TLS connections are served with readiness (rustls reads and writes the socket):
    // a server with a TLS port runs the epoll reactor.
    if config.get_int("tls-port") != 0 {
        if backend == worker::Backend::IoUring {
            return Err("tls-port needs io-backend epoll (or auto): TLS connections are served with readiness".into());
        }
        backend = worker::Backend::Epoll;
    }
    if config.get_int("watchdog-period") != 0 {
        // Refused rather than accepted with no watchdog running.
        return Err("watchdog-period is set, but quince has no software watchdog yet: remove it or set it to 0".into());
    }
    if config.get_int("maxmemory-clients") != 0 {
        return Err("maxmemory-clients is set, but quince has no client eviction yet: remove it or set it to 0".into());
    }
    let hz = config.get_int("hz").max(1) as u64;
    let shards = config.get_int("shards") as usize;
    let extra_commands = quince_persist::commands();
    let engine = Arc::new(Engine::new(EngineOptions { config, shards, extra_commands, ..EngineOptions::default() }));
    // A `rename-command` line that could not apply stops the start before anything listens,
    // as Redis's config loader does.
    if let Some((line, reason)) = &engine.rename_error {
        return Err(format!("\n*** FATAL CONFIG FILE ERROR (Quince {QUINCE_VERSION}) ***\n>>> '{line}'\n{reason}"));
    }
    // Users that can't be loaded stop the start, as Redis's ACLLoadUsersAtStartup exits.
    if let Some(reason) = &engine.acl_error {
        return Err(reason.clone());
    }
    let config = engine.config.read().clone();
    let port = config.get_int("port") as u16;
    // Port 0: no TCP listener, as in Redis (a Unix socket only).
    let tcp_listeners = match port {
        0 => Vec::new(),
        _ => listening::bind_all(config.get("bind").unwrap_or(""), port, config.get_int("tcp-backlog") as i32, true)?,
    };
    let bound_port = tcp_listeners.first().and_then(|l| l.local_addr().ok()).map_or(port, |a| a.port());
    let mut listeners: Vec<socket::Listener> = tcp_listeners.into_iter().map(socket::Listener::Tcp).collect();
    // TLS: its configuration first (a bad certificate stops the start, as in Redis), then
    // the TLS port.
    let tls_context = Arc::new(tls::TlsContext::default());
    let tls_port = config.get_int("tls-port") as u16;
    if tls_port != 0 || config.get_bool("tls-replication") {
        if let Err(e) = tls_context.configure(&config) {
            log::log(Level::Warning, &e);
            return Err("Failed to configure TLS. Check logs for more info.".into());
        }
    }
    if tls_port != 0 {
        let tls_listeners = listening::bind_all(
            config.get("bind").unwrap_or(""),
            tls_port,
            config.get_int("tcp-backlog") as i32,
            true,
        )?;
        listeners.extend(tls_listeners.into_iter().map(|l| socket::Listener::Tls(l, tls_context.clone())));
    }
    let unix_path = config.get("unixsocket").unwrap_or("").to_string();
    if !unix_path.is_empty() {
        let perm = config.get_int("unixsocketperm") as u32;
        listeners.push(socket::Listener::Unix(listen_unix(&unix_path, perm)?));
    }
    if listeners.is_empty() {
        return Err("Configured to not listen anywhere, exiting.".into());
    }
    engine.set_memory_probe(alloc::allocated_bytes);
    engine.set_allocator_hooks(quince_engine::AllocatorHooks {
        stats: alloc::stats_report,
        purge: alloc::purge,
        sizes: alloc::sizes,
    });
    {
        let mut facts = engine.server.write();
        facts.tcp_port = bound_port;
        facts.threads = threads;
        engine.scripting.set_one_thread(threads == 1);
        facts.process_id = std::process::id();
        facts.executable = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default();
        facts.config_file = startup.config_file.clone().unwrap_or_default();
        facts.os = os_description();
        facts.run_id = quince_persist::replication::random_id();
        facts.mem_allocator = alloc::allocator_name();
    }

    let layer = quince_persist::Layer::new(Arc::new(|level, message: &str| {
        let level = match level {
            quince_persist::LogLevel::Verbose => Level::Verbose,
            quince_persist::LogLevel::Notice => Level::Notice,
            quince_persist::LogLevel::Warning => Level::Warning,
        };
        log::log(level, message);
    }));
    engine.set_persistence(layer.clone());
    engine.scripting.set_warning_log(Box::new(|line| log::log(Level::Warning, line)));
    layer.attach_engine(&engine);
    // Clients may connect while the dataset loads: they get -LOADING until it is done.
    engine.set_loading(true);
    // As redis-server: the banner (or its one-line summary) and "Server initialized" come
    // before the dataset loads, so a load that fails is reported after the ` PID: ` line
    // Redis's test framework waits for.
    show_banner(&engine, bound_port);
    log::log(Level::Notice, "Server initialized");
    if engine.cluster.enabled() {
        start_cluster(&engine, &config, bound_port)?;
    }

    let stop = Arc::new(AtomicBool::new(false));
    // One flag per signal: Redis names the signal it got, and a second SIGINT while a
    // shutdown is under way means "exit now".
    let sigterm = Arc::new(AtomicBool::new(false));
    let sigint = Arc::new(AtomicBool::new(false));
    for (signal, flag) in [(signal_hook::consts::SIGTERM, &sigterm), (signal_hook::consts::SIGINT, &sigint)] {
        signal_hook::flag::register(signal, Arc::clone(flag)).map_err(|e| format!("signal handler: {e}"))?;
    }

    // The dataset loads in the background. Workers start once it is loaded or after 100 ms:
    // a quick load is never seen by clients (their connections wait in the accept queue, as
    // with Redis), a long one answers -LOADING and reports loading:1 meanwhile.
    // Before the dataset loads, as Redis's initial_memory_usage.
    engine.note_startup_memory();
    let loader = {
        let (engine, layer) = (Arc::clone(&engine), Arc::clone(&layer));
        std::thread::Builder::new()
            .name("quince-loader".into())
            .spawn(move || layer.load_at_startup(&engine))
            .map_err(|e| format!("spawning the loader: {e}"))?
    };
    let load_started = Instant::now();
    while !loader.is_finished() && load_started.elapsed() < Duration::from_millis(100) {
        std::thread::sleep(Duration::from_millis(1));
    }

    let mut handles = Vec::new();
    let mut go_senders = Vec::new();
    let balancer = worker::balance::Balancer::new(threads);
    let listening = Arc::new(listening::Listening::new(
        listeners,
        engine.config.read().get("bind").unwrap_or(""),
        engine.config.read().get_int("tcp-backlog") as i32,
        tls_context.clone(),
    ));
    {
        // CONFIG SET port / tls-port / bind: the new sockets, then every worker woken to
        // move over. A TLS port needs the epoll reactor (see above).
        let (listening, balancer) = (Arc::clone(&listening), Arc::clone(&balancer));
        let uring = backend != worker::Backend::Epoll;
        engine.set_rebinder(Box::new(move |bind: &str, port: u16, tls_port: u16| {
            if tls_port != 0 && uring {
                return Err("a TLS port needs io-backend epoll (this server runs io_uring): restart with it".into());
            }
            listening.rebind(bind, port, tls_port)?;
            balancer.wake_all();
            Ok(())
        }));
        // Connections this server opens (to its master, MIGRATE targets) use TLS through it.
        let connector = Arc::clone(&tls_context);
        quince_persist::outgoing::set_tls_connector(Arc::new(move |tcp| connector.connect(tcp)));
        // CONFIG SET tls-*: the configuration built anew (the reason logged if it can't be).
        let context = Arc::clone(&tls_context);
        engine.set_tls_hook(Box::new(move |config| {
            context
                .configure(config)
                .inspect_err(|e| log::log(Level::Warning, &format!("Failed to configure TLS: {e}")))
        }));
    }
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    for index in 0..threads {
        let (listener_generation, worker_listeners) =
            listening.clones().map_err(|e| format!("cloning listener: {e}"))?;
        let worker = worker::Worker {
            index,
            engine: Arc::clone(&engine),
            listeners: worker_listeners,
            listening: Arc::clone(&listening),
            listener_generation,
            balancer: Arc::clone(&balancer),
            stop: Arc::clone(&stop),
            backend,
            started: started_tx.clone(),
            go: {
                let (go_tx, go_rx) = std::sync::mpsc::channel();
                go_senders.push(go_tx);
                go_rx
            },
        };
        let handle = std::thread::Builder::new()
            .name(format!("quince-worker-{index}"))
            .stack_size(worker::SCRIPT_STACK_SIZE)
            .spawn(move || worker.run())
            .map_err(|e| format!("spawning worker: {e}"))?;
        handles.push(handle);
    }
    // A worker that cannot serve (io_uring refused under `io-backend io_uring`) stops the
    // server before any connection is accepted; otherwise all start serving together.
    let failure = (0..threads).find_map(|_| match started_rx.recv() {
        Ok(Ok(())) => None,
        Ok(Err(why)) => Some(why),
        Err(_) => Some("a worker stopped before serving".to_string()),
    });
    for go in &go_senders {
        let _ = go.send(failure.is_none());
    }
    if let Some(failure) = failure {
        stop.store(true, Ordering::SeqCst);
        for handle in handles {
            let _ = handle.join();
        }
        return Err(failure);
    }
    log::log(
        Level::Notice,
        &format!(
            "Quince {QUINCE_VERSION} (redis {REDIS_VERSION} compatible) started: port={bound_port} threads={threads} shards={} pid={}",
            engine.keyspace.shard_count(),
            std::process::id()
        ),
    );
    let loaded = loader.join().unwrap_or_else(|_| Err("the loader panicked".into()));
    let loaded = loaded.and_then(|()| match engine.cluster.enabled() {
        true => quince_cluster::verify_with_data(&engine),
        false => Ok(()),
    });
    if let Err(e) = loaded {
        stop.store(true, Ordering::SeqCst);
        for handle in handles {
            let _ = handle.join();
        }
        return Err(e);
    }
    log::log(Level::Notice, "Ready to accept connections tcp");
    if !unix_path.is_empty() {
        log::log(Level::Notice, &format!("The server is now ready to accept connections at {unix_path}"));
    }

    // The main thread is the server's clock: active expiry `hz` times a second, with 25%
    // of each period as its budget (Redis's ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC).
    let period = Duration::from_millis(1000 / hz);
    let budget_us = 1_000_000 / hz / 4;
    let mut next_cycle = Instant::now();
    let mut last_persistence_cron = Instant::now();
    loop {
        // A signal schedules a shutdown for the periodic work below, as Redis's handler
        // sets shutdown_asap for serverCron; a second SIGINT before it is done exits now.
        let shutdown_under_way = engine.shutdown_scheduled();
        for (flag, name) in [(&sigterm, "SIGTERM"), (&sigint, "SIGINT")] {
            if flag.swap(false, Ordering::SeqCst) {
                if name == "SIGINT" && shutdown_under_way {
                    insist_on_exiting(&engine);
                }
                log::log(Level::Warning, &format!("Received {name} scheduling shutdown..."));
                engine.schedule_shutdown();
            }
        }
        if engine.shutdown_requested() {
            log::log(Level::Warning, "User requested shutdown...");
            break;
        }
        if engine.cron_paused() {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        if engine.take_scheduled_shutdown() {
            // The final save runs with no command running (the gate held), and commands
            // that waited for it find the server shutting down; a failed save keeps the
            // server running, as Redis's prepareForShutdown.
            match final_save(&engine, &layer, &sigint) {
                Ok(()) => break,
                Err(e) => {
                    log::log(Level::Warning, &e);
                    log::log(
                        Level::Warning,
                        "Errors trying to shut down the server. Check the logs for more information.",
                    );
                }
            }
        }
        if Instant::now() >= next_cycle {
            engine.active_expire_cycle(budget_us);
            next_cycle += period;
        }
        if last_persistence_cron.elapsed() >= Duration::from_millis(100) {
            last_persistence_cron = Instant::now();
            layer.cron(&engine);
            log::set_replica(layer.is_replica());
            // (CONFIG SET crash-log-enabled takes effect here.)
            crash::set_enabled(engine.config.read().get_bool("crash-log-enabled"));
            // Over maxmemory (after CONFIG SET maxmemory, or eviction cut short by its time
            // budget): keep evicting even when no command arrives.
            if engine.hot.maxmemory.load(Ordering::Relaxed) > 0 {
                let _gate = engine.shared_gate();
                engine.out_of_memory();
            }
        }
        engine.sample_instantaneous();
        std::thread::sleep(Duration::from_millis(10).min(period));
    }
    stop.store(true, Ordering::SeqCst);
    engine.request_shutdown();
    for handle in handles {
        match handle.join() {
            Ok(Err(e)) => log::log(Level::Warning, &format!("Worker stopped with error: {e}")),
            Err(_) => log::log(Level::Warning, "Worker panicked"),
            Ok(Ok(())) => {}
        }
    }
    // SHUTDOWN or the signal's final save already ran; what commands logged since goes out.
    if let Err(e) = layer.flush_aof() {
        log::log(Level::Warning, &e);
    }
    if !unix_path.is_empty() {
        log::log(Level::Notice, "Removing the unix socket file.");
        if let Err(e) = std::fs::remove_file(&unix_path) {
            log::log(Level::Warning, &format!("Error removing the unix socket file: {e}"));
        }
    }
    log::log(Level::Warning, "Quince is now ready to exit, bye bye...");
    Ok(())
}

/// The shutdown a signal scheduled: the final save (per the save points), under the gate
/// held exclusively. Success marks the server shutting down before the gate is released,
/// so no command runs after the save. A SIGINT during the save exits at once.
fn final_save(engine: &Arc<Engine>, layer: &quince_persist::Layer, sigint: &Arc<AtomicBool>) -> Result<(), String> {
    let _gate = engine.exclusive();
    let saving = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (engine, saving, sigint) = (engine.clone(), saving.clone(), sigint.clone());
        std::thread::spawn(move || {
            while saving.load(Ordering::SeqCst) {
                if sigint.swap(false, Ordering::SeqCst) {
                    insist_on_exiting(&engine);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let result = layer.shutdown(engine, None);
    saving.store(false, Ordering::SeqCst);
    let _ = watcher.join();
    if result.is_ok() {
        engine.request_shutdown();
    }
    result
}

/// A second SIGINT while a shutdown is under way: exit now, removing the temporary RDB
/// file a final save may be writing (Redis's sigShutdownHandler).
fn insist_on_exiting(engine: &Engine) -> ! {
    log::log(Level::Warning, "You insist... exiting now.");
    let dir = engine.config.read().get("dir").unwrap_or(".").to_string();
    let _ = std::fs::remove_file(std::path::Path::new(&dir).join(format!("temp-{}.rdb", std::process::id())));
    std::process::exit(1);
}

/// Descriptors kept for the server's own use beyond one per client (Redis's
/// CONFIG_MIN_RESERVED_FDS).
const MIN_RESERVED_FDS: u64 = 32;

/// Redis's adjustOpenFilesLimit: raises the open-files limit to `maxclients` + 32 if it is
/// lower, as far as the system allows, and otherwise lowers `maxclients` to fit, so that
/// clients past the limit are told "max number of clients reached" instead of waiting for a
/// descriptor.
fn adjust_open_files_limit(config: &mut quince_engine::Config) -> Result<(), String> {
    let requested = config.get_int("maxclients") as u64;
    let maxfiles = requested + MIN_RESERVED_FDS;
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        log::log(
            Level::Warning,
            &format!(
                "Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting the max clients configuration accordingly.",
                std::io::Error::last_os_error()
            ),
        );
        let _ = config.set("maxclients", &[(1024 - MIN_RESERVED_FDS).to_string()]);
        return Ok(());
    }
    let old = limit.rlim_cur;
    if old >= maxfiles {
        return Ok(());
    }
    // Try the limit wanted, then lower ones in steps of 16, as Redis does.
    let mut best = maxfiles;
    let mut error = std::io::Error::from_raw_os_error(0);
    while best > old {
        let wanted = libc::rlimit { rlim_cur: best, rlim_max: best };
        // SAFETY: setrlimit reads the struct we pass.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &wanted) } == 0 {
            break;
        }
        error = std::io::Error::last_os_error();
        if best < 16 {
            best = old;
            break;
        }
        best -= 16;
    }
    let best = best.max(old);
    if best >= maxfiles {
        log::log(
            Level::Notice,
            &format!("Increased maximum number of open files to {maxfiles} (it was originally set to {old})."),
        );
        return Ok(());
    }
    if best <= MIN_RESERVED_FDS {
        return Err(format!(
            "Your current 'ulimit -n' of {old} is not enough for the server to start. Please increase your open file limit to at least {maxfiles}. Exiting."
        ));
    }
    let maxclients = best - MIN_RESERVED_FDS;
    let _ = config.set("maxclients", &[maxclients.to_string()]);
    // Redis's wording (its strerror text, without Rust's "(os error N)").
    let reason = error.to_string();
    let reason = reason.split(" (os error").next().unwrap_or(&reason).to_string();
    log::log(
        Level::Warning,
        &format!("You requested maxclients of {requested} requiring at least {maxfiles} max file descriptors."),
    );
    log::log(
        Level::Warning,
        &format!("Server can't set maximum open files to {maxfiles} because of OS error: {reason}."),
    );
    log::log(
        Level::Warning,
        &format!(
            "Current maximum open files is {best}. maxclients has been reduced to {maxclients} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."
        ),
    );
    Ok(())
}

/// The `unixsocket` listener, as redis-server opens it: any file left at the path is
/// removed first, and a non-zero `unixsocketperm` sets the socket file's mode.
fn listen_unix(path: &str, perm: u32) -> Result<std::os::unix::net::UnixListener, String> {
    let _ = std::fs::remove_file(path);
    let fail = |e: std::io::Error| format!("Failed opening Unix socket: {e}");
    let listener = std::os::unix::net::UnixListener::bind(path).map_err(fail)?;
    if perm != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm)).map_err(fail)?;
    }
    listener.set_nonblocking(true).map_err(fail)?;
    Ok(listener)
}

fn os_description() -> String {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
    format!("Linux {} {}", read("/proc/sys/kernel/osrelease"), std::env::consts::ARCH)
}

/// The start-up banner, where redis-server shows its logo (with `always-show-logo yes`, or
/// when logging to a terminal): the lines tools look for, ` Port: N` and ` PID: N` (Redis's
/// test framework waits for the PID line). Otherwise Redis's one-line form.
fn show_banner(engine: &quince_engine::Engine, port: u16) {
    let config = engine.config.read();
    let to_terminal = config.get("logfile").unwrap_or("").is_empty()
        // SAFETY: isatty only reads the state of file descriptor 1.
        && unsafe { libc::isatty(1) } == 1;
    if config.get_bool("always-show-logo") || to_terminal {
        log::raw(&format!(
            "\n    Quince {QUINCE_VERSION} (redis {REDIS_VERSION} compatible) 64 bit\n    Running in standalone mode\n    \
             Port: {port}\n    PID: {}\n\n",
            std::process::id()
        ));
    } else {
        log::log(Level::Notice, &format!("Running mode=standalone, port={port}."));
    }
}
