/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tlshello: the server name of a TLS ClientHello, read from the first
 * bytes of a TCP stream, which may arrive in several segments and
 * several records. Pure; every byte through dns_reader. */
#ifndef DNSFENCE_TLSHELLO_H
#define DNSFENCE_TLSHELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A ClientHello larger than this is refused (post-quantum key shares
 * bring Chrome's to about 1.8 KiB; TLS allows 16 MiB, nobody sends it). */
#define TLSHELLO_MAX	  16384
#define TLSHELLO_NAME_MAX 253
/* A ClientHello with more extensions than this is refused as malformed:
 * browsers send about 20 (GREASE included), OpenSSL with every option
 * under 30; more is padding for an evasion. */
#define TLSHELLO_EXTS_MAX 64

struct tlshello {
	bool has_name;
	char name[TLSHELLO_NAME_MAX + 1]; /* lower case, no trailing dot */
	bool has_ech;			  /* encrypted_client_hello (0xfe0d) */
	uint8_t hs[TLSHELLO_MAX + 4];	  /* scratch: the handshake message */
};

/* Read the ClientHello at the start of stream (len bytes so far).
 *  0:        complete; out->has_name says whether it named a server
 *            (a host_name of letters, digits, '-', '_' and dots only);
 *  -EAGAIN:  a prefix of what could be a ClientHello: wait for more;
 *  -EPROTO:  not a TLS handshake starting with a ClientHello;
 *  -EMSGSIZE: a ClientHello longer than TLSHELLO_MAX;
 *  -EBADMSG: malformed (lengths that do not add up, a duplicate
 *            extension, more than TLSHELLO_EXTS_MAX extensions, a
 *            server_name that is not a host name). */
int tlshello_parse(const uint8_t *stream, size_t len, struct tlshello *out);
/* The same, for a stream of bare handshake messages (QUIC's CRYPTO
 * frames carry no record layer); the same results. */
int tlshello_parse_messages(const uint8_t *stream, size_t len,
			    struct tlshello *out);

/* The n bytes at name as a host name into out (TLSHELLO_NAME_MAX + 1
 * bytes): letters (lowered), digits, '-', '_' and single dots, no dot at
 * either end. 0 or -EBADMSG. Shared by every reader of a server name. */
int tlshello_host_name(const uint8_t *name, size_t n, char *out);

#endif
