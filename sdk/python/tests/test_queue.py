"""quince.queue: the job queue from Python, on the embedded engine and on quince-server, and
across languages (Python producers with Rust workers and the reverse)."""

import asyncio
import os
import socket
import subprocess
import threading
import time

import pytest

import quince
from quince.queue import AsyncQueue, AsyncWorker, JobError, Queue, Worker


def embedded():
    return quince.Redis(quince.memory())


def test_enqueue_fetch_ack_in_priority_order():
    q = Queue(embedded(), "t")
    ids = q.enqueue_bulk([
        dict(kind="t", payload=b"low", priority=-5),
        dict(kind="t", payload=b"first"),
        dict(kind="t", payload=b"urgent", priority=10),
    ])
    assert ids == ["1", "2", "3"]
    jobs, _ = q.fetch("w", 10, 30)
    assert [j.payload for j in jobs] == [b"urgent", b"first", b"low"]
    assert all(j.attempt == 1 and j.max_attempts == 3 for j in jobs)
    assert q.ack([(j, b"ok") for j in jobs]) == [True, True, True]
    assert q.ack([(jobs[0], b"again")]) == [False]
    counts = q.counts()
    assert (counts["done"], counts["completed"], counts["stale"]) == (3, 3, 1)
    job = q.job("3")
    assert job["state"] == b"completed" and job["result"] == b"ok"
    assert q.job("99") is None
    assert Queue.names(q.client) == ["t"]


def test_bad_input_is_refused():
    q = Queue(embedded(), "bad")
    with pytest.raises(ValueError):
        q.enqueue("t", b"x", priority=5000)
    with pytest.raises(ValueError):
        q.enqueue("", b"x")
    with pytest.raises(ValueError):
        Queue(q.client, "a{b}")
    with pytest.raises(quince.ResponseError, match="unknown option nope"):
        q.client.execute_command("FCALL", "qq_configure", 1, q.base, "nope", 1)


def test_a_stale_lease_cannot_complete_a_job():
    q = Queue(embedded(), "fence")
    q.enqueue("t", b"x")
    (first,), _ = q.fetch("w1", 1, 0.05)
    time.sleep(0.12)
    (second,), _ = q.fetch("w2", 1, 30)
    assert second.id == first.id and second.attempt == 2
    assert q.ack([(first, b"late")]) == [False]
    assert q.ack([(second, b"ok")]) == [True]
    assert q.counts()["expired"] == 1


def test_worker_results_retries_and_dead_letters():
    q = Queue(embedded(), "work")
    q.enqueue_bulk([dict(kind="double", payload=str(i).encode()) for i in range(20)])
    q.enqueue("flaky", b"", backoff=0.01)
    q.enqueue("fatal", b"")
    q.enqueue("slow", b"", timeout=0.05, max_attempts=1)
    q.enqueue("unknown", b"")
    w = Worker(q, concurrency=4, poll_max=0.05)
    runs = []

    @w.handler("double")
    def double(job):
        return str(int(job.payload) * 2).encode()

    @w.handler("flaky")
    def flaky(job):
        runs.append(job.attempt)
        if job.attempt < 2:
            raise RuntimeError("try again")
        return b"finally"

    @w.handler("fatal")
    def fatal(job):
        raise JobError.fatal("cannot decode")

    @w.handler("slow")
    def slow(job):
        time.sleep(0.3)

    report = w.run(max_jobs=25)
    assert report["completed"] == 21
    assert report["dead_lettered"] == 3
    assert runs == [1, 2]
    assert q.job("1")["result"] == b"0" and q.job("20")["result"] == b"38"
    errors = sorted(q.job(i)["error"].decode() for i in q.list("dead"))
    assert errors == ["cannot decode", 'no handler for job type "unknown"', "timed out after 50 ms"]


def test_schedule_ticks_are_enqueued_once():
    q = Queue(embedded(), "sched")
    made = [q.schedule_tick("hourly", tick * 1000, "report") for tick in (1, 1, 2, 1, 3)]
    assert [m is not None for m in made] == [True, False, True, False, True]
    assert q.counts()["ready"] == 3


class EmbeddedAsync:
    """An asyncio facade over the embedded client, for AsyncWorker's tests."""

    def __init__(self):
        self.sync = embedded()

    async def execute_command(self, *args):
        return self.sync.execute_command(*args)


def test_async_worker():
    async def main():
        q = await AsyncQueue.open(EmbeddedAsync(), "async")
        await q.enqueue_bulk([dict(kind="echo", payload=str(i).encode()) for i in range(10)])
        await q.enqueue("sleepy", b"", timeout=0.05, max_attempts=1)
        w = AsyncWorker(q, concurrency=5, poll_max=0.05)

        @w.handler("echo")
        async def echo(job):
            await asyncio.sleep(0.001)
            return job.payload

        @w.handler("sleepy")
        async def sleepy(job):
            await asyncio.sleep(1)

        report = await w.run(max_jobs=11)
        assert (report["completed"], report["dead_lettered"]) == (10, 1)
        assert (await q.job("4"))["result"] == b"3"
        assert (await q.job("11"))["error"] == b"timed out after 50 ms"

    asyncio.run(main())


# -- across languages, on quince-server ---------------------------------------------------

SERVER = os.environ.get("QUINCE_SERVER_BIN", "")
CLI = os.environ.get("QUINCE_QUEUE_BIN", "")
needs_binaries = pytest.mark.skipif(
    not (os.path.exists(SERVER) and os.path.exists(CLI)),
    reason="QUINCE_SERVER_BIN and QUINCE_QUEUE_BIN (built by cargo test) are not set",
)


@pytest.fixture
def server(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir",
                             str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.time() < deadline, "quince-server did not start"
            time.sleep(0.02)
    yield port
    proc.kill()
    proc.wait()


@needs_binaries
def test_python_enqueues_rust_works(server):
    import redis

    q = Queue(redis.Redis(port=server), "xlang")
    ids = [q.enqueue("shout", f"hello {i}".encode()) for i in range(5)]
    out = subprocess.run([CLI, "--url", f"redis://127.0.0.1:{server}/", "work", "xlang", "--type", "shout",
                          "--jobs", "5", "--", "tr", "a-z", "A-Z"], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert [q.job(i)["result"] for i in ids] == [f"HELLO {i}".encode() for i in range(5)]


@needs_binaries
def test_rust_enqueues_python_works(server):
    import redis

    url = f"redis://127.0.0.1:{server}/"
    for i in range(5):
        subprocess.run([CLI, "--url", url, "enqueue", "xlang2", "reverse", f"job {i}"], check=True, timeout=30)
    q = Queue(redis.Redis(port=server), "xlang2")
    w = Worker(q, concurrency=2, poll_max=0.05)
    w.handler("reverse")(lambda job: job.payload[::-1])
    assert w.run(max_jobs=5)["completed"] == 5
    shown = subprocess.run([CLI, "--url", url, "job", "xlang2", "5"], capture_output=True, text=True, check=True)
    assert "result: 4 boj\n" in shown.stdout and "state: completed\n" in shown.stdout


@needs_binaries
def test_asyncio_worker_on_a_server(server):
    import redis.asyncio

    async def main():
        client = redis.asyncio.Redis(port=server)
        q = await AsyncQueue.open(client, "aio")
        await q.enqueue_bulk([dict(kind="t", payload=b"x") for _ in range(50)])
        w = AsyncWorker(q, concurrency=10, poll_max=0.05)
        w.handler("t")(lambda job: asyncio.sleep(0, result=b"ok"))
        report = await w.run(max_jobs=50)
        assert report["completed"] == 50
        assert (await q.counts())["completed"] == 50
        await client.aclose()

    asyncio.run(main())


@needs_binaries
def test_worker_stops_and_releases_on_request(server):
    import redis

    q = Queue(redis.Redis(port=server), "stop")
    q.enqueue("hang", b"")
    w = Worker(q, concurrency=1, poll_max=0.05, shutdown_grace=0.1)
    started = threading.Event()

    @w.handler("hang")
    def hang(job):
        started.set()
        time.sleep(1)

    t = threading.Thread(target=lambda: setattr(t, "report", w.run()))
    t.start()
    assert started.wait(5)
    w.stop()
    t.join(10)
    assert t.report["released"] == 1
    assert q.counts()["ready"] == 1 and q.job("1").get("attempts") is None


def test_a_worker_warns_when_the_server_may_evict_jobs():
    client = embedded()
    q = Queue(client, "evict")
    client.execute_command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    w = Worker(q, poll_max=0.01)
    stop = threading.Event()
    stop.set()
    with pytest.warns(RuntimeWarning, match="maxmemory-policy is allkeys-lru"):
        report = w.run(stop=stop)
    assert report["unsafe_eviction_policy"] == "allkeys-lru"
