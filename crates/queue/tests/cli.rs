//! The `quince-queue` command line on an embedded Db directory (no server): enqueue, list,
//! inspect, work through an external command, dead letters, pause.

use std::process::Command;

const CLI: &str = env!("CARGO_BIN_EXE_quince-queue");

fn cli(dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(CLI).arg("--dir").arg(dir).args(args).output().expect("run quince-queue");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_drives_a_queue_end_to_end() {
    let dir = std::env::temp_dir().join(format!("quince-queue-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    assert_eq!(cli(&dir, &["enqueue", "mail", "shout", "hello ada"]).1, "1\n");
    assert_eq!(cli(&dir, &["enqueue", "mail", "shout", "hello bob", "--priority", "5"]).1, "2\n");
    assert_eq!(cli(&dir, &["enqueue", "mail", "broken", "x", "--max-attempts", "1"]).1, "3\n");
    assert_eq!(cli(&dir, &["enqueue", "mail", "shout", "again", "--unique", "k"]).1, "4\n");
    assert_eq!(cli(&dir, &["enqueue", "mail", "shout", "again", "--unique", "k"]).1, "4 (already enqueued)\n");
    let (ok, _, err) = cli(&dir, &["enqueue", "mail", "shout", "x", "--priority", "5000"]);
    assert!(!ok && err.contains("priority 5000 is outside -1000..=1000"), "{err}");

    let (_, out, _) = cli(&dir, &["list", "mail", "ready"]);
    assert_eq!(out, "2\n1\n3\n4\n", "priority first, then FIFO");

    let (ok, _, err) = cli(&dir, &["work", "mail", "--type", "shout", "--jobs", "3", "--", "tr", "a-z", "A-Z"]);
    assert!(ok, "{err}");
    let (_, out, _) = cli(&dir, &["job", "mail", "1"]);
    assert!(out.contains("result: HELLO ADA\n") && out.contains("state: completed\n"), "{out}");

    let (ok, _, err) =
        cli(&dir, &["work", "mail", "--type", "broken", "--jobs", "1", "--", "sh", "-c", "echo no >&2; exit 3"]);
    assert!(ok, "{err}");
    assert_eq!(cli(&dir, &["list", "mail", "dead"]).1, "3\n");
    let (_, out, _) = cli(&dir, &["job", "mail", "3"]);
    assert!(out.contains("error: sh exited with 3: no\n") && out.contains("state: dead\n"), "{out}");
    assert_eq!(cli(&dir, &["dead", "mail", "retry", "3"]).1, "1\n");
    assert_eq!(cli(&dir, &["list", "mail", "ready"]).1, "3\n");
    assert_eq!(cli(&dir, &["cancel", "mail", "3"]).1, "Cancelled\n");

    cli(&dir, &["pause", "mail"]);
    let (_, out, _) = cli(&dir, &["queues"]);
    let row = out.lines().nth(1).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols, ["mail", "0", "0", "0", "0", "0", "4", "3", "yes"], "{out}");

    let (ok, _, err) = cli(&dir, &["job", "mail", "99"]);
    assert!(!ok && err.contains("no job 99 in mail"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
