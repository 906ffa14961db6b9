#!/usr/bin/env python3
"""Write the seed corpus of the frame fuzz target (tests/fuzz/corpus/frames/).

Each seed is one input of fuzz_frames (format: frame_fix.h): records of
flags (1 byte), length (2 bytes, big-endian) and a frame. The frames are
valid ones of each kind the stack serves; their flags ask the harness to
fix them up to the target's MAC, addresses, connection and checksums, so a
mutated copy stays deliverable. It also writes the two inputs that crashed
lwIP 2.1.3 before lstack's patch 0005 (regression seeds, in SEED_DIR too).
Run it again after changing the format:
    tests/fuzz/make_frame_seeds.py [SEED_DIR [REGRESSION_DIR]]
"""
import os
import struct
import sys

FIX_ETH, FIX_IP, FIX_CONN, FIX_CSUM, REC_POLL, REC_SEND = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
FIX_ALL = FIX_ETH | FIX_IP | FIX_CONN | FIX_CSUM

MAC_A = bytes([2, 0, 0, 0, 0, 1])  # the target's port (nic_mem_pair)
MAC_B = bytes([2, 0, 0, 0, 0, 2])  # the peer's
IP_A = bytes([198, 18, 0, 2])
IP_B = bytes([198, 18, 0, 1])
BCAST = b"\xff" * 6
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def eth(dst, typ, payload):
    return dst + MAC_B + struct.pack("!H", typ) + payload


def ipv4(proto, payload, ident=1, frag=0, total=None):
    total = 20 + len(payload) if total is None else total
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ident, frag, 64, proto, 0, IP_B, IP_A)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def tcp(flags, seq=0, ack=0, payload=b"", sport=0, dport=6379, window=65535, options=b""):
    doff = (20 + len(options)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4, flags, window, 0, 0) + options + payload


def icmp_echo(ident, seqno, payload):
    body = struct.pack("!BBHHH", 8, 0, 0, ident, seqno) + payload
    return body[:2] + struct.pack("!H", csum(body)) + body[4:]


def arp(op, dst_mac, tha):
    return struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + MAC_B + IP_B + tha + IP_A


def rec(flags, frame):
    return struct.pack("!BH", flags, len(frame)) + frame


def conn(flags, seq=0, ack=0, payload=b"", window=65535):
    """A segment of the established connection (seq/ack: offsets)."""
    return rec(FIX_ALL | REC_POLL, eth(MAC_A, 0x0800, ipv4(6, tcp(flags, seq, ack, payload, window=window))))


def seeds():
    ping = b"*1\r\n$4\r\nPING\r\n"
    syn_opts = bytes([2, 4, 0x05, 0xB4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7])
    icmp_big = icmp_echo(0x1234, 1, bytes(range(200)))
    ip_big = ipv4(1, icmp_big, ident=77)[20:]  # the ICMP message, 208 bytes
    yield "arp_request", rec(FIX_IP | REC_POLL, eth(BCAST, 0x0806, arp(1, BCAST, b"\0" * 6)))
    yield "arp_reply", rec(FIX_ETH | FIX_IP | REC_POLL, eth(MAC_A, 0x0806, arp(2, MAC_A, MAC_A)))
    yield "icmp_echo", rec(FIX_ETH | FIX_IP | FIX_CSUM | REC_POLL,
                           eth(MAC_A, 0x0800, ipv4(1, icmp_echo(1, 1, b"lstack" * 8))))
    yield "tcp_syn", rec(FIX_ETH | FIX_IP | FIX_CSUM | REC_POLL,
                         eth(MAC_A, 0x0800, ipv4(6, tcp(TCP_SYN, seq=1000, sport=40000, options=syn_opts))))
    yield "tcp_data", rec(FIX_ALL | REC_POLL | REC_SEND,
                          eth(MAC_A, 0x0800, ipv4(6, tcp(TCP_ACK | TCP_PSH, payload=ping))))
    yield "tcp_ooseq", (rec(FIX_ALL, eth(MAC_A, 0x0800, ipv4(6, tcp(TCP_ACK, seq=20, payload=b"B" * 10))))
                        + conn(TCP_ACK, seq=0, payload=b"A" * 20))
    yield "tcp_fin", conn(TCP_ACK | TCP_FIN)
    yield "tcp_rst", conn(TCP_RST)
    yield "tcp_rst_out_of_window", conn(TCP_RST, seq=100000)
    yield "tcp_zero_window", conn(TCP_ACK, window=0) + conn(TCP_ACK, window=65535)
    # A writes (REC_SEND), then three duplicate ACKs for the 80 bytes it sent.
    dup = (1 << 32) - 80
    yield "tcp_dupacks", (rec(FIX_ALL | REC_POLL | REC_SEND, eth(MAC_A, 0x0800, ipv4(6, tcp(TCP_ACK))))
                          + conn(TCP_ACK, ack=dup) + conn(TCP_ACK, ack=dup) + conn(TCP_ACK, ack=dup))
    # An ICMP echo in two fragments (the checksum covers both: no FIX_CSUM).
    yield "ip_fragments", (rec(FIX_ETH | FIX_IP, eth(MAC_A, 0x0800, ipv4(1, ip_big[:96], ident=77, frag=0x2000)))
                           + rec(FIX_ETH | FIX_IP | REC_POLL,
                                 eth(MAC_A, 0x0800, ipv4(1, ip_big[96:], ident=77, frag=96 // 8))))
    # A fragment far out (MF), then a last fragment ending before it: both stay
    # queued (LeakSanitizer once took the first for a leak: mem_nic.c).
    yield "ip_fragments_last_before", (
        rec(FIX_ETH | FIX_IP | REC_POLL, eth(MAC_A, 0x0800, ipv4(6, b"a" * 24, ident=79, frag=0x2000 | 32768 // 8)))
        + rec(FIX_ETH | FIX_IP | REC_POLL, eth(MAC_A, 0x0800, ipv4(6, b"b" * 40, ident=79, frag=17408 // 8))))
    # The same, the second fragment first and overlapping the first by 16 bytes.
    yield "ip_fragments_overlap", (
        rec(FIX_ETH | FIX_IP, eth(MAC_A, 0x0800, ipv4(1, ip_big[80:], ident=78, frag=80 // 8)))
        + rec(FIX_ETH | FIX_IP | REC_POLL, eth(MAC_A, 0x0800, ipv4(1, ip_big[:96], ident=78, frag=0x2000))))
    # The first fragment twice, then the last: the copy is dropped (frag_dropped).
    yield "ip_fragments_dup", (
        rec(FIX_ETH | FIX_IP, eth(MAC_A, 0x0800, ipv4(1, ip_big[:96], ident=80, frag=0x2000)))
        + rec(FIX_ETH | FIX_IP, eth(MAC_A, 0x0800, ipv4(1, ip_big[:96], ident=80, frag=0x2000)))
        + rec(FIX_ETH | FIX_IP | REC_POLL, eth(MAC_A, 0x0800, ipv4(1, ip_big[96:], ident=80, frag=96 // 8))))
    # A first fragment, then a last one ending past 65535 bytes (ping of death).
    yield "ip_fragments_oversized", (
        rec(FIX_ETH | FIX_IP, eth(MAC_A, 0x0800, ipv4(1, ip_big[:96], ident=81, frag=0x2000)))
        + rec(FIX_ETH | FIX_IP | REC_POLL, eth(MAC_A, 0x0800, ipv4(1, b"p" * 64, ident=81, frag=65528 // 8))))


def known():
    """Inputs that crashed lwIP 2.1.3 before patch 0005 (regression seeds)."""
    # lwIP 2.1.3 tcp_receive: a bare FIN at rcv_nxt + 2^31 trips
    # LWIP_ASSERT("insane offset!") and aborts (found by fuzz-frames).
    yield "lwip_insane_offset", conn(TCP_ACK | TCP_FIN, seq=1 << 31)
    # lwIP 2.1.3 tcp_parseopt: an MSS kind byte as the header's last byte; its
    # length is read one past the header, here past the frame (ASan builds
    # report it; others read a byte of whatever follows).
    yield "lwip_optbyte_overread", rec(FIX_ETH | FIX_IP | FIX_CSUM | REC_POLL, eth(MAC_A, 0x0800, ipv4(
        6, tcp(TCP_SYN, seq=1000, sport=40001, options=bytes([1, 1, 1, 2])))))


def write(out, inputs):
    os.makedirs(out, exist_ok=True)
    for name, data in inputs:
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
        print("%s/%s.bin: %d bytes" % (out, name, len(data)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    write(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "frames"), seeds())
    write(sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "corpus", "frames"), known())


if __name__ == "__main__":
    main()
