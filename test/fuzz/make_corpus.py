#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the seed inputs of test/fuzz/corpus/: well-formed and broken
queries for fuzz_query, and upstream answers for fuzz_answer (whose first
byte picks the client's query: 0 www.example.com A +EDNS, 1 example.com
AAAA, 2 svc.example.com HTTPS +EDNS, 3 example.com MX; +4 lifts the size
limit to 65535), NFLOG datagrams for fuzz_nflog, and NFQUEUE datagrams for
fuzz_nfq. Run from anywhere; it rewrites the seed_* files only, so
inputs found by the fuzzer and added by hand stay."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def name(text, compress_to=None):
    out = b""
    for label in text.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    if compress_to is not None:
        return out + struct.pack(">H", 0xC000 | compress_to)
    return out + b"\0"


def header(ident, flags, qd, an, ns, ar):
    return struct.pack(">HHHHHH", ident, flags, qd, an, ns, ar)


def question(qname, qtype, qclass=1):
    return name(qname) + struct.pack(">HH", qtype, qclass)


def rr(owner, rtype, rdata, ttl=300, rclass=1):
    if isinstance(owner, str):
        owner = name(owner)
    return owner + struct.pack(">HHIH", rtype, rclass, ttl, len(rdata)) + rdata


def opt(udp=4096, version=0, do=True, options=b""):
    ttl = (version << 16) | (0x8000 if do else 0)
    return b"\0" + struct.pack(">HHIH", 41, udp, ttl, len(options)) + options


def a(text):
    return bytes(int(x) for x in text.split("."))


QUERIES = {
    "seed_a": header(1, 0x0100, 1, 0, 0, 0) + question("www.example.com", 1),
    "seed_edns_cookie": header(2, 0x0110, 1, 0, 0, 1)
    + question("WwW.ExAmple.com", 28)
    + opt(options=struct.pack(">HH", 10, 8) + b"12345678"),
    "seed_badvers": header(3, 0, 1, 0, 0, 1) + question("a.test", 1)
    + opt(version=1),
    "seed_notimp": header(4, 0x2800, 1, 0, 0, 0) + question("a.test", 6),
    "seed_two_opt": header(5, 0, 1, 0, 0, 2) + question("a.test", 1)
    + opt() + opt(),
    "seed_ptr_loop": header(6, 0, 1, 0, 0, 0) + b"\xc0\x0c\0\1\0\1",
    "seed_escapes": header(7, 0, 1, 0, 0, 0)
    + b"\x05a.b\\ \x03\x00\xff*\0\0\1\0\1",
    "seed_tsig_like": header(8, 0, 1, 0, 0, 1) + question("x.test", 65)
    + rr("key.test", 250, b"\0" * 8, ttl=0, rclass=255),
    "seed_long_name": header(9, 0, 1, 0, 0, 0)
    + b"".join(bytes([63]) + b"a" * 63 for _ in range(3))
    + bytes([61]) + b"b" * 61 + b"\0\0\1\0\1",
    "seed_short": b"\x12\x34\x01",
}

QA = name("www.example.com")  # offset 12 in answers to query 0
ANSWERS = {
    "seed_a_plain": b"\0" + header(0x7777, 0x8180, 1, 2, 0, 1)
    + question("www.example.com", 1)
    + rr(b"\xc0\x0c", 1, a("198.18.0.1"))
    + rr(b"\xc0\x0c", 1, a("10.0.0.1"))
    + opt(),
    "seed_cname_chain": b"\0" + header(0x7777, 0x8180, 1, 3, 1, 1)
    + question("www.example.com", 1)
    + rr(b"\xc0\x0c", 5, name("edge.cdn.test"))
    + rr(name("edge.cdn.test"), 5, name("e1", 50))
    + rr(name("e1.cdn.test"), 1, a("198.18.7.7"), ttl=20)
    + rr(name("cdn.test"), 6, name("ns", 50) + name("host", 50)
         + struct.pack(">IIIII", 1, 2, 3, 4, 5))
    + rr(name("ns.cdn.test"), 1, a("127.0.0.1")),
    "seed_aaaa": b"\1" + header(0x7777, 0x8180, 1, 2, 0, 0)
    + question("example.com", 28)
    + rr(b"\xc0\x0c", 28, bytes.fromhex("20010db8000000000000000000000001"))
    + rr(b"\xc0\x0c", 28, bytes.fromhex("fe800000000000000000000000000001")),
    "seed_https": b"\2" + header(0x7777, 0x8180, 1, 1, 0, 0)
    + question("svc.example.com", 65)
    + rr(b"\xc0\x0c", 65, b"\0\1\0" + b"\0\1\0\3\2h2"
         + b"\0\4\0\x08" + a("198.18.2.1") + a("10.1.1.1")
         + b"\0\6\0\x10" + bytes.fromhex("20010db8000000000000000000000002")),
    # The name check's reply takes ech (key 5) out; mandatory=ech drops it.
    "seed_https_ech": b"\2" + header(0x7777, 0x8180, 1, 2, 0, 0)
    + question("svc.example.com", 65)
    + rr(b"\xc0\x0c", 65, b"\0\1\0" + b"\0\1\0\3\2h2"
         + b"\0\4\0\x04" + a("198.18.2.1") + b"\0\5\0\x04ECH!")
    + rr(b"\xc0\x0c", 65, b"\0\2\0" + b"\0\0\0\2\0\5"
         + b"\0\5\0\x01x"),
    "seed_mx_srv": b"\3" + header(0x7777, 0x8180, 1, 1, 0, 2)
    + question("example.com", 15)
    + rr(b"\xc0\x0c", 15, b"\0\x0a" + name("mail", 12))
    + rr(name("_x._tcp", 12), 33, b"\0\1\0\1\1\xbb" + name("mail", 12))
    + rr(name("mail", 12), 1, a("198.18.3.3")),
    "seed_nxdomain": b"\5" + header(0x7777, 0x8183, 1, 0, 1, 0)
    + question("example.com", 28)
    + rr(b"\xc0\x0c", 6, name("ns", 12) + name("hostmaster", 12)
         + struct.pack(">IIIII", 1, 2, 3, 4, 5)),
    "seed_loop": b"\0" + header(0x7777, 0x8180, 1, 2, 0, 0)
    + question("www.example.com", 1)
    + rr(b"\xc0\x0c", 5, name("x.test"))
    + rr(name("x.test"), 5, b"\xc0\x0c"),
    "seed_bad_rdlen": b"\0" + header(0x7777, 0x8180, 1, 1, 0, 0)
    + question("www.example.com", 1)
    + rr(b"\xc0\x0c", 1, b"\1\2\3"),
    "seed_wrong_question": b"\0" + header(0x7777, 0x8180, 1, 0, 0, 0)
    + question("www.example.net", 1),
    "seed_many": b"\0" + header(0x7777, 0x8180, 1, 60, 0, 0)
    + question("www.example.com", 1)
    + b"".join(rr(b"\xc0\x0c", 1, bytes([198, 18, 0, i])) for i in range(60)),
}


# NFLOG datagrams for fuzz_nflog, as nfnetlink_log sends them (netlink and
# attribute headers in host order, little-endian here; the IP packet in
# network order).
def nla(atype, value):
    out = struct.pack("<HH", 4 + len(value), atype) + value
    return out + b"\0" * (-len(out) % 4)


def nflog_msg(family, attrs, mtype=(4 << 8) | 0):
    body = struct.pack("<BBH", family, 0, 0) + b"".join(attrs)
    msg = struct.pack("<IHHII", 16 + len(body), mtype, 0, 0, 0) + body
    return msg + b"\0" * (-len(msg) % 4)


def ipv4_tcp(src, dst, sport, dport, proto=6):
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 40, 1, 0, 64, proto, 0,
                      bytes(src), bytes(dst))
    return hdr + struct.pack(">HHIIBBHHH", sport, dport, 1, 0, 0x50, 2, 64240, 0, 0)


def ipv6_udp(dport):
    hdr = struct.pack(">IHBB16s16s", 0x60000000, 8, 17, 64,
                      bytes.fromhex("20010db8000000000000000000000002"),
                      bytes.fromhex("20010db8000000000000000000000001"))
    return hdr + struct.pack(">HHHH", 40000, dport, 8, 0)


NFLOG = {
    "seed_tcp_block": nflog_msg(2, [nla(10, b"dnsfence-block\0"),
                                    nla(11, struct.pack(">I", 12345)),
                                    nla(14, struct.pack(">I", 12345)),
                                    nla(9, ipv4_tcp([198, 18, 0, 2], [198, 18, 1, 11], 40000, 80))]),
    "seed_udp6_dns": nflog_msg(10, [nla(10, b"dnsfence-dns\0"),
                                    nla(11, struct.pack(">I", 0)),
                                    nla(9, ipv6_udp(53))]),
    "seed_icmp_audit": nflog_msg(2, [nla(10, b"dnsfence-audit\0"),
                                     nla(9, ipv4_tcp([198, 18, 0, 2], [198, 18, 3, 1], 0, 0, proto=1))]),
    "seed_two_msgs": nflog_msg(2, [nla(10, b"dnsfence-block\0"),
                                   nla(9, ipv4_tcp([198, 18, 0, 2], [198, 18, 1, 10], 1, 22))])
    + nflog_msg(2, [nla(10, b"other-tool\0")]),
    "seed_cut_payload": nflog_msg(2, [nla(10, b"dnsfence-block\0"),
                                      nla(9, ipv4_tcp([198, 18, 0, 2], [198, 18, 1, 10], 1, 22)[:22])]),
    "seed_bad_nla_len": nflog_msg(2, [struct.pack("<HH", 200, 9) + b"\0" * 8]),
    "seed_prefix_unterminated": nflog_msg(2, [nla(10, b"x" * 60)]),
    "seed_error_msg": struct.pack("<IHHII", 36, 2, 0, 1, 0) + struct.pack("<i", -16) + b"\0" * 16,
}


# NFQUEUE datagrams for fuzz_nfq, as nfnetlink_queue sends them with
# NFQA_CFG_F_UID_GID and NFQA_CFG_F_CONNTRACK: a packet header (id, hw
# protocol, hook), the payload, the conntrack nest (CTA_ID among others)
# and the uid.
NLA_F_NESTED = 0x8000


def nfq_msg(attrs):
    return nflog_msg(2, attrs, mtype=(3 << 8) | 0)


def nfq_hdr(pid):
    return nla(1, struct.pack(">IHB", pid, 0x0800, 3))


def ct_nest(attrs):
    return nla(11 | NLA_F_NESTED, b"".join(attrs))


TCP80 = ipv4_tcp([198, 18, 0, 2], [198, 18, 1, 10], 42000, 80)

NFQ = {
    "seed_pkt_ct_uid": nfq_msg([nfq_hdr(7), nla(10, TCP80),
                                ct_nest([nla(3, struct.pack(">I", 0x18a)),
                                         nla(12, struct.pack(">I", 0xdeadbeef)),
                                         nla(11, struct.pack(">I", 1))]),
                                nla(12, struct.pack(">I", 2)),
                                nla(16, struct.pack(">I", 4242))]),
    "seed_pkt_no_ct": nfq_msg([nfq_hdr(8), nla(10, TCP80),
                               nla(16, struct.pack(">I", 4242))]),
    "seed_ct_without_id": nfq_msg([nfq_hdr(9), nla(10, TCP80),
                                   ct_nest([nla(3, struct.pack(">I", 0x18a))])]),
    "seed_ct_id_short": nfq_msg([nfq_hdr(10), nla(10, TCP80),
                                 ct_nest([nla(12, b"\x01\x02")])]),
    "seed_ct_nest_bad_len": nfq_msg([nfq_hdr(11),
                                     struct.pack("<HH", 12, 11 | NLA_F_NESTED)
                                     + struct.pack("<HH", 40, 12) + b"\0" * 4]),
    "seed_two_pkts": nfq_msg([nfq_hdr(12), nla(10, TCP80),
                              ct_nest([nla(12, struct.pack(">I", 1))])])
    + nfq_msg([nfq_hdr(13), nla(10, TCP80),
               ct_nest([nla(12, struct.pack(">I", 2))])]),
    "seed_hdr_short": nfq_msg([nla(1, b"\0\0")]),
}


def write(subdir, seeds):
    path = os.path.join(HERE, "corpus", subdir)
    os.makedirs(path, exist_ok=True)
    for old in os.listdir(path):
        if old.startswith("seed_"):
            os.unlink(os.path.join(path, old))
    for fname, data in seeds.items():
        with open(os.path.join(path, fname), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("fuzz_query", QUERIES)
    write("fuzz_answer", ANSWERS)
    write("fuzz_nflog", NFLOG)
    write("fuzz_nfq", NFQ)
