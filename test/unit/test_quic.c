// SPDX-License-Identifier: GPL-2.0-or-later
/* The QUIC Initial reader: RFC 9001 Appendix A's client keys (A.1) and
 * its protected client Initial (A.2) read back to the CRYPTO frame and
 * the server name example.com; truncations, other versions, a payload
 * that does not authenticate, reserved bits, oversize and short
 * connection IDs, frames an Initial may not carry; coalesced Initials;
 * and a ClientHello split over two Initials in shuffled CRYPTO frames,
 * reassembled by offset (flowtab_place) with its bounds. A datagram split
 * into its packets and each Initial opened as a server does (a broken
 * one beside a valid one, one under another connection's keys); the
 * connections let through (quicconn): the judged bytes compared, a
 * second ClientHello placed past them and judged, the bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "flow/flowtab.h"
#include "flow/quic.h"
#include "flow/quicconn.h"
#include "flow/tlshello.h"

/* RFC 9001 A.2, the client's protected Initial (1200 bytes). */
static const char *const a2_hex[] = {
    "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11",
    "d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399",
    "1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c",
    "8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212",
    "30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5",
    "457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208",
    "4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec",
    "4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3",
    "485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db",
    "059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c",
    "7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8",
    "9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556",
    "be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74",
    "68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a",
    "c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00",
    "f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632",
    "291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964",
    "25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd",
    "14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff",
    "ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198",
    "e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd",
    "c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73",
    "203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f",
    "cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e",
    "fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade",
    "a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047",
    "90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2",
    "162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4",
    "40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0",
    "6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e",
    "8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0",
    "be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400",
    "54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab",
    "760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9",
    "f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4",
    "056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064",
    "7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241",
    "e221af44860018ab0856972e194cd934",
};

static struct quic_initial *qip;
#define qi (*qip)
static struct tlshello h;
static uint8_t a2[1200];

static void unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static int setup(void **state)
{
	size_t at = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(a2_hex) / sizeof(a2_hex[0]); i++) {
		size_t n = strlen(a2_hex[i]) / 2;

		unhex(a2_hex[i], a2 + at, n);
		at += n;
	}
	assert_int_equal(at, sizeof(a2));
	qip = quic_initial_new();
	assert_non_null(qip);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	quic_initial_free(qip);
	return 0;
}

static void test_rfc9001_a1_client_keys(void **state)
{
	static const uint8_t dcid[8] = {0x83, 0x94, 0xc8, 0xf0,
					0x3e, 0x51, 0x57, 0x08};
	uint8_t key[16], iv[12], hp[16];
	struct quic_keys k;

	(void)state;
	assert_int_equal(quic_initial_keys(qip, dcid, sizeof(dcid), &k), 0);
	unhex("1f369613dd76d5467730efcbe3b1a22d", key, 16);
	unhex("fa044b2f42a3fd3b46fb255c", iv, 12);
	unhex("9f50449e04a0e810283a1e9933adedd2", hp, 16);
	assert_memory_equal(k.key, key, 16);
	assert_memory_equal(k.iv, iv, 12);
	assert_memory_equal(k.hp, hp, 16);
}

static void test_rfc9001_a2_client_initial(void **state)
{
	uint8_t hello_start[8];

	(void)state;
	assert_int_equal(quic_kind(a2, sizeof(a2)), QUIC_KIND_INITIAL);
	assert_int_equal(quic_initial_parse(a2, sizeof(a2), &qi), 0);
	assert_int_equal(qi.dcid_len, 8);
	assert_int_equal(qi.n_crypto, 1);
	assert_int_equal(qi.crypto[0].off, 0);
	assert_int_equal(qi.crypto[0].len, 0xf1);
	unhex("010000ed0303ebf8", hello_start, 8);
	assert_memory_equal(qi.crypto[0].data, hello_start, 8);
	assert_int_equal(
	    tlshello_parse_messages(qi.crypto[0].data, qi.crypto[0].len, &h),
	    0);
	assert_true(h.has_name);
	assert_string_equal(h.name, "example.com");
	/* Every prefix of the message is incomplete, never a name. */
	for (size_t n = 0; n < qi.crypto[0].len; n++)
		assert_int_equal(
		    tlshello_parse_messages(qi.crypto[0].data, n, &h), -EAGAIN);
}

static void test_truncated_initial_refused(void **state)
{
	(void)state;
	for (size_t n = 0; n < sizeof(a2); n++) {
		int rc = quic_initial_parse(a2, n, &qi);

		if (n == 0)
			assert_int_equal(rc, -EPROTO); /* no long header */
		else if (n < 5)
			assert_int_equal(rc, -EPROTO); /* no version */
		else
			assert_int_equal(rc, -EBADMSG);
	}
}

static void test_other_version_or_type_not_read(void **state)
{
	uint8_t p[sizeof(a2)];

	(void)state;
	memcpy(p, a2, sizeof(p));
	p[4] = 0x02; /* version 2 of the numbering, not QUIC v1 */
	assert_int_equal(quic_kind(p, sizeof(p)), QUIC_KIND_VERSION);
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EPROTO);
	memcpy(p + 1, "\x6b\x33\x43\xcf", 4); /* RFC 9369 QUIC v2 */
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EPROTO);
	memcpy(p, a2, sizeof(p));
	p[0] = 0xe0; /* 0-RTT */
	assert_int_equal(quic_kind(p, sizeof(p)), QUIC_KIND_LONG);
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EPROTO);
	p[0] = 0x40; /* short header */
	assert_int_equal(quic_kind(p, sizeof(p)), QUIC_KIND_SHORT);
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EPROTO);
	memcpy(p, a2, sizeof(p));
	p[0] &= ~0x40; /* no fixed bit */
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EBADMSG);
}

static void test_tampered_payload_does_not_authenticate(void **state)
{
	uint8_t p[sizeof(a2)];

	(void)state;
	memcpy(p, a2, sizeof(p));
	p[600] ^= 1;
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EACCES);
	memcpy(p, a2, sizeof(p));
	p[6] ^= 1; /* another DCID: other keys */
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EACCES);
}

static void test_dcid_over_20_bytes_refused(void **state)
{
	uint8_t p[sizeof(a2)];

	(void)state;
	memcpy(p, a2, sizeof(p));
	p[5] = 21;
	assert_int_equal(quic_initial_parse(p, sizeof(p), &qi), -EBADMSG);
}

static const uint8_t *key_dcid; /* protect's keys: NULL, the header's */

/* A client Initial like a real client's: first byte b0 (0xc3: 4-byte
 * packet number), the frames, zero PADDING up to pad bytes of payload,
 * protected with the keys of key_dcid (8 bytes) when set. */
static size_t protect(uint8_t *out, uint8_t b0, const uint8_t *dcid,
		      size_t dcil, uint32_t pn, const uint8_t *frames,
		      size_t flen, size_t pad)
{
	uint8_t plain[2048] = {0}, mask[16];
	size_t plen = flen > pad ? flen : pad, i = 0, pn_off;
	struct quic_keys k;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t nonce[12];
	int n = 0;

	assert_non_null(c);
	assert_true(plen <= sizeof(plain));
	memcpy(plain, frames, flen);
	assert_int_equal(key_dcid != NULL
			     ? quic_initial_keys(qip, key_dcid, 8, &k)
			     : quic_initial_keys(qip, dcid, dcil, &k),
			 0);
	out[i++] = b0;
	memcpy(out + i, "\x00\x00\x00\x01", 4);
	i += 4;
	out[i++] = (uint8_t)dcil;
	memcpy(out + i, dcid, dcil);
	i += dcil;
	out[i++] = 0; /* SCID */
	out[i++] = 0; /* token */
	out[i++] = (uint8_t)(0x40 | ((4 + plen + 16) >> 8));
	out[i++] = (uint8_t)(4 + plen + 16);
	pn_off = i;
	for (int b = 3; b >= 0; b--)
		out[i++] = (uint8_t)(pn >> (8 * b));
	memcpy(nonce, k.iv, 12);
	for (int b = 0; b < 4; b++)
		nonce[11 - b] ^= (uint8_t)(pn >> (8 * b));
	assert_true(
	    EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, k.key, nonce) > 0);
	assert_true(EVP_EncryptUpdate(c, NULL, &n, out, (int)i) > 0);
	assert_true(EVP_EncryptUpdate(c, out + i, &n, plain, (int)plen) > 0);
	assert_true(EVP_EncryptFinal_ex(c, out + i + n, &n) > 0);
	assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16,
					out + i + plen) > 0);
	assert_true(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k.hp, NULL) >
		    0);
	assert_true(EVP_EncryptUpdate(c, mask, &n, out + pn_off + 4, 16) > 0);
	EVP_CIPHER_CTX_free(c);
	out[0] ^= mask[0] & 0x0f;
	for (int b = 0; b < 4; b++)
		out[pn_off + (size_t)b] ^= mask[1 + b];
	return i + plen + 16;
}

static size_t put_crypto(uint8_t *p, size_t off, const uint8_t *data, size_t n)
{
	p[0] = 0x06;
	p[1] = (uint8_t)(0x40 | (off >> 8));
	p[2] = (uint8_t)off;
	p[3] = (uint8_t)(0x40 | (n >> 8));
	p[4] = (uint8_t)n;
	memcpy(p + 5, data, n);
	return 5 + n;
}

/* A ClientHello of about 1.6 KiB (a post-quantum key share's size)
 * naming name. */
static size_t big_hello(uint8_t *out, const char *name)
{
	size_t nl = strlen(name), i = 4, ext, pad = 1400;

	memcpy(out + i, "\x03\x03", 2);
	i += 2;
	memset(out + i, 0x11, 32);
	i += 32;
	out[i++] = 0;					/* session id */
	memcpy(out + i, "\x00\x02\x13\x01\x01\x00", 6); /* suites, comp */
	i += 6;
	ext = i;
	i += 2;
	out[i++] = 0; /* server_name */
	out[i++] = 0;
	out[i++] = 0;
	out[i++] = (uint8_t)(nl + 5);
	out[i++] = 0;
	out[i++] = (uint8_t)(nl + 3);
	out[i++] = 0;
	out[i++] = 0;
	out[i++] = (uint8_t)nl;
	memcpy(out + i, name, nl);
	i += nl;
	out[i++] = 0x00; /* padding (21) standing in for the key share */
	out[i++] = 0x15;
	out[i++] = (uint8_t)(pad >> 8);
	out[i++] = (uint8_t)pad;
	memset(out + i, 0, pad);
	i += pad;
	out[ext] = (uint8_t)((i - ext - 2) >> 8);
	out[ext + 1] = (uint8_t)(i - ext - 2);
	out[0] = 1;
	out[1] = 0;
	out[2] = (uint8_t)((i - 4) >> 8);
	out[3] = (uint8_t)(i - 4);
	return i;
}

static const uint8_t dcid8[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static void test_split_hello_shuffled_frames_reassembled(void **state)
{
	uint8_t hello[2048], fr[1400], pkt[1500];
	struct flowtab *t = flowtab_new(4, TLSHELLO_MAX, 1 << 20);
	struct flowtab_key key = {
	    .sport = 1, .dport = 443, .proto = IPPROTO_UDP};
	struct flowtab_flow *f;
	size_t n = big_hello(hello, "www.allowed.test"), fl, plen;

	(void)state;
	assert_non_null(t);
	f = flowtab_get(t, &key, 0, true);
	assert_non_null(f);
	/* Packet 1: [700, 1000) then [0, 700), PING between. */
	fl = put_crypto(fr, 700, hello + 700, 300);
	fr[fl++] = 0x01;
	fl += put_crypto(fr + fl, 0, hello, 700);
	plen = protect(pkt, 0xc3, dcid8, 8, 0, fr, fl, 1162);
	assert_int_equal(quic_initial_parse(pkt, plen, &qi), 0);
	assert_int_equal(qi.n_crypto, 2);
	for (size_t i = 0; i < qi.n_crypto; i++)
		assert_int_equal(flowtab_place(t, f, qi.crypto[i].off,
					       qi.crypto[i].data,
					       qi.crypto[i].len),
				 0);
	assert_int_equal(flowtab_prefix(f), 1000);
	assert_int_equal(tlshello_parse_messages(f->buf, flowtab_prefix(f), &h),
			 -EAGAIN);
	/* The same bytes again are fine, different ones are not. */
	assert_int_equal(flowtab_place(t, f, 10, hello + 10, 20), 0);
	hello[15] ^= 1;
	assert_int_equal(flowtab_place(t, f, 10, hello + 10, 20), -EBADMSG);
	hello[15] ^= 1;
	/* Packet 2: the rest. */
	fl = put_crypto(fr, 1000, hello + 1000, n - 1000);
	plen = protect(pkt, 0xc3, dcid8, 8, 1, fr, fl, 1162);
	assert_int_equal(quic_initial_parse(pkt, plen, &qi), 0);
	assert_int_equal(qi.n_crypto, 1);
	assert_int_equal(flowtab_place(t, f, qi.crypto[0].off,
				       qi.crypto[0].data, qi.crypto[0].len),
			 0);
	assert_int_equal(flowtab_prefix(f), n);
	assert_int_equal(tlshello_parse_messages(f->buf, flowtab_prefix(f), &h),
			 0);
	assert_string_equal(h.name, "www.allowed.test");
	/* Bounds: past the per-flow size, too many disjoint runs. */
	assert_int_equal(flowtab_place(t, f, TLSHELLO_MAX, hello, 1),
			 -EMSGSIZE);
	f = flowtab_get(t, &(struct flowtab_key){.sport = 2, .proto = 17}, 0,
			true);
	assert_non_null(f);
	for (size_t i = 0; i < FLOWTAB_RANGES_MAX; i++)
		assert_int_equal(flowtab_place(t, f, 2 * i, hello, 1), 0);
	assert_int_equal(flowtab_place(t, f, 100, hello, 1), -EMSGSIZE);
	assert_int_equal(flowtab_place(t, f, 1, hello + 1, 1), 0); /* merges */
	assert_int_equal(flowtab_prefix(f), 3);
	flowtab_free(t);
}

static void test_frames_an_initial_may_not_carry(void **state)
{
	static const uint8_t stream[] = {0x08, 0x00, 0x01, 0xaa};
	static const uint8_t long_type[] = {0x40, 0x06, 0x00, 0x01, 0x01};
	static const uint8_t ack[] = {0x02, 0x05, 0x00, 0x01, 0x00, 0x01, 0x00};
	uint8_t pkt[1300];
	size_t n;

	(void)state;
	n = protect(pkt, 0xc3, dcid8, 8, 0, stream, sizeof(stream), 100);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), -EBADMSG);
	n = protect(pkt, 0xc3, dcid8, 8, 0, long_type, sizeof(long_type), 100);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), -EBADMSG);
	n = protect(pkt, 0xc3, dcid8, 8, 0, ack, sizeof(ack), 100);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), 0);
	assert_int_equal(qi.n_crypto, 0);
	/* Reserved bits set under the header protection. */
	n = protect(pkt, 0xcb, dcid8, 8, 0, ack, sizeof(ack), 100);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), -EBADMSG);
}

static void test_short_dcid_read_for_the_caller_to_refuse(void **state)
{
	static const uint8_t ping[] = {0x01};
	uint8_t pkt[1300];
	size_t n = protect(pkt, 0xc3, dcid8, 4, 0, ping, 1, 100);

	(void)state;
	assert_int_equal(quic_initial_parse(pkt, n, &qi), 0);
	assert_int_equal(qi.dcid_len, 4);
	assert_true(qi.dcid_len < QUIC_DCID_MIN);
}

static void test_coalesced_initials_same_dcid_only(void **state)
{
	static const uint8_t other[8] = {9, 9, 9, 9, 9, 9, 9, 9};
	uint8_t fr[64], pkt[2600];
	size_t fl = put_crypto(fr, 0, (const uint8_t *)"\x01\x00", 2), n;

	(void)state;
	n = protect(pkt, 0xc3, dcid8, 8, 0, fr, fl, 100);
	fl = put_crypto(fr, 2, (const uint8_t *)"\x00\x05", 2);
	n += protect(pkt + n, 0xc3, dcid8, 8, 1, fr, fl, 100);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), 0);
	assert_int_equal(qi.n_crypto, 2);
	assert_int_equal(qi.crypto[1].off, 2);
	n = protect(pkt, 0xc3, dcid8, 8, 0, fr, fl, 100);
	n += protect(pkt + n, 0xc3, other, 8, 1, fr, fl, 100);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), -EBADMSG);
	/* A 0-RTT packet after the Initial is not read. */
	n = protect(pkt, 0xc3, dcid8, 8, 0, fr, fl, 100);
	memset(pkt + n, 0xd0, 40);
	assert_int_equal(quic_initial_parse(pkt, n + 40, &qi), 0);
	assert_int_equal(qi.n_crypto, 1);
}

static void test_datagram_every_initial_opened(void **state)
{
	static const uint8_t other[8] = {9, 9, 9, 9, 9, 9, 9, 9};
	uint8_t fr[64], pkt[2600];
	size_t fl = put_crypto(fr, 0, (const uint8_t *)"\x01\x00", 2), n;
	struct quic_packet pk[QUIC_PACKETS_MAX];

	(void)state;
	/* A broken Initial, then a valid one, under one DCID; a long
	 * header of another version after them runs to the end. */
	n = protect(pkt, 0xc3, dcid8, 8, 0, fr, fl, 100);
	pkt[n - 1] ^= 1; /* the AEAD tag */
	n += protect(pkt + n, 0xc3, dcid8, 8, 1, fr, fl, 100);
	memset(pkt + n, 0xd0, 40);
	assert_int_equal(quic_initial_parse(pkt, n, &qi), -EACCES);
	assert_int_equal(quic_packets(pkt, n + 40, pk, QUIC_PACKETS_MAX), 3);
	assert_int_equal(pk[0].kind, QUIC_KIND_INITIAL);
	assert_int_equal(pk[1].kind, QUIC_KIND_INITIAL);
	assert_int_equal(pk[2].kind, QUIC_KIND_VERSION);
	assert_int_equal(pk[2].len, 40);
	assert_int_equal(pk[0].dcid_len, 8);
	assert_memory_equal(pk[1].dcid, dcid8, 8);
	assert_int_equal(pk[0].len + pk[1].len, n);
	quic_initial_reset(&qi);
	assert_int_equal(quic_packet_open(&qi, &pk[0], NULL, 0), -EACCES);
	assert_int_equal(qi.n_crypto, 0);
	assert_int_equal(quic_packet_open(&qi, &pk[1], NULL, 0), 0);
	assert_int_equal(qi.n_crypto, 1);
	assert_int_equal(quic_packet_open(&qi, &pk[2], NULL, 0), -EPROTO);
	/* A length past the datagram, too many packets. */
	assert_int_equal(quic_packets(pkt, pk[0].len - 1, pk, 4), -EBADMSG);
	assert_int_equal(quic_packets(pkt, n, pk, 1), -EBADMSG);
	/* An Initial under another DCID, protected with dcid8's keys (a
	 * client's after the server chose its DCID): only those open it. */
	key_dcid = dcid8;
	n = protect(pkt, 0xc3, other, 8, 2, fr, fl, 1162);
	key_dcid = NULL;
	assert_int_equal(quic_packets(pkt, n, pk, QUIC_PACKETS_MAX), 1);
	quic_initial_reset(&qi);
	assert_int_equal(quic_packet_open(&qi, &pk[0], NULL, 0), -EACCES);
	assert_int_equal(quic_packet_open(&qi, &pk[0], dcid8, 8), 0);
	assert_int_equal(qi.n_crypto, 1);
	assert_int_equal(qi.dcid_len, 0); /* left to the caller */
}

static void test_conn_judged_bytes_and_second_hello(void **state)
{
	struct quicconn_tab *t = quicconn_new(2, 1 << 20);
	struct flowtab_key key = {.sport = 1, .dport = 443, .proto = 17};
	struct flowtab_key k2 = {.sport = 2, .dport = 443, .proto = 17};
	uint8_t h1[2048], h2[2048];
	size_t n1 = big_hello(h1, "www.allowed.test");
	size_t n2 = big_hello(h2, "evil.test");
	struct quicconn *c, *list[4];
	const uint8_t *p;

	(void)state;
	assert_non_null(t);
	c = quicconn_add(t, &key, dcid8, 8, h1, n1, "www.allowed.test", 0);
	assert_non_null(c);
	assert_ptr_equal(quicconn_find(t, &key, dcid8, 8, 1), c);
	assert_null(quicconn_find(t, &k2, dcid8, 8, 1));
	assert_int_equal(quicconn_list(t, &key, list, 4), 1);
	/* The judged bytes again: fine; other bytes there: refused. */
	assert_int_equal(quicconn_place(t, c, 0, h1, n1), 0);
	assert_int_equal(quicconn_place(t, c, 100, h1 + 100, 50), 0);
	assert_int_equal(quicconn_place(t, c, 0, h2, 100), -EBADMSG);
	/* A second hello past them, in two frames out of order. */
	assert_int_equal(quicconn_place(t, c, n1 + 500, h2 + 500, n2 - 500),
			 -EAGAIN);
	assert_int_equal(quicconn_pending(c, &p), 0);
	assert_int_equal(quicconn_place(t, c, n1, h2, 500), -EAGAIN);
	assert_int_equal(quicconn_pending(c, &p), n2);
	assert_int_equal(tlshello_parse_messages(p, n2, &h), 0);
	assert_string_equal(h.name, "evil.test");
	/* Placed bytes must come again unchanged too. */
	h2[10] ^= 1;
	assert_int_equal(quicconn_place(t, c, n1, h2, 20), -EBADMSG);
	h2[10] ^= 1;
	quicconn_judge(c, n2);
	assert_int_equal(c->judged, n1 + n2);
	assert_int_equal(quicconn_pending(c, &p), 0);
	assert_int_equal(quicconn_place(t, c, n1, h2, n2), 0);
	assert_int_equal(quicconn_place(t, c, QUICCONN_STREAM_MAX, h2, 1),
			 -EMSGSIZE);
	/* Bounds: the least recently used goes first; expiry. */
	assert_non_null(
	    quicconn_add(t, &k2, dcid8, 8, h1, n1, "www.allowed.test", 5));
	(void)quicconn_find(t, &key, dcid8, 8, 6);
	assert_non_null(
	    quicconn_add(t, &k2, h1, 8, h1, n1, "www.allowed.test", 7));
	assert_int_equal(quicconn_count(t), 2);
	assert_null(quicconn_find(t, &k2, dcid8, 8, 8));
	assert_non_null(quicconn_find(t, &key, dcid8, 8, 8));
	quicconn_expire(t, 10, 3);
	assert_int_equal(quicconn_count(t), 1);
	quicconn_expire(t, 20, 3);
	assert_int_equal(quicconn_count(t), 0);
	assert_int_equal(quicconn_bytes(t), 0);
	assert_null(quicconn_add(t, &key, dcid8, 8, h1, TLSHELLO_MAX + 1,
				 "www.allowed.test", 0));
	quicconn_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc9001_a1_client_keys),
	    cmocka_unit_test(test_rfc9001_a2_client_initial),
	    cmocka_unit_test(test_truncated_initial_refused),
	    cmocka_unit_test(test_other_version_or_type_not_read),
	    cmocka_unit_test(test_tampered_payload_does_not_authenticate),
	    cmocka_unit_test(test_dcid_over_20_bytes_refused),
	    cmocka_unit_test(test_split_hello_shuffled_frames_reassembled),
	    cmocka_unit_test(test_frames_an_initial_may_not_carry),
	    cmocka_unit_test(test_short_dcid_read_for_the_caller_to_refuse),
	    cmocka_unit_test(test_coalesced_initials_same_dcid_only),
	    cmocka_unit_test(test_datagram_every_initial_opened),
	    cmocka_unit_test(test_conn_judged_bytes_and_second_hello),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
