"""Sentinel failover of quince-server (docs/replication.md): Debian's redis-sentinel (three
sentinels) monitors a quince master with two replicas; the master is killed with SIGKILL
while redis-py's Sentinel client writes; a replica is promoted, the other follows it, the
client finds the new master, and the old master rejoins as a replica when restarted. The
same with one redis-server replica in the set."""

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

SERVER = os.environ.get("QUINCE_SERVER_BIN", "")
SENTINEL = shutil.which("redis-sentinel")
REDIS = shutil.which("redis-server")
REQUIRE_REDIS = os.environ.get("QUINCE_REQUIRE_REDIS") == "1"

if REQUIRE_REDIS and not (SENTINEL and REDIS):
    raise RuntimeError("QUINCE_REQUIRE_REDIS=1 but redis-sentinel or redis-server is not on PATH")

needs_sentinel = pytest.mark.skipif(
    not (os.path.exists(SERVER) and SENTINEL),
    reason="needs QUINCE_SERVER_BIN (built by cargo test) and redis-sentinel (apt-get install redis-sentinel)",
)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listening(port, proc):
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None, f"process on port {port} exited"
            assert time.time() < deadline, f"nothing listens on {port}"
            time.sleep(0.02)


def eventually(what, check, timeout=60):
    deadline = time.time() + timeout
    while True:
        try:
            if check():
                return
        except Exception:  # a server restarting or failing over
            pass
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


class Cluster:
    """Servers and sentinels this test started, stopped by pid at the end."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.procs = {}

    def start_server(self, binary, port):
        d = self.tmp / f"data-{port}"
        d.mkdir(exist_ok=True)
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(d),
                "--repl-diskless-sync-delay", "0"]
        proc = subprocess.Popen(args, stdout=open(self.tmp / f"server-{port}.log", "ab"), stderr=subprocess.STDOUT)
        wait_listening(port, proc)
        self.procs[port] = proc
        return proc

    def start_sentinel(self, port, master_port):
        conf = self.tmp / f"sentinel-{port}.conf"
        conf.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {self.tmp}\n"
            f"sentinel monitor mymaster 127.0.0.1 {master_port} 2\n"
            # 3 s, not 1: on a loaded two-core machine a sentinel missed the PING replies
            # of a just-promoted master for a second and failed over a second time.
            "sentinel down-after-milliseconds mymaster 3000\n"
            "sentinel failover-timeout mymaster 3000\n"
            "sentinel parallel-syncs mymaster 1\n"
        )
        proc = subprocess.Popen([SENTINEL, str(conf)], stdout=open(self.tmp / f"sentinel-{port}.log", "ab"),
                                stderr=subprocess.STDOUT)
        wait_listening(port, proc)
        self.procs[port] = proc

    def kill(self, port):
        proc = self.procs.pop(port)
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def stop_all(self):
        for proc in self.procs.values():
            proc.kill()
            proc.wait()
        self.procs.clear()


def run_failover(tmp_path, replica_binaries):
    import redis
    from redis.sentinel import Sentinel

    cluster = Cluster(tmp_path)
    try:
        master_port = free_port()
        cluster.start_server(SERVER, master_port)
        replica_ports = []
        for binary in replica_binaries:
            port = free_port()
            cluster.start_server(binary, port)
            redis.Redis(port=port).replicaof("127.0.0.1", master_port)
            replica_ports.append(port)
        master = redis.Redis(port=master_port)
        eventually("two replicas online",
                   lambda: master.info("replication")["connected_slaves"] == 2
                   and all(redis.Redis(port=p).info("replication")["master_link_status"] == "up"
                           for p in replica_ports))
        sentinel_ports = [free_port() for _ in range(3)]
        for port in sentinel_ports:
            cluster.start_sentinel(port, master_port)
        sentinel = Sentinel([("127.0.0.1", p) for p in sentinel_ports], socket_timeout=1)
        eventually("the sentinels to see both replicas and each other",
                   lambda: all(len(redis.Redis(port=p).sentinel_slaves("mymaster")) == 2
                               and redis.Redis(port=p).sentinel_master("mymaster")["num-other-sentinels"] == 2
                               for p in sentinel_ports))

        client = sentinel.master_for("mymaster", socket_timeout=1)
        acknowledged = 0
        for i in range(200):
            client.set(f"k{i}", i)
            acknowledged += 1
        assert client.wait(2, 1000) == 2

        # The master dies while the client writes; writes resume on the promoted replica.
        cluster.kill(master_port)
        deadline = time.time() + 90
        after = 0
        while after < 100:
            assert time.time() < deadline, f"writes did not resume after the failover ({after} done)"
            try:
                client.set(f"after{after}", after)
                after += 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError,
                    redis.exceptions.ResponseError):
                time.sleep(0.2)
        new_host, new_port = sentinel.discover_master("mymaster")
        assert new_port in replica_ports
        new_master = redis.Redis(port=new_port)
        assert new_master.info("replication")["role"] == "master"
        # Everything acknowledged before the kill (and WAITed for) is on the new master.
        assert all(new_master.get(f"k{i}") == str(i).encode() for i in range(acknowledged))
        other = [p for p in replica_ports if p != new_port][0]
        eventually("the other replica to follow the new master",
                   lambda: redis.Redis(port=other).info("replication").get("master_port") == new_port
                   and redis.Redis(port=other).info("replication")["master_link_status"] == "up")
        eventually("the other replica to have the writes",
                   lambda: redis.Redis(port=other).get("after99") == b"99")

        # The old master comes back and Sentinel turns it into a replica of the new one.
        cluster.start_server(SERVER, master_port)
        old = redis.Redis(port=master_port)
        eventually("the old master to rejoin as a replica",
                   lambda: old.info("replication")["role"] == "slave"
                   and old.info("replication")["master_port"] == new_port
                   and old.info("replication")["master_link_status"] == "up")
        eventually("the old master to have the new writes", lambda: old.get("after99") == b"99")
    finally:
        cluster.stop_all()


@needs_sentinel
@pytest.mark.timeout(240)
def test_sentinel_fails_over_quince(tmp_path):
    run_failover(tmp_path, [SERVER, SERVER])


@needs_sentinel
@pytest.mark.skipif(not REDIS, reason="redis-server is not on PATH")
@pytest.mark.timeout(240)
def test_sentinel_fails_over_quince_with_a_redis_replica(tmp_path):
    run_failover(tmp_path, [SERVER, REDIS])
