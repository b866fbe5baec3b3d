#!/usr/bin/env python3
"""Floods poseact's live page on loopback with what a hostile or broken client would send,
for a bounded time, while `poseact live --serve` runs; prints one JSON line of what was sent
and how the page answered. Standard library only. Used by page-flood.sh.

    page_flood.py PORT [--seconds 20] [--rate 20]

What runs at once, each in its own threads, every connection to 127.0.0.1 only, each
client at most --rate requests a second (the flooder shares the machine's cores with the
live run, so an unpaced flood measures the flooder's own CPU, not the page):
  - idle: 1,000 connections opened and left silent (the page closes them after its idle time,
    and they are opened again);
  - frames: 4 clients fetching /frame.jpg and /state.json;
  - long URLs: 2 clients sending 1 MB request lines;
  - big messages: 2 WebSocket clients sending a 1 MB message each time;
  - cross-origin: 1 client asking for WebSocket upgrades from another origin.
"""
import argparse
import itertools
import json
import os
import socket
import threading
import time

HOST = "127.0.0.1"


def connect(port, timeout=5):
    s = socket.create_connection((HOST, port), timeout=timeout)
    return s


def status_of(s):
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


class Pace:
    """At most `rate` rounds a second for one client."""

    def __init__(self, rate):
        self.period = 1.0 / rate
        self.next = time.time()

    def wait(self):
        self.next += self.period
        delay = self.next - time.time()
        if delay > 0:
            time.sleep(delay)
        else:
            self.next = time.time()


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n


def idle(port, end, c):
    held = []
    while time.time() < end:
        while len(held) < 1000 and time.time() < end:
            try:
                held.append(connect(port))
                c.add("idle_opened")
            except OSError:
                c.add("idle_connect_failed")
                time.sleep(0.05)
                break
        time.sleep(0.5)
        alive = []
        for s in held:   # keep the ones the page has not closed
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    c.add("idle_closed_by_page")
                    s.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                c.add("idle_closed_by_page")
                s.close()
                continue
            alive.append(s)
        held = alive
    for s in held:
        s.close()


def exchange(port, first, then=None, drain=False):
    """Sends `first`, reads the status line, sends `then` (if any) or reads the body to the
    end (`drain`), closes; returns the status code, or "closed" when none came."""
    s = connect(port)
    try:
        try:
            s.sendall(first)
        except OSError:
            pass   # the page closed it after the first kilobytes
        status = status_of(s)
        if then is not None:
            try:
                s.sendall(then)
            except OSError:
                pass
        while drain and s.recv(65536):
            pass
    finally:
        s.close()
    return status.split(" ")[1] if " " in status else "closed"


def paced(end, rate, c, key, action):
    """`action` at most `rate` times a second until `end`, each answer counted under `key`."""
    pace = Pace(rate)
    while time.time() < end:
        pace.wait()
        try:
            c.add(f"{key} {action()}")
        except OSError:
            c.add(f"{key}_error")


def get(port, path):
    return f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode()


def upgrade_request(port, origin=None):
    extra = f"Origin: {origin}\r\n" if origin else ""
    return (f"GET /ws HTTP/1.1\r\nHost: {HOST}:{port}\r\n{extra}Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


def frames(port, end, c, rate):
    paths = itertools.cycle(["/frame.jpg", "/state.json"])   # both, `rate` times a second each
    paced(end, 2 * rate, c, "get", lambda: exchange(port, get(port, next(paths)), drain=True))


def long_urls(port, end, c, rate):
    line = b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    paced(end, rate, c, "long_url", lambda: exchange(port, line))


def big_messages(port, end, c, rate):
    n = 1 << 20
    mask = b"\x01\x02\x03\x04"
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(os.urandom(n)))
    frame = bytes([0x82, 0x80 | 127]) + n.to_bytes(8, "big") + mask + payload
    paced(end, rate, c, "big_message after", lambda: exchange(port, upgrade_request(port), then=frame))


def cross_origin(port, end, c, rate):
    paced(end, rate, c, "cross_origin", lambda: exchange(port, upgrade_request(port, "http://evil.example.com")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("port", type=int)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rate", type=float, default=20, help="requests a second per client (default 20)")
    a = ap.parse_args()
    end = time.time() + a.seconds
    c = Counter()
    jobs = [idle] + [frames] * 4 + [long_urls] * 2 + [big_messages] * 2 + [cross_origin]
    threads = [threading.Thread(target=j, args=(a.port, end, c) if j is idle else (a.port, end, c, a.rate), daemon=True)
               for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(a.seconds + 30)
    print(json.dumps({"seconds": a.seconds, "rate_per_client": a.rate, **dict(sorted(c.counts.items()))}), flush=True)


if __name__ == "__main__":
    main()
