/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfq: the name check's NFQUEUE over libmnl: bind, configure, read the
 * queued packets, send verdicts. Thin on purpose: it knows nothing of
 * names or flows (flowcheck.c does), so a privileged parent can own the
 * socket and pass packets and verdicts across later. */
#ifndef DNSFENCE_NFQ_H
#define DNSFENCE_NFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct nfq;

/* One queued packet; payload (the IP packet) is valid during the call. */
struct nfq_pkt {
	uint32_t id;
	const uint8_t *payload;
	size_t len;
	bool has_uid;
	uint32_t uid;
	/* The conntrack entry's id (NFQA_CT's CTA_ID, host order), when the
	 * kernel sent one: which connection the packet is of. */
	bool has_ct_id;
	uint32_t ct_id;
};

typedef void (*nfq_pkt_fn)(void *arg, const struct nfq_pkt *pkt);

/* Read one datagram of len bytes from the queue's socket: fn for each
 * packet message in it (other messages are skipped). Bounds-checked, for
 * any bytes (fuzzed). */
void nfq_parse(const uint8_t *buf, size_t len, nfq_pkt_fn fn, void *arg);

/* Bind queue num in this network namespace (CAP_NET_ADMIN), copying whole
 * packets with the sender's uid and their conntrack entry's id (when the
 * kernel cannot give it, without: each packet then lacks has_ct_id), at most
 * maxlen waiting in the kernel (a packet beyond it is dropped: the queue never
 * fails open). fn runs from the event loop, for at most a bounded number of
 * reads per wake-up. NULL with err set on failure. */
struct nfq *nfq_open(struct event_base *base, uint16_t num, uint32_t maxlen,
		     nfq_pkt_fn fn, void *arg, char *err, size_t errlen);
void nfq_close(struct nfq *q);

/* The verdict on packet id: NF_ACCEPT, NF_DROP, or NF_REPEAT (through the
 * chain again) with mark as the packet's new mark (0: unchanged). 0 or
 * -errno. */
int nfq_verdict(struct nfq *q, uint32_t id, uint32_t verdict, uint32_t mark);
/* The same verdict sent on fd, queue num's socket (the privileged
 * parent's copy of it: the kernel takes a verdict only from a sender
 * holding CAP_NET_ADMIN, on the socket bound to the queue). */
int nfq_verdict_on(int fd, uint16_t num, uint32_t id, uint32_t verdict,
		   uint32_t mark);
int nfq_fd(const struct nfq *q);
uint16_t nfq_num(const struct nfq *q);
/* Does the kernel give this queue's packets their conntrack ids? (No:
 * a kernel without CONFIG_NETFILTER_NETLINK_GLUE_CT or without the
 * nf_conntrack_netlink module; a fact the parent reports, IPC_NFQ.) */
bool nfq_conntrack_ids(const struct nfq *q);
/* From now on send every verdict as an IPC_VERDICT frame on chan (not
 * owned): the DNS process reads the queue, the parent answers the kernel. */
void nfq_use_channel(struct nfq *q, int chan);

#endif
