"""The scenario format of the conformance suite (docs/conformance.md has the
manual). A scenario is a text file of time-ordered lines:

    # what it checks (the first comment lines are its description)
    %tolerance 0.05                    directives: %tolerance S, %wait S, %slow
    0    socket(s) = 0                 a socket call the agent makes, and its result
    +0   < S 0:0(0) win 65535 <mss 1460,sackOK,nop,wscale 7>    the peer sends
    +0   > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>   the stack must send
    [linux]  +0 > . 1:1(0) ack 101     a line for one target only
    [lstack] +0.02 > . 1:1(0) ack 101  (a listed divergence: DIVERGENCES.md)

parse() turns a file into a Scenario of Events; the runner (conform.py)
gives them meaning. Everything here is syntax: a line that does not parse
raises ScenarioError with its file and line number.
"""
import os
import re
import shlex

from pkt import OPT_MSS, OPT_NOP, OPT_EOL, OPT_SACK, OPT_SACKOK, OPT_TS, OPT_WSCALE, parse_flags

ANY = "*"


class ScenarioError(Exception):
    pass


class TimeSpec:
    """When an event happens, relative to the previous event's actual time
    (rel=True) or to the scenario's start: [lo, hi] seconds; any=True for
    '*' (no timing check, wait up to %wait)."""

    def __init__(self, lo=0.0, hi=0.0, rel=True, any_time=False, ret=None):
        self.lo, self.hi, self.rel, self.any = lo, hi, rel, any_time
        self.ret = ret  # a blocking call "+0...0.5": its return, seconds after its start

    def __repr__(self):
        return "*" if self.any else ("+" if self.rel else "") + (
            "%g" % self.lo if self.lo == self.hi else "%g~%g" % (self.lo, self.hi))


class Event:
    def __init__(self, kind, when, line, lineno, only=None):
        self.kind = kind  # "send", "expect", "call", "icmp", "silence", "peer"
        self.when = when
        self.line = line
        self.lineno = lineno
        self.only = only  # None, "linux" or "lstack"
        self.flow = 1
        # send/expect
        self.flags = 0
        self.psh_any = False
        self.seq = self.end = 0
        self.ack = None
        self.win = None  # None: unchecked (expect) / default (send); ("==", n) (">=", n) ("<=", n) or ANY
        self.opts = None  # None: expect no options / send none; ANY: anything; list of (kind, value)
        self.urg = None
        self.payload = None  # bytes for send, or None for the stream pattern
        self.badsum = False
        self.ttl = 64
        # icmp
        self.icmp = None
        # call
        self.call = None
        self.args = []
        self.ret = None
        self.errno = None
        self.fields = {}


class Scenario:
    def __init__(self, path, name):
        self.path = path
        self.name = name  # area/file without .pkt
        self.area = name.split("/")[0]
        self.description = ""
        self.tolerance = None
        self.wait = 2.0
        self.slow = False
        self.edge_slack = {}  # target (None: both) -> bytes the right edge may move left
        self.events = []

    def has_variants(self):
        return any(e.only == "lstack" for e in self.events) or "lstack" in self.edge_slack


_num = r"[0-9]*\.?[0-9]+"


def parse_time(tok):
    m = re.fullmatch(r"(\+?)(%s)(?:~(\+?)(%s))?(?:\.\.\.(%s))?" % (_num, _num, _num), tok)
    if tok == ANY:
        return TimeSpec(any_time=True)
    if not m:
        raise ValueError("bad time %r" % tok)
    rel = m.group(1) == "+"
    lo = float(m.group(2))
    hi = float(m.group(4)) if m.group(4) else lo
    if hi < lo:
        raise ValueError("time range %r goes backwards" % tok)
    ret = float(m.group(5)) if m.group(5) else None
    return TimeSpec(lo, hi, rel, False, ret)


def parse_options(text):
    """'<mss 1460,sackOK,TS val * ecr 100,nop,wscale 7,raw 0200>' ->
    list of (kind, value) with ANY for '*' values; '<...>' -> ANY."""
    body = text.strip()[1:-1].strip()
    if body in ("...", ANY):
        return ANY
    out = []
    if not body:
        return out
    for item in body.split(","):
        w = item.split()
        if not w:
            raise ValueError("empty option in %r" % text)
        k = w[0]

        def val(i, conv=int):
            if i >= len(w):
                raise ValueError("option %r needs a value" % item)
            return ANY if w[i] == ANY else conv(w[i], 0) if conv is int else conv(w[i])

        if k == "nop":
            out.append((OPT_NOP, None))
        elif k == "eol":
            out.append((OPT_EOL, None))
        elif k == "mss":
            out.append((OPT_MSS, val(1)))
        elif k == "wscale":
            out.append((OPT_WSCALE, val(1)))
        elif k == "sackOK":
            out.append((OPT_SACKOK, None))
        elif k == "sack":
            blocks = []
            for b in w[1:]:
                a, z = b.split(":")
                blocks.append((int(a), int(z)))
            out.append((OPT_SACK, blocks))
        elif k == "TS":
            # TS val V ecr E
            if len(w) != 5 or w[1] != "val" or w[3] != "ecr":
                raise ValueError("TS option is 'TS val V ecr E': %r" % item)
            out.append((OPT_TS, (ANY if w[2] == ANY else int(w[2]), ANY if w[4] == ANY else int(w[4]))))
        elif k == "raw":
            out.append(("raw", bytes.fromhex("".join(w[1:]))))
        else:
            raise ValueError("unknown option %r" % k)
    return out


def parse_segment(ev, rest, direction):
    """FLAGS START:END(LEN) [ack N] [win W] [urg U] [<opts>] [payload ...]"""
    m = re.match(r"\s*(\S+)\s+(\d+):(\d+)\((\d+)\)(.*)$", rest)
    if not m:
        raise ValueError("expected 'FLAGS START:END(LEN) ...'")
    fl = m.group(1)
    if "p" in fl:  # "p": PSH either way (where it falls is the sender's choice)
        ev.psh_any = True
        fl = fl.replace("p", "") or "."
    ev.flags = parse_flags(fl)
    ev.seq, ev.end, ln = int(m.group(2)), int(m.group(3)), int(m.group(4))
    if ev.end - ev.seq != ln:
        raise ValueError("%d:%d is not %d bytes" % (ev.seq, ev.end, ln))
    tail = m.group(5)
    om = re.search(r"<[^>]*>", tail)
    if om:
        ev.opts = parse_options(om.group(0))
        tail = tail[:om.start()] + tail[om.end():]
    elif direction == "expect":
        ev.opts = []
    toks = shlex.split(tail)
    i = 0
    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t == "ack":
            ev.ack = int(nxt)
            i += 2
        elif t == "win":
            if nxt == ANY:
                ev.win = ANY
            elif nxt.startswith(">="):
                ev.win = (">=", int(nxt[2:]))
            elif nxt.startswith("<="):
                ev.win = ("<=", int(nxt[2:]))
            else:
                ev.win = ("==", int(nxt))
            i += 2
        elif t == "urg":
            ev.urg = int(nxt)
            i += 2
        elif t == "ttl":
            ev.ttl = int(nxt)
            i += 2
        elif t == "badsum":
            ev.badsum = True
            i += 1
        elif t == "payload":
            # payload "text" or payload hex:0a0b
            p = nxt
            ev.payload = bytes.fromhex(p[4:]) if p.startswith("hex:") else p.encode()
            i += 2
        else:
            raise ValueError("unknown segment field %r" % t)
    if ev.payload is not None and len(ev.payload) != ln:
        raise ValueError("payload is %d bytes, the segment %d" % (len(ev.payload), ln))
    if ev.flags & 0x10 and ev.ack is None:
        raise ValueError("an ACK segment needs 'ack N'")


ICMP_UNREACH = {"net": 0, "host": 1, "proto": 2, "port": 3, "frag-needed": 4, "admin": 13}


def parse_call(ev, rest):
    """name(arg, ...) = RET [ERRNO] [key=value ...]"""
    m = re.match(r"\s*(\w+)\((.*?)\)\s*=\s*(.*)$", rest)
    if not m:
        raise ValueError("expected 'call(args) = result'")
    ev.call = m.group(1)
    ev.args = [a.strip() for a in m.group(2).split(",")] if m.group(2).strip() else []
    res = shlex.split(m.group(3))
    if not res:
        raise ValueError("no result after '='")
    # "died": the agent is killed by the call (a listed divergence only)
    ev.ret = ANY if res[0] == ANY else "died" if res[0] == "died" else int(res[0])
    i = 1
    if i < len(res) and re.fullmatch(r"E[A-Z0-9]+", res[i]):
        ev.errno = res[i]
        i += 1
    for kv in res[i:]:
        if "=" not in kv:
            raise ValueError("result field %r is not key=value" % kv)
        k, v = kv.split("=", 1)
        ev.fields[k] = v


def parse_line(text, lineno):
    only = None
    m = re.match(r"\s*\[(linux|lstack)\]\s*(.*)$", text)
    if m:
        only, text = m.group(1), m.group(2)
    parts = text.split(None, 1)
    if len(parts) < 2:
        raise ValueError("a line is 'TIME ACTION'")
    when = parse_time(parts[0])
    rest = parts[1].strip()
    flow = 1
    m = re.match(r"([<>])(\d*)\s+(.*)$", rest)
    if m and m.group(1) == "<" and m.group(3).startswith("icmp"):
        ev = Event("icmp", when, text, lineno, only)
        w = m.group(3).split()
        if len(w) < 3 or w[1] != "unreach" or w[2] not in ICMP_UNREACH:
            raise ValueError("icmp line is '< icmp unreach net|host|proto|port|frag-needed|admin [mtu N]'")
        mtu = 0
        if len(w) >= 5 and w[3] == "mtu":
            mtu = int(w[4])
        ev.icmp = (3, ICMP_UNREACH[w[2]], mtu)
        ev.flow = int(m.group(2) or 1)
        return ev
    if m:
        kind = "send" if m.group(1) == "<" else "expect"
        ev = Event(kind, when, text, lineno, only)
        ev.flow = int(m.group(2) or 1)
        parse_segment(ev, m.group(3), kind)
        return ev
    if rest == "silence":
        return Event("silence", when, text, lineno, only)
    ev = Event("call", when, text, lineno, only)
    parse_call(ev, rest)
    return ev


def parse(path, root):
    name = os.path.relpath(path, root)
    if name.endswith(".pkt"):
        name = name[:-4]
    with open(path) as f:
        return parse_lines(f, path, name)


def parse_lines(lines, path, name):
    """A scenario from its lines (parse() for a file; fuzz.py for one it
    generated)."""
    sc = Scenario(path, name)
    desc = []
    in_head = True
    for lineno, raw in enumerate(lines, 1):
        line = re.split(r"\s#\s", raw, maxsplit=1)[0].rstrip()  # an inline " # comment"
        if not line.strip():
            continue
        s = line.strip()
        if s.startswith("#"):
            if in_head:
                desc.append(s.lstrip("#").strip())
            continue
        in_head = False
        only = None
        m = re.match(r"\[(linux|lstack)\]\s*(%.*)$", s)
        if m:
            only, s = m.group(1), m.group(2)
        if s.startswith("%"):
            w = s[1:].split()
            if w[0] == "edge-slack":
                sc.edge_slack[only] = int(w[1])
                continue
            if only:
                raise ScenarioError("%s:%d: only %%edge-slack can be for one target" % (path, lineno))
            if w[0] == "tolerance":
                sc.tolerance = float(w[1])
            elif w[0] == "wait":
                sc.wait = float(w[1])
            elif w[0] == "slow":
                sc.slow = True
            else:
                raise ScenarioError("%s:%d: unknown directive %r" % (path, lineno, w[0]))
            continue
        try:
            sc.events.append(parse_line(s, lineno))
        except ValueError as e:
            raise ScenarioError("%s:%d: %s: %s" % (path, lineno, e, s))
    sc.description = " ".join(desc)
    if not sc.events:
        raise ScenarioError("%s: no events" % path)
    return sc


def load_all(root):
    out = []
    for d, _, files in sorted(os.walk(root)):
        for fn in sorted(files):
            if fn.endswith(".pkt"):
                out.append(parse(os.path.join(d, fn), root))
    return out
