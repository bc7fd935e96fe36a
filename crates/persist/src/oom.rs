//! `oom-score-adj`: the process's /proc/self/oom_score_adj follows its role, as Redis's
//! setOOMScoreAdj sets it: `oom-score-adj-values` gives one value per class (master,
//! replica, background child); `relative` (or `yes`) adds it to the score the process had
//! before quince first changed it, `absolute` uses it as is, `no` puts that score back.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use quince_engine::Engine;

/// Which value of `oom-score-adj-values` applies.
#[derive(Debug, Clone, Copy)]
pub enum Class {
    Master = 0,
    Replica = 1,
    BackgroundChild = 2,
}

/// The score before quince changed it (read once, when it first does).
static ADJUSTED: AtomicBool = AtomicBool::new(false);
static BASE: AtomicI64 = AtomicI64::new(0);

const PATH: &str = "/proc/self/oom_score_adj";

/// Sets the score for `class` per the configuration; the error is Redis's log line.
pub fn apply(engine: &Engine, class: Class) -> Result<(), String> {
    let (mode, values) = {
        let config = engine.config.read();
        (
            config.get("oom-score-adj").unwrap_or("no").to_string(),
            config.get("oom-score-adj-values").unwrap_or("").to_string(),
        )
    };
    let value = if mode != "no" {
        if !ADJUSTED.swap(true, Ordering::SeqCst) {
            let base = std::fs::read_to_string(PATH).map_err(|e| {
                ADJUSTED.store(false, Ordering::SeqCst);
                format!("Unable to read oom_score_adj: {e}")
            })?;
            BASE.store(base.trim().parse().unwrap_or(0), Ordering::SeqCst);
        }
        let configured: i64 = values.split_whitespace().nth(class as usize).and_then(|v| v.parse().ok()).unwrap_or(0);
        let value = if mode == "absolute" { configured } else { configured + BASE.load(Ordering::SeqCst) };
        value.clamp(-1000, 1000)
    } else if ADJUSTED.swap(false, Ordering::SeqCst) {
        BASE.load(Ordering::SeqCst)
    } else {
        return Ok(());
    };
    std::fs::write(PATH, format!("{value}\n")).map_err(|e| format!("Unable to write oom_score_adj: {e}"))
}
