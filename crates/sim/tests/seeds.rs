//! The simulator in CI: ten thousand seeds hold (split over the machine's cores), and a
//! test build with a known bug put back (`--features seeded-bug`) fails on some seed,
//! which replays alone to the same failure.

#[cfg(not(feature = "seeded-bug"))]
#[test]
fn ten_thousand_seeds_hold() {
    const SEEDS: u64 = 10_000;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4) as u64;
    let started = std::time::Instant::now();
    let runs: Vec<_> = (0..threads)
        .map(|t| {
            let (from, to) = (SEEDS * t / threads, SEEDS * (t + 1) / threads);
            std::thread::spawn(move || quince_sim::run_seeds(from, to - from))
        })
        .collect();
    let (mut writes, mut crashes) = (0, 0);
    for run in runs {
        match run.join().expect("a simulation thread") {
            Ok(report) => {
                writes += report.writes;
                crashes += report.crashes;
            }
            Err(failure) => panic!("{failure}"),
        }
    }
    eprintln!("{SEEDS} seeds held: {writes} writes, {crashes} crashes in {:.1} s", started.elapsed().as_secs_f64());
    assert!(crashes >= SEEDS as usize, "every seed ends with a crash at least");
}

#[cfg(feature = "seeded-bug")]
#[test]
fn the_seeded_bug_is_found_and_replayed_from_its_seed() {
    let failure = quince_sim::run_seeds(0, 10_000).expect_err("the seeded bug must break some seed");
    eprintln!("{failure}");
    let options = quince_sim::Options::for_seed(failure.seed);
    for _ in 0..2 {
        let again = quince_sim::run(failure.seed, &options).expect_err("the seed fails again alone");
        assert_eq!(again.message, failure.message);
        assert_eq!(again.trace, failure.trace, "the replay takes the same steps");
    }
}
