#!/usr/bin/env python3
"""probe_pcap.py - where an established connection's request/reply time
goes, from two packet captures (bench/syn_flood.sh SF_CAPTURE).

    probe_pcap.py CLIENT_PCAP SERVER_PCAP [--port 6379] [--skip-src 198.19.0.5]

CLIENT_PCAP is taken on the client's veth (in the client namespace), and
SERVER_PCAP on the server's veth (in the server namespace), both during the
same probe (tcpdump -j host --time-stamp-precision=nano: one clock). The
connection to PORT with the most requests is the established one (the
probe's other connections are its new-connection checks). A request is the
client's data from its first segment after the server's previous reply up to
the segment the reply acknowledges; the split of each request follows.
"""
import argparse
import struct
import sys

#   t1  its first segment leaves the client's veth (client capture, transmit)
#   t2  its last segment reaches the server's veth (server capture, receive:
#       the frame is then in lstack's af_packet ring, or entering the kernel's
#       IP receive)
#   t3  the reply reaches the client's veth (client capture, receive)
#
# and prints p50 / p99 / max of
#   wire    t3 - t1: the round trip seen at the client's veth, without the
#           probe process's own scheduling (its send and its wake-up),
#   to-srv  t2 - t1: the client side's transmit path into the server's veth
#           (the per-CPU backlog queue it shares with the flood's SYNs),
#   server  t3 - t2: the server, from its veth's receive of the request to
#           the reply's arrival at the client's veth (for lstack: the frames
#           ahead of it in the ring, the poll round, redis, the send).
#
# The probe's own figure (bench/syn_flood.sh prints it) minus `wire` is the
# probe process's scheduling on the client's CPU.
#
# Only the standard library: pcap (microsecond or nanosecond), Ethernet,
# IPv4, TCP. Frames that are not TCP to or from PORT are ignored.


def read_pcap(path):
    """Yields (time in s, src ip, dst ip, sport, dport, seq, ack, payload length)."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        else:
            endian = ">"
            magic = struct.unpack(">I", hdr[:4])[0]
        scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
        linktype = struct.unpack(endian + "I", hdr[20:24])[0]
        if linktype != 1:
            raise SystemExit("%s: link type %d, want Ethernet (1)" % (path, linktype))
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, caplen, _ = struct.unpack(endian + "IIII", rec)
            data = f.read(caplen)
            if len(data) < 14 + 20 + 20 or data[12:14] != b"\x08\x00":
                continue
            ip = data[14:]
            ihl = (ip[0] & 15) * 4
            if ip[9] != 6:
                continue
            tot = struct.unpack("!H", ip[2:4])[0]
            tcp = ip[ihl:]
            sport, dport, seq, ack = struct.unpack("!HHII", tcp[:12])
            doff = (tcp[12] >> 4) * 4
            yield (sec + frac * scale, ip[12:16], ip[16:20], sport, dport, seq, ack, tot - ihl - doff)


def pct(vals, q):
    return vals[min(len(vals) - 1, int(q * len(vals)))] if vals else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("client")
    ap.add_argument("server")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--label", default="")
    a = ap.parse_args()

    # Client capture: per client port, the data segments both ways in order.
    conns = {}
    for t, src, dst, sp, dp, seq, ack, n in read_pcap(a.client):
        if n <= 0:
            continue
        if dp == a.port:
            conns.setdefault(sp, []).append(("c", t, seq, n, ack))
        elif sp == a.port:
            conns.setdefault(dp, []).append(("s", t, seq, n, ack))
    if not conns:
        print("pcap%s: no data segments to port %d in %s" % (a.label, a.port, a.client))
        return 1
    port = max(conns, key=lambda p: sum(1 for e in conns[p] if e[0] == "s"))

    # Requests: t1 = first client segment after the previous reply; the
    # reply's ack names the request's end.
    reqs = []  # (t1, end seq, t3)
    t1 = None
    seen_reply_acks = set()
    for kind, t, seq, n, ack in conns[port]:
        if kind == "c":
            if t1 is None:
                t1 = t
        else:
            if t1 is not None and ack not in seen_reply_acks:
                reqs.append((t1, ack, t))
                seen_reply_acks.add(ack)
            t1 = None

    # Server capture: the first arrival of the segment that ends each request.
    arrive = {}
    for t, src, dst, sp, dp, seq, ack, n in read_pcap(a.server):
        if n > 0 and sp == port and dp == a.port:
            end = (seq + n) & 0xFFFFFFFF
            arrive.setdefault(end, t)

    wire, to_srv, server = [], [], []
    for t1, end, t3 in reqs:
        wire.append(t3 - t1)
        t2 = arrive.get(end)
        if t2 is not None:
            to_srv.append(t2 - t1)
            server.append(t3 - t2)
    for name, v in (("wire", wire), ("to-srv", to_srv), ("server", server)):
        v.sort()
        print("pcap%s: %-6s %5d requests, p50 %.3f ms, p99 %.3f ms, max %.3f ms" % (
            a.label, name, len(v), pct(v, 0.5) * 1e3, pct(v, 0.99) * 1e3, (v[-1] if v else 0) * 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
