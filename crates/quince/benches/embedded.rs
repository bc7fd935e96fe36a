//! The embedded Db's typed GET and SET, single thread, over 1,000 and 1,000,000 keys, in
//! memory and durable with `appendfsync everysec`; and SET from 1 and 8 threads on
//! disjoint keys (throughput per thread count). Issue 16's targets: GET ≤ 0.2 µs and
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

/// SETs per second from `threads` threads on disjoint keys, in memory.
fn threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("embedded-threads");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(10);
    for threads in [1usize, 8] {
        let db = Db::memory();
        let per_thread = 20_000;
        group.throughput(Throughput::Elements((threads * per_thread) as u64));
        group.bench_function(format!("set/{threads}-threads"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
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
                }
                start.elapsed()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, get_set, threads);
criterion_main!(benches);
