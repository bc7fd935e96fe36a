#!/usr/bin/env python3
"""Helper of bench/scan.sh: loads one big set, hash or sorted set, or lists it with
SSCAN/HSCAN/ZSCAN.

    scan_collection.py load set|hash|zset N   RESP commands creating `big` with N elements, on stdout
    scan_collection.py scan set|hash|zset PORT  SSCAN/HSCAN/ZSCAN `big` at COUNT 10 until cursor 0;
                                           prints "elements_listed largest_page"
"""
import socket
import sys


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def load(kind, n):
    out = sys.stdout.buffer
    batch = 1000
    for start in range(0, n, batch):
        if kind == "set":
            args = ["SADD", "big"] + [f"member:{i}" for i in range(start, min(n, start + batch))]
        elif kind == "hash":
            args = ["HSET", "big"]
            for i in range(start, min(n, start + batch)):
                args += [f"field:{i}", "v"]
        else:
            args = ["ZADD", "big"]
            for i in range(start, min(n, start + batch)):
                args += [str(i % 1000), f"member:{i}"]
        out.write(command(*args))


class Reader:
    """Just enough RESP2 to read SSCAN/HSCAN replies."""

    def __init__(self, sock):
        self.file = sock.makefile("rb")

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        if kind == b"$":
            data = self.file.read(int(rest) + 2)
            return data[:-2]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        return rest


def scan(kind, port):
    sock = socket.create_connection(("127.0.0.1", port))
    reader = Reader(sock)
    name = {"set": b"SSCAN", "hash": b"HSCAN", "zset": b"ZSCAN"}[kind]
    per_element = 1 if kind == "set" else 2
    cursor, listed, largest = b"0", 0, 0
    while True:
        sock.sendall(command(name, "big", cursor, "COUNT", 10))
        cursor, items = reader.read()
        page = len(items) // per_element
        listed += page
        largest = max(largest, page)
        if cursor == b"0":
            break
    print(listed, largest)


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(sys.argv[2], int(sys.argv[3]))
    else:
        scan(sys.argv[2], int(sys.argv[3]))
