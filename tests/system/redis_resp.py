#!/usr/bin/env python3
"""redis_resp.py - a dependency-free Redis client (raw sockets, RESP2) for the
redis system tests. Runs in the client namespace against the stack.

  redis_resp.py integrity HOST PORT [--clients 20] [--seed S] [--max-size 8388608]
      Concurrent clients write random keys with random-byte values (1 B up to
      --max-size) using SET, APPEND and RPUSH, read them back and compare byte
      for byte; then one fresh connection reads every key again.

  redis_resp.py idle HOST PORT [--wait 10]
      Connect, PING, print "idle: connected", then wait for the server to
      close the connection (EOF or reset), e.g. because the server process
      exits: 0 if that happened within --wait seconds after the first line.

  redis_resp.py conns HOST PORT --open N --limit L [--close K]
      Open N connections one after the other, each sending PING. At most L may
      work; the others must fail cleanly (refused / reset / closed / an error
      reply), none may hang. Then every working connection must still answer,
      and after closing K of them a new connection must work.

  redis_resp.py pieces HOST PORT [--tables 5000] [--pipeline 4] [--rounds 3]
      EVAL a Lua script that returns a table of --tables small tables (each
      a number and a short string): Redis builds such a reply from thousands
      of small pieces and writes it with writev of up to IOV_MAX (1024)
      entries. The reply is read raw and compared byte for byte with the
      expected RESP; --pipeline EVALs go out at once, then a PING must answer
      +PONG right after them (the stream stayed in step).

  redis_resp.py reuse HOST PORT [--rounds 5] [--within 1.0]
      From one source port (SO_REUSEADDR), round after round: connect, PING,
      QUIT (the server closes first, so it holds the 4-tuple in TIME_WAIT),
      wait for EOF, close, and connect again at once from the same port.
      Each connect must complete within --within seconds (RFC 6191 reuse).

  redis_resp.py probe HOST PORT [--seconds 20] [--new-every 0.5] [--pieces]
      While something else floods the server: one established connection
      sends PING every millisecond (latencies: p50, p99, max; each PING in
      one write, as redis-cli and hiredis do, or with --pieces in the four
      writes Conn.send makes, four segments with TCP_NODELAY), and every
      --new-every seconds a fresh connection does connect + PING (3 s
      timeout; the established one's connect gets the same 3 s). Fails if
      the established connection gets an error or no answer within 1 s, or
      if a fresh connection fails. Prints each fresh connection's handshake
      (its connect) p50 and slowest; --max-handshake S also fails the probe
      when one took longer than S seconds.
      --hist prints the established PINGs' latency histogram; --dump FILE
      writes one line per PING: its send time (s from the start), latency
      (ms) and, with --toggle, 1 if it counts as flood.
      --toggle PID [--window 1.0] [--guard 0.05]: interleaved flood and
      no-flood periods in one run (bench/syn_flood.sh SF_INTERLEAVE): the
      flooder PID runs in the even windows and is stopped (SIGSTOP) in the
      odd ones (SIGCONT at the end); a PING sent while it ran, or less than
      --guard seconds after it was stopped (the server may still be
      draining its SYNs), counts as flood, every other as no flood, and
      both sets' p50/p99 and the p99 ratio are printed. Both sets are taken
      in the same seconds, so a disturbance of the machine (another
      process's time slice on the server's CPU) falls on both alike, which
      two back-to-back runs (no flood, then flood) cannot give.

Exit status: 0 when every check passed, 1 otherwise (the reason on stdout).
"""
import argparse
import errno
import math
import os
import random
import signal
import socket
import sys
import threading
import time


class RespError(Exception):
    """The server answered with an error reply."""


class Conn:
    def __init__(self, host, port, timeout=60.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    @classmethod
    def over(cls, sock):
        """A Conn over a socket that is connected already."""
        c = cls.__new__(cls)
        c.sock, c.buf, c.pos = sock, bytearray(), 0
        return c

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # -- sending ---------------------------------------------------------
    @staticmethod
    def encode(args):
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, int):
                a = b"%d" % a
            parts.append(b"$%d\r\n" % len(a))
            parts.append(a)
            parts.append(b"\r\n")
        return parts

    def send(self, *cmds):
        """Send one or more commands (pipelined) without reading replies."""
        for args in cmds:
            for p in self.encode(args):
                self.sock.sendall(p)

    # -- receiving -------------------------------------------------------
    def _fill(self, need):
        """Make sure need bytes are buffered after pos."""
        while len(self.buf) - self.pos < need:
            if self.pos and self.pos > len(self.buf) // 2:
                del self.buf[: self.pos]
                self.pos = 0
            want = max(need - (len(self.buf) - self.pos), 65536)
            chunk = self.sock.recv(min(want, 4 << 20))
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos: i])
                self.pos = i + 2
                return line
            self._fill(len(self.buf) - self.pos + 1)

    def _exact(self, n):
        self._fill(n + 2)
        data = bytes(self.buf[self.pos: self.pos + n])
        if self.buf[self.pos + n: self.pos + n + 2] != b"\r\n":
            raise ValueError("bulk string not terminated by CRLF")
        self.pos += n + 2
        return data

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RespError(rest.decode(errors="replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ValueError("bad RESP type byte %r in line %r" % (t, line[:80]))

    def call(self, *args):
        self.send(args)
        return self.reply()


def first_diff(a, b):
    n = min(len(a), len(b))
    step = 1 << 16
    for off in range(0, n, step):
        if a[off: off + step] != b[off: off + step]:
            for i in range(off, min(off + step, n)):
                if a[i] != b[i]:
                    return i
    return n


def describe_mismatch(what, got, want):
    if got is None:
        return "%s: got nil, want %d bytes" % (what, len(want))
    i = first_diff(got, want)
    return "%s: got %d bytes, want %d; first difference at byte %d (got %r, want %r)" % (
        what, len(got), len(want), i, got[i: i + 8], want[i: i + 8])


# ---------------------------------------------------------------------------
# integrity

def rand_size(rng, max_size):
    """Log-uniform in [1, max_size]: as many tiny values as huge ones."""
    return max(1, min(max_size, int(math.exp(rng.uniform(0, math.log(max_size + 1))))))


def client_plan(idx, seed, max_size, prefix):
    """The keys one client writes and what each must hold afterwards."""
    rng = random.Random(seed * 1000 + idx)
    plan = []  # (kind, key, [pieces])
    for j in range(5):
        plan.append(("set", "%s:c%d:set%d" % (prefix, idx, j), [rand_size(rng, max_size)]))
    for j in range(3):
        plan.append(("append", "%s:c%d:app%d" % (prefix, idx, j),
                     [rand_size(rng, max_size // 4) for _ in range(rng.randint(2, 5))]))
    for j in range(3):
        plan.append(("rpush", "%s:c%d:list%d" % (prefix, idx, j),
                     [rand_size(rng, max_size // 4) for _ in range(rng.randint(2, 8))]))
    # The extremes, spread over the clients: 1 B and max_size, each way.
    extreme = [1, max_size][idx % 2]
    if idx % 3 == 0:
        plan.append(("set", "%s:c%d:edge" % (prefix, idx), [extreme]))
    elif idx % 3 == 1:
        plan.append(("append", "%s:c%d:edge" % (prefix, idx), [extreme, 1, extreme]))
    else:
        plan.append(("rpush", "%s:c%d:edge" % (prefix, idx), [extreme, 1]))
    rng.shuffle(plan)
    return plan


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.bytes_out = 0
        self.bytes_in = 0
        self.errors = []

    def add(self, out=0, inn=0):
        with self.lock:
            self.bytes_out += out
            self.bytes_in += inn

    def error(self, msg):
        with self.lock:
            self.errors.append(msg)


def run_client(idx, args, expect, stats):
    plan = client_plan(idx, args.seed, args.max_size, args.prefix)
    try:
        c = Conn(args.host, args.port, timeout=args.timeout)
    except OSError as e:
        stats.error("client %d: connect: %s" % (idx, e))
        return
    try:
        for kind, key, sizes in plan:
            pieces = [os.urandom(n) for n in sizes]
            if kind == "set":
                # SET and GET pipelined in one go: the write and the read back
                # cross on the wire.
                c.send(("DEL", key), ("SET", key, pieces[0]), ("GET", key))
                c.reply()
                r = c.reply()
                if r != "OK":
                    stats.error("client %d: SET %s (%d B): reply %r" % (idx, key, sizes[0], r))
                    return
                got = c.reply()
                want = pieces[0]
                if got != want:
                    stats.error("client %d: " % idx + describe_mismatch("GET %s after SET" % key, got, want))
                    return
                stats.add(len(want), len(got))
            elif kind == "append":
                c.call("DEL", key)
                total = 0
                for p in pieces:
                    total += len(p)
                    r = c.call("APPEND", key, p)
                    if r != total:
                        stats.error("client %d: APPEND %s (+%d B): reply %r, want %d" % (idx, key, len(p), r, total))
                        return
                want = b"".join(pieces)
                got = c.call("GET", key)
                if got != want:
                    stats.error("client %d: " % idx + describe_mismatch("GET %s after APPEND x%d" % (key, len(pieces)), got, want))
                    return
                stats.add(total, len(got))
            else:  # rpush
                c.call("DEL", key)
                # all elements in one command, then one more pipelined with LRANGE
                r = c.call("RPUSH", key, *pieces[:-1]) if len(pieces) > 1 else 0
                if r != len(pieces) - 1:
                    stats.error("client %d: RPUSH %s: reply %r, want %d" % (idx, key, r, len(pieces) - 1))
                    return
                c.send(("RPUSH", key, pieces[-1]), ("LRANGE", key, 0, -1))
                r = c.reply()
                if r != len(pieces):
                    stats.error("client %d: RPUSH %s: reply %r, want %d" % (idx, key, r, len(pieces)))
                    return
                got = c.reply()
                if not isinstance(got, list) or len(got) != len(pieces):
                    stats.error("client %d: LRANGE %s: %s elements, want %d" % (
                        idx, key, len(got) if isinstance(got, list) else repr(got), len(pieces)))
                    return
                for k, (g, w) in enumerate(zip(got, pieces)):
                    if g != w:
                        stats.error("client %d: " % idx + describe_mismatch("LRANGE %s element %d" % (key, k), g, w))
                        return
                stats.add(sum(sizes), sum(len(g) for g in got))
            with stats.lock:
                expect[key] = (kind, pieces)
    except (OSError, ConnectionError, RespError, ValueError) as e:
        stats.error("client %d: %s: %s" % (idx, type(e).__name__, e))
    finally:
        c.close()


def cmd_integrity(args):
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    print("integrity: %d clients, seed %d, values 1..%d B, target %s:%d" % (
        args.clients, args.seed, args.max_size, args.host, args.port), flush=True)
    expect = {}
    stats = Stats()
    t0 = time.monotonic()
    threads = [threading.Thread(target=run_client, args=(i, args, expect, stats)) for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1 = time.monotonic()
    print("integrity: write+read back: %d keys, %.1f MB out, %.1f MB in, %.1f s" % (
        len(expect), stats.bytes_out / 1e6, stats.bytes_in / 1e6, t1 - t0), flush=True)
    if stats.errors:
        for e in stats.errors:
            print("integrity: ERROR " + e)
        return 1

    # A second pass from one fresh connection: nothing changed meanwhile.
    try:
        c = Conn(args.host, args.port, timeout=args.timeout)
        n = c.call("DBSIZE")
        for key in sorted(expect):
            kind, pieces = expect[key]
            if kind == "rpush":
                got = c.call("LRANGE", key, 0, -1)
                if got != pieces:
                    print("integrity: ERROR verify pass: LRANGE %s differs (%s elements, want %d)" % (
                        key, len(got) if isinstance(got, list) else repr(got), len(pieces)))
                    return 1
            else:
                want = b"".join(pieces)
                got = c.call("GET", key)
                if got != want:
                    print("integrity: ERROR verify pass: " + describe_mismatch("GET " + key, got, want))
                    return 1
        c.close()
    except (OSError, ConnectionError, RespError, ValueError) as e:
        print("integrity: ERROR verify pass: %s: %s" % (type(e).__name__, e))
        return 1
    if n < len(expect):
        print("integrity: ERROR DBSIZE %d < %d keys written" % (n, len(expect)))
        return 1
    sizes = [len(p) for _, ps in expect.values() for p in ps]
    print("integrity: verify pass OK: %d keys (DBSIZE %d), values %d..%d B, %.1f s" % (
        len(expect), n, min(sizes), max(sizes), time.monotonic() - t1))
    return 0


# ---------------------------------------------------------------------------
# conns

def try_ping(host, port, timeout):
    """Open a connection and PING. Returns (outcome, conn or None, detail)."""
    try:
        c = Conn(host, port, timeout=timeout)
    except socket.timeout:
        return "timeout", None, "connect timed out"
    except ConnectionRefusedError:
        return "refused", None, "connect: ECONNREFUSED"
    except ConnectionResetError:
        return "reset", None, "connect: ECONNRESET"
    except OSError as e:
        return "error", None, "connect: %s" % e
    try:
        r = c.call("PING")
        if r == "PONG":
            return "ok", c, ""
        c.close()
        return "error", None, "PING answered %r" % r
    except RespError as e:
        c.close()
        return "errreply", None, str(e)
    except socket.timeout:
        c.close()
        return "timeout", None, "no PING reply within %.0f s" % timeout
    except ConnectionResetError:
        c.close()
        return "reset", None, "ECONNRESET"
    except BrokenPipeError:
        c.close()
        return "reset", None, "EPIPE"
    except ConnectionError as e:
        c.close()
        return "closed", None, str(e)
    except OSError as e:
        c.close()
        if e.errno in (errno.ECONNRESET, errno.EPIPE):
            return "reset", None, str(e)
        return "error", None, str(e)


def cmd_conns(args):
    ok = []
    outcomes = {}
    details = []
    t0 = time.monotonic()
    for i in range(args.open):
        o, c, d = try_ping(args.host, args.port, args.timeout)
        outcomes[o] = outcomes.get(o, 0) + 1
        if c is not None:
            ok.append(c)
        elif len(details) < 5:
            details.append("connection %d: %s (%s)" % (i + 1, o, d))
    print("conns: opened %d in %.1f s: %s" % (
        args.open, time.monotonic() - t0, ", ".join("%s=%d" % kv for kv in sorted(outcomes.items()))))
    for d in details:
        print("conns:   " + d)
    rc = 0
    bad = {k: v for k, v in outcomes.items() if k not in ("ok", "refused", "reset", "closed", "errreply")}
    if bad:
        print("conns: ERROR connections beyond the limit did not fail cleanly: %s" % bad)
        rc = 1
    if len(ok) > args.limit:
        print("conns: ERROR %d connections work, the limit is %d" % (len(ok), args.limit))
        rc = 1
    if len(ok) < args.limit - args.slack:
        print("conns: ERROR only %d connections work, expected %d (slack %d)" % (len(ok), args.limit, args.slack))
        rc = 1
    # every working connection still works
    dead = 0
    for c in ok:
        try:
            if c.call("PING") != "PONG":
                dead += 1
        except (OSError, ConnectionError, RespError, ValueError):
            dead += 1
    if dead:
        print("conns: ERROR %d of %d working connections stopped answering" % (dead, len(ok)))
        rc = 1
    else:
        print("conns: all %d working connections still answer PING" % len(ok))
    # close some; the listener must take new connections again
    for c in ok[: args.close]:
        c.close()
    ok = ok[args.close:]
    deadline = time.monotonic() + args.recover
    fresh = []
    last = None
    while len(fresh) < args.close and time.monotonic() < deadline:
        o, c, d = try_ping(args.host, args.port, args.timeout)
        if c is not None:
            fresh.append(c)
        else:
            last = "%s (%s)" % (o, d)
            time.sleep(0.2)
    if len(fresh) < args.close:
        print("conns: ERROR after closing %d, only %d of %d new connections worked within %.0f s (last: %s)" % (
            args.close, len(fresh), args.close, args.recover, last))
        rc = 1
    else:
        print("conns: after closing %d connections, %d new ones work" % (args.close, len(fresh)))
    for c in ok + fresh:
        c.close()
    return rc


# ---------------------------------------------------------------------------
# pieces

PIECES_SCRIPT = (
    "local t = {} "
    "for i = 1, tonumber(ARGV[1]) do t[i] = {i, string.rep('x', i % 13)} end "
    "return t")


def pieces_expected(n):
    """The RESP2 bytes Redis sends for PIECES_SCRIPT with ARGV[1] = n."""
    parts = [b"*%d\r\n" % n]
    for i in range(1, n + 1):
        x = b"x" * (i % 13)
        parts.append(b"*2\r\n:%d\r\n$%d\r\n%s\r\n" % (i, len(x), x))
    return b"".join(parts)


def read_exact(c, n):
    """n raw bytes from the connection (through its buffer)."""
    c._fill(n)
    data = bytes(c.buf[c.pos: c.pos + n])
    c.pos += n
    return data


def cmd_pieces(args):
    want = pieces_expected(args.tables)
    print("pieces: EVAL returning %d small tables: %d-byte reply, %d at once, %d rounds, target %s:%d" % (
        args.tables, len(want), args.pipeline, args.rounds, args.host, args.port), flush=True)
    t0 = time.monotonic()
    try:
        c = Conn(args.host, args.port, timeout=args.timeout)
        for r in range(args.rounds):
            c.send(*[("EVAL", PIECES_SCRIPT, "0", str(args.tables)) for _ in range(args.pipeline)])
            c.send(("PING",))
            for k in range(args.pipeline):
                got = read_exact(c, len(want))
                if got != want:
                    print("pieces: ERROR " + describe_mismatch(
                        "round %d reply %d" % (r + 1, k + 1), got, want))
                    return 1
            tail = c.reply()
            if tail != "PONG":
                print("pieces: ERROR round %d: after the replies PING answered %r" % (r + 1, tail))
                return 1
        c.close()
    except (OSError, ConnectionError, RespError, ValueError) as e:
        print("pieces: ERROR %s: %s" % (type(e).__name__, e))
        return 1
    print("pieces: %d replies of %d bytes identical, PONG after each batch, %.1f s" % (
        args.rounds * args.pipeline, len(want), time.monotonic() - t0))
    return 0


def cmd_idle(args):
    try:
        c = Conn(args.host, args.port, timeout=10)
        if c.call("PING") != "PONG":
            print("idle: ERROR no PONG")
            return 1
    except (OSError, ConnectionError, RespError) as e:
        print("idle: ERROR connect/PING: %s" % e)
        return 1
    print("idle: connected", flush=True)
    c.sock.settimeout(args.wait)
    t0 = time.monotonic()
    try:
        d = c.sock.recv(100)
        how = "EOF" if not d else "data %r" % d[:40]
    except socket.timeout:
        print("idle: ERROR the connection is still open %.0f s later (no FIN, no RST)" % args.wait)
        return 1
    except ConnectionResetError:
        how = "reset"
    except OSError as e:
        how = "error %s" % e
    print("idle: server closed the connection (%s) after %.1f s" % (how, time.monotonic() - t0))
    return 0 if how in ("EOF", "reset") else 1


def local_port_states(port):
    """TCP states (hex codes of /proc/net/tcp) of this namespace's sockets on
    local port `port`."""
    states = []
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port:
                states.append(fields[3])
    return states


def cmd_reuse(args):
    port = 0
    worst = 0.0
    for r in range(args.rounds):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
        except OSError as e:
            print("reuse: ERROR round %d: bind to port %d: %s" % (r + 1, port, e))
            return 1
        port = s.getsockname()[1]
        s.settimeout(max(args.within * 3, 3.0))
        t0 = time.monotonic()
        try:
            s.connect((args.host, args.port))
        except OSError as e:
            print("reuse: ERROR round %d: connect from port %d failed after %.3f s: %s" % (
                r + 1, port, time.monotonic() - t0, e))
            return 1
        took = time.monotonic() - t0
        worst = max(worst, took)
        c = Conn.over(s)
        try:
            pong = c.call("PING")
            bye = c.call("QUIT")
            s.settimeout(5.0)
            eof = s.recv(100) == b""
        except (OSError, ConnectionError, RespError, ValueError) as e:
            print("reuse: ERROR round %d: PING/QUIT: %s" % (r + 1, e))
            return 1
        s.close()
        if pong != "PONG" or bye != "OK" or not eof:
            print("reuse: ERROR round %d: PING %r, QUIT %r, EOF after QUIT %s" % (r + 1, pong, bye, eof))
            return 1
        # Our side closed second (LAST_ACK until the server's ACK): the port
        # is free once that socket is gone; the server's side still waits.
        deadline = time.monotonic() + 2.0
        while local_port_states(port) and time.monotonic() < deadline:
            time.sleep(0.001)
        if local_port_states(port):
            print("reuse: ERROR round %d: our socket on port %d still there 2 s after close (states %s)" % (
                r + 1, port, local_port_states(port)))
            return 1
        print("reuse: round %d from port %d: connected in %.3f s" % (r + 1, port, took))
    if worst > args.within:
        print("reuse: ERROR a connect from the reused port took %.3f s (allowed %.1f s)" % (worst, args.within))
        return 1
    print("reuse: %d connections from port %d, slowest connect %.3f s" % (args.rounds, port, worst))
    return 0


def percentile(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(q * len(sorted_vals)))]


# upper edges (ms) of the --hist buckets; the last bucket is open
HIST_EDGES = (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0)


def hist_line(vals):
    """'<0.05 N | 0.05-0.1 N | ... | >=5 N' of latencies in seconds."""
    counts = [0] * (len(HIST_EDGES) + 1)
    for v in vals:
        ms = v * 1e3
        i = 0
        while i < len(HIST_EDGES) and ms >= HIST_EDGES[i]:
            i += 1
        counts[i] += 1
    parts = []
    lo = None
    for i, n in enumerate(counts):
        if i == 0:
            parts.append("<%g %d" % (HIST_EDGES[0], n))
        elif i == len(HIST_EDGES):
            parts.append(">=%g %d" % (HIST_EDGES[-1], n))
        else:
            parts.append("%g-%g %d" % (lo, HIST_EDGES[i], n))
        lo = HIST_EDGES[i] if i < len(HIST_EDGES) else None
    return " | ".join(parts)


def lat_summary(vals):
    """'N PINGs, p50 X ms, p99 Y ms, max Z ms' of sorted latencies (s)."""
    return "%d PINGs, p50 %.2f ms, p99 %.2f ms, max %.2f ms" % (
        len(vals), percentile(vals, 0.5) * 1e3, percentile(vals, 0.99) * 1e3, (vals[-1] if vals else 0) * 1e3)


def toggler(pid, window, stop, marks, done):
    """Flooder PID runs in even windows, stopped in odd ones; each switch's
    time into marks as (t, running). SIGCONT at the end, whatever happened."""
    k = 0
    try:
        while True:
            k += 1
            t_next = marks[0][0] + k * window
            if t_next >= stop:
                break
            time.sleep(max(0.0, t_next - time.monotonic()))
            running = k % 2 == 0
            os.kill(pid, signal.SIGCONT if running else signal.SIGSTOP)
            marks.append((time.monotonic(), running))
    except OSError as e:
        done.append("toggle: %s" % e)
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass


def flood_at(t, marks, guard):
    """True if a PING sent at t counts as flood (see --toggle)."""
    running, since, last_stop = True, marks[0][0], None
    for mt, mr in marks:
        if mt > t:
            break
        running, since = mr, mt
        if not mr:
            last_stop = mt
    return running or (last_stop is not None and t - last_stop < guard)


def cmd_probe(args):
    lat = []
    sent = []  # send time of each PING in lat (monotonic)
    est_err = []
    fresh = []  # (ok, seconds, detail)
    shakes = []  # each fresh connection's connect() (its handshake), seconds
    stop = time.monotonic() + args.seconds

    def established():
        # Its connect is a new connection's (made once the flood runs: a
        # SYN the server sheds is sent again after 1 s), so it gets their
        # 3 s; its PINGs get 1 s each.
        try:
            c = Conn(args.host, args.port, timeout=3.0)
            c.sock.settimeout(1.0)
        except OSError as e:
            est_err.append("connect: %s" % e)
            return
        ping = b"".join(Conn.encode(("PING",)))
        while time.monotonic() < stop:
            t0 = time.monotonic()
            try:
                if args.pieces:
                    r = c.call("PING")
                else:
                    c.sock.sendall(ping)
                    r = c.reply()
            except (OSError, ConnectionError, RespError, ValueError) as e:
                est_err.append("PING: %s" % e)
                return
            lat.append(time.monotonic() - t0)
            sent.append(t0)
            if r != "PONG":
                est_err.append("PING answered %r" % r)
                return
            time.sleep(0.001)
        c.close()

    def new_conns():
        while time.monotonic() < stop:
            t0 = time.monotonic()
            try:
                c = Conn(args.host, args.port, timeout=3.0)
                shakes.append(time.monotonic() - t0)
                r = c.call("PING")
                c.close()
                fresh.append((r == "PONG", time.monotonic() - t0, "PING answered %r" % r))
            except (OSError, ConnectionError, RespError, ValueError) as e:
                fresh.append((False, time.monotonic() - t0, str(e)))
            time.sleep(max(0.0, args.new_every - (time.monotonic() - t0)))

    marks = [(time.monotonic(), True)]  # (time, flooder running) from the start
    tog_err = []
    threads = [threading.Thread(target=established), threading.Thread(target=new_conns)]
    if args.toggle:
        threads.append(threading.Thread(target=toggler, args=(args.toggle, args.window, stop, marks, tog_err)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_start = marks[0][0]
    flood = [flood_at(t, marks, args.guard) for t in sent] if args.toggle else [False] * len(sent)
    if args.dump:
        with open(args.dump, "w") as f:
            f.write("# start %.6f CLOCK_MONOTONIC\n" % t_start)
            for t, v, fl in zip(sent, lat, flood):
                f.write("%.6f %.4f%s\n" % (t - t_start, v * 1e3, " %d" % fl if args.toggle else ""))
    if args.toggle:
        on = sorted(v for v, fl in zip(lat, flood) if fl)
        off = sorted(v for v, fl in zip(lat, flood) if not fl)
        p_on, p_off = percentile(on, 0.99), percentile(off, 0.99)
        print("probe: interleaved (%g s windows, %d switches, guard %g ms): flood %s; no flood %s; p99 ratio %.2f%s" % (
            args.window, len(marks) - 1, args.guard * 1e3, lat_summary(on), lat_summary(off),
            p_on / p_off if off and p_off > 0 else float("nan"), ", ERROR " + tog_err[0] if tog_err else ""))
        if args.hist:
            print("probe: histogram flood (ms): %s" % hist_line(on))
            print("probe: histogram no flood (ms): %s" % hist_line(off))
    lat.sort()
    if args.hist:
        print("probe: histogram (ms): %s" % hist_line(lat))
    print("probe: established: %d PINGs, p50 %.2f ms, p99 %.2f ms, max %.2f ms%s" % (
        len(lat), percentile(lat, 0.5) * 1e3, percentile(lat, 0.99) * 1e3, (lat[-1] if lat else 0) * 1e3,
        ", ERROR " + est_err[0] if est_err else ""))
    ok = [f for f in fresh if f[0]]
    bad = [f for f in fresh if not f[0]]
    times = sorted(f[1] for f in ok)
    print("probe: new connections: %d of %d connect + PING, p50 %.1f ms, slowest %.1f ms%s" % (
        len(ok), len(fresh), percentile(times, 0.5) * 1e3, (times[-1] if times else 0) * 1e3,
        ", ERROR %s after %.1f s" % (bad[0][2], bad[0][1]) if bad else ""))
    shakes.sort()
    slow = [t for t in shakes if args.max_handshake and t > args.max_handshake]
    print("probe: handshakes: %d, p50 %.1f ms, slowest %.1f ms%s" % (
        len(shakes), percentile(shakes, 0.5) * 1e3, (shakes[-1] if shakes else 0) * 1e3,
        ", ERROR %d slower than %.0f ms" % (len(slow), args.max_handshake * 1e3) if slow else ""))
    return 1 if est_err or bad or not fresh or tog_err or slow else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def parser(name):
        p = sub.add_parser(name)
        p.add_argument("host")
        p.add_argument("port", type=int)
        return p

    a = parser("integrity")
    a.add_argument("--clients", type=int, default=20)
    a.add_argument("--seed", type=int)
    a.add_argument("--max-size", type=int, default=8 << 20)
    a.add_argument("--prefix", default="integ")
    a.add_argument("--timeout", type=float, default=60.0)
    b = parser("conns")
    b.add_argument("--open", type=int, required=True)
    b.add_argument("--limit", type=int, required=True, help="most connections that may work")
    b.add_argument("--slack", type=int, default=0, help="how many fewer than --limit may work")
    b.add_argument("--close", type=int, default=10)
    b.add_argument("--timeout", type=float, default=5.0)
    b.add_argument("--recover", type=float, default=10.0)
    c = parser("idle")
    c.add_argument("--wait", type=float, default=10.0)
    f = parser("pieces")
    f.add_argument("--tables", type=int, default=5000)
    f.add_argument("--pipeline", type=int, default=4)
    f.add_argument("--rounds", type=int, default=3)
    f.add_argument("--timeout", type=float, default=30.0)
    d = parser("reuse")
    d.add_argument("--rounds", type=int, default=5)
    d.add_argument("--within", type=float, default=1.0)
    e = parser("probe")
    e.add_argument("--seconds", type=float, default=20.0)
    e.add_argument("--new-every", type=float, default=0.5)
    e.add_argument("--pieces", action="store_true")
    e.add_argument("--hist", action="store_true")
    e.add_argument("--dump")
    e.add_argument("--toggle", type=int, default=0, metavar="PID")
    e.add_argument("--window", type=float, default=1.0)
    e.add_argument("--guard", type=float, default=0.05)
    e.add_argument("--max-handshake", type=float, default=0.0, metavar="S")
    args = ap.parse_args()
    if args.cmd == "probe":
        return cmd_probe(args)
    if args.cmd == "reuse":
        return cmd_reuse(args)
    if args.cmd == "idle":
        return cmd_idle(args)
    if args.cmd == "integrity":
        return cmd_integrity(args)
    if args.cmd == "pieces":
        return cmd_pieces(args)
    return cmd_conns(args)


if __name__ == "__main__":
    sys.exit(main())
