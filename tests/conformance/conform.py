#!/usr/bin/env python3
"""The conformance runner: plays the remote peer of each scenario on the
client namespace's veth (a raw AF_PACKET socket, an address and MAC the
client kernel does not own, so it never answers for the peer; the peer
answers ARP for it), drives the agent in the server namespace (one on the
kernel, one under the preload: conform_agent, started by the commands
given), and checks each line of the scenario on each target: Linux first
(a scenario Linux does not pass is a bad scenario), then lstack.

    conform.py --iface IF --target-mac MAC --linux 'CMD' --linux-ip IP
               --lstack 'CMD' --lstack-ip IP [--only NAME,...] [--slow]
               [--targets linux,lstack] [--verbose] [--fuzz SECONDS [--seed N]]
               [--no-scenarios]

Run through run.sh (it brings up the bed and starts the agents); the
manual is docs/conformance.md. Prints one TAP-like line per scenario and
a closing count; exits 1 when a scenario failed on Linux (bad scenario),
failed on lstack without being listed in DIVERGENCES.md, or is listed but
no longer diverges as listed.
"""
import argparse
import os
import re
import select
import shlex
import socket
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkt  # noqa: E402
import scenario as scn  # noqa: E402
from scenario import ANY  # noqa: E402

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
PEER_MAC = "02:00:00:c0:0f:0a"
PEER_IP = "198.18.0.10"
DEFAULT_TOL = 0.06
M32 = 0xFFFFFFFF


class Fail(Exception):
    pass


def now():
    return time.monotonic()


# ---------------------------------------------------------------------------
# the wire


class Wire:
    """The peer's raw socket on the client veth. poll() returns the IPv4
    frames that arrived (parsed, with their arrival time) and answers ARP
    requests for the peer's address on the way."""

    def __init__(self, ifname):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.bind((ifname, 0))
        self.s.setblocking(False)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)

    def fileno(self):
        return self.s.fileno()

    def send(self, frame):
        self.s.send(frame)

    def drain(self):
        out = []
        while True:
            try:
                raw, addr = self.s.recvfrom(65536)
            except BlockingIOError:
                return out
            if addr[2] == PACKET_OUTGOING:
                continue
            f = pkt.parse_frame(raw)
            if f is None:
                continue
            f.time = now()
            if f.etype == pkt.ETH_P_ARP:
                if f.arp_op == 1 and f.arp_target_ip == PEER_IP:
                    self.send(pkt.build_arp_reply(PEER_MAC, PEER_IP, f.arp_sender_mac, f.arp_sender_ip))
                continue
            out.append(f)


# ---------------------------------------------------------------------------
# the agents


class Agent:
    def __init__(self, name, cmd, ip, log):
        self.name, self.cmd, self.ip, self.logpath = name, cmd, ip, log
        self.proc = None
        self.buf = b""
        self.lines = []
        self.dead = None

    def start(self, timeout=90):
        self.log = open(self.logpath, "ab")
        self.proc = subprocess.Popen(shlex.split(self.cmd) + [self.ip], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, bufsize=0)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.buf, self.lines, self.dead = b"", [], None
        end = now() + timeout
        while now() < end:
            select.select([self.proc.stdout], [], [], 0.2)
            self.read_some()
            for ln in self.lines:
                if ln.startswith("ready"):
                    self.lines = []
                    return
            if self.dead:
                break
        raise Fail("agent %s did not start: %s (log %s)" % (self.name, self.dead or "no 'ready' in %d s" % timeout,
                                                              self.logpath))

    def fileno(self):
        return self.proc.stdout.fileno()

    def read_some(self):
        try:
            d = self.proc.stdout.read(1 << 20)
        except BlockingIOError:
            return
        if d == b"" or (d is None and self.proc.poll() is not None):
            rc = self.proc.wait()
            self.dead = "exited with status %d" % rc if rc >= 0 else "killed by signal %d" % -rc
            return
        if d:
            self.buf += d
            while b"\n" in self.buf:
                ln, self.buf = self.buf.split(b"\n", 1)
                self.lines.append(ln.decode(errors="replace"))

    def command(self, line):
        try:
            self.proc.stdin.write((line + "\n").encode())
        except (BrokenPipeError, OSError):
            self.read_some()
            self.dead = self.dead or "gone"

    def kill(self, why):
        """End a stuck agent (its pid is the agent's own: ip netns exec
        and env exec it); the next scenario starts a new one."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.dead = "killed: " + why

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------------
# one run of one scenario on one target


def pattern_peer(off, n):
    """The peer's stream: byte at stream offset o is 'a' + o % 26."""
    return bytes(97 + (off + i) % 26 for i in range(n))


def pattern_agent(off, n):
    """The agent's stream (agent.c fill_pattern): 'A' + o % 26."""
    return bytes(65 + (off + i) % 26 for i in range(n))


class Flow:
    def __init__(self, pport, pisn):
        self.pport = pport
        self.pisn = pisn
        self.tport = None
        self.tisn = None
        self.peer_ws = None  # the peer's SYN offered wscale
        self.t_ws = None  # the target's SYN / SYN-ACK wscale
        self.last_tsval = 0
        self.last_seg = None  # last frame from the target (for ICMP quotes)
        self.right_edge = None


class Run:
    def __init__(self, runner, sc, agent, sport, pport_base, lenient=False):
        self.r, self.sc, self.agent = runner, sc, agent
        # lenient (fuzz.py): segments of the stack that no line expects are
        # dropped, not a failure; every answer is kept in self.answers
        self.lenient = lenient
        self.answers = []
        # whose lines to play: the target's own, or Linux's everywhere (--as-linux)
        self.lines_of = "linux" if runner.args.as_linux else agent.name
        self.tol = sc.tolerance if sc.tolerance is not None else runner.tol
        self.sport = sport
        self.pport_base = pport_base
        seed = zlib.crc32(sc.name.encode())
        self.flows = {}
        self.seed = seed
        self.rxq = []
        self.trace = []
        self.t0 = None
        self.pending = None  # (event, start time) of a blocking call
        self.in_call = False  # finish_call waits: an agent that dies is the call's result
        self.read_off = {}

    def flow(self, n):
        if n not in self.flows:
            self.flows[n] = Flow(self.pport_base + n - 1, (self.seed * (n + 7)) & 0x7FFFFFFF)
        return self.flows[n]

    def rel(self, t):
        return t - self.t0

    # -- I/O pump --
    def pump(self, until, on_frame=False):
        """Receive frames and agent lines until `until` (monotonic), or
        until the agent answers, or (on_frame) a frame of the run came."""
        while True:
            for f in self.r.wire.drain():
                self.accept_frame(f)
            self.agent.read_some()
            left = until - now()
            if left <= 0 or (self.agent.lines and not self.pending) or (on_frame and self.rxq):
                return
            if self.agent.dead:
                if not self.in_call:
                    raise Fail("agent %s died: %s" % (self.agent.name, self.agent.dead))
                return
            select.select([self.r.wire, self.agent], [], [], min(left, 0.05))

    def accept_frame(self, f):
        if f.ip_src != self.agent.ip or f.ip_dst != PEER_IP:
            return
        if f.proto == pkt.IPPROTO_TCP:
            for fl in self.flows.values():
                if f.dport == fl.pport:
                    break
            else:
                return
        elif f.proto != pkt.IPPROTO_ICMP:
            return
        self.trace.append(("<<", f))
        self.rxq.append(f)

    # -- checks --
    def fail(self, ev, msg):
        raise Fail("line %d `%s`: %s" % (ev.lineno, ev.line, msg))

    def no_unexpected(self, ev, until):
        self.pump(until)
        while self.agent.lines and not self.pending:
            raise Fail("agent %s said %r unasked" % (self.agent.name, self.agent.lines.pop(0)))
        if self.rxq and self.lenient:
            self.rxq.clear()
        if self.rxq:
            f = self.rxq[0]
            self.fail(ev, "before it, at +%.3f s, the stack sent an unexpected %s" % (self.rel(f.time), self.describe(f)))

    def describe(self, f):
        if f.proto == pkt.IPPROTO_ICMP:
            return "ICMP type %d code %d" % (f.icmp_type, f.icmp_code)
        fl = None
        for x in self.flows.values():
            if x.pport == f.dport:
                fl = x
        tisn = fl.tisn if fl and fl.tisn is not None else 0
        pisn = fl.pisn if fl else 0
        s = "%s %d:%d(%d)" % (pkt.flags_str(f.flags), (f.seq - tisn) & M32,
                              (f.seq - tisn + len(f.payload)) & M32, len(f.payload))
        if f.flags & pkt.ACK:
            s += " ack %d" % ((f.ack - pisn) & M32)
        s += " win %d" % f.win
        if f.flags & pkt.URG:
            s += " urg %d" % f.urg
        s += " <%s>" % ",".join(self.opt_str(o, fl) for o in f.opts)
        if f.opt_error:
            s += " (options: %s)" % f.opt_error
        return s

    def opt_str(self, o, fl):
        k, v = o
        if k == pkt.OPT_NOP:
            return "nop"
        if k == pkt.OPT_EOL:
            return "eol"
        if k == pkt.OPT_MSS:
            return "mss %d" % v
        if k == pkt.OPT_WSCALE:
            return "wscale %d" % v
        if k == pkt.OPT_SACKOK:
            return "sackOK"
        if k == pkt.OPT_TS:
            return "TS val %d ecr %d" % v
        if k == pkt.OPT_SACK:
            base = fl.pisn if fl else 0
            return "sack " + " ".join("%d:%d" % ((a - base) & M32, (b - base) & M32) for a, b in v)
        return "kind %d %s" % (k, v.hex() if isinstance(v, bytes) else v)

    def window_of(self, ev):
        """[lo, hi] in monotonic time for an event, from the previous one's time."""
        w = ev.when
        if w.any:
            return self.t_prev, self.t_prev + self.sc.wait, True
        base = self.t_prev if w.rel else self.t0
        return base + w.lo, base + w.hi, False

    # -- events --
    def run(self):
        self.t0 = self.t_prev = now()
        self.flow(1)
        for ev in self.sc.events:
            if ev.only and ev.only != self.lines_of:
                continue
            lo, hi, anyt = self.window_of(ev)
            if ev.kind == "expect":
                self.do_expect(ev, lo, hi, anyt)
                continue
            if ev.kind == "call" and self.pending:
                self.finish_pending()
            self.no_unexpected(ev, lo)
            if ev.kind == "silence":
                self.t_prev = now()
            elif ev.kind == "send":
                self.do_send(ev)
            elif ev.kind == "icmp":
                self.do_icmp(ev)
            elif ev.kind == "call":
                self.do_call(ev)
        if self.pending:
            self.finish_pending()

    def do_expect(self, ev, lo, hi, anyt):
        deadline = hi + self.tol
        while not self.rxq and now() < deadline:
            self.pump(deadline, on_frame=True)
            if self.agent.lines and not self.pending:
                raise Fail("agent %s said %r unasked" % (self.agent.name, self.agent.lines.pop(0)))
        if not self.rxq:
            self.fail(ev, "nothing by +%.3f s" % self.rel(deadline))
        f = self.rxq.pop(0)
        if not anyt and f.time < lo - self.tol:
            self.fail(ev, "came early: at +%.3f s, expected from +%.3f s: %s" % (
                self.rel(f.time), self.rel(lo), self.describe(f)))
        self.match(ev, f)
        self.t_prev = f.time

    def match(self, ev, f):
        fl = self.flow(ev.flow)
        if f.proto != pkt.IPPROTO_TCP:
            self.fail(ev, "got %s" % self.describe(f))
        if not f.csum_ok:
            self.fail(ev, "bad checksum on %s" % self.describe(f))
        if f.flags & pkt.SYN:
            fl.tisn = (f.seq - ev.seq) & M32
            fl.tport = f.sport
            fl.t_ws = None
            fl.right_edge = None
            for k, v in f.opts:
                if k == pkt.OPT_WSCALE:
                    fl.t_ws = v
        if fl.tport is None:
            fl.tport = f.sport
        got = self.describe(f)
        errs = []
        if f.sport != fl.tport:
            errs.append("from port %d, not %d" % (f.sport, fl.tport))
        mask = ~pkt.PSH if ev.psh_any else ~0
        if f.flags & mask != ev.flags & mask:
            errs.append("flags %s, expected %s" % (pkt.flags_str(f.flags), pkt.flags_str(ev.flags)))
        tisn = fl.tisn if fl.tisn is not None else 0
        rseq = (f.seq - tisn) & M32
        if rseq != ev.seq:
            errs.append("seq %d, expected %d" % (rseq, ev.seq))
        if len(f.payload) != ev.end - ev.seq:
            errs.append("%d bytes, expected %d" % (len(f.payload), ev.end - ev.seq))
        elif f.payload:
            if ev.payload is not None:
                want = ev.payload
            else:
                doff = ev.seq + (1 if ev.flags & pkt.SYN else 0) - 1
                want = pattern_agent(doff, len(f.payload))
            if f.payload != want:
                errs.append("payload %r, expected %r" % (f.payload[:40], want[:40]))
        if ev.ack is not None:
            rack = (f.ack - fl.pisn) & M32
            if rack != ev.ack:
                errs.append("ack %d, expected %d" % (rack, ev.ack))
        if ev.win not in (None, ANY):
            op, v = ev.win
            if not ((op == "==" and f.win == v) or (op == ">=" and f.win >= v) or (op == "<=" and f.win <= v)):
                errs.append("win %d, expected %s%d" % (f.win, "" if op == "==" else op, v))
        if ev.urg is not None and (not f.flags & pkt.URG or f.urg != ev.urg):
            errs.append("urgent pointer %d, expected %d" % (f.urg, ev.urg))
        if ev.opts is not ANY:
            e = self.match_opts(ev.opts, f.opts, fl)
            if e:
                errs.append(e)
        if f.opt_error:
            errs.append("malformed options: %s" % f.opt_error)
        for k, v in f.opts:
            if k == pkt.OPT_TS:
                fl.last_tsval = v[0]
        fl.last_seg = f
        if errs:
            self.fail(ev, "; ".join(errs) + "\n      got: " + got)
        self.check_edge(ev, f, fl)

    def match_opts(self, want, got, fl):
        g = [(k, v) for k, v in got if k not in (pkt.OPT_NOP, pkt.OPT_EOL)]
        w = [(k, v) for k, v in want if k not in (pkt.OPT_NOP, pkt.OPT_EOL)]
        rest = list(g)
        for k, v in w:
            for i, (gk, gv) in enumerate(rest):
                if gk != k:
                    continue
                if v is ANY or v is None:
                    ok = True
                elif k == pkt.OPT_TS:
                    ok = (v[0] is ANY or v[0] == gv[0]) and (v[1] is ANY or v[1] == gv[1])
                elif k == pkt.OPT_SACK:
                    ok = [((a + fl.pisn) & M32, (b + fl.pisn) & M32) for a, b in v] == list(gv)
                else:
                    ok = gv == v
                if ok:
                    del rest[i]
                    break
            else:
                if k == pkt.OPT_SACK:
                    return "options lack sack " + " ".join("%d:%d" % b for b in v)
                return "options lack %s" % self.opt_str((k, v if v is not ANY else 0), fl).replace(" 0", " *")
        if rest:
            return "unexpected options: %s" % ",".join(self.opt_str(o, fl) for o in rest)
        return None

    def check_edge(self, ev, f, fl):
        """The receive window's right edge never moves left (RFC 9293
        3.8.6: a receiver SHOULD NOT shrink the window)."""
        if f.flags & (pkt.SYN | pkt.RST) or not f.flags & pkt.ACK:
            return
        scale = fl.t_ws if (fl.t_ws is not None and fl.peer_ws is not None) else 0
        edge = (f.ack + (f.win << scale)) & M32
        # A scaled window is announced in units of 1 << scale: cut down to a
        # unit, the edge may seem to move left by less than one (RFC 7323
        # 2.4). Tolerated unless the scenario says otherwise (%edge-slack).
        slack = self.sc.edge_slack.get(self.lines_of, self.sc.edge_slack.get(None, (1 << scale) - 1))
        if fl.right_edge is not None:
            back = (fl.right_edge - edge) & M32
            if 0 < back < 0x80000000 and back > slack:
                self.fail(ev, "the window's right edge moved left by %d bytes" % back)
            if back >= 0x80000000 or back == 0:
                fl.right_edge = edge
        else:
            fl.right_edge = edge

    def do_send(self, ev):
        fl = self.flow(ev.flow)
        opts = []
        if ev.opts not in (None, ANY):
            for k, v in ev.opts:
                if k == pkt.OPT_TS:
                    v = (v[0], fl.last_tsval if v[1] is ANY else v[1])
                elif k == pkt.OPT_SACK:
                    v = [((a + (fl.tisn or 0)) & M32, (b + (fl.tisn or 0)) & M32) for a, b in v]
                elif k == pkt.OPT_WSCALE and ev.flags & pkt.SYN:
                    fl.peer_ws = v
                opts.append((k, v))
        if ev.flags & pkt.SYN and not any(k == pkt.OPT_WSCALE for k, v in opts):
            fl.peer_ws = None
        n = ev.end - ev.seq
        if ev.payload is not None:
            payload = ev.payload
        else:
            doff = ev.seq + (1 if ev.flags & pkt.SYN else 0) - 1
            payload = pattern_peer(max(doff, 0), n)
        ack = 0
        if ev.ack is not None:
            ack = (ev.ack + (fl.tisn or 0)) & M32
        win = 65535 if ev.win in (None, ANY) else ev.win[1]
        dport = fl.tport if fl.tport is not None else self.sport
        if fl.tport is None:
            fl.tport = self.sport
        frame = pkt.build_tcp(self.r.target_mac, PEER_MAC, PEER_IP, self.agent.ip, fl.pport, dport,
                              fl.pisn + ev.seq, ack, ev.flags, win, opts, payload, ev.urg or 0,
                              ident=(ev.lineno * 7) & 0xFFFF, ttl=ev.ttl, bad_csum=ev.badsum)
        self.r.wire.send(frame)
        self.t_prev = now()
        self.trace.append((">>", "%s (+%.3f)" % (ev.line, self.rel(self.t_prev))))

    def do_icmp(self, ev):
        fl = self.flow(ev.flow)
        if fl.last_seg is None:
            self.fail(ev, "no segment of the stack to quote yet")
        q = fl.last_seg.ip_raw
        ihl = (q[0] & 15) * 4
        t, code, mtu = ev.icmp
        frame = pkt.build_icmp(self.r.target_mac, PEER_MAC, PEER_IP, self.agent.ip, t, code, q[:ihl + 8], mtu)
        self.r.wire.send(frame)
        self.t_prev = now()
        self.trace.append((">>", "%s (+%.3f)" % (ev.line, self.rel(self.t_prev))))

    # -- socket calls --
    def agent_line(self, ev):
        a = ev.args
        c = ev.call
        if c == "bind":
            port = self.sport + (int(a[1]) if len(a) > 1 else 0)
            return "bind %s %d" % (a[0], port)
        if c == "connect":
            fl = self.flow(int(a[1]) if len(a) > 1 else 1)
            return "connect %s %s %d" % (a[0], PEER_IP, fl.pport)
        if c == "recv":
            c = "read"
        if c == "send":
            c = "write"
        return " ".join([c] + a)

    def do_call(self, ev):
        self.agent.lines.clear()
        line = self.agent_line(ev)
        start = now()
        self.agent.command(line)
        self.trace.append(("->", "%s (+%.3f)" % (line, self.rel(start))))
        self.t_prev = start
        if ev.when.ret is not None:
            self.pending = (ev, start)
            return
        self.finish_call(ev, start)

    def finish_pending(self):
        ev, start = self.pending
        self.pending = None
        self.finish_call(ev, start)

    def finish_call(self, ev, start):
        deadline = start + (ev.when.ret or 0) + max(self.tol, 0) + 10
        self.in_call = True
        try:
            self.wait_answer(ev, start, deadline)
        finally:
            self.in_call = False

    def wait_answer(self, ev, start, deadline):
        while not self.agent.lines:
            if now() > deadline:
                self.agent.kill("stuck in `%s`" % ev.line)
                self.fail(ev, "no answer from the agent in %.0f s (restarted)" % (deadline - start))
            if self.agent.dead:
                self.answers.append((ev, "died " + self.agent.dead))
                self.check_result(ev, "died " + self.agent.dead)
                return
            self.pump(deadline)
        ans = self.agent.lines.pop(0)
        t = now()
        self.answers.append((ev, ans))
        self.trace.append(("<-", "%s (+%.3f)" % (ans, self.rel(t))))
        if ev.when.ret is not None:
            want = start + ev.when.ret
            if abs(t - want) > self.tol:
                self.fail(ev, "returned after %.3f s, expected %.3f s" % (t - start, ev.when.ret))
            self.t_prev = t
        self.check_result(ev, ans)

    def check_result(self, ev, ans):
        if ans.startswith("died"):
            if ev.ret == "died" or ev.fields.get("died"):
                return
            self.fail(ev, "the agent %s" % ans)
        w = ans.split()
        if not w or w[0] != "r":
            self.fail(ev, "bad answer %r" % ans)
        ret = int(w[1])
        err = w[2]
        fields = dict(x.split("=", 1) for x in w[3:] if "=" in x)
        if "why" in fields:
            self.fail(ev, "the agent refused the call: %s" % fields["why"])
        errs = []
        if ev.ret is not ANY and ret != ev.ret:
            errs.append("returned %d%s, expected %s%s" % (ret, " " + err if ret < 0 else "", ev.ret,
                                                          " " + ev.errno if ev.errno else ""))
        elif ret < 0 and ev.errno and err != ev.errno:
            errs.append("errno %s, expected %s" % (err, ev.errno))
        elif ret < 0 and not ev.errno and ev.ret is not ANY:
            errs.append("errno %s, and the scenario names none" % err)
        for k, v in ev.fields.items():
            if k == "data":
                continue
            g = fields.get(k)
            if v == ANY:
                continue
            if k in ("ev", "revents"):
                if self.norm_events(g) != self.norm_events(v):
                    errs.append("%s=%s, expected %s" % (k, g, v))
            elif g != v:
                errs.append("%s=%s, expected %s" % (k, g, v))
        if ev.call in ("read", "recv") and ret > 0:
            data = bytes.fromhex(fields.get("data", ""))
            flags = ev.args[2] if len(ev.args) > 2 else ""
            name = ev.args[0]
            off = self.read_off.get(name, 0)
            want_field = ev.fields.get("data")
            if want_field is None:
                want = pattern_peer(off, ret)
            elif want_field == ANY:
                want = None
            else:
                want = want_field.encode()
            if want is not None and "data" in fields and data != want:
                errs.append("read %r, expected %r" % (data[:40], want[:40]))
            if "MSG_PEEK" not in flags and "MSG_OOB" not in flags:
                self.read_off[name] = off + ret
        if errs:
            self.fail(ev, "; ".join(errs) + "\n      got: " + ans)

    @staticmethod
    def norm_events(s):
        if s is None:
            return None
        out = set()
        for item in s.split(","):
            if ":" in item:
                n, fl = item.split(":", 1)
                out.add((n, frozenset(fl.split("|"))))
            else:
                out.add(frozenset(item.split("|")))
        return out


# ---------------------------------------------------------------------------
# the suite


def load_divergences(path):
    """DIVERGENCES.md: '## D<n>. title' sections, each with a line
    'Scenarios: `area/name`, ...' -> {scenario: 'D<n>'}."""
    out = {}
    cur = None
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            m = re.match(r"##\s+(D\d+)\b", line)
            if m:
                cur = m.group(1)
                continue
            if cur and line.lower().startswith("scenarios:"):
                for name in re.findall(r"`([^`]+)`", line):
                    out[name] = cur
    return out


class Runner:
    def __init__(self, args):
        self.args = args
        self.tol = args.tolerance
        self.wire = Wire(args.iface)
        self.target_mac = args.target_mac
        self.agents = {}
        self.port = args.port_base
        logdir = args.logdir
        if "linux" in args.targets:
            self.agents["linux"] = Agent("linux", args.linux, args.linux_ip, os.path.join(logdir, "agent-linux.log"))
        if "lstack" in args.targets:
            self.agents["lstack"] = Agent("lstack", args.lstack, args.lstack_ip, os.path.join(logdir, "agent-lstack.log"))

    def start(self):
        for a in self.agents.values():
            a.start()

    def stop(self):
        for a in self.agents.values():
            a.stop()

    def run_one(self, sc, target, lenient=False):
        """-> (ok, message, trace, seconds); with lenient, the Run too."""
        agent = self.agents[target]
        if agent.dead or agent.proc is None or agent.proc.poll() is not None:
            agent.stop()
            agent.start()
        self.port += 1
        sport = self.port
        pbase = 30000 + (self.port % 1000) * 16
        run = Run(self, sc, agent, sport, pbase, lenient)
        t = now()
        ok, msg = True, ""
        try:
            run.run()
        except Fail as e:
            ok, msg = False, str(e)
        dt = now() - t
        if target == "linux" and self.args.linux_after:
            # what the kernel learnt (a path MTU) must not reach the next scenario
            subprocess.run(shlex.split(self.args.linux_after), check=False)
        # the end of the scenario: every socket of the agent is aborted
        if not agent.dead:
            agent.lines.clear()
            agent.command("reset")
            end = now() + 10
            while not agent.lines and not agent.dead and now() < end:
                run.pump(min(end, now() + 0.2))
            agent.lines.clear()
        run.trace = [(d, "%s (+%.3f)" % (run.describe(x), run.rel(x.time))) if isinstance(x, pkt.Frame) else (d, x)
                     for d, x in run.trace]
        if lenient:
            return ok, msg, run.trace, dt, run
        return ok, msg, run.trace, dt


def print_trace(trace, out):
    for d, x in trace:
        if isinstance(x, pkt.Frame):
            continue
        out.write("      %s %s\n" % (d, x))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--target-mac", required=True)
    ap.add_argument("--linux", default="")
    ap.add_argument("--linux-ip", default="198.18.0.3")
    ap.add_argument("--lstack", default="")
    ap.add_argument("--lstack-ip", default="198.18.0.2")
    ap.add_argument("--linux-after", default="", help="command run after each Linux run (flush its route cache)")
    ap.add_argument("--targets", default="linux,lstack")
    ap.add_argument("--only", default="", help="scenario names or prefixes, comma-separated")
    ap.add_argument("--slow", action="store_true", help="also the scenarios marked %%slow")
    ap.add_argument("--tolerance", type=float, default=DEFAULT_TOL)
    ap.add_argument("--port-base", type=int, default=20000)
    ap.add_argument("--scenarios", default=os.path.join(here, "scenarios"))
    ap.add_argument("--divergences", default=os.path.join(here, "DIVERGENCES.md"))
    ap.add_argument("--logdir", default="/tmp")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--fuzz", type=float, default=0, help="seconds of differential fuzzing (fuzz.py), after the scenarios")
    ap.add_argument("--no-scenarios", action="store_true", help="fuzz only")
    ap.add_argument("--fuzz-cases", type=int, default=0, help="stop fuzzing after this many cases")
    ap.add_argument("--as-linux", action="store_true",
                    help="play the [linux] lines on every target and ignore DIVERGENCES.md (what lstack does now)")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    args.targets = [t for t in args.targets.split(",") if t]

    runner = Runner(args)
    runner.start()
    try:
        rc = 0 if args.no_scenarios else run_suite(runner, args)
        if args.fuzz > 0 and len(args.targets) == 2:
            import fuzz
            rc = fuzz.main(runner, args) or rc
        return rc
    finally:
        runner.stop()


def run_suite(runner, args):
    out = sys.stdout
    scs = scn.load_all(args.scenarios)
    listed = {} if args.as_linux else load_divergences(args.divergences)
    bad_list = [n for n in listed if n not in {s.name for s in scs}]
    only = [x for x in args.only.split(",") if x]
    sel = [s for s in scs if (not only or any(s.name == o or s.name.startswith(o.rstrip("/") + "/") or
                                                s.name.startswith(o) for o in only))
           and (args.slow or not s.slow or only)]
    counts = {"pass": 0, "differ": 0, "fail": 0, "bad": 0}
    per_area = {}
    failed_names = []
    out.write("1..%d\n" % len(sel))
    for i, sc in enumerate(sel, 1):
        area = per_area.setdefault(sc.area, {"n": 0, "pass": 0, "differ": 0, "fail": 0})
        area["n"] += 1
        lines = []
        verdict = "pass"
        tag = listed.get(sc.name)
        times = []
        if tag and not sc.has_variants():
            verdict = "fail"
            lines.append("listed in DIVERGENCES.md (%s) but has no [lstack] lines" % tag)
        if not tag and sc.has_variants() and not args.as_linux:
            verdict = "fail"
            lines.append("has [lstack] lines but is not listed in DIVERGENCES.md")
        for target in args.targets:
            if verdict == "fail":
                break
            ok, msg, trace, dt = runner.run_one(sc, target)
            times.append("%s %.2f s" % (target, dt))
            if not ok:
                if target == "linux":
                    verdict = "bad"
                    lines.append("Linux does not pass it (a bad scenario): " + msg)
                else:
                    verdict = "fail"
                    lines.append("lstack: " + msg + (" (listed as %s: the divergence changed)" % tag if tag else ""))
                if args.verbose or True:
                    lines.append("trace on %s:" % target)
                    lines.append(trace)
                break
            if args.verbose:
                lines.append("trace on %s:" % target)
                lines.append(trace)
            if target == "lstack" and tag:
                verdict = "differ"
        counts[verdict] += 1
        if verdict in ("pass", "differ", "fail"):
            area[verdict] += 1
        else:
            area["fail"] += 1
        if verdict in ("fail", "bad"):
            failed_names.append(sc.name)
        status = "ok" if verdict in ("pass", "differ") else "not ok"
        note = " # differs as listed: %s" % tag if verdict == "differ" else ""
        out.write("%s %d - %s (%s)%s\n" % (status, i, sc.name, ", ".join(times), note))
        for x in lines:
            if isinstance(x, list):
                print_trace(x, out)
            else:
                out.write("    " + x.replace("\n", "\n    ") + "\n")
        out.flush()
    for n in bad_list:
        out.write("not ok - DIVERGENCES.md lists `%s`, which is not a scenario\n" % n)
    out.write("# per area: %s\n" % ", ".join(
        "%s %d (%d pass, %d differ, %d fail)" % (a, v["n"], v["pass"], v["differ"], v["fail"])
        for a, v in sorted(per_area.items())))
    if failed_names:
        out.write("# failed: %s\n" % " ".join(failed_names))
    out.write("conformance: %d scenarios: %d passed, %d diverging as listed, %d failed, %d bad on Linux\n" % (
        len(sel), counts["pass"], counts["differ"], counts["fail"], counts["bad"]))
    return 1 if counts["fail"] or counts["bad"] or bad_list else 0


if __name__ == "__main__":
    sys.exit(main())
