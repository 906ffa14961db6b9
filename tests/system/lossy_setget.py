#!/usr/bin/env python3
"""lossy_setget.py - byte-exact SET/GET of values of several sizes, timing
every operation: the workload of the loss-recovery test (test_redis_loss.sh)
and of the full measure in docs/reliability.md.

  lossy_setget.py HOST PORT [--sizes 1,1024,16384,65536,470000] [--rounds 3]
                  [--seed S] [--op-timeout 60] [--tag NAME]

One connection (TCP_NODELAY); for each round and each size: SET a key to
random bytes (seeded), then GET it and compare byte for byte. Each SET and
each GET is one timed operation (send to complete reply). Prints one line

  setget: tag=NAME ops=N total_s=T worst_s=W worst_op=OP p50_s=P over1s=K over2s=L

and exits 0, or prints the first mismatch / error and exits 1. An operation
that takes longer than --op-timeout seconds is an error (nothing hangs).
"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_resp import Conn  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--sizes", default="1,1024,16384,65536,470000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--op-timeout", type=float, default=60.0)
    ap.add_argument("--tag", default="-")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    rng = random.Random(a.seed)
    lat = []  # (seconds, description)
    t_start = time.monotonic()
    try:
        c = Conn(a.host, a.port, timeout=a.op_timeout)
        lat.append((time.monotonic() - t_start, "connect"))
        for r in range(a.rounds):
            for n in sizes:
                key = "loss:%d:%d" % (r, n)
                val = rng.randbytes(n)
                t0 = time.monotonic()
                rep = c.call("SET", key, val)
                lat.append((time.monotonic() - t0, "SET %d" % n))
                if rep != "OK":
                    print("setget: FAIL SET %s answered %r" % (key, rep))
                    return 1
                t0 = time.monotonic()
                got = c.call("GET", key)
                lat.append((time.monotonic() - t0, "GET %d" % n))
                if got != val:
                    where = next((i for i in range(min(len(got or b""), n)) if got[i] != val[i]), None)
                    print("setget: FAIL GET %s: %s bytes back for %d, first difference at %s"
                          % (key, None if got is None else len(got), n, where))
                    return 1
        c.close()
    except Exception as e:  # a timeout or a reset is a failure of the run
        print("setget: FAIL after %.2f s, %d ops: %s: %s" % (time.monotonic() - t_start, len(lat), type(e).__name__, e))
        return 1
    total = time.monotonic() - t_start
    worst = max(lat)
    secs = sorted(x for x, _ in lat)
    print("setget: tag=%s ops=%d total_s=%.3f worst_s=%.3f worst_op=%s p50_s=%.4f over1s=%d over2s=%d"
          % (a.tag, len(lat), total, worst[0], worst[1].replace(" ", ":"), secs[len(secs) // 2],
             sum(1 for x in secs if x > 1.0), sum(1 for x in secs if x > 2.0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
