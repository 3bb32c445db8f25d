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
	bool has_tls13;	  /* supported_versions offers TLS 1.3 */
	bool first_whole; /* tlshello_flight: the first hello was read */
	uint8_t hs[TLSHELLO_MAX + 4]; /* scratch: the handshake message */
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
/* The records a client sends before its handshake is encrypted read at
 * most: a TLS 1.3 client's are its ClientHello, a ChangeCipherSpec and
 * a second ClientHello (after a HelloRetryRequest); a TLS 1.2 client's
 * its ClientHello, Certificate, ClientKeyExchange, CertificateVerify and
 * ChangeCipherSpec. */
#define TLSHELLO_FLIGHT_RECORDS 16

/* The client's whole plaintext handshake at the start of stream: its
 * first ClientHello as tlshello_parse reads it (out: that hello), then,
 * when it offers TLS 1.3, every record after it until the handshake is
 * encrypted: an application-data or alert record, or after a
 * ChangeCipherSpec a handshake record that is not a ClientHello (TLS
 * 1.2's Finished). A ClientHello among them (a HelloRetryRequest's
 * answer) must be whole in its record and name the same server as the
 * first, or none when the first named none. Results as tlshello_parse,
 * and:
 *  -EAGAIN:  also while the flight goes on; out->first_whole says the
 *            first hello was read (out: its name);
 *  -EXDEV:   a later ClientHello names another server (or none);
 *  -EMSGSIZE: more than TLSHELLO_FLIGHT_RECORDS records after the first
 *            hello, or a later hello over TLSHELLO_MAX;
 *  -EBADMSG: also bytes after the first hello in its record, or a later
 *            ClientHello split over records. */
int tlshello_flight(const uint8_t *stream, size_t len, struct tlshello *out);
/* The same, for a stream of bare handshake messages (QUIC's CRYPTO
 * frames carry no record layer); the same results. */
int tlshello_parse_messages(const uint8_t *stream, size_t len,
			    struct tlshello *out);

/* The n bytes at name as a host name into out (TLSHELLO_NAME_MAX + 1
 * bytes): letters (lowered), digits, '-', '_' and single dots, no dot at
 * either end. 0 or -EBADMSG. Shared by every reader of a server name. */
int tlshello_host_name(const uint8_t *name, size_t n, char *out);

#endif
