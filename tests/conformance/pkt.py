"""Frames of the conformance peer: Ethernet, ARP, IPv4, TCP and ICMP, built
and parsed with the standard library alone (struct), so that a malformed
option is exactly the bytes a scenario names.

build_tcp / build_icmp return a whole Ethernet frame; parse_frame returns a
Frame (eth, ip and tcp fields as attributes, None where absent) or None for
what is not IPv4 or ARP. Checksums are computed on build and checked on
parse (Frame.csum_ok).
"""
import struct

ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
IPPROTO_ICMP = 1
IPPROTO_TCP = 6

FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80
FLAG_CHARS = [(SYN, "S"), (FIN, "F"), (RST, "R"), (PSH, "P"), (ACK, "."), (URG, "U"), (ECE, "E"), (CWR, "W")]

OPT_EOL, OPT_NOP, OPT_MSS, OPT_WSCALE, OPT_SACKOK, OPT_SACK, OPT_TS = 0, 1, 2, 3, 4, 5, 8


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def mac_str(b):
    return ":".join("%02x" % x for x in b)


def ip_bytes(s):
    return bytes(int(x) for x in s.split("."))


def ip_str(b):
    return ".".join(str(x) for x in b)


def csum(data):
    """The Internet checksum (RFC 1071) of data."""
    words = struct.unpack("!%dH" % ((len(data) + 1) // 2), data + b"\0" * (len(data) & 1))
    total = sum(words)
    total = (total & 0xFFFF) + (total >> 16)
    return ~(total + (total >> 16)) & 0xFFFF


def flags_str(f):
    s = "".join(c for bit, c in FLAG_CHARS if f & bit)
    return s or "."


def parse_flags(s):
    f = 0
    for c in s:
        for bit, ch in FLAG_CHARS:
            if ch == c:
                f |= bit
                break
        else:
            raise ValueError("unknown TCP flag %r" % c)
    return f


def eth_header(dst, src, etype):
    return mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", etype)


def ipv4_header(src, dst, proto, payload_len, ident=0, ttl=64, df=True, tos=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + payload_len, ident & 0xFFFF,
                    0x4000 if df else 0, ttl, proto, 0, ip_bytes(src), ip_bytes(dst))
    c = csum(h)
    return h[:10] + struct.pack("!H", c) + h[12:]


def encode_options(opts):
    """opts: list of (kind, value) as parse_options gives, or ("raw", bytes).
    Pads with NOPs... no: with EOL bytes to a multiple of 4 (as senders do
    after the last option)."""
    out = b""
    for kind, val in opts:
        if kind == "raw":
            out += val
        elif kind == OPT_NOP:
            out += b"\x01"
        elif kind == OPT_EOL:
            out += b"\x00"
        elif kind == OPT_MSS:
            out += struct.pack("!BBH", 2, 4, val)
        elif kind == OPT_WSCALE:
            out += struct.pack("!BBB", 3, 3, val)
        elif kind == OPT_SACKOK:
            out += b"\x04\x02"
        elif kind == OPT_SACK:
            out += struct.pack("!BB", 5, 2 + 8 * len(val))
            for a, b in val:
                out += struct.pack("!II", a & 0xFFFFFFFF, b & 0xFFFFFFFF)
        elif kind == OPT_TS:
            out += struct.pack("!BBII", 8, 10, val[0] & 0xFFFFFFFF, val[1] & 0xFFFFFFFF)
        else:
            raise ValueError("cannot encode option %r" % (kind,))
    while len(out) % 4:
        out += b"\x00"
    return out


def decode_options(data):
    """-> (list of (kind, value), error string or None). NOP and EOL kept."""
    opts = []
    i = 0
    while i < len(data):
        k = data[i]
        if k == OPT_EOL:
            opts.append((OPT_EOL, None))
            break
        if k == OPT_NOP:
            opts.append((OPT_NOP, None))
            i += 1
            continue
        if i + 1 >= len(data):
            return opts, "option %d without a length" % k
        ln = data[i + 1]
        if ln < 2 or i + ln > len(data):
            return opts, "option %d with length %d" % (k, ln)
        body = data[i + 2:i + ln]
        if k == OPT_MSS and ln == 4:
            opts.append((OPT_MSS, struct.unpack("!H", body)[0]))
        elif k == OPT_WSCALE and ln == 3:
            opts.append((OPT_WSCALE, body[0]))
        elif k == OPT_SACKOK and ln == 2:
            opts.append((OPT_SACKOK, None))
        elif k == OPT_SACK and (ln - 2) % 8 == 0:
            blocks = [struct.unpack("!II", body[j:j + 8]) for j in range(0, ln - 2, 8)]
            opts.append((OPT_SACK, blocks))
        elif k == OPT_TS and ln == 10:
            opts.append((OPT_TS, struct.unpack("!II", body)))
        else:
            opts.append((k, bytes(body)))
        i += ln
    return opts, None


def build_tcp(eth_dst, eth_src, ip_src, ip_dst, sport, dport, seq, ack, flags, win,
              opts=(), payload=b"", urg=0, ident=0, ttl=64, bad_csum=False):
    o = encode_options(list(opts))
    off = (20 + len(o)) // 4
    th = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                     off << 4, flags, win & 0xFFFF, 0, urg) + o
    seg = th + payload
    pseudo = ip_bytes(ip_src) + ip_bytes(ip_dst) + struct.pack("!BBH", 0, IPPROTO_TCP, len(seg))
    c = csum(pseudo + seg)
    if bad_csum:
        c ^= 0x5555
    seg = seg[:16] + struct.pack("!H", c) + seg[18:]
    return eth_header(eth_dst, eth_src, ETH_P_IP) + ipv4_header(ip_src, ip_dst, IPPROTO_TCP, len(seg), ident, ttl) + seg


def build_icmp(eth_dst, eth_src, ip_src, ip_dst, icmp_type, code, quoted, rest=0):
    """quoted: the IPv4 packet being answered (its header and at least 8
    bytes); rest: the 32-bit word after the checksum (next-hop MTU for
    fragmentation needed: rest = mtu)."""
    body = struct.pack("!BBHI", icmp_type, code, 0, rest) + quoted
    c = csum(body)
    body = body[:2] + struct.pack("!H", c) + body[4:]
    return eth_header(eth_dst, eth_src, ETH_P_IP) + ipv4_header(ip_src, ip_dst, IPPROTO_ICMP, len(body), df=False) + body


def build_arp_reply(my_mac, my_ip, to_mac, to_ip):
    arp = struct.pack("!HHBBH6s4s6s4s", 1, ETH_P_IP, 6, 4, 2, mac_bytes(my_mac), ip_bytes(my_ip),
                      mac_bytes(to_mac), ip_bytes(to_ip))
    return eth_header(to_mac, my_mac, ETH_P_ARP) + arp + b"\0" * 18


class Frame:
    __slots__ = ("raw", "eth_src", "eth_dst", "etype", "arp_op", "arp_sender_mac", "arp_sender_ip",
                 "arp_target_ip", "ip_src", "ip_dst", "proto", "ip_raw", "df", "ttl", "ip_id",
                 "sport", "dport", "seq", "ack", "flags", "win", "urg", "opts", "opt_error",
                 "payload", "csum_ok", "icmp_type", "icmp_code", "icmp_rest", "icmp_quoted", "time")

    def __init__(self):
        for k in self.__slots__:
            setattr(self, k, None)


def parse_frame(raw):
    if len(raw) < 14:
        return None
    f = Frame()
    f.raw = raw
    f.eth_dst, f.eth_src = mac_str(raw[0:6]), mac_str(raw[6:12])
    f.etype = struct.unpack("!H", raw[12:14])[0]
    if f.etype == ETH_P_ARP and len(raw) >= 42:
        (_, _, _, _, op, smac, sip, _, tip) = struct.unpack("!HHBBH6s4s6s4s", raw[14:42])
        f.arp_op, f.arp_sender_mac, f.arp_sender_ip, f.arp_target_ip = op, mac_str(smac), ip_str(sip), ip_str(tip)
        return f
    if f.etype != ETH_P_IP or len(raw) < 34:
        return None
    ip = raw[14:]
    vhl, _, tot, ident, frag, ttl, proto, _ = struct.unpack("!BBHHHBBH", ip[:12])
    ihl = (vhl & 15) * 4
    if vhl >> 4 != 4 or ihl < 20 or tot > len(ip):
        return None
    ip = ip[:tot]
    f.ip_raw = ip
    f.ip_src, f.ip_dst, f.proto = ip_str(ip[12:16]), ip_str(ip[16:20]), proto
    f.df, f.ttl, f.ip_id = bool(frag & 0x4000), ttl, ident
    f.csum_ok = csum(ip[:ihl]) == 0
    l4 = ip[ihl:]
    if proto == IPPROTO_TCP and len(l4) >= 20:
        f.sport, f.dport, f.seq, f.ack, off, f.flags, f.win, _, f.urg = struct.unpack("!HHIIBBHHH", l4[:20])
        doff = (off >> 4) * 4
        f.opts, f.opt_error = decode_options(l4[20:doff])
        f.payload = l4[doff:]
        pseudo = ip[12:20] + struct.pack("!BBH", 0, IPPROTO_TCP, len(l4))
        f.csum_ok = f.csum_ok and csum(pseudo + l4) == 0
    elif proto == IPPROTO_ICMP and len(l4) >= 8:
        f.icmp_type, f.icmp_code, _, f.icmp_rest = struct.unpack("!BBHI", l4[:8])
        f.icmp_quoted = l4[8:]
    return f
