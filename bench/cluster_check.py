#!/usr/bin/env python3
"""Client side of bench/cluster.sh: redis-py's RedisCluster against a running cluster.

  load PORT KEYS          write KEYS keys (pipelined by slot), read them all back
  writer PORT FILE SECS   write w:<n> = <n> for SECS seconds (or until FILE.stop exists),
                          appending each acknowledged n to FILE; errors are retried
  verify PORT FILE        every acknowledged n of FILE reads back; counts the lost ones
  placement PORT          every key lives on the master serving its slot

Each prints one JSON line.
"""
import json
import os
import sys
import time

from redis.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import RedisError


def cluster(port):
    return RedisCluster(host="127.0.0.1", port=int(port), decode_responses=True,
                        socket_timeout=5, cluster_error_retry_attempts=20)


def load(port, keys):
    rc = cluster(port)
    keys = int(keys)
    started = time.monotonic()
    batch = 1000
    for first in range(0, keys, batch):
        pipe = rc.pipeline(transaction=False)
        for i in range(first, min(first + batch, keys)):
            pipe.set(f"k:{i}", f"v:{i}")
        pipe.execute()
    wrote = time.monotonic() - started
    started = time.monotonic()
    wrong = 0
    for first in range(0, keys, batch):
        pipe = rc.pipeline(transaction=False)
        for i in range(first, min(first + batch, keys)):
            pipe.get(f"k:{i}")
        for offset, value in enumerate(pipe.execute()):
            if value != f"v:{first + offset}":
                wrong += 1
    read = time.monotonic() - started
    print(json.dumps({"keys": keys, "write_s": round(wrote, 2), "read_s": round(read, 2),
                      "write_rps": round(keys / wrote), "read_rps": round(keys / read), "wrong": wrong}))
    return 0 if wrong == 0 else 1


def writer(port, path, seconds):
    rc = cluster(port)
    deadline = time.monotonic() + float(seconds)
    n = errors = 0
    # The longest time a write waited (errors retried), in ms: the pause a failover causes.
    worst_ms = 0.0
    with open(path, "a", buffering=1) as out:
        while time.monotonic() < deadline and not os.path.exists(path + ".stop"):
            began = time.monotonic()
            while True:
                try:
                    rc.set(f"w:{n}", str(n))
                    break
                except RedisError:
                    errors += 1
                    time.sleep(0.05)
                    if time.monotonic() > deadline + 30:
                        print(json.dumps({"acked": n, "errors": errors, "gave_up": True}))
                        return 1
            worst_ms = max(worst_ms, (time.monotonic() - began) * 1000)
            out.write(f"{n}\n")
            n += 1
    print(json.dumps({"acked": n, "errors": errors, "worst_write_ms": round(worst_ms)}))
    return 0


def verify(port, path):
    rc = cluster(port)
    with open(path) as f:
        acked = [int(line) for line in f if line.strip()]
    lost = []
    for first in range(0, len(acked), 1000):
        chunk = acked[first:first + 1000]
        pipe = rc.pipeline(transaction=False)
        for n in chunk:
            pipe.get(f"w:{n}")
        for n, value in zip(chunk, pipe.execute()):
            if value != str(n):
                lost.append(n)
    print(json.dumps({"acked": len(acked), "lost": len(lost), "first_lost": lost[:5]}))
    return 0 if not lost else 1


def placement(port):
    rc = cluster(port)
    misplaced = 0
    total = 0
    for node in rc.get_primaries():
        client = rc.get_redis_connection(node)
        slots = set()
        for start, end, *hosts in client.execute_command("CLUSTER", "SLOTS"):
            host = hosts[0]
            if int(host[1]) == node.port:
                slots.update(range(int(start), int(end) + 1))
        cursor = 0
        while True:
            cursor, keys = client.scan(cursor, count=1000)
            for key in keys:
                total += 1
                if key_slot(key.encode() if isinstance(key, str) else key) not in slots:
                    misplaced += 1
            if int(cursor) == 0:
                break
    print(json.dumps({"keys": total, "misplaced": misplaced}))
    return 0 if misplaced == 0 else 1


if __name__ == "__main__":
    commands = {"load": load, "writer": writer, "verify": verify, "placement": placement}
    sys.exit(commands[sys.argv[1]](*sys.argv[2:]))
