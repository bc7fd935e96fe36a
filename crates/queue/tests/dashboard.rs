//! The dashboard over an embedded store: its JSON and Prometheus endpoints over HTTP, and
//! the page itself in headless Chromium (Debian's `chromium` and `chromium-driver`): DOM
//! assertions, the retry and delete buttons clicked through WebDriver, and a screenshot
//! (target/dashboard.png). Without Chromium the browser part skips with a message, unless
//! QUINCE_REQUIRE_CHROMIUM=1 (CI).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quince_queue::{Embedded, JobSpec, Queue, State};
use serde_json::{json, Value};

/// One HTTP/1.1 request with `Connection: close`; returns status and body.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    // Read the head, then exactly Content-Length bytes (chromedriver keeps connections open).
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buf).expect("read a response");
        assert!(n > 0, "connection closed before the response head");
        response.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&response[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let length =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok());
    match length {
        Some(length) => {
            while response.len() < head_end + length {
                let n = stream.read(&mut buf).expect("read a body");
                assert!(n > 0, "connection closed inside the body");
                response.extend_from_slice(&buf[..n]);
            }
        }
        None => {
            let _ = stream.read_to_end(&mut response);
        }
    }
    (status, String::from_utf8_lossy(&response[head_end..]).into_owned())
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| std::path::Path::new(d).join(name)).find(|p| p.is_file())
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_dashboard_shows_and_acts_on_queues() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let store = Embedded::new(quince::Db::memory());
    let (queue, dead_ids) = rt.block_on(async {
        let q = Queue::new(store.clone(), "mail").await.unwrap();
        q.enqueue_bulk(&vec![JobSpec::new("welcome", "x"); 5]).await.unwrap();
        let jobs = q.fetch("w", 4, Duration::from_secs(30)).await.unwrap().jobs;
        q.ack(&[(&jobs[0], b"ok"), (&jobs[1], b"ok")]).await.unwrap();
        q.fail(&jobs[2], "boom: the mail server said no", None).await.unwrap();
        q.fail(&jobs[3], "second failure", None).await.unwrap();
        q.schedule_tick("nightly", 1_700_000_000_000, &JobSpec::new("report", "")).await.unwrap();
        let dead = q.list(State::Dead, 0, 10).await.unwrap();
        (q, dead)
    });
    assert_eq!(dead_ids.len(), 2);
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let port = listener.local_addr().unwrap().port();
    rt.spawn(quince_queue::dashboard::serve(store.clone(), listener));

    let (status, metrics) = http(port, "GET", "/metrics", None);
    assert_eq!(status, 200);
    for line in [
        "quince_queue_jobs{queue=\"mail\",state=\"ready\"} 2",
        "quince_queue_jobs{queue=\"mail\",state=\"dead\"} 2",
        "quince_queue_events_total{queue=\"mail\",event=\"completed\"} 2",
        "quince_queue_paused{queue=\"mail\"} 0",
        "quince_queue_eviction_unsafe{policy=\"noeviction\"} 0",
    ] {
        assert!(metrics.lines().any(|l| l == line), "missing {line:?} in\n{metrics}");
    }
    let (status, overview) = http(port, "GET", "/api/overview", None);
    assert_eq!(status, 200);
    assert!(overview.contains("\"name\":\"mail\"") && overview.contains("boom: the mail server said no"), "{overview}");
    let (status, _) = http(port, "POST", "/api/queues/mail/pause", None);
    assert_eq!(status, 200);
    assert!(rt.block_on(queue.counts()).unwrap().paused);
    http(port, "POST", "/api/queues/mail/resume", None);

    let Some(chromium) = which("chromium") else {
        if std::env::var("QUINCE_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1") {
            panic!("QUINCE_REQUIRE_CHROMIUM=1 but chromium is not on PATH");
        }
        eprintln!("SKIPPED: chromium not found on PATH (apt-get install -y chromium chromium-driver); the page was not checked");
        return;
    };
    let url = format!("http://127.0.0.1:{port}/");
    let dom = Command::new(&chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000", "--dump-dom", &url])
        .stderr(Stdio::null())
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("data-loaded=\"yes\""), "the page's script ran: {dom}");
    for fragment in [
        "<tr data-queue=\"mail\"><td class=\"name\">mail</td><td class=\"ready\">2</td>",
        "<td class=\"dead\">2</td><td class=\"completed\">2</td>",
        "boom: the mail server said no",
        "<svg class=\"throughput\"",
        "<svg class=\"latency-chart\"",
        "class=\"retry\"",
        "class=\"delete\"",
        "nightly",
        "2023-11-14T22:13:20.000Z",
    ] {
        assert!(dom.contains(fragment), "missing {fragment:?} in the page:\n{dom}");
    }
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dashboard.png");
    let _ = std::fs::remove_file(&shot);
    Command::new(&chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000", "--window-size=1280,800"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run chromium");
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "screenshot of {} bytes", png.len());
    eprintln!("dashboard screenshot: {}", shot.display());

    // The buttons, clicked in the browser through WebDriver.
    let Some(driver) = which("chromedriver") else {
        if std::env::var("QUINCE_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1") {
            panic!("QUINCE_REQUIRE_CHROMIUM=1 but chromedriver is not on PATH");
        }
        eprintln!("SKIPPED: chromedriver not found (apt-get install -y chromium-driver); buttons not clicked");
        return;
    };
    let driver_port = free_port();
    let _driver = Killed(
        Command::new(driver)
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", driver_port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
        "binary": chromium.to_str().unwrap(),
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"],
    }}}});
    let (_, session) = http(driver_port, "POST", "/session", Some(&caps));
    let session: Value = serde_json::from_str(&session).expect("a WebDriver session");
    let id = session["value"]["sessionId"].as_str().expect("sessionId").to_string();
    http(driver_port, "POST", &format!("/session/{id}/url"), Some(&json!({"url": url})));
    let click = |selector: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (_, found) = http(
                driver_port,
                "POST",
                &format!("/session/{id}/element"),
                Some(&json!({"using": "css selector", "value": selector})),
            );
            let found: Value = serde_json::from_str(&found).unwrap_or(Value::Null);
            if let Some(element) = found["value"]["element-6066-11e4-a52e-4f735466cecf"].as_str() {
                let (_, clicked) =
                    http(driver_port, "POST", &format!("/session/{id}/element/{element}/click"), Some(&json!({})));
                // The page re-renders every 2 s: an element found just before is stale; find again.
                let clicked: Value = serde_json::from_str(&clicked).unwrap_or(Value::Null);
                if clicked["value"].get("error").is_none() {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "no element {selector}: {found}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    click(&format!("tr[data-job='mail/{}'] button.retry", dead_ids[0]));
    click(&format!("tr[data-job='mail/{}'] button.delete", dead_ids[1]));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let c = rt.block_on(queue.counts()).unwrap();
        if c.dead == 0 {
            assert_eq!(c.ready, 3, "the retried job is ready again: {c:?}");
            assert!(rt.block_on(queue.job(&dead_ids[1])).unwrap().is_none(), "the deleted job is gone");
            break;
        }
        assert!(Instant::now() < deadline, "the buttons did not act: {c:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    http(driver_port, "DELETE", &format!("/session/{id}"), None);
}
