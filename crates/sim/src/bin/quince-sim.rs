//! `quince-sim [--from S] [--seeds N]`: runs seeds S..S+N (default 0..10000) and stops at
//! the first failure, printing its seed and trace; `quince-sim --seed S` replays one seed.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(|v| {
            v.parse::<u64>().unwrap_or_else(|_| {
                eprintln!("{name} wants a number, got '{v}'");
                std::process::exit(2)
            })
        })
    };
    let started = Instant::now();
    if let Some(seed) = value("--seed") {
        match quince_sim::run(seed, &quince_sim::Options::for_seed(seed)) {
            Ok(report) => println!("seed {seed}: held ({report:?})"),
            Err(failure) => {
                print!("{failure}");
                std::process::exit(1);
            }
        }
        return;
    }
    let (from, count) = (value("--from").unwrap_or(0), value("--seeds").unwrap_or(10_000));
    match quince_sim::run_seeds(from, count) {
        Ok(report) => println!(
            "seeds {from}..{}: all held: {} writes, {} acknowledged, {} crashes in {:.1} s",
            from + count,
            report.writes,
            report.acknowledged,
            report.crashes,
            started.elapsed().as_secs_f64()
        ),
        Err(failure) => {
            print!("{failure}");
            std::process::exit(1);
        }
    }
}
