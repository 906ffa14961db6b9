"""Differential fuzzing of the conformance suite (conform.py --fuzz SECONDS).

Each case is a scenario generated from a seed: a connection is set up as
every scenario does, then 6 to 14 random steps: the peer sends a segment
(flags, sequence number in order, ahead of a hole, overlapping or far
outside the window, length, ACK number valid, old or of unsent data)
or the application calls read, write, shutdown,
getsockopt(SO_ERROR) or ioctl(SIOCINQ); at the end it reads what is left.
Each case runs on Linux, then on lstack; what the stacks send is not
compared (windows, timing and ACK policy may differ), what the application
sees is: each call's result, errno and the bytes read. The first case
where they differ is reported with its seed and written out as a scenario
file (Linux's answers as its expected results) in the log directory, ready
to become a scenario of the suite. What DIVERGENCES.md lists is left out:
URG, a zero window, more data than lwIP's initial window, Nagle
(TCP_NODELAY is on), an ACK below the first byte sent.

Seeds: case i of a run uses seed + i; CI runs the 16 cases of seeds 1-16
(the same cases every run), a person a random seed (printed) or --seed N
to replay; --fuzz-cases N stops after N cases.
"""
import os
import random
import sys
import time

import scenario as scn

PREFIX = """%tolerance 0.2
0    socket(s) = 0
+0   setsockopt(s, SO_REUSEADDR, 1) = 0
+0   bind(s) = 0
+0   listen(s, 5) = 0
+0   < S 0:0(0) win 65535 <mss 1460,sackOK,nop,wscale 7>
+0   > S. 0:0(0) ack 1 win * <...>
+0   < . 1:1(0) ack 1 win 512
+0   accept(s, a) = 0
+0   nonblock(a) = 0
+0   setsockopt(a, TCP_NODELAY, 1) = 0
"""

SETTLE = "+0.03"


def gen_case(seed):
    """-> scenario text"""
    rnd = random.Random(seed)
    lines = ["# fuzz case, seed %d" % seed, PREFIX.rstrip("\n")]
    peer_next = 1  # the peer's next in-order sequence number (relative)
    written = 0  # bytes the application wrote (the stack's snd_nxt - 1, at most)
    closed = shut = False
    for _ in range(rnd.randint(6, 14)):
        r = rnd.random()
        if r < 0.55:
            flags = rnd.choices([".", "P.", "F.", "FP.", "R.", "R", "S", "S.", ""],
                                [30, 30, 8, 5, 3, 2, 3, 2, 2])[0]
            ln = 0 if flags in ("R.", "R", "S", "S.") or rnd.random() < 0.2 else rnd.randint(1, 1460)
            o = rnd.random()
            if o < 0.55:
                seq = peer_next
            elif o < 0.75:
                seq = peer_next + rnd.randint(1, 3000)
            elif o < 0.9:
                seq = max(1, peer_next - rnd.randint(1, 200))
            elif o < 0.95:
                seq = peer_next + 100000 + rnd.randint(0, 1000)
            else:
                seq = max(1, peer_next - 100000 - rnd.randint(0, 1000)) if peer_next > 100001 else 1
            a = rnd.random()
            ack = (1 + written if a < 0.7 else 1 if a < 0.8 else 1 + written + rnd.randint(1, 5000)
                   if a < 0.9 else max(1, written - rnd.randint(0, 100)))
            win = 512  # not 0: lwIP takes no zero window from an ACK that moves nothing (DIVERGENCES.md)
            if not flags:
                seg = "< %s %d:%d(%d) win %d" % ("P" if ln else "F", seq, seq + ln, ln, win)
            else:
                seg = "< %s %d:%d(%d)%s win %d" % (flags, seq, seq + ln, ln,
                                                   " ack %d" % ack if "." in flags else "", win)
            lines.append("+0   " + seg)
            if seq == peer_next and "R" not in flags and "S" not in flags and "." in flags and ack <= 1 + written:
                peer_next += ln + (1 if "F" in flags else 0)
            lines.append("%s silence" % SETTLE)
        elif r < 0.75:
            lines.append("+0   read(a, %d) = *" % rnd.choice([1, 100, 2000, 65536]))
        elif r < 0.87 and not shut and written < 4000:
            # at most 4000 bytes in all: within lwIP's initial window (3
            # segments), so that "ack of everything written" acknowledges
            # sent data on both stacks
            n = rnd.randint(1, 4000 - written)
            lines.append("+0   write(a, %d) = *" % n)
            written += n
            lines.append("%s silence" % SETTLE)
        elif r < 0.9 and not shut:
            lines.append("+0   shutdown(a, SHUT_WR) = *")
            shut = True
        elif r < 0.95:
            lines.append("+0   getsockopt(a, SO_ERROR) = *")
        else:
            lines.append("+0   ioctl(a, SIOCINQ) = *")
    if not closed:
        lines.append("+0.05 read(a, 65536) = *")
        lines.append("+0   read(a, 65536) = *")
        lines.append("+0   getsockopt(a, SO_ERROR) = *")
    return "\n".join(lines) + "\n"


def norm(ans):
    """The part of an agent answer the application sees (accept's peer
    port differs run to run)."""
    return " ".join(w for w in ans.split() if not w.startswith("port="))


def as_scenario(text, answers):
    """The case with Linux's answers as the expected results."""
    out = []
    res = {ev.lineno: a for ev, a in answers}
    for n, line in enumerate(text.split("\n"), 1):
        if n in res and line.endswith("= *"):
            w = res[n].split()
            exp = w[1] + ("" if w[1] != "-1" else " " + w[2])
            extra = [x for x in w[3:] if x.startswith("val=")]
            if any(x.startswith("data=") for x in w[3:]):
                extra.append("data=*")
            line = line[:-1] + " ".join([exp] + extra)
        out.append(line)
    return "\n".join(out)


def main(runner, args):
    seed = args.seed if args.seed is not None else int(time.time()) % 1000000
    out = sys.stdout
    out.write("# fuzz: seed %d, %.0f s (replay: --fuzz %.0f --seed %d)\n" % (seed, args.fuzz, args.fuzz, seed))
    end = time.monotonic() + args.fuzz
    i = 0
    while time.monotonic() < end and (not args.fuzz_cases or i < args.fuzz_cases):
        cs = seed + i
        i += 1
        text = gen_case(cs)
        sc = scn.parse_lines(text.split("\n"), "<fuzz %d>" % cs, "fuzz/%d" % cs)
        got = {}
        for target in args.targets:
            ok, msg, trace, dt, run = runner.run_one(sc, target, lenient=True)
            if not ok:
                got[target] = ("error", msg, run)
            else:
                got[target] = ("ok", [(ev, norm(a)) for ev, a in run.answers], run)
        if len(got) < 2:
            continue
        lx, ls = got["linux"], got["lstack"]
        if lx[0] != "ok":
            out.write("not ok - fuzz case %d: Linux did not run it: %s\n" % (cs, lx[1]))
            return 1
        if ls[0] != "ok":
            diff = ("the run failed", ls[1])
        else:
            diff = None
            for (ev, a), (_, b) in zip(lx[1], ls[1]):
                if a != b:
                    diff = ("line %d `%s`" % (ev.lineno, ev.line), "linux `%s`, lstack `%s`" % (a, b))
                    break
        if diff:
            path = os.path.join(args.logdir, "fuzz-%d.pkt" % cs)
            with open(path, "w") as f:
                f.write(as_scenario(text, lx[2].answers))
            out.write("not ok - fuzz case %d (seed %d): first divergence at %s: %s\n" % (cs, cs, diff[0], diff[1]))
            out.write("# the case with Linux's answers: %s\n" % path)
            for target in ("linux", "lstack"):
                out.write("# trace on %s:\n" % target)
                for d, x in got[target][2].trace:
                    out.write("#     %s %s\n" % (d, x))
            out.write("conformance fuzz: %d cases, a divergence at seed %d\n" % (i, cs))
            return 1
    out.write("conformance fuzz: %d cases from seed %d, no divergence\n" % (i, seed))
    return 0
