//! The embedded Db's typed GET and SET, single thread, over 1,000 and 1,000,000 keys, in
//! memory and durable with `appendfsync everysec`; SET from 1 and 8 threads on disjoint
//! keys (throughput per thread count), in memory and with `appendfsync always` (next to
//! the disk's own fsync rate, printed first). Issue 16's targets: GET ≤ 0.2 µs and
//! SET ≤ 0.3 µs in memory, SET ≤ 1 µs with everysec.
//!
//! cargo bench -p quince --bench embedded [-- FILTER]

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use quince::{Db, Fsync, Options};

fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("key:{i:012}").into_bytes()).collect()
}

fn filled(db: &Db, keys: &[Vec<u8>]) {
    for k in keys {
        db.set(k, b"value-of-ten").unwrap();
    }
}

fn get_set(c: &mut Criterion) {
    let mut group = c.benchmark_group("embedded");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for n in [1_000usize, 1_000_000] {
        let db = Db::memory();
        let keys = keys(n);
        filled(&db, &keys);
        let mut i = 0;
        group.bench_function(format!("get/memory/{n}"), |b| {
            b.iter(|| {
                i = (i + 7919) % n;
                black_box(db.get(&keys[i]).unwrap())
            })
        });
        group.bench_function(format!("set/memory/{n}"), |b| {
            b.iter(|| {
                i = (i + 7919) % n;
                db.set(&keys[i], b"value-of-ten").unwrap()
            })
        });
    }
    let dir = std::env::temp_dir().join(format!("quince-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let db = Db::open_with(&dir, Options { fsync: Fsync::EverySec, ..Options::default() }).unwrap();
        let keys = keys(1_000);
        let mut i = 0;
        group.bench_function("set/everysec/1000", |b| {
            b.iter(|| {
                i = (i + 7919) % 1_000;
                db.set(&keys[i], b"value-of-ten").unwrap()
            })
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    group.finish();
}

/// The time `threads` threads take to SET `per_thread` disjoint keys each.
fn set_from_threads(db: &Db, threads: usize, per_thread: usize) -> Duration {
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    db.set(format!("t{t}:{i}"), b"value").unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    start.elapsed()
}

/// SETs per second from `threads` threads on disjoint keys, in memory.
fn threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("embedded-threads");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(10);
    for threads in [1usize, 8] {
        let db = Db::memory();
        let per_thread = 20_000;
        group.throughput(Throughput::Elements((threads * per_thread) as u64));
        group.bench_function(format!("set/{threads}-threads"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| set_from_threads(&db, threads, per_thread)).sum())
        });
    }
    group.finish();
}

/// fsyncs per second of 12-byte appends to a file in the temp directory (the ceiling for
/// `Always` without group commit).
fn fsync_rate(dir: &std::path::Path) -> f64 {
    use std::io::Write;
    let path = dir.join("fsync-probe");
    let mut file = std::fs::File::create(&path).unwrap();
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < Duration::from_secs(1) {
        file.write_all(b"value-of-ten").unwrap();
        file.sync_data().unwrap();
        n += 1;
    }
    let _ = std::fs::remove_file(&path);
    n as f64 / start.elapsed().as_secs_f64()
}

/// SETs per second with `appendfsync always` from 1 and 8 threads: each write returns once
/// on disk; threads writing together share an fsync (group commit).
fn always(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("quince-bench-always-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    eprintln!("disk: {:.0} fsyncs/s (12-byte appends, one thread)", fsync_rate(&dir));
    let db = Db::open_with(dir.join("db"), Options { fsync: Fsync::Always, ..Options::default() }).unwrap();
    let mut group = c.benchmark_group("embedded-always");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(3)).sample_size(10);
    for threads in [1usize, 8] {
        let per_thread = 500;
        group.throughput(Throughput::Elements((threads * per_thread) as u64));
        group.bench_function(format!("set/{threads}-threads"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| set_from_threads(&db, threads, per_thread)).sum())
        });
    }
    group.finish();
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, get_set, threads, always);
criterion_main!(benches);
