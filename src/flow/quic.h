/* SPDX-License-Identifier: GPL-2.0-or-later */
/* quic: the CRYPTO frames of a QUIC version 1 client Initial (RFC 9000
 * 17.2.2), unprotected with the Initial keys every observer can derive
 * from the Destination Connection ID (RFC 9001 5.2). Pure (libcrypto,
 * opened at the first Initial, for HKDF and AES; no I/O); every byte
 * through dns_reader. */
#ifndef DNSFENCE_QUIC_H
#define DNSFENCE_QUIC_H

#include <stddef.h>
#include <stdint.h>

#define QUIC_VERSION_1	 0x00000001u
#define QUIC_CID_MAX	 20
#define QUIC_DCID_MIN	 8  /* a client's first DCID (RFC 9000 7.2) */
#define QUIC_CRYPTO_MAX	 32 /* CRYPTO frames read from one datagram */
#define QUIC_PACKETS_MAX 8  /* coalesced packets read from one datagram */
/* A client's datagram carrying an Initial is at least this long, and a
 * server discards the Initial of a shorter one (RFC 9000 14.1). */
#define QUIC_INITIAL_DATAGRAM_MIN 1200
#define QUIC_DATAGRAM_MAX	  65535

struct quic_keys {
	uint8_t key[16], iv[12], hp[16];
};

/* What a datagram's first packet claims to be (first byte and version,
 * unauthenticated). */
enum quic_kind {
	QUIC_KIND_SHORT = 0, /* a 1-RTT packet, or not QUIC at all */
	QUIC_KIND_INITIAL,   /* long header, version 1, type Initial */
	QUIC_KIND_LONG,	     /* version 1, another long-header type */
	QUIC_KIND_VERSION    /* a long header of another version */
};

struct quic_crypto {
	uint64_t off;
	const uint8_t *data; /* into quic_initial.plain */
	size_t len;
};

struct quic_lib;

/* One reader: what the last parse found, its scratch, and libcrypto's
 * algorithms fetched once. */
struct quic_initial {
	struct quic_lib *lib;
	uint8_t dcid[QUIC_CID_MAX];
	size_t dcid_len;
	size_t n_crypto;
	struct quic_crypto crypto[QUIC_CRYPTO_MAX];
	size_t used; /* bytes of plain the payloads read so far fill */
	uint8_t plain[QUIC_DATAGRAM_MAX]; /* scratch: the decrypted payloads */
};

/* NULL when out of memory. libcrypto is opened at the first key
 * derivation, not here. */
struct quic_initial *quic_initial_new(void);
void quic_initial_free(struct quic_initial *qi);

/* The client's Initial keys for a Destination Connection ID of len bytes
 * (at most QUIC_CID_MAX). 0, or -EIO when libcrypto fails, cannot be
 * opened or lacks HKDF or AES-128. */
int quic_initial_keys(struct quic_initial *qi, const uint8_t *dcid, size_t len,
		      struct quic_keys *out);

enum quic_kind quic_kind(const uint8_t *p, size_t len);

/* One packet of a datagram, as its header claims (unauthenticated). */
struct quic_packet {
	enum quic_kind kind;
	const uint8_t *p; /* the whole packet, len bytes */
	size_t len;
	const uint8_t *dcid; /* a version 1 long header's, else NULL */
	size_t dcid_len;
};

/* The packets coalesced in the datagram p (RFC 9000 12.2), split by the
 * length field of each version 1 long header; a short header, a long
 * header of another version or a Retry runs to the datagram's end. The
 * number of packets (0 for an empty datagram), or -EBADMSG when a long
 * header's lengths do not add up or more than max packets follow. */
int quic_packets(const uint8_t *p, size_t len, struct quic_packet *out,
		 size_t max);

/* Forget what the last parse or open found (dcid, CRYPTO frames, the
 * scratch used). */
void quic_initial_reset(struct quic_initial *qi);

/* Unprotect the Initial pk (kind QUIC_KIND_INITIAL, from quic_packets)
 * under the client keys of the DCID kdcid (klen bytes), or of its own
 * DCID when kdcid is NULL, and append its CRYPTO frames to qi->crypto
 * (qi->dcid is left alone). 0; -EPROTO (not an Initial); -EACCES (does
 * not authenticate under those keys; nothing appended); -EBADMSG
 * (malformed, as quic_initial_parse says); -EIO. */
int quic_packet_open(struct quic_initial *qi, const struct quic_packet *pk,
		     const uint8_t *kdcid, size_t klen);

/* Unprotect the client Initial at the start of the datagram p (and the
 * Initials coalesced after it with the same DCID) and list its CRYPTO
 * frames in out.
 *  0:        out->dcid and out->crypto filled (n_crypto may be 0: an
 *            Initial of only ACK, PING and PADDING);
 *  -EPROTO:  the first packet is not a version 1 Initial;
 *  -EACCES:  a payload that does not authenticate under the keys of its
 *            DCID (the Initial of a connection whose DCID the server
 *            chose: only that server reads it);
 *  -EBADMSG: malformed: lengths that do not add up, a connection ID over
 *            20 bytes, reserved bits set, a frame an Initial may not
 *            carry, more than QUIC_CRYPTO_MAX CRYPTO frames, a coalesced
 *            Initial with another DCID;
 *  -EIO:     libcrypto failed. */
int quic_initial_parse(const uint8_t *p, size_t len, struct quic_initial *out);

/* The frames of a decrypted Initial payload (appended to out->crypto).
 * 0 or -EBADMSG as above. */
int quic_frames(const uint8_t *p, size_t len, struct quic_initial *out);

#endif
