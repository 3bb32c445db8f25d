// SPDX-License-Identifier: GPL-2.0-or-later
/* link: the channel of the two processes' other messages (see link.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <linux/netfilter.h>

#include "base/log.h"
#include "daemon/link.h"
#include "daemon/nfq.h"
#include "daemon/selftest.h"
#include "flow/flowmark.h"

#define SYS	       "split"
#define LINK_BURST     64
#define LINK_QUEUES    2
#define LINK_RULES_MAX 8

struct pending {
	uint32_t id;
	guard_applied_fn done;
	void *arg;
};

struct link {
	struct event_base *base;
	int fd;
	bool parent;
	bool failed;
	struct event *ev;
	struct link_ops ops;
	void *arg;
	int nfq_fd[LINK_QUEUES];
	uint16_t nfq_num[LINK_QUEUES];
	struct pending rules[LINK_RULES_MAX];
	uint32_t next_id;
	uint8_t buf[IPC_FRAME_MAX + 1];
};

static void on_read(evutil_socket_t fd, short what, void *arg);
static int take(struct link *l, const struct ipc_msg *m, int passed);
static int take_nfq(struct link *l, const struct ipc_msg *m, int passed);
static int take_verdict(struct link *l, const struct ipc_msg *m);
static void take_done(struct link *l, const struct ipc_msg *m);
static void stop(struct link *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct link *link_new(struct event_base *base, int fd, bool parent,
		      const struct link_ops *ops, void *arg)
{
	struct link *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		close(fd);
		return NULL;
	}
	l->base = base;
	l->fd = fd;
	l->parent = parent;
	l->ops = *ops;
	l->arg = arg;
	for (size_t i = 0; i < LINK_QUEUES; i++)
		l->nfq_fd[i] = -1;
	l->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_read, l);
	if (l->ev == NULL || event_add(l->ev, NULL) != 0) {
		link_free(l);
		return NULL;
	}
	return l;
}

int link_fd(const struct link *l)
{
	return l->fd;
}

int link_send(struct link *l, enum ipc_type type, uint32_t n)
{
	uint8_t frame[IPC_HDR_SIZE];
	int len = ipc_encode_link(frame, sizeof(frame), type, 0, n);

	return len < 0 ? len : ipc_send(l->fd, frame, (size_t)len, -1);
}

int link_reply(struct link *l, uint32_t id, int status)
{
	uint8_t frame[IPC_HDR_SIZE + 4];
	int len =
	    ipc_encode_done(frame, sizeof(frame), IPC_ADD_DONE, id, status);

	return len < 0 ? len : ipc_send(l->fd, frame, (size_t)len, -1);
}

void link_rules(void *arg, const struct config *cfg, int what,
		guard_applied_fn done, void *done_arg)
{
	struct link *l = arg;
	uint8_t frame[IPC_HDR_SIZE];
	struct pending *p = NULL;
	uint32_t id = ++l->next_id;
	int len, rc;

	(void)cfg; /* the parent reads the file itself */
	for (size_t i = 0; done != NULL && i < LINK_RULES_MAX; i++) {
		if (l->rules[i].done == NULL) {
			p = &l->rules[i];
			break;
		}
	}
	len = ipc_encode_link(frame, sizeof(frame), IPC_RULES, (uint16_t)what,
			      id);
	rc = len < 0 ? len : ipc_send(l->fd, frame, (size_t)len, -1);
	if (done == NULL)
		return;
	if (rc == 0 && p == NULL)
		rc = -EBUSY;
	if (rc != 0) {
		done(done_arg, rc, "the privileged parent cannot be asked");
		return;
	}
	*p = (struct pending){.id = id, .done = done, .arg = done_arg};
}

bool link_failed(const struct link *l)
{
	return l != NULL && l->failed;
}

void link_free(struct link *l)
{
	if (l == NULL)
		return;
	if (l->ev != NULL)
		event_free(l->ev);
	for (size_t i = 0; i < LINK_QUEUES; i++) {
		if (l->nfq_fd[i] >= 0)
			close(l->nfq_fd[i]);
	}
	close(l->fd);
	free(l);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct link *l = arg;
	struct ipc_msg m;
	const char *why = "";

	(void)what;
	for (int i = 0; i < LINK_BURST && !l->failed; i++) {
		int passed = -1;
		ssize_t n =
		    ipc_recv(fd, l->buf, sizeof(l->buf), MSG_DONTWAIT, &passed);

		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return;
		if (n == 0) {
			/* the parent: split.c says how the DNS process ended;
			 * the DNS process: its parent stops (a parent that
			 * died kills it by PR_SET_PDEATHSIG) */
			log_debug(SYS, "the %s closed the link channel",
				  l->parent ? "DNS process" : "parent");
			l->failed = l->parent;
			event_del(l->ev);
			event_base_loopbreak(l->base);
			return;
		}
		if (n <= 0) {
			if (passed >= 0)
				close(passed);
			stop(l, "the %s closed the link channel (%s)",
			     l->parent ? "DNS process" : "privileged parent",
			     n == 0 ? "it exited or was killed"
				    : strerror((int)-n));
			return;
		}
		if ((size_t)n > IPC_FRAME_MAX ||
		    ipc_decode(l->buf, (size_t)n, &m, &why) != 0) {
			if (passed >= 0)
				close(passed);
			stop(l,
			     "a malformed frame on the link channel (%zd "
			     "bytes): %s",
			     n,
			     (size_t)n > IPC_FRAME_MAX ? "oversized frame"
						       : why);
			return;
		}
		if (take(l, &m, passed) != 0)
			return;
	}
}

/* One decoded frame: 0, or -1 (stopped). passed is taken over. */
static int take(struct link *l, const struct ipc_msg *m, int passed)
{
	if (m->type == IPC_NFQ && l->parent)
		return take_nfq(l, m, passed);
	if (passed >= 0) {
		close(passed);
		stop(l, "a descriptor with a frame of type %d", (int)m->type);
		return -1;
	}
	if (l->parent && m->type == IPC_VERDICT)
		return take_verdict(l, m);
	if (l->parent && m->type == IPC_HELLO && l->ops.hello != NULL)
		l->ops.hello(l->arg, m->id);
	else if (l->parent && m->type == IPC_RULES && l->ops.rules != NULL)
		l->ops.rules(l->arg, m->id, m->count);
	else if (!l->parent && m->type == IPC_GATE && l->ops.gate != NULL)
		l->ops.gate(l->arg);
	else if (!l->parent && m->type == IPC_FORGET && l->ops.forget != NULL)
		l->ops.forget(l->arg);
	else if (!l->parent && m->type == IPC_ADD_DONE)
		take_done(l, m);
	else {
		stop(l, "a frame of type %d the %s does not take", (int)m->type,
		     l->parent ? "parent" : "DNS process");
		return -1;
	}
	return 0;
}

/* A queue's socket, each queue once, before any verdict. */
static int take_nfq(struct link *l, const struct ipc_msg *m, int passed)
{
	uint16_t num = m->count;

	if (passed < 0 ||
	    (num != FLOW_QUEUE_NUM && num != FLOW_QUEUE_RECHECK)) {
		if (passed >= 0)
			close(passed);
		stop(l, "an IPC_NFQ frame without a socket or for queue %u",
		     (unsigned)num);
		return -1;
	}
	for (size_t i = 0; i < LINK_QUEUES; i++) {
		if (l->nfq_fd[i] >= 0 && l->nfq_num[i] == num)
			break;
		if (l->nfq_fd[i] < 0) {
			l->nfq_fd[i] = passed;
			l->nfq_num[i] = num;
			if (m->id != 0) /* a fact, for the environment line */
				selftest_fact(
				    "NFQUEUE %u: the kernel gives no conntrack "
				    "ids (it needs CONFIG_NETFILTER_NETLINK_"
				    "GLUE_CT and the nf_conntrack_netlink "
				    "module "
				    "loaded): a new connection on a decided "
				    "flow's four-tuple waits until its verdict "
				    "is forgotten",
				    (unsigned)num);
			return 0;
		}
	}
	close(passed);
	stop(l, "a second socket for queue %u", (unsigned)num);
	return -1;
}

/* A verdict the name check may give, on a queue it was given. */
static int take_verdict(struct link *l, const struct ipc_msg *m)
{
	bool ok = m->verdict == NF_ACCEPT || m->verdict == NF_DROP ||
		  (m->verdict == NF_REPEAT &&
		   (m->mark == FLOW_MARK_ACCEPT ||
		    m->mark == FLOW_MARK_REJECT || m->mark == FLOW_MARK_GUARD));
	int rc;

	if (!ok || (m->verdict != NF_REPEAT && m->mark != 0)) {
		stop(l, "refusing the DNS process's verdict %u with mark %#x",
		     (unsigned)m->verdict, (unsigned)m->mark);
		return -1;
	}
	for (size_t i = 0; i < LINK_QUEUES; i++) {
		if (l->nfq_fd[i] < 0 || l->nfq_num[i] != m->count)
			continue;
		rc = nfq_verdict_on(l->nfq_fd[i], m->count, m->id, m->verdict,
				    m->mark);
		if (rc != 0)
			log_limited(LOG_CLASS_SETS, LOGL_WARN, "namecheck",
				    "cannot send a verdict: %s (the packet is "
				    "dropped)",
				    strerror(-rc));
		return 0;
	}
	stop(l, "a verdict on queue %u, whose socket it never sent",
	     (unsigned)m->count);
	return -1;
}

static void take_done(struct link *l, const struct ipc_msg *m)
{
	for (size_t i = 0; i < LINK_RULES_MAX; i++) {
		struct pending p = l->rules[i];

		if (p.done == NULL || p.id != m->id)
			continue;
		l->rules[i].done = NULL;
		p.done(p.arg, m->status,
		       m->status == 0 ? "" : strerror(-m->status));
		return;
	}
}

static void stop(struct link *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err(SYS, "%s: stopping; the fence stays in place", msg);
	l->failed = true;
	event_del(l->ev);
	event_base_loopbreak(l->base);
}
