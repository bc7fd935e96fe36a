//! GET and SET per second of the embedded quince Db, Redlite and SQLite (a WAL key-value
//! table), in memory and on a file, single thread, 1,000 keys; each measurement is the
//! best of ROUNDS runs of about a second. Prints a Markdown table with quince's ratios.
//!
//! Usage: embedded-peers [ROUNDS] [KEYS]

use std::time::{Duration, Instant};

trait Store {
    fn set(&mut self, key: &str, value: &[u8]);
    fn get(&mut self, key: &str) -> Option<Vec<u8>>;
}

struct Quince(quince::Db);
impl Store for Quince {
    fn set(&mut self, key: &str, value: &[u8]) {
        self.0.set(key, value).unwrap()
    }
    fn get(&mut self, key: &str) -> Option<Vec<u8>> {
        self.0.get(key).unwrap()
    }
}

struct Redlite(redlite::Db);
impl Store for Redlite {
    fn set(&mut self, key: &str, value: &[u8]) {
        self.0.set(key, value, None).unwrap()
    }
    fn get(&mut self, key: &str) -> Option<Vec<u8>> {
        self.0.get(key).unwrap()
    }
}

/// SQLite as a key-value table, with cached prepared statements.
struct Sqlite(rusqlite::Connection);
impl Sqlite {
    fn new(conn: rusqlite::Connection) -> Self {
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID;",
        )
        .unwrap();
        Sqlite(conn)
    }
}
impl Store for Sqlite {
    fn set(&mut self, key: &str, value: &[u8]) {
        let mut st = self.0.prepare_cached("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)").unwrap();
        st.execute(rusqlite::params![key, value]).unwrap();
    }
    fn get(&mut self, key: &str) -> Option<Vec<u8>> {
        let mut st = self.0.prepare_cached("SELECT v FROM kv WHERE k = ?1").unwrap();
        let mut rows = st.query(rusqlite::params![key]).unwrap();
        rows.next().unwrap().map(|row| row.get(0).unwrap())
    }
}

/// Operations per second of `op` over about a second, best of `rounds`.
fn rate(rounds: usize, mut op: impl FnMut(usize)) -> f64 {
    let mut best = 0f64;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut n = 0usize;
        while start.elapsed() < Duration::from_secs(1) {
            for _ in 0..64 {
                op(n);
                n += 1;
            }
        }
        best = best.max(n as f64 / start.elapsed().as_secs_f64());
    }
    best
}

fn measure(store: &mut dyn Store, keys: &[String], rounds: usize) -> (f64, f64) {
    let value = b"value-of-ten";
    for k in keys {
        store.set(k, value);
    }
    let set = rate(rounds, |i| store.set(&keys[(i * 7919) % keys.len()], value));
    let get = rate(rounds, |i| {
        std::hint::black_box(store.get(&keys[(i * 7919) % keys.len()]));
    });
    (set, get)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let nkeys: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let keys: Vec<String> = (0..nkeys).map(|i| format!("key:{i:08}")).collect();
    let dir = std::env::temp_dir().join(format!("embedded-peers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let mut rows = Vec::new();
    for mode in ["memory", "file"] {
        let mut results = Vec::new();
        let stores: Vec<(&str, Box<dyn Store>)> = if mode == "memory" {
            vec![
                ("quince", Box::new(Quince(quince::Db::memory()))),
                ("redlite", Box::new(Redlite(redlite::Db::open_memory().unwrap()))),
                ("sqlite", Box::new(Sqlite::new(rusqlite::Connection::open_in_memory().unwrap()))),
            ]
        } else {
            vec![
                ("quince", Box::new(Quince(quince::Db::open(dir.join("quince")).unwrap()))),
                ("redlite", Box::new(Redlite(redlite::Db::open(dir.join("redlite.db").to_str().unwrap()).unwrap()))),
                ("sqlite", Box::new(Sqlite::new(rusqlite::Connection::open(dir.join("sqlite.db")).unwrap()))),
            ]
        };
        for (name, mut store) in stores {
            let (set, get) = measure(store.as_mut(), &keys, rounds);
            eprintln!("{mode} {name}: SET {set:.0}/s GET {get:.0}/s");
            results.push((name, set, get));
        }
        rows.push((mode, results));
    }
    let _ = std::fs::remove_dir_all(&dir);

    println!("| mode | op | quince | redlite | sqlite | quince/redlite | quince/sqlite |");
    println!("|---|---|---|---|---|---|---|");
    for (mode, results) in &rows {
        for (op, pick) in [("SET", 1usize), ("GET", 2)] {
            let v: Vec<f64> = results.iter().map(|r| if pick == 1 { r.1 } else { r.2 }).collect();
            let us = |ops: f64| 1e6 / ops;
            println!(
                "| {mode} | {op} | {:.2} µs | {:.2} µs | {:.2} µs | {:.1}× | {:.1}× |",
                us(v[0]),
                us(v[1]),
                us(v[2]),
                v[0] / v[1],
                v[0] / v[2]
            );
        }
    }
}
