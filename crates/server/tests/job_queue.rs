//! A real job-queue library end to end against quince: RQ (Python) from PyPI, installed in
//! a fresh virtualenv, enqueues a job, a worker runs it, and the result is read back.
//! Skips (with a message) when Python or the package registry is unavailable, unless
//! QUINCE_REQUIRE_REDIS=1 (CI), where it must run.

use std::path::Path;
use std::process::Command;

use quince_test_util::{redis_required, start_quince};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");
/// The versions this test was written against.
const PACKAGES: &[&str] = &["rq==3.0.0", "redis==8.1.0"];

const JOB_MODULE: &str = "def add(a, b):\n    return a + b\n";

const SCRIPT: &str = r#"
import sys
from redis import Redis
from rq import Queue, Worker
from jobs import add

conn = Redis(port=int(sys.argv[1]))
queue = Queue(connection=conn)
job = queue.enqueue(add, 2, 3)
worker = Worker([queue], connection=conn)
worker.work(burst=True)
job.refresh()
print("finished=%s result=%s" % (job.is_finished, job.return_value()))
"#;

fn skip_or_fail(why: &str) {
    assert!(!redis_required(), "job queue test could not run: {why}");
    eprintln!("SKIPPED: {why}");
}

/// A virtualenv with the packages, cached under the target directory between runs.
fn venv() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rq-venv");
    let python = dir.join("bin/python");
    let marker = dir.join("installed.txt");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(&PACKAGES.join(" ")) {
        return Some(python);
    }
    let created = Command::new("python3").args(["-m", "venv", "--clear"]).arg(&dir).status();
    if !created.is_ok_and(|s| s.success()) {
        skip_or_fail("python3 -m venv failed");
        return None;
    }
    let pip = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--timeout", "30"])
        .args(PACKAGES)
        .output()
        .expect("run pip");
    if !pip.status.success() {
        skip_or_fail(&format!("pip install failed (registry unreachable?): {}", String::from_utf8_lossy(&pip.stderr)));
        return None;
    }
    std::fs::write(&marker, PACKAGES.join(" ")).expect("write marker");
    Some(python)
}

#[test]
fn rq_worker_runs_a_job_against_quince() {
    let Some(python) = venv() else { return };
    let work = tempdir();
    std::fs::write(work.join("jobs.py"), JOB_MODULE).unwrap();
    std::fs::write(work.join("run.py"), SCRIPT).unwrap();
    let server = start_quince(QUINCE, &[]);
    let out = Command::new(&python)
        .arg("run.py")
        .arg(server.port.to_string())
        .current_dir(&work)
        .output()
        .expect("run the RQ script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("finished=True result=5"), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stderr.contains("Traceback"), "stderr:\n{stderr}");
}

fn tempdir() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rq-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
