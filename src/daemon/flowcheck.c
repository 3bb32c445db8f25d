// SPDX-License-Identifier: GPL-2.0-or-later
/* flowcheck: the queue's callback and the verdicts.
 *
 * Only packets of established flows to set members on `tls_ports` (or
 * `http_ports`: the port says whether a ClientHello or an HTTP request
 * head is read) that carry no verdict yet reach us (fwrules.c). A packet
 * without payload
 * (the handshake's last ACK) is let through undecided: it names nothing
 * and carries nothing. Payload is appended to the flow's stream and the
 * packet held (no verdict) until the ClientHello is whole: the server
 * sees no byte of a flow before its verdict (a TLS 1.3 flow's first
 * hello, once accepted, goes on alone while the rest of its plaintext
 * handshake is read: first_hello_read). Then every held packet goes
 * back through the chain (NF_REPEAT) marked FLOW_MARK_ACCEPT or
 * FLOW_MARK_REJECT; the rules copy the mark into the connmark, so the
 * kernel resets or passes the rest of the flow without us.
 *
 * Fail closed: an unparsable packet is dropped; a full table, a flow
 * over its bounds, a stream that is not what its port carries, or one still
 * incomplete past its deadlines (FLOWCHECK_TIMEOUT_MS without a new byte,
 * FLOWCHECK_TOTAL_MS in all) is refused. In audit (name_check or the
 * fence's mode) the refusal is logged as "would block" and the flow let
 * through. The config, policy and provenance are the running ones at
 * each packet, so a reload takes effect on the next flow. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <linux/netfilter.h>

#include "base/log.h"
#include "base/monotime.h"
#include "base/stats.h"
#include "config/config.h"
#include "daemon/flowcheck.h"
#include "daemon/nfq.h"
#include "daemon/reload.h"
#include "daemon/sockdiag.h"
#include "flow/flowdecide.h"
#include "flow/flowmark.h"
#include "flow/flowpkt.h"
#include "flow/flowshare.h"
#include "flow/flowtab.h"
#include "flow/httphost.h"
#include "flow/quic.h"
#include "flow/quicconn.h"
#include "flow/tlshello.h"
#include "base/ipc.h"
#include "observe/attrib.h"
#include "resolve/prov.h"

#define SYS		"namecheck"
#define WHAT_TLS	"TLS server name"
#define WHAT_QUIC	"QUIC server name"
#define WHAT_HTTP	"HTTP host"
#define SWEEP_MS	500
#define KEEP_DECIDED_MS 2000
/* A verdict is one connection's, not a four-tuple's, and is never
 * repeated for a queued packet (flow_of): such a packet is of a new
 * connection on the four-tuple, or a late one of the connection decided
 * (queued before the kernel saw the verdict), and nothing the kernel
 * gives tells the two apart for sure. The conntrack id (nfq.c) is a hash
 * of the entry's address and tuple, and an entry reopened on the same
 * four-tuple is freed and allocated again in one pass through the hook:
 * it may well get the old memory and so the old id. Linux draws a
 * reopened four-tuple's ISN from a clock that moves one per 64 ns, so a
 * connection reopened within ~67 ms starts less than RACE_WINDOW past
 * the old stream. A packet known to be of another connection (another
 * conntrack id, or a sequence number RACE_WINDOW or more past the
 * stream's start) is read anew at once; any other packet of a decided
 * flow is dropped, its retransmission meeting the connmark (the
 * connection decided) or, once the verdict is forgotten after
 * KEEP_DECIDED_MS, a check of its own (a new connection). */
#define RACE_WINDOW (1u << 20)
/* A flow is queued from its SYN on, and may send its first bytes long
 * after (a connection opened ahead, then idle): its name counts as
 * answered with its address while the answer's set entry lives and for
 * this long after. The name must still be allowed (a reload's removal
 * ends its links at once). */
#define ANSWER_GRACE_S 600
#define TEXT_MAX       (TLSHELLO_NAME_MAX + 128)
#define REWRITTEN                                                              \
	"bytes sent again differ from the bytes read (a rewritten "            \
	"retransmission: the server would read another stream)"
/* A QUIC connection let through is remembered (its keys and the stream
 * judged) while its client sends Initials, and this long after the last
 * one: a server stops reading Initials once the handshake moves on, and
 * drops its state after an idle timeout; a later Initial of a forgotten
 * connection opens under no key we know and is dropped. */
#define QUIC_KEEP_MS	    60000
#define QUIC_CONNS_PER_FLOW 8 /* the connections' keys tried per Initial */
#define QUIC_CONN_BYTES_MAX (8u * 1024 * 1024)
/* Fair queueing (flowshare.c): each pending flow holds a packet in the
 * queue, so one subject (uid, or source address) may hold an eighth of
 * the queue's room; and it may open 4096 new pending flows at once and
 * 4096 a second after, which bounds the reading one subject's churn of
 * short flows costs everyone (a client opening flows one after another
 * on loopback-fast paths reaches 2,000 a second). The rest of its new
 * flows are refused unread. */
#define SHARE_PENDING_MAX (FLOWCHECK_QUEUE_MAXLEN / 8)
#define SHARE_BURST	  FLOWCHECK_QUEUE_MAXLEN
#define SHARE_PER_S	  FLOWCHECK_QUEUE_MAXLEN
/* The stream kept per flow: a ClientHello in records, or a request head. */
#define FLOWCHECK_STREAM_MAX                                                   \
	((TLSHELLO_MAX > HTTPHOST_MAX ? TLSHELLO_MAX : HTTPHOST_MAX) + 4 * 64)

struct flowcheck {
	const struct reload *rl;
	struct attrib *attrib;
	struct nfq *q;
	struct flowtab *tab;
	struct event *sweep_ev;
	struct tlshello hello;	    /* scratch of one parse */
	struct httphost http;	    /* the same, of a request head */
	struct nfq *recheck;	    /* FLOW_QUEUE_RECHECK */
	struct quic_initial *quic;  /* scratch of one parse */
	struct quicconn_tab *conns; /* QUIC connections let through */
	struct flowshare *share;    /* pending flows per subject */
	struct sockdiag *diag;	    /* what a client's peer acknowledged */
};

/* The client Initials of one datagram, read as the server reads them
 * (quic_classify): whose they are. */
enum quic_target {
	QUIC_TARGET_NONE,   /* no Initial: Handshake, 0-RTT, a short header */
	QUIC_TARGET_NEW,    /* Initials under their own DCID, not let through */
	QUIC_TARGET_CONN,   /* Initials of one connection let through */
	QUIC_TARGET_UNREAD, /* an Initial no key we know opens, nothing new */
	QUIC_TARGET_BAD,    /* malformed, another version, two connections */
};

struct quic_dgram {
	enum quic_target target;
	bool small;	       /* an Initial in a datagram under 1200 bytes */
	struct quicconn *conn; /* QUIC_TARGET_CONN */
	size_t crypto_end;     /* past the last CRYPTO byte it carries */
};

static const enum stat_id reason_stat[FLOWDECIDE__COUNT] = {
    [FLOWDECIDE_OK] = STAT_FLOW_ACCEPTED,
    [FLOWDECIDE_NO_NAME] = STAT_FLOW_NO_NAME,
    [FLOWDECIDE_NOT_ALLOWED] = STAT_FLOW_NOT_ALLOWED,
    [FLOWDECIDE_NOT_ANSWERED] = STAT_FLOW_NOT_ANSWERED,
    [FLOWDECIDE_UNREADABLE] = STAT_FLOW_UNREADABLE,
    [FLOWDECIDE_TIMEOUT] = STAT_FLOW_TIMEOUT,
};

static struct flowtab_key key_of(const struct flowpkt *fp);
static void on_packet(void *arg, const struct nfq_pkt *qp);
static bool ended(struct flowcheck *fc, const struct nfq_pkt *qp,
		  const struct flowpkt *fp);
static struct flowtab_flow *flow_of(struct flowcheck *fc,
				    const struct flowtab_key *key,
				    const struct nfq_pkt *qp,
				    const struct flowpkt *fp);
static struct flowtab_flow *flow_open(struct flowcheck *fc,
				      const struct flowtab_key *key,
				      const struct nfq_pkt *qp,
				      const struct flowpkt *fp, uint64_t now);
static bool admit(struct flowcheck *fc, const struct flowtab_key *key,
		  const struct nfq_pkt *qp, bool recheck);
static void read_flow(struct flowcheck *fc, struct flowtab_flow *f,
		      const struct nfq_pkt *qp, const struct flowpkt *fp);
static void refuse_urgent(struct flowcheck *fc, struct flowtab_flow *f,
			  const struct nfq_pkt *qp);
static void release_older(struct flowcheck *fc, struct flowtab_flow *f);
static void first_hello_read(struct flowcheck *fc, struct flowtab_flow *f,
			     const char *name);
static const char *what_of(const struct config *cfg,
			   const struct flowtab_flow *f);
static int read_name(struct flowcheck *fc, const char *what,
		     const struct flowtab_flow *f, const char **name);
static void judge_hello(struct flowcheck *fc, struct flowtab_flow *f, int rc,
			const char *what, const char *name);
static bool answered(void *arg, const uint8_t *wire, size_t len,
		     const struct netaddr *dst);
static bool auditing(const struct config *cfg);
static void verdict(struct flowcheck *fc, uint32_t id, bool accept);
static void finish(struct flowcheck *fc, struct flowtab_flow *f,
		   enum flowdecide_reason r, const char *text);
static void finish_named(struct flowcheck *fc, struct flowtab_flow *f,
			 enum flowdecide_reason r, const char *name,
			 const char *text);
static void refuse_one(struct flowcheck *fc, const struct nfq_pkt *qp,
		       const struct flowpkt *fp, const char *reason,
		       const char *text);
static void report(struct flowcheck *fc, const struct flowtab_key *k,
		   bool has_uid, uint32_t uid, const char *reason,
		   const char *name, const char *text);
static void on_timeout(void *arg, struct flowtab_flow *f,
		       enum flowtab_late why);
static void on_sweep(evutil_socket_t fd, short what, void *arg);
static void on_recheck(void *arg, const struct nfq_pkt *qp);
static void quic_packet(struct flowcheck *fc, const struct nfq_pkt *qp,
			const struct flowpkt *fp, bool recheck);
static void quic_classify(struct flowcheck *fc, const struct flowtab_key *key,
			  const uint8_t *p, size_t len, struct quic_dgram *dg);
static int quic_open(struct flowcheck *fc, const struct flowtab_key *key,
		     const struct quic_packet *pk,
		     struct quicconn *const *conns, size_t n_conns,
		     struct quic_dgram *dg);
static void quic_other(struct flowcheck *fc, struct flowtab_flow *f,
		       const struct nfq_pkt *qp, const struct flowpkt *fp,
		       enum quic_target t, bool recheck);
static void quic_conn(struct flowcheck *fc, struct flowtab_flow *f,
		      const struct quic_dgram *dg, const struct nfq_pkt *qp,
		      bool recheck);
static int quic_next_hello(struct flowcheck *fc, struct quicconn *c, char *text,
			   size_t cap, enum flowdecide_reason *r,
			   const char **name);
static void quic_refuse(struct flowcheck *fc, const struct quicconn *c,
			const struct nfq_pkt *qp, bool recheck,
			enum flowdecide_reason r, const char *name,
			const char *text);
static struct flowtab_flow *quic_flow(struct flowcheck *fc,
				      struct flowtab_flow *f,
				      const struct flowtab_key *key,
				      const struct nfq_pkt *qp, bool recheck);
static void quic_read(struct flowcheck *fc, struct flowtab_flow *f,
		      const struct nfq_pkt *qp);
static size_t hello_len(const uint8_t *p, size_t n);
static bool same_tag(const struct flowtab_flow *f,
		     const struct quic_initial *qi);
static void judge(struct flowcheck *fc, bool recheck, uint32_t id, bool accept);
static void guard_packet(struct flowcheck *fc, const struct nfq_pkt *qp,
			 const struct flowpkt *fp);
static bool guard_ends(void *arg, struct flowtab_flow *f);
static void send_held(struct flowcheck *fc, struct flowtab_flow *f,
		      bool accept);

struct flowcheck *flowcheck_new(struct event_base *base,
				const struct reload *rl, struct attrib *attrib,
				char *err, size_t errlen)
{
	struct flowcheck *fc = calloc(1, sizeof(*fc));
	struct timeval tv = {0, SWEEP_MS * 1000};

	if (fc == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	fc->rl = rl;
	fc->attrib = attrib;
	fc->tab = flowtab_new(FLOWCHECK_FLOWS_MAX, FLOWCHECK_STREAM_MAX,
			      FLOWCHECK_BYTES_MAX);
	fc->sweep_ev = event_new(base, -1, EV_PERSIST, on_sweep, fc);
	fc->quic = quic_initial_new();
	fc->conns = quicconn_new(FLOWCHECK_FLOWS_MAX, QUIC_CONN_BYTES_MAX);
	fc->share = flowshare_new(
	    FLOWCHECK_FLOWS_MAX,
	    &(struct flowshare_limits){.pending_max = SHARE_PENDING_MAX,
				       .burst = SHARE_BURST,
				       .per_s = SHARE_PER_S});
	if (fc->tab == NULL || fc->sweep_ev == NULL || fc->quic == NULL ||
	    fc->conns == NULL || fc->share == NULL ||
	    event_add(fc->sweep_ev, &tv) != 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	fc->q = nfq_open(base, FLOW_QUEUE_NUM, FLOWCHECK_QUEUE_MAXLEN,
			 on_packet, fc, err, errlen);
	if (fc->q == NULL)
		goto fail;
	fc->recheck = nfq_open(base, FLOW_QUEUE_RECHECK, FLOWCHECK_QUEUE_MAXLEN,
			       on_recheck, fc, err, errlen);
	if (fc->recheck == NULL)
		goto fail;
	fc->diag = sockdiag_open(err, errlen);
	if (fc->diag == NULL)
		goto fail;
	return fc;
fail:
	flowcheck_free(fc);
	return NULL;
}

int flowcheck_hand_over(struct flowcheck *fc, int chan)
{
	struct nfq *qs[] = {fc->q, fc->recheck};
	uint8_t frame[IPC_HDR_SIZE];

	for (size_t i = 0; i < 2; i++) {
		int len = ipc_encode_link(frame, sizeof(frame), IPC_NFQ,
					  nfq_num(qs[i]),
					  nfq_conntrack_ids(qs[i]) ? 0 : 1);
		int rc =
		    len < 0 ? len
			    : ipc_send(chan, frame, (size_t)len, nfq_fd(qs[i]));

		if (rc != 0)
			return rc;
		nfq_use_channel(qs[i], chan);
	}
	return 0;
}

void flowcheck_free(struct flowcheck *fc)
{
	if (fc == NULL)
		return;
	nfq_close(fc->q); /* held packets are dropped by the kernel */
	nfq_close(fc->recheck);
	sockdiag_close(fc->diag);
	quic_initial_free(fc->quic);
	quicconn_free(fc->conns);
	flowshare_free(fc->share);
	if (fc->sweep_ev != NULL)
		event_free(fc->sweep_ev);
	flowtab_free(fc->tab);
	free(fc);
}

static bool auditing(const struct config *cfg)
{
	return cfg->name_check == CONFIG_NAME_CHECK_AUDIT ||
	       cfg->mode == CONFIG_MODE_AUDIT;
}

static void verdict(struct flowcheck *fc, uint32_t id, bool accept)
{
	int rc = nfq_verdict(fc->q, id, NF_REPEAT,
			     accept ? FLOW_MARK_ACCEPT : FLOW_MARK_REJECT);

	if (rc != 0)
		log_limited(LOG_CLASS_SETS, LOGL_WARN, SYS,
			    "cannot send a verdict: %s (the packet is "
			    "dropped)",
			    strerror(-rc));
}

/* The flow a parsed packet belongs to: its four-tuple and protocol. */
static struct flowtab_key key_of(const struct flowpkt *fp)
{
	return (struct flowtab_key){.src = fp->src,
				    .dst = fp->dst,
				    .sport = fp->sport,
				    .dport = fp->dport,
				    .proto = fp->proto};
}

static void on_packet(void *arg, const struct nfq_pkt *qp)
{
	struct flowcheck *fc = arg;
	struct flowtab_flow *f;
	struct flowtab_key key;
	struct flowpkt fp;
	bool urgent;

	if (qp->payload == NULL ||
	    flowpkt_parse(qp->payload, qp->len, &fp) != 0) {
		(void)nfq_verdict(fc->q, qp->id, NF_DROP, 0);
		return;
	}
	if (fp.proto == IPPROTO_UDP) {
		quic_packet(fc, qp, &fp, false);
		return;
	}
	urgent = (fp.flags & FLOWPKT_URG) != 0 || fp.urgent != 0;
	if (fp.payload_len == 0 && !urgent &&
	    (fp.flags & (FLOWPKT_FIN | FLOWPKT_RST)) != 0 && ended(fc, qp, &fp))
		return;
	if (fp.payload_len == 0 && !urgent) {
		(void)nfq_verdict(fc->q, qp->id, NF_ACCEPT, 0);
		return;
	}
	key = key_of(&fp);
	f = flow_of(fc, &key, qp, &fp);
	if (f == NULL)
		return;
	if (urgent) {
		refuse_urgent(fc, f, qp);
		return;
	}
	if (qp->has_uid && !f->has_uid) {
		f->has_uid = true;
		f->uid = qp->uid;
	}
	read_flow(fc, f, qp, &fp);
}

/* A FIN or RST without payload of a flow whose first hello was judged and
 * sent on while the rest of its flight is read: nothing more of the
 * flight will come, and the flow is decided accepted (its first bytes
 * were). A FIN, held, carries the verdict into the connmark, and the
 * guard keeps watching what is sent again; an RST (a socket closed with
 * the server's answer unread) goes on as it is. Either gives the flow's
 * pending place back at once, not at the 5 s deadline: a client that
 * reads the server's first answer and closes (a probe, a health check)
 * would otherwise hold its subject's share. False when the packet is not
 * such a one (the caller goes on). */
static bool ended(struct flowcheck *fc, const struct nfq_pkt *qp,
		  const struct flowpkt *fp)
{
	struct flowtab_key key = key_of(fp);
	struct flowtab_flow *f =
	    flowtab_get(fc->tab, &key, monotime_ms(), false);

	if (f == NULL || f->decided || !f->first_sent ||
	    flowtab_conn_of(f, qp->has_ct_id, qp->ct_id) != FLOWTAB_CONN_SAME)
		return false;
	if ((fp->flags & FLOWPKT_RST) != 0 || flowtab_hold(f, qp->id) != 0)
		(void)nfq_verdict(fc->q, qp->id, NF_ACCEPT, 0);
	finish(fc, f, FLOWDECIDE_OK, "");
	return true;
}

/* The flow of key, created when new, or anew when the four-tuple is known
 * to carry another connection than the flow was read from (RACE_WINDOW):
 * a decided flow's verdict is then forgotten, an undecided one's held
 * packets dropped (their conntrack entry is gone; nothing of theirs may
 * join the new stream). Any other packet of a decided flow is dropped,
 * never given the verdict (RACE_WINDOW); reading it now would refuse, and
 * so reset, the connection decided when it is a late packet of that one.
 * NULL when the packet was handled here: dropped, or refused as the table
 * is full. */
static struct flowtab_flow *flow_of(struct flowcheck *fc,
				    const struct flowtab_key *key,
				    const struct nfq_pkt *qp,
				    const struct flowpkt *fp)
{
	uint64_t now = monotime_ms();
	struct flowtab_flow *f = flow_open(fc, key, qp, fp, now);
	bool fresh = f != NULL && !f->decided && !f->has_start;
	enum flowtab_conn c =
	    f == NULL || fresh ? FLOWTAB_CONN_SAME
			       : flowtab_conn_of(f, qp->has_ct_id, qp->ct_id);

	if (c == FLOWTAB_CONN_OTHER ||
	    (f != NULL && f->decided &&
	     (uint32_t)(fp->seq - f->isn) >= RACE_WINDOW)) {
		for (size_t i = 0; !f->decided && i < f->n_held; i++)
			(void)nfq_verdict(fc->q, f->held[i], NF_DROP, 0);
		flowshare_release(fc->share, key);
		flowtab_remove(fc->tab, f);
		f = flow_open(fc, key, qp, fp, now);
		fresh = f != NULL;
	}
	if (f != NULL && f->decided) {
		(void)nfq_verdict(fc->q, qp->id, NF_DROP, 0);
		return NULL;
	}
	if (fresh) {
		f->has_conn = qp->has_ct_id;
		f->conn_id = qp->ct_id;
	}
	return f;
}

/* The flow of key, or a new one when the subject that sent qp may open
 * one (admit). NULL when refused here: its subject's share or rate, or
 * the table full. */
static struct flowtab_flow *flow_open(struct flowcheck *fc,
				      const struct flowtab_key *key,
				      const struct nfq_pkt *qp,
				      const struct flowpkt *fp, uint64_t now)
{
	struct flowtab_flow *f = flowtab_get(fc->tab, key, now, false);

	if (f != NULL || !admit(fc, key, qp, false))
		return f;
	f = flowtab_get(fc->tab, key, now, true);
	if (f == NULL) {
		flowshare_release(fc->share, key);
		stats_inc(STAT_FLOW_BUSY);
		refuse_one(fc, qp, fp, "busy",
			   "too many flows being read at once (fail closed)");
	}
	return f;
}

/* May the subject that sent qp (its uid, else its source address) open
 * the new pending flow key? When not, the packet is refused here (reset,
 * or dropped from the recheck queue; let through in audit), counted by
 * reason and logged at most once a window: reading it would let one
 * subject fill the queue every subject's flows wait in. */
static bool admit(struct flowcheck *fc, const struct flowtab_key *key,
		  const struct nfq_pkt *qp, bool recheck)
{
	struct flowshare_subject s = {.has_uid = qp->has_uid, .uid = qp->uid};
	char who[NETADDR_STRLEN + 16];
	int rc;

	if (!s.has_uid)
		s.src = key->src;
	rc = flowshare_admit(fc->share, key, &s, monotime_ms());
	if (rc == 0)
		return true;
	if (rc == -ENOSPC)
		stats_inc(STAT_FLOW_BUSY);
	else
		stats_inc(rc == -EBUSY ? STAT_FLOW_SHED_PENDING
				       : STAT_FLOW_SHED_RATE);
	judge(fc, recheck, qp->id, auditing(reload_config(fc->rl)));
	if (s.has_uid) {
		snprintf(who, sizeof(who), "uid %u", (unsigned)s.uid);
	} else {
		memcpy(who, "source ", 7);
		netaddr_format(&s.src, who + 7, sizeof(who) - 7);
	}
	log_limited(LOG_CLASS_SETS, LOGL_WARN, SYS,
		    "%s: new flows refused unread (%s): it %s", who,
		    rc == -EBUSY    ? "pending"
		    : rc == -EAGAIN ? "rate"
				    : "busy",
		    rc == -EBUSY    ? "holds its share of the name check's "
				      "pending flows"
		    : rc == -EAGAIN ? "opens new flows faster than its rate"
				    : "found the flow table full");
	return false;
}

/* A segment with URG or an urgent pointer before the verdict: the
 * server's socket takes the urgent byte out of the stream (unless it
 * asked for it inline), so it would read other bytes than the copy read
 * here. Nothing legitimate sends urgent data in a ClientHello or a
 * request head: the flow is refused, this packet and the held ones. */
static void refuse_urgent(struct flowcheck *fc, struct flowtab_flow *f,
			  const struct nfq_pkt *qp)
{
	verdict(fc, qp->id, auditing(reload_config(fc->rl)));
	finish(fc, f, FLOWDECIDE_UNREADABLE,
	       "urgent data before the verdict (the server would read "
	       "another stream)");
}

/* Append, hold, and judge once the ClientHello is whole. */
static void read_flow(struct flowcheck *fc, struct flowtab_flow *f,
		      const struct nfq_pkt *qp, const struct flowpkt *fp)
{
	const struct config *cfg = reload_config(fc->rl);
	const char *what = what_of(cfg, f), *name;
	char text[TEXT_MAX];
	int rc;

	rc = flowtab_append(fc->tab, f, fp->seq, fp->payload, fp->payload_len,
			    monotime_ms());
	if (rc == -EAGAIN) {
		(void)nfq_verdict(fc->q, qp->id, NF_DROP, 0);
		return;
	}
	if (rc == 0)
		rc = flowtab_hold(f, qp->id);
	if (rc != 0) {
		/* This packet is not held: its verdict goes out by itself. */
		verdict(fc, qp->id, auditing(cfg));
		if (rc == -EBADMSG)
			snprintf(text, sizeof(text), "%s", REWRITTEN);
		else
			flowdecide_explain(FLOWDECIDE_UNREADABLE, what, text,
					   sizeof(text));
		finish(fc, f, FLOWDECIDE_UNREADABLE, text);
		return;
	}
	rc = read_name(fc, what, f, &name);
	if (rc == -EAGAIN && strcmp(what, WHAT_TLS) == 0 &&
	    fc->hello.first_whole) {
		first_hello_read(fc, f, name);
		return;
	}
	if (rc == -EAGAIN) {
		release_older(fc, f);
		return;
	}
	if (rc == -EXDEV) {
		finish(fc, f, FLOWDECIDE_UNREADABLE,
		       strcmp(what, WHAT_HTTP) == 0
			   ? "a second HTTP request in the first flight names "
			     "another host than the first"
			   : "a second TLS ClientHello names another server "
			     "than the first");
		return;
	}
	judge_hello(fc, f, rc, what, name);
}

/* The first ClientHello of a TLS 1.3 flow is read and the rest of the
 * client's plaintext handshake is still to come (tlshello_flight): a
 * name refused now is refused at once; an accepted one lets the held
 * packets go to the server (NF_ACCEPT: no verdict in the connmark, the
 * flow's next packets are queued still), whose answer (a
 * HelloRetryRequest, say) the client's next records wait for. A record
 * is judged whole, and a server acts on no record it has only part of. */
static void first_hello_read(struct flowcheck *fc, struct flowtab_flow *f,
			     const char *name)
{
	char text[TEXT_MAX];
	enum flowdecide_reason r =
	    flowdecide(WHAT_TLS, name, &f->key.dst, reload_policy(fc->rl),
		       answered, fc, text, sizeof(text));

	if (r != FLOWDECIDE_OK) {
		finish_named(fc, f, r, name, text);
		return;
	}
	for (size_t i = 0; i < f->n_held; i++)
		(void)nfq_verdict(fc->q, f->held[i], NF_ACCEPT, 0);
	f->n_held = 0;
	f->first_sent = true;
}

/* What the first bytes of f are read as: its protocol, and for TCP its
 * port (http_ports, else TLS). */
static const char *what_of(const struct config *cfg,
			   const struct flowtab_flow *f)
{
	if (f->key.proto == IPPROTO_UDP)
		return WHAT_QUIC;
	for (size_t i = 0; i < cfg->n_http_ports; i++) {
		if (f->key.dport >= cfg->http_ports[i].first &&
		    f->key.dport <= cfg->http_ports[i].last)
			return WHAT_HTTP;
	}
	return WHAT_TLS;
}

/* The name f's TCP stream carries so far (*name NULL: none), by its
 * parser's result: 0, -EAGAIN (wait), or another error (unreadable). */
static int read_name(struct flowcheck *fc, const char *what,
		     const struct flowtab_flow *f, const char **name)
{
	int rc;

	if (strcmp(what, WHAT_HTTP) == 0) {
		rc = httphost_flight(f->buf, f->len, &fc->http);
		*name = fc->http.has_name ? fc->http.name : NULL;
	} else {
		rc = tlshello_flight(f->buf, f->len, &fc->hello);
		*name = fc->hello.has_name ? fc->hello.name : NULL;
	}
	return rc;
}

/* The verdict on f once its ClientHello (request head) was read: rc, of
 * the parse; what says which protocol carried it, name what it named
 * (NULL: none). */
static void judge_hello(struct flowcheck *fc, struct flowtab_flow *f, int rc,
			const char *what, const char *name)
{
	char text[TEXT_MAX];
	enum flowdecide_reason r;

	if (rc != 0) {
		flowdecide_explain(FLOWDECIDE_UNREADABLE, what, text,
				   sizeof(text));
		r = FLOWDECIDE_UNREADABLE;
	} else {
		r = flowdecide(what, name, &f->key.dst, reload_policy(fc->rl),
			       answered, fc, text, sizeof(text));
	}
	if (r == FLOWDECIDE_OK)
		log_debug(SYS, "%s", text);
	finish_named(fc, f, r, rc == 0 ? name : NULL, text);
}

/* Still incomplete: the older held packets are dropped (their bytes are
 * copied), only the newest stays. A held packet's memory is charged to
 * its socket, and TCP's small-queue limit sends nothing more while two of
 * them wait: holding them all would wait for a segment the sender holds
 * back. A dropped segment comes again when the server acknowledges the
 * later ones (or on timeout) and then meets the flow's verdict. */
static void release_older(struct flowcheck *fc, struct flowtab_flow *f)
{
	if (f->n_held < 2)
		return;
	for (size_t i = 0; i + 1 < f->n_held; i++)
		(void)nfq_verdict(fc->q, f->held[i], NF_DROP, 0);
	f->held[0] = f->held[f->n_held - 1];
	f->n_held = 1;
}

static bool answered(void *arg, const uint8_t *wire, size_t len,
		     const struct netaddr *dst)
{
	struct flowcheck *fc = arg;
	const struct prov *p = reload_prov(fc->rl);

	uint64_t now = monotime_s();

	return p != NULL &&
	       prov_answered(p, wire, len, dst,
			     now > ANSWER_GRACE_S ? now - ANSWER_GRACE_S : 0);
}

/* The verdict on every held packet, counted and, when refused, logged. */
static void finish(struct flowcheck *fc, struct flowtab_flow *f,
		   enum flowdecide_reason r, const char *text)
{
	finish_named(fc, f, r, NULL, text);
}

/* finish, for a flow whose name was read (name: NULL when none). */
static void finish_named(struct flowcheck *fc, struct flowtab_flow *f,
			 enum flowdecide_reason r, const char *name,
			 const char *text)
{
	const struct config *cfg = reload_config(fc->rl);
	bool accept = r == FLOWDECIDE_OK || auditing(cfg);
	/* Guarded until the server acknowledges what was read. */
	bool guard = accept && f->key.proto == IPPROTO_TCP;

	stats_inc(STAT_FLOW_CHECKED);
	stats_inc(reason_stat[r]);
	if (r != FLOWDECIDE_OK && accept)
		stats_inc(STAT_FLOW_AUDIT_ALLOWED);
	if (guard) {
		for (size_t i = 0; i < f->n_held; i++)
			(void)nfq_verdict(fc->q, f->held[i], NF_REPEAT,
					  FLOW_MARK_GUARD);
	} else {
		send_held(fc, f, accept);
	}
	if (r != FLOWDECIDE_OK)
		report(fc, &f->key, f->has_uid, f->uid,
		       flowdecide_reason_name(r), name, text);
	flowshare_release(fc->share, &f->key);
	if (guard)
		flowtab_guard(fc->tab, f, monotime_ms());
	else
		flowtab_decide(fc->tab, f, accept, monotime_ms());
}

static void refuse_one(struct flowcheck *fc, const struct nfq_pkt *qp,
		       const struct flowpkt *fp, const char *reason,
		       const char *text)
{
	struct flowtab_key k = key_of(fp);
	bool audit = auditing(reload_config(fc->rl));

	verdict(fc, qp->id, audit);
	report(fc, &k, qp->has_uid, qp->uid, reason, NULL, text);
}

/* "blocked tcp A:p -> B:443 from uid U: TLS server name ... ". */
static void report(struct flowcheck *fc, const struct flowtab_key *k,
		   bool has_uid, uint32_t uid, const char *reason,
		   const char *name, const char *text)
{
	struct nflog_pkt pkt = {.has_uid = has_uid,
				.uid = uid,
				.has_addrs = true,
				.src = k->src,
				.dst = k->dst,
				.proto = k->proto,
				.has_ports = true,
				.sport = k->sport,
				.dport = k->dport};

	attrib_flow(fc->attrib, &pkt, auditing(reload_config(fc->rl)), reason,
		    name, text);
}

/* The log names the deadline missed (flowcheck.h). */
static void on_timeout(void *arg, struct flowtab_flow *f, enum flowtab_late why)
{
	struct flowcheck *fc = arg;
	const struct config *cfg = reload_config(fc->rl);
	bool accept = auditing(cfg);
	char text[TEXT_MAX];
	size_t n;

	flowdecide_explain(FLOWDECIDE_TIMEOUT, what_of(cfg, f), text,
			   sizeof(text));
	n = strlen(text);
	snprintf(text + n, sizeof(text) - n, " (%d s %s)",
		 (why == FLOWTAB_LATE_TOTAL ? FLOWCHECK_TOTAL_MS
					    : FLOWCHECK_TIMEOUT_MS) /
		     1000,
		 why == FLOWTAB_LATE_TOTAL     ? "in all"
		 : f->key.proto == IPPROTO_UDP ? "since its first datagram"
					       : "without a new byte");
	stats_inc(STAT_FLOW_CHECKED);
	stats_inc(STAT_FLOW_TIMEOUT);
	send_held(fc, f, accept);
	flowshare_release(fc->share, &f->key);
	report(fc, &f->key, f->has_uid, f->uid,
	       flowdecide_reason_name(FLOWDECIDE_TIMEOUT), NULL, text);
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct flowcheck *fc = arg;

	(void)fd;
	(void)what;
	flowtab_expire(fc->tab, monotime_ms(), FLOWCHECK_TIMEOUT_MS,
		       FLOWCHECK_TOTAL_MS, KEEP_DECIDED_MS, on_timeout, fc);
	flowtab_each_guarded(fc->tab, guard_ends, fc);
	quicconn_expire(fc->conns, monotime_ms(), QUIC_KEEP_MS);
	flowshare_expire(fc->share, monotime_ms(),
			 FLOWCHECK_TOTAL_MS + 2 * SWEEP_MS);
}

/* QUIC (udp, quic_ports). Every datagram is read as the server reads it
 * (quic_classify): its packets split by their lengths, every client
 * Initial among them opened under the keys of its own DCID or of a
 * connection already let through on the flow; one that opens under no
 * key is skipped, as a server drops it. A datagram under 1200 bytes
 * that carries an Initial decides nothing (a server discards it, RFC
 * 9000 14.1): it is dropped, and the flow waits for one the server
 * would read.
 *
 * The first queue carries the packets of flows the kernel has no
 * verdict for: the first datagram must hold a client Initial of version
 * 1 under a DCID of its own, or the flow is refused (nothing else can
 * start a connection the server would take). Its CRYPTO frames, and
 * those of the Initials after it under the same DCID, are placed by
 * offset until the ClientHello is whole; every datagram is held until
 * then, so the server sees nothing before the verdict, and the stream
 * must hold the ClientHello and nothing more.
 *
 * The recheck queue carries the long-header packets of flows accepted.
 * One flow (four-tuple) can carry several connections, and a server
 * opens one for every Initial under a DCID it does not know: a datagram
 * with an Initial under a DCID of its own that was not let through is a
 * new check, whatever else it holds (the same after a Retry), its
 * refusal a drop of its packets (the flow's earlier connection keeps
 * its verdict). The Initials of a connection let through (quicconn.c,
 * under its first DCID's keys whatever DCID they carry) must carry the
 * CRYPTO bytes judged where they overlap them; bytes past them are the
 * second ClientHello after a HelloRetryRequest, held back until whole,
 * then judged: it must name the server the first did. An Initial that
 * opens under no key we know, alone, is dropped (it can only be read by
 * a server holding keys we forgot), as is a long header of another
 * version; Handshake and 0-RTT packets pass. */
static void on_recheck(void *arg, const struct nfq_pkt *qp)
{
	struct flowcheck *fc = arg;
	struct flowpkt fp;

	if (qp->payload == NULL ||
	    flowpkt_parse(qp->payload, qp->len, &fp) != 0) {
		(void)nfq_verdict(fc->recheck, qp->id, NF_DROP, 0);
		return;
	}
	if (fp.proto == IPPROTO_TCP)
		guard_packet(fc, qp, &fp);
	else
		quic_packet(fc, qp, &fp, true);
}

/* A packet of a TCP flow accepted whose guard bit is set (FLOW_MARK_GUARD:
 * the server may not have all the bytes judged; a copy dropped while the
 * flow was read comes again only now, from the sender's pages). Where it
 * overlaps the judged stream it must carry the same bytes, or the flow
 * is refused (reset). The guard ends, by the accept mark repeated, once
 * the client's socket reports the judged bytes acknowledged (its SYN
 * counts one): nothing of them is sent again after that. A packet of a
 * guarded flow no longer remembered (guard_ends let it go, as its
 * bytes were acknowledged, or its socket is gone) ends the guard too. */
static void guard_packet(struct flowcheck *fc, const struct nfq_pkt *qp,
			 const struct flowpkt *fp)
{
	struct flowtab_key key = key_of(fp);
	struct flowtab_flow *f =
	    flowtab_get(fc->tab, &key, monotime_ms(), false);
	bool audit = auditing(reload_config(fc->rl));
	uint64_t acked = 0;

	if (f != NULL &&
	    (!f->guarded || flowtab_conn_of(f, qp->has_ct_id, qp->ct_id) ==
				FLOWTAB_CONN_OTHER))
		f = NULL;
	if (f != NULL && fp->payload_len > 0 &&
	    !flowtab_agrees(f, fp->seq, fp->payload, fp->payload_len)) {
		stats_inc(STAT_FLOW_UNREADABLE);
		if (audit)
			stats_inc(STAT_FLOW_AUDIT_ALLOWED);
		(void)nfq_verdict(fc->recheck, qp->id, NF_REPEAT,
				  audit ? FLOW_MARK_ACCEPT : FLOW_MARK_REJECT);
		report(fc, &key, f->has_uid, f->uid,
		       flowdecide_reason_name(FLOWDECIDE_UNREADABLE), NULL,
		       REWRITTEN);
		flowtab_unguard(fc->tab, f);
		return;
	}
	if (f != NULL &&
	    (sockdiag_acked(fc->diag, &key, &acked) != 0 || acked <= f->len)) {
		(void)nfq_verdict(fc->recheck, qp->id, NF_ACCEPT, 0);
		return;
	}
	if (f != NULL)
		flowtab_unguard(fc->tab, f);
	(void)nfq_verdict(fc->recheck, qp->id, NF_REPEAT, FLOW_MARK_ACCEPT);
}

/* flowtab_each_guarded, each sweep: a guarded flow is forgotten once its
 * judged bytes are acknowledged (its next packet ends the guard) or its
 * socket is gone (nothing can send them again). */
static bool guard_ends(void *arg, struct flowtab_flow *f)
{
	struct flowcheck *fc = arg;
	uint64_t acked = 0;
	int rc = sockdiag_acked(fc->diag, &f->key, &acked);

	return rc == -ENOENT || (rc == 0 && acked > f->len);
}

static bool same_tag(const struct flowtab_flow *f,
		     const struct quic_initial *qi)
{
	return f->tag_len == qi->dcid_len &&
	       memcmp(f->tag, qi->dcid, qi->dcid_len) == 0;
}

static void quic_packet(struct flowcheck *fc, const struct nfq_pkt *qp,
			const struct flowpkt *fp, bool recheck)
{
	struct flowtab_key key = key_of(fp);
	struct flowtab_flow *f =
	    flowtab_get(fc->tab, &key, monotime_ms(), false);
	struct quic_dgram dg;

	quic_classify(fc, &key, fp->payload, fp->payload_len, &dg);
	if (dg.small) {
		(void)nfq_verdict(recheck ? fc->recheck : fc->q, qp->id,
				  NF_DROP, 0);
		return;
	}
	if (dg.target == QUIC_TARGET_CONN) {
		quic_conn(fc, f, &dg, qp, recheck);
		return;
	}
	if (dg.target != QUIC_TARGET_NEW) {
		quic_other(fc, f, qp, fp, dg.target, recheck);
		return;
	}
	if (f != NULL && same_tag(f, fc->quic) && f->decided && !f->accept) {
		judge(fc, recheck, qp->id, false);
		return;
	}
	if (f != NULL && !f->decided &&
	    (!same_tag(f, fc->quic) || f->recheck != recheck)) {
		/* A second connection while the first is read (or a packet
		 * from the other queue, which the rules never send): only
		 * the flow's own packets are held, in its own queue. */
		(void)nfq_verdict(recheck ? fc->recheck : fc->q, qp->id,
				  NF_DROP, 0);
		return;
	}
	f = quic_flow(fc, f, &key, qp, recheck);
	if (f != NULL)
		quic_read(fc, f, qp);
}

/* Whose the client Initials of the datagram p are, into dg; the CRYPTO
 * frames of the Initials opened in fc->quic, and for QUIC_TARGET_NEW
 * fc->quic->dcid the new connection's DCID. */
static void quic_classify(struct flowcheck *fc, const struct flowtab_key *key,
			  const uint8_t *p, size_t len, struct quic_dgram *dg)
{
	struct quic_packet pk[QUIC_PACKETS_MAX];
	struct quicconn *conns[QUIC_CONNS_PER_FLOW];
	size_t n_conns = 0;
	bool unread[QUIC_PACKETS_MAX] = {false};
	int n = quic_packets(p, len, pk, QUIC_PACKETS_MAX);

	*dg = (struct quic_dgram){.target = QUIC_TARGET_NONE};
	quic_initial_reset(fc->quic);
	if (n < 0) {
		dg->target = QUIC_TARGET_BAD;
		return;
	}
	for (int i = 0; i < n; i++) {
		if (pk[i].kind == QUIC_KIND_VERSION) {
			dg->target = QUIC_TARGET_BAD;
			return;
		}
		if (pk[i].kind == QUIC_KIND_INITIAL &&
		    len < QUIC_INITIAL_DATAGRAM_MIN) {
			dg->small = true;
			return;
		}
	}
	for (int i = 0; i < n && dg->target != QUIC_TARGET_BAD; i++) {
		int rc;

		if (pk[i].kind != QUIC_KIND_INITIAL)
			continue;
		if (n_conns == 0)
			n_conns = quicconn_list(fc->conns, key, conns,
						QUIC_CONNS_PER_FLOW);
		rc = quic_open(fc, key, &pk[i], conns, n_conns, dg);
		if (rc == -EACCES)
			unread[i] = true;
		else if (rc != 0)
			dg->target = QUIC_TARGET_BAD;
	}
	/* An Initial no key opens is skipped only beside a new check under
	 * its own DCID (the server reads that datagram as the new
	 * connection's, and drops it); else nothing here can be read. */
	for (int i = 0; i < n && dg->target != QUIC_TARGET_BAD; i++) {
		if (unread[i] &&
		    (dg->target != QUIC_TARGET_NEW ||
		     pk[i].dcid_len != fc->quic->dcid_len ||
		     memcmp(pk[i].dcid, fc->quic->dcid, pk[i].dcid_len) != 0))
			dg->target = dg->target == QUIC_TARGET_NONE
					 ? QUIC_TARGET_UNREAD
					 : QUIC_TARGET_BAD;
	}
	for (size_t i = 0; i < fc->quic->n_crypto; i++) {
		size_t end =
		    (size_t)fc->quic->crypto[i].off + fc->quic->crypto[i].len;

		if (end > dg->crypto_end)
			dg->crypto_end = end;
	}
}

/* Open the Initial pk under its own DCID's keys, else under those of
 * the flow's connections let through, and note in dg whose it is (two
 * connections in one datagram: QUIC_TARGET_BAD). 0, -EACCES (no key
 * opens it), or another error of quic_packet_open. */
static int quic_open(struct flowcheck *fc, const struct flowtab_key *key,
		     const struct quic_packet *pk,
		     struct quicconn *const *conns, size_t n_conns,
		     struct quic_dgram *dg)
{
	struct quic_initial *qi = fc->quic;
	struct quicconn *c = NULL;
	int rc = quic_packet_open(qi, pk, NULL, 0);

	if (rc == 0) {
		c = quicconn_find(fc->conns, key, pk->dcid, pk->dcid_len,
				  monotime_ms());
	} else if (rc == -EACCES) {
		for (size_t j = 0; rc == -EACCES && j < n_conns; j++) {
			rc = quic_packet_open(qi, pk, conns[j]->dcid,
					      conns[j]->dcid_len);
			c = rc == 0 ? conns[j] : NULL;
		}
		if (c != NULL) /* marked used, in quicconn's order */
			(void)quicconn_find(fc->conns, key, c->dcid,
					    c->dcid_len, monotime_ms());
	}
	if (rc == -EIO)
		log_limited(LOG_CLASS_SETS, LOGL_WARN, SYS,
			    "libcrypto failed reading a QUIC Initial (the "
			    "packet is dropped)");
	if (rc != 0)
		return rc;
	if (c != NULL) {
		if (dg->target == QUIC_TARGET_NONE)
			dg->conn = c;
		dg->target =
		    dg->target == QUIC_TARGET_NONE ||
			    (dg->target == QUIC_TARGET_CONN && dg->conn == c)
			? QUIC_TARGET_CONN
			: QUIC_TARGET_BAD;
		return 0;
	}
	if (dg->target == QUIC_TARGET_NONE) {
		memcpy(qi->dcid, pk->dcid, pk->dcid_len);
		qi->dcid_len = pk->dcid_len;
		dg->target = QUIC_TARGET_NEW;
	} else if (dg->target != QUIC_TARGET_NEW ||
		   pk->dcid_len != qi->dcid_len ||
		   memcmp(pk->dcid, qi->dcid, pk->dcid_len) != 0) {
		dg->target = QUIC_TARGET_BAD;
	}
	return 0;
}

/* A datagram with no Initial to read (t: none, unread or bad). */
static void quic_other(struct flowcheck *fc, struct flowtab_flow *f,
		       const struct nfq_pkt *qp, const struct flowpkt *fp,
		       enum quic_target t, bool recheck)
{
	bool later = t == QUIC_TARGET_NONE;

	if (f != NULL && f->decided && later) {
		judge(fc, recheck, qp->id, f->accept);
		return;
	}
	if (recheck && f == NULL && later) {
		judge(fc, true, qp->id, true);
		return;
	}
	if (recheck || f != NULL) {
		/* Not one of the Initials of the connection being read, or
		 * unreadable on a flow let through: this packet only. */
		(void)nfq_verdict(recheck ? fc->recheck : fc->q, qp->id,
				  NF_DROP, 0);
		return;
	}
	/* A flow whose first packet is no client Initial: nothing a server
	 * would start a connection from, nothing we could read. */
	stats_inc(STAT_FLOW_CHECKED);
	stats_inc(STAT_FLOW_UNREADABLE);
	refuse_one(fc, qp, fp, flowdecide_reason_name(FLOWDECIDE_UNREADABLE),
		   "first packet is not a readable QUIC version 1 Initial");
}

/* A datagram of Initials of the connection dg->conn, let through: it
 * passes when every CRYPTO byte it carries is judged (the bytes judged
 * before, or a second ClientHello it completes, naming the same
 * server); it waits (dropped, its bytes kept) while that hello is
 * incomplete; anything else refuses it. While another connection of the
 * flow is read in the first queue, it waits too: a verdict there would
 * decide the whole flow. */
static void quic_conn(struct flowcheck *fc, struct flowtab_flow *f,
		      const struct quic_dgram *dg, const struct nfq_pkt *qp,
		      bool recheck)
{
	const struct quic_initial *qi = fc->quic;
	struct quicconn *c = dg->conn;
	enum flowdecide_reason r = FLOWDECIDE_UNREADABLE;
	char text[2 * TEXT_MAX]; /* two names */
	const char *name = c->name[0] != '\0' ? c->name : NULL;
	bool more = false;
	int rc = 0;

	if (!recheck && f != NULL && !f->decided) {
		(void)nfq_verdict(fc->q, qp->id, NF_DROP, 0);
		return;
	}
	for (size_t i = 0; rc == 0 && i < qi->n_crypto; i++) {
		rc = quicconn_place(fc->conns, c, qi->crypto[i].off,
				    qi->crypto[i].data, qi->crypto[i].len);
		if (rc == -EAGAIN) {
			more = true;
			rc = 0;
		}
	}
	if (rc != 0) {
		snprintf(text, sizeof(text),
			 "a later QUIC Initial carries other bytes than the "
			 "ClientHello judged for %s",
			 c->name);
		quic_refuse(fc, c, qp, recheck, r, name, text);
		return;
	}
	if (more && dg->crypto_end > c->judged)
		rc = quic_next_hello(fc, c, text, sizeof(text), &r, &name);
	if (rc == -EAGAIN) {
		(void)nfq_verdict(recheck ? fc->recheck : fc->q, qp->id,
				  NF_DROP, 0);
		return;
	}
	if (rc == 0 && dg->crypto_end > c->judged) {
		snprintf(text, sizeof(text),
			 "a QUIC Initial carries bytes past the ClientHellos "
			 "judged for %s",
			 c->name);
		rc = -EBADMSG;
	}
	if (rc != 0) {
		quic_refuse(fc, c, qp, recheck, r, name, text);
		return;
	}
	judge(fc, recheck, qp->id, true);
}

/* The ClientHello placed past c's judged range (after a
 * HelloRetryRequest): 0 when whole and naming the server judged before
 * (judged now), -EAGAIN while incomplete, else refused with *r, text
 * and *named, the name it asks for (NULL: none readable). */
static int quic_next_hello(struct flowcheck *fc, struct quicconn *c, char *text,
			   size_t cap, enum flowdecide_reason *r,
			   const char **named)
{
	const uint8_t *p;
	size_t n = quicconn_pending(c, &p);
	int rc = tlshello_parse_messages(p, n, &fc->hello);
	const char *name = fc->hello.has_name ? fc->hello.name : NULL;

	if (rc == -EAGAIN)
		return rc;
	*named = rc == 0 ? name : NULL;
	if (rc != 0) {
		flowdecide_explain(FLOWDECIDE_UNREADABLE, WHAT_QUIC, text, cap);
		*r = FLOWDECIDE_UNREADABLE;
		return -EBADMSG;
	}
	if (name == NULL || strcmp(name, c->name) != 0) {
		snprintf(text, cap,
			 "a second QUIC ClientHello names %s, the connection "
			 "was let through for %s",
			 name != NULL ? name : "no server", c->name);
		*r = name != NULL ? FLOWDECIDE_NOT_ALLOWED : FLOWDECIDE_NO_NAME;
		return -EBADMSG;
	}
	*r = flowdecide(WHAT_QUIC, name, &c->key.dst, reload_policy(fc->rl),
			answered, fc, text, cap);
	if (*r != FLOWDECIDE_OK)
		return -EBADMSG;
	quicconn_judge(c, hello_len(p, n));
	return 0;
}

/* One datagram of the connection c refused: counted, logged (name: the
 * server it asks for, NULL when none is readable), dropped (let through
 * in audit). */
static void quic_refuse(struct flowcheck *fc, const struct quicconn *c,
			const struct nfq_pkt *qp, bool recheck,
			enum flowdecide_reason r, const char *name,
			const char *text)
{
	bool audit = auditing(reload_config(fc->rl));

	stats_inc(STAT_FLOW_CHECKED);
	stats_inc(reason_stat[r]);
	if (audit)
		stats_inc(STAT_FLOW_AUDIT_ALLOWED);
	judge(fc, recheck, qp->id, audit);
	report(fc, &c->key, qp->has_uid, qp->uid, flowdecide_reason_name(r),
	       name, text);
}

/* The flow the Initial in fc->quic starts: anew when f is a decided flow
 * checked under another DCID. NULL when refused here. */
static struct flowtab_flow *quic_flow(struct flowcheck *fc,
				      struct flowtab_flow *f,
				      const struct flowtab_key *key,
				      const struct nfq_pkt *qp, bool recheck)
{
	const struct quic_initial *qi = fc->quic;

	if (f != NULL && !f->decided)
		return f; /* the same DCID: the flow being read */
	if (f != NULL)
		flowtab_remove(fc->tab, f);
	if (!recheck && qi->dcid_len < QUIC_DCID_MIN) {
		(void)nfq_verdict(fc->q, qp->id, NF_DROP, 0);
		return NULL; /* RFC 9000 7.2; a server drops it too */
	}
	if (!admit(fc, key, qp, recheck))
		return NULL;
	f = flowtab_get(fc->tab, key, monotime_ms(), true);
	if (f == NULL) {
		flowshare_release(fc->share, key);
		stats_inc(STAT_FLOW_BUSY);
		judge(fc, recheck, qp->id, auditing(reload_config(fc->rl)));
		return NULL;
	}
	memcpy(f->tag, qi->dcid, qi->dcid_len);
	f->tag_len = qi->dcid_len;
	f->recheck = recheck;
	return f;
}

/* The length of the handshake message at p (n bytes), 0 when its
 * header is incomplete. */
static size_t hello_len(const uint8_t *p, size_t n)
{
	if (n < 4)
		return 0;
	return 4 + ((size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]);
}

/* Hold, place the CRYPTO frames, judge once the ClientHello is whole;
 * a connection let through is remembered with the stream judged. */
static void quic_read(struct flowcheck *fc, struct flowtab_flow *f,
		      const struct nfq_pkt *qp)
{
	const struct quic_initial *qi = fc->quic;
	struct quicconn *c = NULL;
	char text[TEXT_MAX];
	size_t n = 0;
	int rc;

	if (qp->has_uid && !f->has_uid) {
		f->has_uid = true;
		f->uid = qp->uid;
	}
	rc = flowtab_hold(f, qp->id);
	if (rc != 0) {
		judge(fc, f->recheck, qp->id, auditing(reload_config(fc->rl)));
		flowdecide_explain(FLOWDECIDE_UNREADABLE, WHAT_QUIC, text,
				   sizeof(text));
		finish(fc, f, FLOWDECIDE_UNREADABLE, text);
		return;
	}
	for (size_t i = 0; rc == 0 && i < qi->n_crypto; i++)
		rc = flowtab_place(fc->tab, f, qi->crypto[i].off,
				   qi->crypto[i].data, qi->crypto[i].len);
	if (rc == 0)
		rc = tlshello_parse_messages(f->buf, flowtab_prefix(f),
					     &fc->hello);
	if (rc == -EAGAIN)
		return;
	/* The stream holds the ClientHello and nothing more: no byte the
	 * server reads goes unjudged. */
	if (rc == 0 && (n = hello_len(f->buf, f->len)) != f->len)
		rc = -EBADMSG;
	if (rc == 0)
		c = quicconn_add(fc->conns, &f->key, f->tag, f->tag_len, f->buf,
				 n, fc->hello.has_name ? fc->hello.name : "",
				 monotime_ms());
	judge_hello(fc, f, rc, WHAT_QUIC,
		    fc->hello.has_name ? fc->hello.name : NULL);
	if (c != NULL && !f->accept)
		quicconn_remove(fc->conns, c);
}

/* The verdict on one packet, sent to the queue it came from (recheck).
 * A flow's first check repeats it through the
 * chain with the mark its connmark takes; a recheck never changes the
 * connmark (the flow's first connection was let through): refused, its
 * packet is dropped. */
static void judge(struct flowcheck *fc, bool recheck, uint32_t id, bool accept)
{
	int rc;

	if (!recheck) {
		verdict(fc, id, accept);
		return;
	}
	rc = accept ? nfq_verdict(fc->recheck, id, NF_REPEAT, FLOW_MARK_ACCEPT)
		    : nfq_verdict(fc->recheck, id, NF_DROP, 0);
	if (rc != 0)
		log_limited(LOG_CLASS_SETS, LOGL_WARN, SYS,
			    "cannot send a verdict: %s (the packet is "
			    "dropped)",
			    strerror(-rc));
}

static void send_held(struct flowcheck *fc, struct flowtab_flow *f, bool accept)
{
	for (size_t i = 0; i < f->n_held; i++)
		judge(fc, f->recheck, f->held[i], accept);
}
