#!/usr/bin/env python3
"""ltran_lp_ping.py HOST PORT COUNT - PINGs to a redis-server, one at a time,
each after a random pause of 3-8 ms (long enough for the server and ltran to
fall asleep in low_power_mode, random so that no pause lines up with a timed
sleep). Prints "p50 p90 p99 max" of the round trips in ms.
(tests/system/test_ltran_lowpower.sh)"""
import random
import socket
import sys
import time

host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.create_connection((host, port), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rtt = []
rng = random.Random(13)
for _ in range(count):
    time.sleep(rng.uniform(0.003, 0.008))
    t = time.perf_counter()
    s.sendall(b"PING\r\n")
    got = b""
    while not got.endswith(b"\r\n"):
        chunk = s.recv(64)
        if not chunk:
            sys.exit("connection closed")
        got += chunk
    rtt.append((time.perf_counter() - t) * 1000.0)
    if got != b"+PONG\r\n":
        sys.exit("unexpected reply %r" % got)
rtt.sort()
q = lambda f: rtt[min(len(rtt) - 1, int(f * len(rtt)))]
print("%.3f %.3f %.3f %.3f" % (q(0.5), q(0.9), q(0.99), rtt[-1]))
