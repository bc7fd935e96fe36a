//! Runs one embedded operation N times over 1,000 keys, for instruction counts per call:
//! `valgrind --tool=callgrind target/release/examples/op_loop get 100000`, twice with
//! different N; the difference divided by the difference in N is the cost of one call.
//!
//! cargo build --release -p quince --example op_loop; ops: get, set, set-everysec.

use quince::{Db, Fsync, Options};

fn main() {
    let mut args = std::env::args().skip(1);
    let op = args.next().unwrap_or_else(|| "get".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let keys: Vec<Vec<u8>> = (0..1_000).map(|i| format!("key:{i:012}").into_bytes()).collect();
    let dir = std::env::temp_dir().join(format!("quince-op-loop-{}", std::process::id()));
    let db = match op.as_str() {
        "set-everysec" => {
            Db::open_with(&dir, Options { fsync: Fsync::EverySec, ..Options::default() }).expect("open a durable Db")
        }
        _ => Db::memory(),
    };
    for k in &keys {
        db.set(k, b"value-of-ten").expect("SET");
    }
    let mut found = 0usize;
    let mut i = 0;
    for _ in 0..n {
        i = (i + 7919) % keys.len();
        match op.as_str() {
            "get" => found += db.get(&keys[i]).expect("GET").map_or(0, |v| v.len()),
            _ => db.set(&keys[i], b"value-of-ten").expect("SET"),
        }
    }
    println!("{op} x{n}: {found} bytes read");
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}
