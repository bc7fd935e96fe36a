"""quince-queue from Python: the same queue as the Rust crate, on any Redis 7 server or on the
embedded engine.

    import redis, quince
    from quince.queue import Queue, Worker

    q = Queue(redis.Redis(), "emails")           # or Queue(quince.Redis(quince.memory()), ...)
    q.enqueue("welcome", b'{"to": "ada"}', priority=5)

    worker = Worker(q, concurrency=8)

    @worker.handler("welcome")
    def welcome(job):
        send(job.payload)
        return b"sent"                          # the job's result

    worker.run()                                # until stop() or Ctrl-C

Every state change is one function of the queue's FUNCTION library (shared with the Rust
crate and loaded by the client when missing), so producers and workers in Rust, Python and Go
share one queue. `AsyncQueue` and `AsyncWorker` do the same over `redis.asyncio`.
Delivery is at-least-once with leases renewed by heartbeats; completion is exactly-once
(reports carry the lease's fencing token). docs/queue.md has the data layout.
"""

import concurrent.futures
import random
import threading
import time

from ._quince import QUEUE_LIBRARY

__all__ = ["AsyncQueue", "AsyncWorker", "Job", "JobError", "Queue", "Worker", "LIBRARY_VERSION"]

LIBRARY_VERSION = 2
REGISTRY_KEY = "qq:queues"
PRIORITY_MAX = 1000


class JobError(Exception):
    """A failed attempt. `JobError.fatal(msg)` dead-letters the job at once (no retry can
    help, e.g. an undecodable payload); any other exception is retried while attempts remain."""

    def __init__(self, message, retry=True):
        super().__init__(message)
        self.retry = retry

    @classmethod
    def fatal(cls, message):
        return cls(message, retry=False)


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _bytes(v):
    if isinstance(v, bytes):
        return v
    return str(v).encode()


class Job:
    """A job leased to this worker."""

    __slots__ = ("queue", "id", "token", "kind", "payload", "attempt", "max_attempts", "timeout_ms", "backoff_ms")

    def __init__(self, queue, fields):
        self.queue = queue
        self.id = _text(fields[0])
        self.token = _text(fields[1])
        self.kind = _text(fields[2])
        self.payload = _bytes(fields[3])
        self.attempt = int(fields[4])
        opts = (_text(fields[5]).split(" ") + ["0", "0", "0"])[:3]
        self.max_attempts, self.timeout_ms, self.backoff_ms = (max(int(opts[0]), 1), int(opts[1]), int(opts[2]))

    def retry_delay(self):
        """Seconds before the next attempt: backoff doubled per attempt (capped at an hour),
        half fixed and half random."""
        full = min(self.backoff_ms * (2 ** min(self.attempt - 1, 30)), 3_600_000)
        return (full / 2 + random.uniform(0, full / 2)) / 1000

    def __repr__(self):
        return f"Job(queue={self.queue!r}, id={self.id!r}, kind={self.kind!r}, attempt={self.attempt})"


def _job_fields(kind, payload, priority=0, delay=0.0, run_at_ms=0, max_attempts=3, timeout=None, backoff=1.0,
                unique=None, unique_ttl=0.0, after=()):
    if not kind:
        raise ValueError("a job needs a type")
    if not -PRIORITY_MAX <= int(priority) <= PRIORITY_MAX:
        raise ValueError(f"priority {priority} is outside -1000..=1000")
    if int(max_attempts) < 1:
        raise ValueError("max_attempts must be at least 1")
    parents = [str(p) for p in after]
    if any(not p or any(c.isspace() for c in p) for p in parents):
        raise ValueError("a parent id is empty or has whitespace")
    return [
        kind, _bytes(payload), int(priority), int(delay * 1000), int(run_at_ms), int(max_attempts),
        int((timeout or 0) * 1000), unique or "", int(unique_ttl * 1000), " ".join(parents), int(backoff * 1000),
    ]


def _pairs(reply):
    return {_text(k): v for k, v in zip(reply[::2], reply[1::2])}


def _counts(reply):
    counts = {k: int(v) for k, v in _pairs(reply).items()}
    counts["paused"] = bool(counts.get("paused"))
    return counts


def _is_error(e):
    return "error" in type(e).__name__.lower()


class _Calls:
    """The arguments and reply parsing of each library function, shared by sync and async."""

    def __init__(self, name):
        if not name or len(name) > 200 or "{" in name or "}" in name or any(c.isspace() for c in name):
            raise ValueError(f"queue name {name!r}: 1 to 200 characters, no braces or whitespace")
        self.name = name
        self.base = "qq:{" + name + "}"
        self.signal_key = self.base + ":signal"

    @staticmethod
    def _library_current(version):
        """Ours or a newer library (versions only add functions); None: no library."""
        return version is not None and int(version) >= LIBRARY_VERSION

    @staticmethod
    def _enqueue_args(jobs):
        args = [len(jobs)]
        for job in jobs:
            args.extend(_job_fields(**job))
        return args

    @staticmethod
    def _fetch_args(worker, count, lease):
        return worker, int(count), max(int(lease * 1000), 1)

    def _parse_fetch(self, reply):
        return [Job(self.name, reply[i:i + 6]) for i in range(1, len(reply) - 5, 6)], int(reply[0])

    @staticmethod
    def _ack_args(done):
        args = [len(done)]
        for job, result in done:
            args.extend([job.id, job.token, job.attempt, _bytes(result if result is not None else b"")])
        return args

    @staticmethod
    def _fail_args(job, error, retry_in):
        delay = -1 if retry_in is None else int(retry_in * 1000)
        return job.id, job.token, job.attempt, str(error), delay

    @staticmethod
    def _heartbeat_args(jobs, lease):
        args = [max(int(lease * 1000), 1)]
        for job in jobs:
            args.extend([job.id, job.token])
        return args

    @staticmethod
    def _release_args(jobs):
        args = []
        for job in jobs:
            args.extend([job.id, job.token])
        return args


class Queue(_Calls):
    """A named queue on a redis-py-compatible client (`redis.Redis`, `quince.Redis`)."""

    def __init__(self, client, name):
        super().__init__(name)
        self.client = client
        try:
            version = self._call("qq_version")
        except Exception as e:  # noqa: BLE001 (no library yet: the server's error type varies)
            if not _is_error(e):
                raise
            version = None
        if not self._library_current(version):
            client.execute_command("FUNCTION", "LOAD", "REPLACE", QUEUE_LIBRARY)
        client.execute_command("SADD", REGISTRY_KEY, name)

    def _call(self, function, *args):
        return self.client.execute_command("FCALL", function, 1, self.base, *args)

    @staticmethod
    def names(client):
        return sorted(_text(n) for n in client.execute_command("SMEMBERS", REGISTRY_KEY))

    def enqueue(self, kind, payload=b"", **options):
        """Enqueues one job; returns its id (or, for a held `unique` key, the holder's)."""
        return self.enqueue_bulk([dict(kind=kind, payload=payload, **options)])[0]

    def enqueue_bulk(self, jobs):
        """Enqueues dicts of `enqueue`'s arguments atomically, in one round trip."""
        return [_text(i) for i in self._call("qq_enqueue", *self._enqueue_args(jobs))[::2]]

    def fetch(self, worker, count, lease):
        """Leases up to `count` jobs: (jobs, hint ms to wait when none; -2 when paused)."""
        return self._parse_fetch(self._call("qq_fetch", *self._fetch_args(worker, count, lease)))

    def ack(self, done):
        """Completes [(job, result bytes)]; per job True, or False if its lease was stale."""
        return [int(v) == 1 for v in self._call("qq_ack", *self._ack_args(done))]

    def fail(self, job, error, retry_in=None):
        """Records a failed attempt, retried after `retry_in` seconds (None: dead-letter it)."""
        return _text(self._call("qq_fail", *self._fail_args(job, error, retry_in)))

    def heartbeat(self, jobs, lease):
        """Extends leases; per job 1 (held), 0 (lost: stop, report nothing), 2 (cancel)."""
        return [int(v) for v in self._call("qq_heartbeat", *self._heartbeat_args(jobs, lease))]

    def release(self, jobs):
        return int(self._call("qq_release", *self._release_args(jobs)))

    def progress(self, job, progress):
        return int(self._call("qq_progress", job.id, job.token, _bytes(progress))) == 1

    def cancel(self, job_id):
        return _text(self._call("qq_cancel", job_id))

    def pause(self):
        self._call("qq_pause")

    def resume(self):
        self._call("qq_resume")

    def configure(self, rate_limit=None, keep_done=None, keep_done_for=None, keep_dead=None, keep_dead_for=None,
                  events=None):
        """rate_limit: (max leases, per seconds); keep_*: counts (-1 unlimited) and ages in seconds."""
        args = []
        if rate_limit:
            args += ["rate_max", int(rate_limit[0]), "rate_ms", max(int(rate_limit[1] * 1000), 1)]
        for field, value in (("keep_done", keep_done), ("keep_dead", keep_dead)):
            if value is not None:
                args += [field, int(value)]
        for field, value in (("keep_done_ms", keep_done_for), ("keep_dead_ms", keep_dead_for)):
            if value is not None:
                args += [field, int(value * 1000)]
        if events is not None:
            args += ["events", int(bool(events))]
        if args:
            self._call("qq_configure", *args)

    def counts(self):
        return _counts(self._call("qq_counts"))

    def job(self, job_id):
        """Every field of a job as a dict of str to bytes, or None."""
        reply = self._call("qq_job", job_id)
        return _pairs(reply) if reply else None

    def list(self, state, offset=0, count=100):
        return [_text(i) for i in self._call("qq_list", state, int(offset), int(count))]

    def retry_dead(self, ids=(), limit=1000):
        return int(self._call("qq_dead_retry", int(limit), *ids))

    def purge_dead(self, ids=(), limit=1000):
        return int(self._call("qq_dead_purge", int(limit), *ids))

    def schedule_tick(self, name, tick_ms, kind, payload=b"", **options):
        reply = self._call("qq_schedule", name, int(tick_ms), *_job_fields(kind, payload, **options))
        return None if reply is None else _text(reply)

    def server_time_ms(self):
        return int(self._call("qq_time"))


def _eviction_policy(reply):
    """maxmemory-policy from a CONFIG GET reply (a list or a dict)."""
    if isinstance(reply, dict):
        values = list(reply.values())
    else:
        values = list(reply)[1::2]
    return _text(values[0]) if values else "noeviction"


def _warn_eviction(policy, report):
    if policy != "noeviction":
        import warnings

        warnings.warn(f"maxmemory-policy is {policy}: under memory pressure the server may evict queue keys and "
                      "lose jobs; set maxmemory-policy noeviction", RuntimeWarning, stacklevel=3)
        report["unsafe_eviction_policy"] = policy


def _worker_name():
    import os
    import socket

    return f"{socket.gethostname()}-{os.getpid()}-{random.randrange(1 << 16):04x}"


class _Report(dict):
    def __init__(self):
        super().__init__(completed=0, retried=0, dead_lettered=0, cancelled=0, stale=0, lost=0, released=0)

    def failed(self, outcome):
        key = {"retry": "retried", "dead": "dead_lettered", "cancelled": "cancelled"}.get(outcome, "stale")
        self[key] += 1


class _WorkerOptions:
    """What both workers are configured with, and their handler registry."""

    def __init__(self, queue, concurrency=10, lease=30.0, poll_max=1.0, job_timeout=None, shutdown_grace=10.0,
                 name=None):
        self.queue = queue
        self.concurrency = concurrency
        self.lease = lease
        self.poll_max = poll_max
        self.job_timeout = job_timeout
        self.shutdown_grace = shutdown_grace
        self.name = name or _worker_name()
        self.handlers = {}

    def handler(self, kind):
        """Decorator: `@worker.handler("email")` on the handler of jobs of type "email"."""

        def register(fn):
            self.handlers[kind] = fn
            return fn

        return register

    def _handler_of(self, job):
        fn = self.handlers.get(job.kind)
        if fn is None:
            raise JobError.fatal(f'no handler for job type "{job.kind}"')
        return fn

    def stop(self):
        self._stop.set()


class Worker(_WorkerOptions):
    """Runs handlers (`def f(job) -> bytes | None`) for a queue's jobs on a thread pool of
    `concurrency` threads."""

    def __init__(self, queue, **options):
        super().__init__(queue, **options)
        self._stop = threading.Event()

    def _run_one(self, job):
        return self._handler_of(job)(job)

    def run(self, stop=None, max_jobs=None):
        """Works until stop() (or the `stop` Event, or `max_jobs` reports); returns a report."""
        stop = stop or self._stop
        q, report = self.queue, _Report()
        _warn_eviction(_eviction_policy(q.client.execute_command("CONFIG", "GET", "maxmemory-policy")), report)
        running = {}  # future -> (job, deadline for its lease, started)
        done_jobs = 0
        next_beat = time.monotonic() + self.lease / 3
        with concurrent.futures.ThreadPoolExecutor(self.concurrency) as pool:
            while True:
                finished = [f for f in running if f.done()]
                timed_out = []
                now = time.monotonic()
                for f, (job, _, started) in running.items():
                    limit = job.timeout_ms / 1000 if job.timeout_ms else self.job_timeout
                    if not f.done() and limit and now - started > limit:
                        timed_out.append(f)
                done_jobs += self._report(running, finished, timed_out, report)
                if max_jobs is not None and done_jobs >= max_jobs:
                    stop.set()
                if stop.is_set():
                    break
                if time.monotonic() >= next_beat:
                    self._heartbeat(running, report)
                    next_beat = time.monotonic() + self.lease / 3
                free = self.concurrency - len(running)
                hint = -1
                if free > 0:
                    since = time.monotonic()
                    jobs, hint = q.fetch(self.name, free, self.lease)
                    for job in jobs:
                        running[pool.submit(self._run_one, job)] = (job, since + self.lease, time.monotonic())
                    if jobs:
                        continue
                if running:
                    concurrent.futures.wait(list(running), timeout=0.05,
                                            return_when=concurrent.futures.FIRST_COMPLETED)
                else:
                    wait = self.poll_max if hint <= 0 else min(self.poll_max, hint / 1000)
                    q.client.execute_command("BLPOP", q.signal_key, max(wait, 0.01))
            # Shutdown: let running handlers finish for the grace period, release the rest.
            deadline = time.monotonic() + self.shutdown_grace
            while running and time.monotonic() < deadline:
                concurrent.futures.wait(list(running), timeout=0.05, return_when=concurrent.futures.FIRST_COMPLETED)
                self._report(running, [f for f in running if f.done()], [], report)
            if running:
                report["released"] += q.release([job for job, _, _ in running.values()])
                for f in running:
                    f.cancel()
        return dict(report)

    def _report(self, running, finished, timed_out, report):
        q = self.queue
        successes, count = [], 0
        for f in finished:
            job, _, _ = running.pop(f)
            count += 1
            try:
                successes.append((job, f.result()))
            except Exception as e:  # noqa: BLE001 (a handler's failure is the job's)
                retry = getattr(e, "retry", True) and job.attempt < job.max_attempts
                report.failed(q.fail(job, e, job.retry_delay() if retry else None))
        for f in timed_out:
            job, _, _ = running.pop(f)
            count += 1
            retry = job.attempt < job.max_attempts
            limit = job.timeout_ms or int((self.job_timeout or 0) * 1000)
            report.failed(q.fail(job, f"timed out after {limit} ms", job.retry_delay() if retry else None))
        if successes:
            for ok in q.ack(successes):
                report["completed" if ok else "stale"] += 1
        return count

    def _heartbeat(self, running, report):
        if not running:
            return
        since = time.monotonic()
        items = list(running.items())
        statuses = self.queue.heartbeat([job for _, (job, _, _) in items], self.lease)
        for (f, (job, _, started)), status in zip(items, statuses):
            if status == 0:
                # Lost: the thread cannot be stopped, but its outcome is not reported.
                running.pop(f, None)
                report["lost"] += 1
            elif status == 2:
                running.pop(f, None)
                report.failed(self.queue.fail(job, "cancelled while running", None))
            else:
                running[f] = (job, since + self.lease, started)


class AsyncQueue(_Calls):
    """`Queue` over an asyncio client (`redis.asyncio.Redis`). Create with `await AsyncQueue.open(...)`."""

    def __init__(self, client, name):
        super().__init__(name)
        self.client = client

    @classmethod
    async def open(cls, client, name):
        q = cls(client, name)
        try:
            version = await q._call("qq_version")
        except Exception as e:  # noqa: BLE001
            if not _is_error(e):
                raise
            version = None
        if not q._library_current(version):
            await client.execute_command("FUNCTION", "LOAD", "REPLACE", QUEUE_LIBRARY)
        await client.execute_command("SADD", REGISTRY_KEY, name)
        return q

    async def _call(self, function, *args):
        return await self.client.execute_command("FCALL", function, 1, self.base, *args)

    async def enqueue(self, kind, payload=b"", **options):
        return (await self.enqueue_bulk([dict(kind=kind, payload=payload, **options)]))[0]

    async def enqueue_bulk(self, jobs):
        return [_text(i) for i in (await self._call("qq_enqueue", *self._enqueue_args(jobs)))[::2]]

    async def fetch(self, worker, count, lease):
        return self._parse_fetch(await self._call("qq_fetch", *self._fetch_args(worker, count, lease)))

    async def ack(self, done):
        return [int(v) == 1 for v in await self._call("qq_ack", *self._ack_args(done))]

    async def fail(self, job, error, retry_in=None):
        return _text(await self._call("qq_fail", *self._fail_args(job, error, retry_in)))

    async def heartbeat(self, jobs, lease):
        return [int(v) for v in await self._call("qq_heartbeat", *self._heartbeat_args(jobs, lease))]

    async def release(self, jobs):
        return int(await self._call("qq_release", *self._release_args(jobs)))

    async def counts(self):
        return _counts(await self._call("qq_counts"))

    async def job(self, job_id):
        reply = await self._call("qq_job", job_id)
        return _pairs(reply) if reply else None

    async def cancel(self, job_id):
        return _text(await self._call("qq_cancel", job_id))


class AsyncWorker(_WorkerOptions):
    """Runs coroutine handlers (`async def f(job)`) as asyncio tasks, `concurrency` at once."""

    def __init__(self, queue, **options):
        import asyncio

        super().__init__(queue, **options)
        self._asyncio = asyncio
        self._stop = asyncio.Event()

    async def _run_one(self, job):
        fn = self._handler_of(job)
        limit = job.timeout_ms / 1000 if job.timeout_ms else self.job_timeout
        try:
            return await self._asyncio.wait_for(fn(job), limit)
        except self._asyncio.TimeoutError:
            raise JobError(f"timed out after {int(limit * 1000)} ms") from None

    async def run(self, max_jobs=None):
        asyncio, q, report = self._asyncio, self.queue, _Report()
        _warn_eviction(_eviction_policy(await q.client.execute_command("CONFIG", "GET", "maxmemory-policy")), report)
        running = {}  # task -> job
        done_jobs = 0
        next_beat = time.monotonic() + self.lease / 3
        while not self._stop.is_set():
            finished = [t for t in running if t.done()]
            done_jobs += await self._report(running, finished, report)
            if max_jobs is not None and done_jobs >= max_jobs:
                break
            if time.monotonic() >= next_beat and running:
                jobs = list(running.items())
                for (task, job), status in zip(jobs, await q.heartbeat([j for _, j in jobs], self.lease)):
                    if status in (0, 2):
                        running.pop(task, None)
                        task.cancel()
                        if status == 0:
                            report["lost"] += 1
                        else:
                            report.failed(await q.fail(job, "cancelled while running", None))
                next_beat = time.monotonic() + self.lease / 3
            free = self.concurrency - len(running)
            hint = -1
            if free > 0:
                jobs, hint = await q.fetch(self.name, free, self.lease)
                for job in jobs:
                    running[asyncio.ensure_future(self._run_one(job))] = job
                if jobs:
                    continue
            if running:
                await asyncio.wait(list(running), timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
            else:
                wait = self.poll_max if hint <= 0 else min(self.poll_max, hint / 1000)
                await q.client.execute_command("BLPOP", q.signal_key, max(wait, 0.01))
        if running:
            await asyncio.wait(list(running), timeout=self.shutdown_grace)
            await self._report(running, [t for t in running if t.done()], report)
        if running:
            for task in running:
                task.cancel()
            report["released"] += await q.release(list(running.values()))
        return dict(report)

    async def _report(self, running, finished, report):
        q, successes = self.queue, []
        for task in finished:
            job = running.pop(task)
            if task.cancelled():
                continue
            e = task.exception()
            if e is None:
                successes.append((job, task.result()))
            else:
                retry = getattr(e, "retry", True) and job.attempt < job.max_attempts
                report.failed(await q.fail(job, e, job.retry_delay() if retry else None))
        if successes:
            for ok in await q.ack(successes):
                report["completed" if ok else "stale"] += 1
        return len(finished)
