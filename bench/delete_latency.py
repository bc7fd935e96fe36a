"""PING latency of one client while another deletes a key: bench/delete_latency.py PORT DEL|UNLINK KEY.

One thread PINGs in a loop (its latencies recorded); after 0.5 s another connection sends the
deletion, then PINGs go on for 1 s. Prints the deletion's own time and the PINGs' p50/p99/p99.9/max.
Standard library only. Used for issue 19's "DEL of a 10M-member set" figures (docs/benchmarks.md).
"""
import socket, sys, threading, time
port = int(sys.argv[1]); cmd = sys.argv[2]; key = sys.argv[3]
def conn():
    s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1); return s
def call(s, *args):
    out = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in [x.encode() if isinstance(x, str) else x for x in args])
    s.sendall(out)
    buf = b""
    while not buf.endswith(b"\r\n"):
        buf += s.recv(65536)
    return buf
lat = []; stop = False
def pinger():
    s = conn()
    while not stop:
        t = time.perf_counter(); call(s, "PING"); lat.append(time.perf_counter() - t)
th = threading.Thread(target=pinger); th.start()
time.sleep(0.5)
c = conn(); t = time.perf_counter(); r = call(c, cmd, key); d = time.perf_counter() - t
time.sleep(1.0); stop = True; th.join()
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1e3
print(f"{cmd} reply {r.strip().decode()} in {d*1e3:.1f} ms; PINGs during: n={len(lat)} p50={p(0.5):.3f} ms p99={p(0.99):.3f} ms p99.9={p(0.999):.3f} ms max={lat[-1]*1e3:.1f} ms")
