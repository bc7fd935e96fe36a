//! The engine's hot paths in-process, without sockets: one command through
//! `Engine::execute` with its reply encoded as RESP2 into a reused buffer, as a worker
//! does. What a request costs beyond the network (compare with bench/compare.sh's CPU
//! per request, which includes the syscalls).
use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use quince_engine::{Client, Engine, EngineOptions, SystemClock};
use quince_resp::{Encoder, Protocol};

/// Keys the benchmarks cycle through (redis-benchmark's `-r`-style key spread).
const KEYS: usize = 10_000;

fn engine() -> (Engine, Client) {
    let engine = Engine::new(EngineOptions { clock: Arc::new(SystemClock), ..EngineOptions::default() });
    let client = engine.new_client();
    (engine, client)
}

fn keys(prefix: &str) -> Vec<Vec<u8>> {
    (0..KEYS).map(|i| format!("{prefix}:{i:012}").into_bytes()).collect()
}

/// Runs `make(i)` for i = 0.. as commands, one per iteration.
fn bench_command(c: &mut Criterion, name: &str, setup: &[&[&[u8]]], make: impl Fn(usize) -> Vec<Vec<u8>>) {
    let (engine, mut client) = engine();
    let mut out = Vec::with_capacity(64 * 1024);
    for args in setup {
        engine.execute(&mut client, args, &mut Encoder::new(&mut out, Protocol::Resp2));
    }
    let commands: Vec<Vec<Vec<u8>>> = (0..KEYS).map(&make).collect();
    let mut group = c.benchmark_group("execute");
    group.throughput(Throughput::Elements(1));
    let mut i = 0;
    group.bench_function(name, |b| {
        b.iter(|| {
            let cmd = &commands[i % KEYS];
            i += 1;
            let args: smallvec::SmallVec<[&[u8]; 8]> = cmd.iter().map(|a| &a[..]).collect();
            out.clear();
            engine.execute(&mut client, &args, &mut Encoder::new(&mut out, Protocol::Resp2));
            black_box(out.len())
        })
    });
    group.finish();
}

fn commands(c: &mut Criterion) {
    let k = keys("key");
    let set = |i: usize| vec![b"SET".to_vec(), k[i].clone(), b"xxx".to_vec()];
    bench_command(c, "set", &[], set);
    // GET of keys that exist: SET first through the same engine.
    let sets: Vec<Vec<&[u8]>> = k.iter().map(|key| vec![&b"SET"[..], key, b"xxx"]).collect();
    let sets: Vec<&[&[u8]]> = sets.iter().map(|c| &c[..]).collect();
    bench_command(c, "get", &sets, |i| vec![b"GET".to_vec(), k[i].clone()]);
    bench_command(c, "incr", &[], |i| vec![b"INCR".to_vec(), k[i].clone()]);
    bench_command(c, "lpush", &[], |i| vec![b"LPUSH".to_vec(), k[i % 100].clone(), b"xxx".to_vec()]);
    bench_command(c, "hset", &[], |i| {
        vec![b"HSET".to_vec(), k[i % 1000].clone(), format!("f{}", i % 10).into_bytes(), b"xxx".to_vec()]
    });
    bench_command(c, "zadd", &[], |i| {
        vec![
            b"ZADD".to_vec(),
            k[i % 100].clone(),
            (i % 500).to_string().into_bytes(),
            format!("m{}", i % 500).into_bytes(),
        ]
    });
    let lrange_setup: Vec<Vec<u8>> = std::iter::once(b"RPUSH".to_vec())
        .chain(std::iter::once(b"list".to_vec()))
        .chain((0..100).map(|i| format!("element:{i}").into_bytes()))
        .collect();
    let lrange_setup: Vec<&[u8]> = lrange_setup.iter().map(|a| &a[..]).collect();
    bench_command(c, "lrange_100", &[&lrange_setup], |_| {
        vec![b"LRANGE".to_vec(), b"list".to_vec(), b"0".to_vec(), b"99".to_vec()]
    });
}

/// A key table growing from empty to 100,000 keys (insertion and resizing).
fn fill(c: &mut Criterion) {
    let k: Vec<Vec<u8>> = (0..100_000).map(|i| format!("key:{i:012}").into_bytes()).collect();
    let mut group = c.benchmark_group("fill");
    group.throughput(Throughput::Elements(k.len() as u64));
    group.sample_size(10);
    group.bench_function("set_100k_keys", |b| {
        b.iter_batched(
            engine,
            |(engine, mut client)| {
                let mut out = Vec::with_capacity(64 * 1024);
                for key in &k {
                    let args: [&[u8]; 3] = [b"SET", key, b"xxx"];
                    out.clear();
                    engine.execute(&mut client, &args, &mut Encoder::new(&mut out, Protocol::Resp2));
                }
                (engine, client)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, commands, fill);
criterion_main!(benches);
