"""The quince engine embedded in Python: Redis's data types and commands, no server.

    import quince
    r = quince.Redis(quince.memory())            # or quince.Redis(quince.open("data"))
    r.set("greeting", "hello")
    r.get("greeting")                            # b'hello'

`Redis` follows redis-py's methods, arguments and return types for the core families, so code
written for redis-py switches with one line; `execute_command` runs anything else. Replies are
bytes unless `decode_responses=True`. The GIL is released while the engine works or a blocking
command waits.
"""

from ._quince import Db, ResponseError

__all__ = ["Db", "Redis", "ResponseError", "memory", "open", "Pipeline", "PubSub"]


def memory():
    """A new, empty dataset in memory."""
    return Db.memory()


def open(path, fsync="everysec"):  # noqa: A001 (the package's verb, as sqlite3.connect)
    """Opens (or creates) a durable dataset in `path` (quince-server's directory layout).

    fsync: "always" (a write returns once on disk), "everysec" or "no".
    """
    return Db.open(str(path), fsync)


def _decode(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_decode(v) for v in value)
    if isinstance(value, set):
        return {_decode(v) for v in value}
    if isinstance(value, dict):
        return {_decode(k): _decode(v) for k, v in value.items()}
    return value


def _ok(reply):
    return reply == "OK" or reply is True


def _pairs_to_dict(reply):
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2]))


def _with_scores(reply, score_cast=float):
    # RESP3: [[member, score], ...]; RESP2 shape: [member, score, member, score...]
    if reply and isinstance(reply[0], list):
        return [(m, score_cast(s)) for m, s in reply]
    return [(m, score_cast(s)) for m, s in zip(reply[::2], reply[1::2])]


class Redis:
    """redis-py's `Redis` API over an embedded `Db`."""

    def __init__(self, db=None, decode_responses=False):
        self.db = db if db is not None else Db.memory()
        self.decode_responses = decode_responses

    # -- plumbing --------------------------------------------------------------------
    def execute_command(self, *args):
        reply = self.db.execute(*args)
        return _decode(reply) if self.decode_responses else reply

    def pipeline(self, transaction=True):
        return Pipeline(self, transaction)

    def pubsub(self, ignore_subscribe_messages=False):
        return PubSub(self, ignore_subscribe_messages)

    def publish(self, channel, message):
        return self.execute_command("PUBLISH", channel, message)

    def select(self, index):
        """A client on database `index` (redis-py selects per connection: here per object)."""
        return Redis(self.db.select(index), self.decode_responses)

    # -- server and keys -------------------------------------------------------------
    def ping(self):
        return self.execute_command("PING") in ("PONG", b"PONG")

    def dbsize(self):
        return self.execute_command("DBSIZE")

    def flushdb(self):
        return _ok(self.execute_command("FLUSHDB"))

    def delete(self, *names):
        return self.execute_command("DEL", *names)

    def exists(self, *names):
        return self.execute_command("EXISTS", *names)

    def expire(self, name, time):
        return bool(self.execute_command("EXPIRE", name, _seconds(time)))

    def pexpire(self, name, time):
        return bool(self.execute_command("PEXPIRE", name, _millis(time)))

    def persist(self, name):
        return bool(self.execute_command("PERSIST", name))

    def ttl(self, name):
        return self.execute_command("TTL", name)

    def pttl(self, name):
        return self.execute_command("PTTL", name)

    def type(self, name):
        return self.execute_command("TYPE", name)

    def keys(self, pattern="*"):
        return self.execute_command("KEYS", pattern)

    def scan_iter(self, match=None, count=None):
        cursor = "0"
        while True:
            args = ["SCAN", cursor]
            if match is not None:
                args += ["MATCH", match]
            if count is not None:
                args += ["COUNT", count]
            cursor, keys = self.db.execute(*args)
            for key in keys:
                yield _decode(key) if self.decode_responses else key
            if cursor in (b"0", "0"):
                return

    # -- strings ---------------------------------------------------------------------
    def get(self, name):
        return self.execute_command("GET", name)

    def set(self, name, value, ex=None, px=None, nx=False, xx=False, keepttl=False, get=False, exat=None, pxat=None):
        args = ["SET", name, value]
        if ex is not None:
            args += ["EX", _seconds(ex)]
        if px is not None:
            args += ["PX", _millis(px)]
        if exat is not None:
            args += ["EXAT", int(exat)]
        if pxat is not None:
            args += ["PXAT", int(pxat)]
        if keepttl:
            args.append("KEEPTTL")
        if nx:
            args.append("NX")
        if xx:
            args.append("XX")
        if get:
            args.append("GET")
        reply = self.execute_command(*args)
        if get:
            return reply
        return True if _ok(reply) else None

    def setex(self, name, time, value):
        return _ok(self.execute_command("SETEX", name, _seconds(time), value))

    def setnx(self, name, value):
        return bool(self.execute_command("SETNX", name, value))

    def mget(self, keys, *args):
        names = list(keys) if isinstance(keys, (list, tuple)) else [keys]
        return self.execute_command("MGET", *names, *args)

    def mset(self, mapping):
        args = []
        for k, v in mapping.items():
            args += [k, v]
        return _ok(self.execute_command("MSET", *args))

    def incr(self, name, amount=1):
        return self.execute_command("INCRBY", name, amount)

    def incrby(self, name, amount=1):
        return self.execute_command("INCRBY", name, amount)

    def decr(self, name, amount=1):
        return self.execute_command("DECRBY", name, amount)

    def incrbyfloat(self, name, amount=1.0):
        return float(self.execute_command("INCRBYFLOAT", name, amount))

    def append(self, key, value):
        return self.execute_command("APPEND", key, value)

    def strlen(self, name):
        return self.execute_command("STRLEN", name)

    # -- lists -----------------------------------------------------------------------
    def lpush(self, name, *values):
        return self.execute_command("LPUSH", name, *values)

    def rpush(self, name, *values):
        return self.execute_command("RPUSH", name, *values)

    def lpop(self, name, count=None):
        return self.execute_command("LPOP", name, *([count] if count is not None else []))

    def rpop(self, name, count=None):
        return self.execute_command("RPOP", name, *([count] if count is not None else []))

    def llen(self, name):
        return self.execute_command("LLEN", name)

    def lrange(self, name, start, end):
        return self.execute_command("LRANGE", name, start, end)

    def blpop(self, keys, timeout=0):
        return self._blocking_pop("BLPOP", keys, timeout)

    def brpop(self, keys, timeout=0):
        return self._blocking_pop("BRPOP", keys, timeout)

    def _blocking_pop(self, command, keys, timeout):
        names = [keys] if isinstance(keys, (str, bytes)) else list(keys)
        reply = self.execute_command(command, *names, 0 if timeout is None else timeout)
        return tuple(reply) if reply is not None else None

    # -- hashes ----------------------------------------------------------------------
    def hset(self, name, key=None, value=None, mapping=None, items=None):
        args = []
        if key is not None:
            args += [key, value]
        if mapping:
            for k, v in mapping.items():
                args += [k, v]
        if items:
            args += list(items)
        if not args:
            raise ValueError("'hset' with no key value pairs")
        return self.execute_command("HSET", name, *args)

    def hget(self, name, key):
        return self.execute_command("HGET", name, key)

    def hgetall(self, name):
        return _pairs_to_dict(self.execute_command("HGETALL", name))

    def hdel(self, name, *keys):
        return self.execute_command("HDEL", name, *keys)

    def hincrby(self, name, key, amount=1):
        return self.execute_command("HINCRBY", name, key, amount)

    def hlen(self, name):
        return self.execute_command("HLEN", name)

    def hexists(self, name, key):
        return bool(self.execute_command("HEXISTS", name, key))

    # -- sets ------------------------------------------------------------------------
    def sadd(self, name, *values):
        return self.execute_command("SADD", name, *values)

    def srem(self, name, *values):
        return self.execute_command("SREM", name, *values)

    def smembers(self, name):
        return set(self.execute_command("SMEMBERS", name))

    def sismember(self, name, value):
        return bool(self.execute_command("SISMEMBER", name, value))

    def scard(self, name):
        return self.execute_command("SCARD", name)

    # -- sorted sets -----------------------------------------------------------------
    def zadd(self, name, mapping, nx=False, xx=False, ch=False, incr=False, gt=False, lt=False):
        args = ["ZADD", name]
        for flag, on in (("NX", nx), ("XX", xx), ("GT", gt), ("LT", lt), ("CH", ch), ("INCR", incr)):
            if on:
                args.append(flag)
        for member, score in mapping.items():
            args += [score, member]
        reply = self.execute_command(*args)
        return float(reply) if incr and reply is not None else reply

    def zscore(self, name, value):
        reply = self.execute_command("ZSCORE", name, value)
        return None if reply is None else float(reply)

    def zincrby(self, name, amount, value):
        return float(self.execute_command("ZINCRBY", name, amount, value))

    def zrem(self, name, *values):
        return self.execute_command("ZREM", name, *values)

    def zcard(self, name):
        return self.execute_command("ZCARD", name)

    def zrange(self, name, start, end, desc=False, withscores=False, score_cast_func=float):
        args = ["ZRANGE", name, start, end]
        if desc:
            args.append("REV")
        if withscores:
            args.append("WITHSCORES")
        reply = self.execute_command(*args)
        return _with_scores(reply, score_cast_func) if withscores else reply

    def zrangebyscore(self, name, min, max, start=None, num=None, withscores=False, score_cast_func=float):
        args = ["ZRANGEBYSCORE", name, min, max]
        if withscores:
            args.append("WITHSCORES")
        if start is not None and num is not None:
            args += ["LIMIT", start, num]
        reply = self.execute_command(*args)
        return _with_scores(reply, score_cast_func) if withscores else reply

    # -- scripts ---------------------------------------------------------------------
    def eval(self, script, numkeys, *keys_and_args):
        return self.execute_command("EVAL", script, numkeys, *keys_and_args)

    def evalsha(self, sha, numkeys, *keys_and_args):
        return self.execute_command("EVALSHA", sha, numkeys, *keys_and_args)

    def script_load(self, script):
        return self.execute_command("SCRIPT", "LOAD", script)

    def fcall(self, function, numkeys, *keys_and_args):
        return self.execute_command("FCALL", function, numkeys, *keys_and_args)


def _names(args):
    names = []
    for a in args:
        names.extend(a if isinstance(a, (list, tuple, set)) else [a])
    return names


def _as_bytes(name):
    return name if isinstance(name, bytes) else str(name).encode()


class PubSub:
    """redis-py's PubSub: subscribe/psubscribe (with optional handlers), get_message, listen.
    Confirmations come first as messages of type subscribe/psubscribe/unsubscribe."""

    def __init__(self, client, ignore_subscribe_messages=False):
        self.client = client
        self.ignore_subscribe_messages = ignore_subscribe_messages
        self.subscription = client.db.subscription()
        self.channels = {}
        self.patterns = {}
        self.pending = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def subscribed(self):
        return bool(self.channels or self.patterns)

    def _confirm(self, kind, name):
        count = len(self.channels) + len(self.patterns)
        self.pending.append({"type": kind, "pattern": None, "channel": name, "data": count})

    def subscribe(self, *args, **kwargs):
        handlers = {_as_bytes(c): None for c in _names(args)}
        handlers.update({_as_bytes(c): h for c, h in kwargs.items()})
        self.subscription.subscribe(*handlers)
        for channel, handler in handlers.items():
            self.channels[channel] = handler
            self._confirm("subscribe", channel)

    def psubscribe(self, *args, **kwargs):
        handlers = {_as_bytes(p): None for p in _names(args)}
        handlers.update({_as_bytes(p): h for p, h in kwargs.items()})
        self.subscription.psubscribe(*handlers)
        for pattern, handler in handlers.items():
            self.patterns[pattern] = handler
            self._confirm("psubscribe", pattern)

    def unsubscribe(self, *args):
        names = [_as_bytes(c) for c in _names(args)] or list(self.channels)
        self.subscription.unsubscribe(*names)
        for channel in names:
            self.channels.pop(channel, None)
            self._confirm("unsubscribe", channel)

    def punsubscribe(self, *args):
        names = [_as_bytes(p) for p in _names(args)] or list(self.patterns)
        self.subscription.punsubscribe(*names)
        for pattern in names:
            self.patterns.pop(pattern, None)
            self._confirm("punsubscribe", pattern)

    def get_message(self, ignore_subscribe_messages=False, timeout=0.0):
        """The next message or confirmation, waiting up to `timeout` seconds (None: without
        limit); None if there is none (or a handler took it)."""
        ignore = ignore_subscribe_messages or self.ignore_subscribe_messages
        while self.pending:
            confirmation = self.pending.pop(0)
            if not ignore:
                return self._decoded(confirmation)
        got = self.subscription.next_message(timeout)
        if got is None:
            return None
        pattern, channel, data = got
        message = {"type": "pmessage" if pattern is not None else "message", "pattern": pattern,
                   "channel": channel, "data": data}
        handler = self.patterns.get(pattern) if pattern is not None else self.channels.get(channel)
        message = self._decoded(message)
        if handler is not None:
            handler(message)
            return None
        return message

    def listen(self):
        while self.subscribed or self.pending:
            message = self.get_message(timeout=None)
            if message is not None:
                yield message

    def _decoded(self, message):
        if not self.client.decode_responses:
            return message
        return {k: (_decode(v) if k != "type" else v) for k, v in message.items()}

    def close(self):
        self.subscription = None
        self.channels.clear()
        self.patterns.clear()
        self.pending.clear()

    reset = close


class Pipeline:
    """redis-py's pipeline: commands queue, `execute()` runs them (as one MULTI/EXEC
    transaction when `transaction=True`, the default) and returns their replies, each
    converted as the method called alone would (`set` gives True, `smembers` a set)."""

    def __init__(self, client, transaction=True):
        self.client = client
        self.transaction = transaction
        self.queued = []  # (command args, Redis method or None, method args, kwargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.queued = []

    def execute_command(self, *args):
        self.queued.append((args, None, (), {}))
        return self

    def __getattr__(self, name):
        method = getattr(Redis, name)

        def queue(*args, **kwargs):
            recorder = _Recorder()
            try:
                method(recorder, *args, **kwargs)
            except _Recorded:
                pass
            self.queued.append((recorder.args, method, args, kwargs))
            return self

        return queue

    def execute(self, raise_on_error=True):
        queued, self.queued = self.queued, []
        if self.transaction:
            replies = self.client.db.transaction([q[0] for q in queued])
        else:
            replies = []
            for args, _, _, _ in queued:
                try:
                    replies.append(self.client.db.execute(*args))
                except ResponseError as e:
                    replies.append(e)
        decode = self.client.decode_responses
        results = []
        for reply, (_, method, args, kwargs) in zip(replies, queued):
            if isinstance(reply, ResponseError):
                if raise_on_error:
                    raise reply
                results.append(reply)
            elif method is None:
                results.append(_decode(reply) if decode else reply)
            else:
                results.append(method(_Replayer(reply, decode), *args, **kwargs))
        return results


class _Recorded(Exception):
    pass


class _Recorder(Redis):
    """Records the command a Redis method would run (for Pipeline), then stops it."""

    def __init__(self):
        self.decode_responses = False
        self.args = None

    def execute_command(self, *args):
        self.args = args
        raise _Recorded()


class _Replayer(Redis):
    """Gives a Redis method a reply already received, so it converts it as usual."""

    def __init__(self, reply, decode_responses):
        self.reply = reply
        self.decode_responses = decode_responses

    def execute_command(self, *args):
        return _decode(self.reply) if self.decode_responses else self.reply


def _seconds(t):
    return int(t.total_seconds()) if hasattr(t, "total_seconds") else int(t)


def _millis(t):
    return int(t.total_seconds() * 1000) if hasattr(t, "total_seconds") else int(t)
