"""The embedded engine from Python: redis-py's API and return types, errors, blocking pops
across threads, pipelines/transactions, durability."""

import threading
import time

import pytest

import quince


@pytest.fixture
def r():
    return quince.Redis(quince.memory())


def test_strings(r):
    assert r.get("missing") is None
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert r.set("k", "w", nx=True) is None
    assert r.set("k", "w", get=True) == b"v"
    assert r.incr("n") == 1
    assert r.incr("n", 41) == 42
    assert r.decr("n", 2) == 40
    assert r.incrbyfloat("f", 1.5) == 1.5
    assert r.mset({"a": 1, "b": 2.5}) is True
    assert r.mget(["a", "b", "nope"]) == [b"1", b"2.5", None]
    assert r.set("t", "x", ex=100) is True
    assert 99 <= r.ttl("t") <= 100
    assert r.persist("t") is True
    assert r.ttl("t") == -1


def test_errors_have_redis_text(r):
    r.set("k", "v")
    with pytest.raises(quince.ResponseError, match="^ERR value is not an integer or out of range$"):
        r.incr("k")
    r.lpush("l", "x")
    with pytest.raises(quince.ResponseError, match="^WRONGTYPE"):
        r.get("l")
    with pytest.raises(quince.ResponseError, match="^ERR unknown command"):
        r.execute_command("NOSUCH")
    with pytest.raises(TypeError, match="Invalid input of type: 'dict'"):
        r.set("k", {"a": 1})


def test_keys_and_scan(r):
    for i in range(300):
        r.set(f"user:{i}", i)
    r.set("other", 1)
    assert set(r.scan_iter(match="user:*")) == {f"user:{i}".encode() for i in range(300)}
    assert r.dbsize() == 301
    assert r.delete("user:1", "user:2", "nope") == 2
    assert r.exists("other", "nope") == 1
    assert r.type("other") == "string"
    assert r.expire("other", 10) is True
    assert r.flushdb() is True
    assert r.dbsize() == 0


def test_collections(r):
    assert r.rpush("l", "a", "b", "c") == 3
    assert r.lrange("l", 0, -1) == [b"a", b"b", b"c"]
    assert r.lpop("l") == b"a"
    assert r.rpop("l", 2) == [b"c", b"b"]
    assert r.hset("h", "f", "1") == 1
    assert r.hset("h", mapping={"g": 2, "h": "x"}) == 2
    assert r.hgetall("h") == {b"f": b"1", b"g": b"2", b"h": b"x"}
    assert r.hincrby("h", "f", 9) == 10
    assert r.hexists("h", "g") is True
    assert r.sadd("s", "a", "b", "a") == 2
    assert r.smembers("s") == {b"a", b"b"}
    assert r.sismember("s", "a") is True
    assert r.zadd("z", {"one": 1, "two": 2.5}) == 2
    assert r.zscore("z", "two") == 2.5
    assert r.zrange("z", 0, -1) == [b"one", b"two"]
    assert r.zrange("z", 0, -1, withscores=True) == [(b"one", 1.0), (b"two", 2.5)]
    assert r.zrangebyscore("z", 2, "+inf", withscores=True) == [(b"two", 2.5)]
    assert r.zincrby("z", 1, "one") == 2.0


def test_decode_responses():
    r = quince.Redis(quince.memory(), decode_responses=True)
    r.set("k", "v")
    assert r.get("k") == "v"
    r.hset("h", mapping={"a": "1"})
    assert r.hgetall("h") == {"a": "1"}
    assert r.smembers("nope") == set()


def test_blocking_pop_across_threads(r):
    got = {}

    def waiter():
        got["value"] = r.blpop(["jobs"], timeout=10)

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.1)
    r.rpush("jobs", "job-1")
    t.join(timeout=10)
    assert got["value"] == (b"jobs", b"job-1")
    start = time.monotonic()
    assert r.brpop("empty", timeout=0.2) is None
    assert 0.15 < time.monotonic() - start < 3


def test_pipeline_and_transaction(r):
    with r.pipeline() as p:
        p.set("a", 1).incr("a").get("a").smembers("nope")
        assert p.execute() == [True, 2, b"2", set()]
    p = r.pipeline()
    p.incr("a")
    p.lpush("a", "x")
    with pytest.raises(quince.ResponseError, match="^WRONGTYPE"):
        p.execute()
    p.incr("a")
    p.lpush("a", "x")
    replies = p.execute(raise_on_error=False)
    assert replies[0] == 4
    assert isinstance(replies[1], quince.ResponseError)


def test_scripts(r):
    assert r.eval("return {KEYS[1], ARGV[1], 3}", 1, "k", "a") == [b"k", b"a", 3]
    sha = r.script_load("return redis.call('INCR', KEYS[1])")
    assert r.evalsha(sha, 1, "c") == 1


def test_threads_share_one_dataset(r):
    def work():
        for _ in range(500):
            r.incr("shared")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.get("shared") == b"4000"


def test_durable_reopen_and_lock(tmp_path):
    db = quince.open(tmp_path / "data", fsync="always")
    r = quince.Redis(db)
    r.set("k", "v")
    r.rpush("l", 1, 2)
    with pytest.raises(quince.ResponseError, match="is in use by process"):
        quince.open(tmp_path / "data")
    del r, db
    import gc

    gc.collect()
    r = quince.Redis(quince.open(tmp_path / "data"))
    assert r.get("k") == b"v"
    assert r.lrange("l", 0, -1) == [b"1", b"2"]
    with pytest.raises(ValueError):
        quince.open(tmp_path / "other", fsync="sometimes")


def test_pubsub(r):
    p = r.pubsub()
    p.subscribe("news")
    p.psubscribe("n*")
    assert p.get_message() == {"type": "subscribe", "pattern": None, "channel": b"news", "data": 1}
    assert p.get_message()["type"] == "psubscribe"
    assert p.get_message() is None, "nothing published yet (timeout 0)"
    assert r.publish("news", "hello") == 2
    got = [p.get_message(timeout=5) for _ in range(2)]
    assert {m["type"] for m in got} == {"message", "pmessage"}
    assert all(m["data"] == b"hello" and m["channel"] == b"news" for m in got)
    # Another thread publishes; get_message waits for it.
    threading.Timer(0.1, lambda: r.publish("news", "later")).start()
    m = p.get_message(ignore_subscribe_messages=True, timeout=5)
    assert m["data"] == b"later"
    assert p.get_message(timeout=5)["type"] == "pmessage"
    # A handler takes its channel's messages.
    seen = []
    q = r.pubsub(ignore_subscribe_messages=True)
    q.subscribe(alerts=seen.append)
    r.publish("alerts", "fire")
    assert q.get_message(timeout=5) is None
    assert seen[0]["data"] == b"fire"
    p.unsubscribe()
    p.punsubscribe()
    assert r.publish("news", "nobody") == 0
    p.close()
