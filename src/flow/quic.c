// SPDX-License-Identifier: GPL-2.0-or-later
/* quic: a client's Initial packets are encrypted, but with keys derived
 * from the Destination Connection ID the packet itself carries (RFC 9001
 * 5.2), so an observer on the path can read them exactly as the server
 * does: HKDF-Extract with the version 1 salt, HKDF-Expand-Label "client
 * in", then "quic key", "quic iv" and "quic hp"; the header protection is
 * an AES-128-ECB mask over a sample of the ciphertext (5.4.3), the payload
 * AES-128-GCM with the header as associated data (5.3).
 *
 * What is read is what the server will accept: only a version 1 Initial
 * with the fixed bit, a payload that authenticates, reserved bits zero
 * after unmasking, frames an Initial may carry (RFC 9000 12.4: PADDING,
 * PING, ACK, CRYPTO, CONNECTION_CLOSE) with frame types in their shortest
 * encoding. Anything else is -EBADMSG, and the caller refuses the flow:
 * a server more lenient than this parser cannot be talked into reading
 * bytes the check did not see, because the check then saw none. The
 * CRYPTO frames are only listed here (their data stays in out->plain);
 * the caller reassembles them by offset across packets (flowtab.c).
 *
 * libcrypto is opened (dlopen) at the first Initial a reader meets, not
 * linked: mapped, it adds 1.5-3.3 MiB to the resident size of a daemon
 * that sees no QUIC at all, and every daemon with the fence on makes a
 * reader. When it cannot be opened, every Initial is -EIO (the caller
 * drops the packet: fail closed). */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/opensslv.h>

#include "base/pagemem.h"
#include "dns/dnsmsg.h"
#include "flow/quic.h"

#define LONG_HEADER   0x80
#define FIXED_BIT     0x40
#define TYPE_MASK     0x30 /* long packet type; 0 is Initial */
#define RESERVED_BITS 0x0c
#define PN_LEN_MASK   0x03
#define SAMPLE_LEN    16
#define TAG_LEN	      16
#define VARINT_MAX    ((1ull << 62) - 1)

#define FRAME_PADDING	0x00
#define FRAME_PING	0x01
#define FRAME_ACK	0x02
#define FRAME_ACK_ECN	0x03
#define FRAME_CRYPTO	0x06
#define FRAME_CLOSE_TPT 0x1c

static const uint8_t salt_v1[20] = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34,
				    0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8,
				    0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a};

static bool set_digest(EVP_KDF_CTX *kdf);
static int hkdf(struct quic_lib *l, int mode, const uint8_t *salt,
		size_t saltlen, const uint8_t *key, size_t keylen,
		const uint8_t *info, size_t infolen, uint8_t *out,
		size_t outlen);
static int expand_label(struct quic_lib *l, const uint8_t *secret,
			const char *label, uint8_t *out, size_t outlen);
static int read_varint(struct dns_reader *r, uint64_t *v);
static int parse_packet(struct dns_reader *r, struct quic_initial *out,
			struct quic_keys *keys);
static int open_packet(struct dns_reader *r, const uint8_t *start,
		       uint64_t plen, struct quic_initial *out,
		       const struct quic_keys *keys);
static int read_header(struct dns_reader *r, bool initial, const uint8_t **dcid,
		       uint8_t *dcil, uint64_t *plen);
static int hp_mask(struct quic_lib *l, const struct quic_keys *k,
		   const uint8_t *sample, uint8_t *mask);
static int aead_open(struct quic_lib *l, const struct quic_keys *k, uint64_t pn,
		     const uint8_t *const aad[3], const size_t aadlen[3],
		     const uint8_t *ct, size_t ctlen, uint8_t *plain);
static int skip_varints(struct dns_reader *r, uint64_t n);
static int read_ack(struct dns_reader *r, bool ecn);
static int read_close(struct dns_reader *r);
static int read_crypto(struct dns_reader *r, struct quic_initial *out);

/* libcrypto's soname, from the headers the build used. */
#define CRYPTO_STR(x)	 #x
#define CRYPTO_SONAME(v) "libcrypto.so." CRYPTO_STR(v)

/* The libcrypto functions used, named as libcrypto names them. */
#define CRYPTO_FNS(X)                                                          \
	X(EVP_CIPHER_CTX_ctrl)                                                 \
	X(EVP_CIPHER_CTX_free)                                                 \
	X(EVP_CIPHER_CTX_new)                                                  \
	X(EVP_CIPHER_CTX_set_padding)                                          \
	X(EVP_CIPHER_fetch)                                                    \
	X(EVP_CIPHER_free)                                                     \
	X(EVP_DecryptFinal_ex)                                                 \
	X(EVP_DecryptInit_ex2)                                                 \
	X(EVP_DecryptUpdate)                                                   \
	X(EVP_EncryptInit_ex2)                                                 \
	X(EVP_EncryptUpdate)                                                   \
	X(EVP_KDF_CTX_free)                                                    \
	X(EVP_KDF_CTX_new)                                                     \
	X(EVP_KDF_CTX_set_params)                                              \
	X(EVP_KDF_derive)                                                      \
	X(EVP_KDF_fetch)                                                       \
	X(EVP_KDF_free)                                                        \
	X(OSSL_PARAM_construct_end)                                            \
	X(OSSL_PARAM_construct_int)                                            \
	X(OSSL_PARAM_construct_octet_string)                                   \
	X(OSSL_PARAM_construct_utf8_string)

#define CRYPTO_MEMBER(f) __typeof__(f) *f;
struct crypto_fns {
	CRYPTO_FNS(CRYPTO_MEMBER)
};
#undef CRYPTO_MEMBER

/* Filled by crypto_open, once per process; the library stays open. */
static struct crypto_fns cr;
static bool crypto_open(void);
static struct quic_lib *lib_new(void);
static void lib_free(struct quic_lib *l);

/* libcrypto's algorithms, fetched once (a fetch per packet costs more
 * than the packet's decryption), and one context each, reused. */
struct quic_lib {
	EVP_KDF_CTX *kdf;
	EVP_CIPHER *gcm, *ecb;
	EVP_CIPHER_CTX *c;
};

static bool set_digest(EVP_KDF_CTX *kdf)
{
	OSSL_PARAM prm[2] = {cr.OSSL_PARAM_construct_utf8_string(
				 OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
			     cr.OSSL_PARAM_construct_end()};

	return cr.EVP_KDF_CTX_set_params(kdf, prm) > 0;
}

/* Every function of cr, or false (and cr left empty). */
static bool crypto_open(void)
{
	static bool tried;
	struct crypto_fns fns;
	void *h;

	if (tried)
		return cr.EVP_KDF_derive != NULL;
	tried = true;
	h = dlopen(CRYPTO_SONAME(OPENSSL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		return false;
#define CRYPTO_SYM(f)                                                          \
	if ((*(void **)&fns.f = dlsym(h, #f)) == NULL)                         \
		return false;
	CRYPTO_FNS(CRYPTO_SYM)
#undef CRYPTO_SYM
	cr = fns;
	return true;
}

static struct quic_lib *lib_new(void)
{
	struct quic_lib *l;
	EVP_KDF *kdf;

	if (!crypto_open() || (l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	kdf = cr.EVP_KDF_fetch(NULL, "HKDF", NULL);
	l->kdf = kdf != NULL ? cr.EVP_KDF_CTX_new(kdf) : NULL;
	cr.EVP_KDF_free(kdf); /* the context holds its own reference */
	l->gcm = cr.EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	l->ecb = cr.EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
	l->c = cr.EVP_CIPHER_CTX_new();
	if (l->kdf == NULL || l->gcm == NULL || l->ecb == NULL ||
	    l->c == NULL || !set_digest(l->kdf)) {
		lib_free(l);
		return NULL;
	}
	return l;
}

static void lib_free(struct quic_lib *l)
{
	if (l == NULL)
		return;
	cr.EVP_KDF_CTX_free(l->kdf);
	cr.EVP_CIPHER_free(l->gcm);
	cr.EVP_CIPHER_free(l->ecb);
	cr.EVP_CIPHER_CTX_free(l->c);
	free(l);
}

struct quic_initial *quic_initial_new(void)
{
	/* its own pages: plain is resident only once an Initial filled it */
	return pagemem_new(sizeof(struct quic_initial));
}

void quic_initial_free(struct quic_initial *qi)
{
	if (qi == NULL)
		return;
	lib_free(qi->lib);
	pagemem_free(qi, sizeof(*qi));
}

/* HKDF-SHA256 in mode (extract only: salt; expand only: info). */
static int hkdf(struct quic_lib *l, int mode, const uint8_t *salt,
		size_t saltlen, const uint8_t *key, size_t keylen,
		const uint8_t *info, size_t infolen, uint8_t *out,
		size_t outlen)
{
	OSSL_PARAM prm[5], *q = prm;

	/* The digest was set once (a name here would be fetched each
	 * time); a salt left from an extract is ignored by an expand, and
	 * an info replaces the last one. */
	*q++ = cr.OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*q++ = cr.OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						    (void *)key, keylen);
	if (salt != NULL)
		*q++ = cr.OSSL_PARAM_construct_octet_string(
		    OSSL_KDF_PARAM_SALT, (void *)salt, saltlen);
	if (info != NULL)
		*q++ = cr.OSSL_PARAM_construct_octet_string(
		    OSSL_KDF_PARAM_INFO, (void *)info, infolen);
	*q = cr.OSSL_PARAM_construct_end();
	return cr.EVP_KDF_derive(l->kdf, out, outlen, prm) > 0 ? 0 : -EIO;
}

/* HKDF-Expand-Label (RFC 8446 7.1) with an empty context. */
static int expand_label(struct quic_lib *l, const uint8_t *secret,
			const char *label, uint8_t *out, size_t outlen)
{
	uint8_t info[2 + 1 + 6 + 32 + 1];
	size_t n = strlen(label), i = 0;

	info[i++] = (uint8_t)(outlen >> 8);
	info[i++] = (uint8_t)outlen;
	info[i++] = (uint8_t)(6 + n);
	memcpy(info + i, "tls13 ", 6);
	memcpy(info + i + 6, label, n);
	i += 6 + n;
	info[i++] = 0;
	return hkdf(l, EVP_KDF_HKDF_MODE_EXPAND_ONLY, NULL, 0, secret, 32, info,
		    i, out, outlen);
}

int quic_initial_keys(struct quic_initial *qi, const uint8_t *dcid, size_t len,
		      struct quic_keys *out)
{
	uint8_t initial[32], client[32];
	struct quic_lib *l;
	int rc;

	if (len > QUIC_CID_MAX)
		return -EINVAL;
	if (qi->lib == NULL && (qi->lib = lib_new()) == NULL)
		return -EIO;
	l = qi->lib;
	rc = hkdf(l, EVP_KDF_HKDF_MODE_EXTRACT_ONLY, salt_v1, sizeof(salt_v1),
		  dcid, len, NULL, 0, initial, sizeof(initial));
	if (!rc)
		rc = expand_label(l, initial, "client in", client,
				  sizeof(client));
	if (!rc)
		rc = expand_label(l, client, "quic key", out->key,
				  sizeof(out->key));
	if (!rc)
		rc = expand_label(l, client, "quic iv", out->iv,
				  sizeof(out->iv));
	if (!rc)
		rc = expand_label(l, client, "quic hp", out->hp,
				  sizeof(out->hp));
	return rc;
}

enum quic_kind quic_kind(const uint8_t *p, size_t len)
{
	uint32_t v;

	if (len == 0 || !(p[0] & LONG_HEADER))
		return QUIC_KIND_SHORT;
	if (len < 5)
		return QUIC_KIND_VERSION;
	v = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 |
	    p[4];
	if (v != QUIC_VERSION_1)
		return QUIC_KIND_VERSION;
	return (p[0] & TYPE_MASK) == 0 ? QUIC_KIND_INITIAL : QUIC_KIND_LONG;
}

void quic_initial_reset(struct quic_initial *qi)
{
	qi->dcid_len = 0;
	qi->n_crypto = 0;
	qi->used = 0;
}

int quic_initial_parse(const uint8_t *p, size_t len, struct quic_initial *out)
{
	struct dns_reader r;
	struct quic_keys keys;
	int rc;

	quic_initial_reset(out);
	if (quic_kind(p, len) != QUIC_KIND_INITIAL)
		return -EPROTO;
	dns_reader_init(&r, p, len);
	rc = parse_packet(&r, out, &keys);
	/* Coalesced packets (RFC 9000 12.2): more Initials are read, the
	 * first packet of another type ends what concerns us. */
	for (int i = 1;
	     !rc && i < QUIC_PACKETS_MAX && r.pos < r.len &&
	     quic_kind(p + r.pos, r.len - r.pos) == QUIC_KIND_INITIAL;
	     i++)
		rc = parse_packet(&r, out, &keys);
	return rc;
}

int quic_packets(const uint8_t *p, size_t len, struct quic_packet *out,
		 size_t max)
{
	struct dns_reader r;
	size_t n = 0;

	dns_reader_init(&r, p, len);
	while (r.pos < r.len) {
		struct quic_packet *pk;
		size_t at = r.pos;
		uint64_t plen;
		uint8_t dcil;

		if (n == max)
			return -EBADMSG;
		pk = &out[n++];
		*pk = (struct quic_packet){.kind = quic_kind(p + at, len - at),
					   .p = p + at};
		/* A short header, another version's long header or a Retry
		 * (no length field) runs to the datagram's end. */
		if (pk->kind == QUIC_KIND_SHORT ||
		    pk->kind == QUIC_KIND_VERSION ||
		    (p[at] & TYPE_MASK) == TYPE_MASK) {
			pk->len = len - at;
			break;
		}
		if (read_header(&r, pk->kind == QUIC_KIND_INITIAL, &pk->dcid,
				&dcil, &plen) != 0 ||
		    plen > r.len - r.pos)
			return -EBADMSG;
		(void)dns_skip(&r, (size_t)plen);
		pk->dcid_len = dcil;
		pk->len = r.pos - at;
	}
	return (int)n;
}

int quic_packet_open(struct quic_initial *qi, const struct quic_packet *pk,
		     const uint8_t *kdcid, size_t klen)
{
	struct dns_reader r;
	struct quic_keys keys;
	const uint8_t *dcid;
	uint8_t dcil;
	uint64_t plen;
	int rc;

	if (pk->kind != QUIC_KIND_INITIAL)
		return -EPROTO;
	if (kdcid == NULL) {
		kdcid = pk->dcid;
		klen = pk->dcid_len;
	}
	dns_reader_init(&r, pk->p, pk->len);
	if (read_header(&r, true, &dcid, &dcil, &plen) != 0 ||
	    plen > r.len - r.pos)
		return -EBADMSG;
	if ((rc = quic_initial_keys(qi, kdcid, klen, &keys)) != 0)
		return rc;
	return open_packet(&r, pk->p, plen, qi, &keys);
}

/* One Initial at r->pos. The first sets out->dcid and the keys; a later
 * one must carry the same DCID (a server drops one that does not, and we
 * will not guess which connection it would join). */
static int parse_packet(struct dns_reader *r, struct quic_initial *out,
			struct quic_keys *keys)
{
	const uint8_t *start = r->buf + r->pos, *dcid;
	uint8_t dcil;
	uint64_t plen;
	int rc;

	rc = read_header(r, true, &dcid, &dcil, &plen);
	if (rc)
		return rc;
	if (plen > r->len - r->pos)
		return -EBADMSG;
	if (out->used == 0) {
		memcpy(out->dcid, dcid, dcil);
		out->dcid_len = dcil;
		if ((rc = quic_initial_keys(out, dcid, dcil, keys)) != 0)
			return rc;
	} else if (dcil != out->dcid_len || memcmp(dcid, out->dcid, dcil)) {
		return -EBADMSG;
	}
	return open_packet(r, start, plen, out, keys);
}

/* The protected rest of the Initial that starts at start, whose header
 * r has read up to the packet number (plen bytes follow, checked to lie
 * inside r), under keys: its payload decrypted to out->plain at
 * out->used, its frames listed, r past the packet. */
static int open_packet(struct dns_reader *r, const uint8_t *start,
		       uint64_t plen, struct quic_initial *out,
		       const struct quic_keys *keys)
{
	const uint8_t *aad[3];
	uint8_t mask[SAMPLE_LEN], b0, pnb[4];
	size_t aadlen[3], pn_off = r->pos, pn_len, ctlen;
	uint64_t pn = 0;
	int rc;

	if (plen < 4 + SAMPLE_LEN)
		return -EBADMSG;
	if ((rc = hp_mask(out->lib, keys, r->buf + pn_off + 4, mask)) != 0)
		return rc;
	b0 = start[0] ^ (mask[0] & 0x0f);
	pn_len = (size_t)(b0 & PN_LEN_MASK) + 1;
	if (plen < pn_len + TAG_LEN + 1)
		return -EBADMSG;
	for (size_t i = 0; i < pn_len; i++) {
		pnb[i] = r->buf[pn_off + i] ^ mask[1 + i];
		pn = pn << 8 | pnb[i];
	}
	aad[0] = &b0;
	aadlen[0] = 1;
	aad[1] = start + 1;
	aadlen[1] = (size_t)(r->buf + pn_off - start) - 1;
	aad[2] = pnb;
	aadlen[2] = pn_len;
	ctlen = (size_t)plen - pn_len - TAG_LEN;
	if (ctlen > sizeof(out->plain) - out->used)
		return -EBADMSG;
	rc = aead_open(out->lib, keys, pn, aad, aadlen,
		       r->buf + pn_off + pn_len, ctlen, out->plain + out->used);
	if (rc)
		return rc;
	/* Checked only now, as RFC 9001 5.4.1 asks (no timing oracle). */
	if (b0 & RESERVED_BITS)
		return -EBADMSG;
	(void)dns_skip(r, (size_t)plen);
	rc = quic_frames(out->plain + out->used, ctlen, out);
	out->used += ctlen;
	return rc;
}

/* The long header up to the packet number: first byte, version, DCID,
 * SCID, the token (an Initial's only), length. The fixed bit is
 * required of an Initial (RFC 9000 17.2.2); other long headers may
 * grease it (RFC 9287). */
static int read_header(struct dns_reader *r, bool initial, const uint8_t **dcid,
		       uint8_t *dcil, uint64_t *plen)
{
	const uint8_t *scid;
	uint8_t b0, scil;
	uint32_t version;
	uint64_t toklen = 0;

	if (dns_read_u8(r, &b0) || dns_read_u32(r, &version) ||
	    dns_read_u8(r, dcil) || *dcil > QUIC_CID_MAX ||
	    dns_read_bytes(r, dcid, *dcil) || dns_read_u8(r, &scil) ||
	    scil > QUIC_CID_MAX || dns_read_bytes(r, &scid, scil) ||
	    (initial && read_varint(r, &toklen)) || toklen > r->len - r->pos ||
	    dns_skip(r, (size_t)toklen) || read_varint(r, plen))
		return -EBADMSG;
	if (initial && !(b0 & FIXED_BIT))
		return -EBADMSG;
	return 0;
}

static int hp_mask(struct quic_lib *l, const struct quic_keys *k,
		   const uint8_t *sample, uint8_t *mask)
{
	int n = 0;

	if (cr.EVP_EncryptInit_ex2(l->c, l->ecb, k->hp, NULL, NULL) > 0 &&
	    cr.EVP_CIPHER_CTX_set_padding(l->c, 0) > 0 &&
	    cr.EVP_EncryptUpdate(l->c, mask, &n, sample, SAMPLE_LEN) > 0 &&
	    n == SAMPLE_LEN)
		return 0;
	return -EIO;
}

/* AES-128-GCM open: nonce is the IV with the packet number XORed into its
 * low bytes; the tag follows the ciphertext. -EACCES when it does not
 * authenticate. */
static int aead_open(struct quic_lib *l, const struct quic_keys *k, uint64_t pn,
		     const uint8_t *const aad[3], const size_t aadlen[3],
		     const uint8_t *ct, size_t ctlen, uint8_t *plain)
{
	EVP_CIPHER_CTX *c = l->c;
	uint8_t nonce[12];
	int n = 0;

	memcpy(nonce, k->iv, sizeof(nonce));
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(pn >> (8 * i));
	/* The default IV length of AES-GCM is 12, the nonce's. */
	if (cr.EVP_DecryptInit_ex2(c, l->gcm, k->key, nonce, NULL) <= 0)
		return -EIO;
	for (int i = 0; i < 3; i++) {
		if (cr.EVP_DecryptUpdate(c, NULL, &n, aad[i], (int)aadlen[i]) <=
		    0)
			return -EIO;
	}
	if (cr.EVP_DecryptUpdate(c, plain, &n, ct, (int)ctlen) <= 0 ||
	    cr.EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LEN,
				   (void *)(ct + ctlen)) <= 0)
		return -EIO;
	return cr.EVP_DecryptFinal_ex(c, plain + n, &n) > 0 ? 0 : -EACCES;
}

static int read_varint(struct dns_reader *r, uint64_t *v)
{
	uint8_t b;
	size_t n;

	if (dns_read_u8(r, &b))
		return -EBADMSG;
	n = (size_t)1 << (b >> 6);
	*v = b & 0x3f;
	for (size_t i = 1; i < n; i++) {
		if (dns_read_u8(r, &b))
			return -EBADMSG;
		*v = *v << 8 | b;
	}
	return 0;
}

int quic_frames(const uint8_t *p, size_t len, struct quic_initial *out)
{
	struct dns_reader r;

	dns_reader_init(&r, p, len);
	while (r.pos < r.len) {
		uint8_t type;
		int rc = 0;

		(void)dns_read_u8(&r, &type);
		if (type == FRAME_PADDING || type == FRAME_PING)
			continue;
		if (type == FRAME_ACK || type == FRAME_ACK_ECN)
			rc = read_ack(&r, type == FRAME_ACK_ECN);
		else if (type == FRAME_CRYPTO)
			rc = read_crypto(&r, out);
		else if (type == FRAME_CLOSE_TPT)
			rc = read_close(&r);
		else
			rc = -EBADMSG; /* longer encodings included */
		if (rc)
			return rc;
	}
	return 0;
}

static int skip_varints(struct dns_reader *r, uint64_t n)
{
	uint64_t v;

	for (uint64_t i = 0; i < n; i++) {
		if (read_varint(r, &v))
			return -EBADMSG;
	}
	return 0;
}

/* Largest, delay, range count, first range; (gap, length) per range;
 * three ECN counts. Each range takes at least two bytes, so a huge
 * count ends at the payload's end. */
static int read_ack(struct dns_reader *r, bool ecn)
{
	uint64_t largest, delay, count, first;

	if (read_varint(r, &largest) || read_varint(r, &delay) ||
	    read_varint(r, &count) || read_varint(r, &first) ||
	    count > r->len - r->pos || skip_varints(r, 2 * count))
		return -EBADMSG;
	return ecn ? skip_varints(r, 3) : 0;
}

static int read_close(struct dns_reader *r)
{
	uint64_t code, frame, n;

	if (read_varint(r, &code) || read_varint(r, &frame) ||
	    read_varint(r, &n) || n > r->len - r->pos || dns_skip(r, (size_t)n))
		return -EBADMSG;
	return 0;
}

static int read_crypto(struct dns_reader *r, struct quic_initial *out)
{
	struct quic_crypto *c;
	const uint8_t *data;
	uint64_t off, n;

	if (read_varint(r, &off) || read_varint(r, &n) || n > r->len - r->pos ||
	    off > VARINT_MAX - n || dns_read_bytes(r, &data, (size_t)n))
		return -EBADMSG;
	if (n == 0)
		return 0;
	if (out->n_crypto >= QUIC_CRYPTO_MAX)
		return -EBADMSG;
	c = &out->crypto[out->n_crypto++];
	c->off = off;
	c->data = data;
	c->len = (size_t)n;
	return 0;
}
