// SPDX-License-Identifier: GPL-2.0-or-later
/* link: the parent's end takes only the frames of its vocabulary and
 * judges every verdict before the kernel sees it; the DNS process's end
 * completes its IPC_RULES by their answers, and takes its parent's close
 * as its stop. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/netfilter.h>

#include "base/ipc.h"
#include "daemon/link.h"
#include "flow/flowmark.h"

struct seen {
	uint32_t hello;
	int rules, rules_what, gates, forgets, done_status, dones;
};

static void on_hello(void *arg, uint32_t n)
{
	((struct seen *)arg)->hello = n;
}

static void on_rules(void *arg, uint32_t id, int what)
{
	struct seen *s = arg;

	s->rules = (int)id;
	s->rules_what = what;
}

static void on_gate(void *arg)
{
	((struct seen *)arg)->gates++;
}

static void on_forget(void *arg)
{
	((struct seen *)arg)->forgets++;
}

static const struct link_ops ops = {
    .hello = on_hello, .rules = on_rules, .gate = on_gate, .forget = on_forget};

struct pair {
	struct event_base *base;
	struct link *l;
	int peer;
	struct seen seen;
};

static void open_pair(struct pair *p, bool parent)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, sv),
	    0);
	p->base = event_base_new();
	assert_non_null(p->base);
	p->l = link_new(p->base, sv[0], parent, &ops, &p->seen);
	assert_non_null(p->l);
	p->peer = sv[1];
}

static void close_pair(struct pair *p)
{
	link_free(p->l);
	close(p->peer);
	event_base_free(p->base);
}

/* Send one frame from the peer (with fd when >= 0), run the loop once. */
static void feed(struct pair *p, const uint8_t *frame, int len, int fd)
{
	assert_true(len > 0);
	assert_int_equal(ipc_send(p->peer, frame, (size_t)len, fd), 0);
	event_base_loop(p->base, EVLOOP_NONBLOCK);
}

static void feed_link(struct pair *p, enum ipc_type t, uint16_t count,
		      uint32_t id, int fd)
{
	uint8_t f[IPC_HDR_SIZE];

	feed(p, f, ipc_encode_link(f, sizeof(f), t, count, id), fd);
}

static void feed_verdict(struct pair *p, uint16_t queue, uint32_t verdict,
			 uint32_t mark)
{
	uint8_t f[IPC_HDR_SIZE + 8];

	feed(p, f, ipc_encode_verdict(f, sizeof(f), queue, 7, verdict, mark),
	     -1);
}

/* Any descriptor stands in for a queue's socket: its verdict fails to
 * send (logged), which is not the DNS process's fault. */
static int some_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static void test_parent_takes_its_frames(void **state)
{
	struct pair p;
	int fd = some_fd();

	(void)state;
	open_pair(&p, true);
	feed_link(&p, IPC_HELLO, 0, 1234, -1);
	assert_int_equal(p.seen.hello, 1234);
	feed_link(&p, IPC_RULES, IPC_RULES_CHANGED, 9, -1);
	assert_int_equal(p.seen.rules, 9);
	assert_int_equal(p.seen.rules_what, IPC_RULES_CHANGED);
	feed_link(&p, IPC_NFQ, FLOW_QUEUE_NUM, 0, fd);
	feed_verdict(&p, FLOW_QUEUE_NUM, NF_REPEAT, FLOW_MARK_ACCEPT);
	feed_verdict(&p, FLOW_QUEUE_NUM, NF_REPEAT, FLOW_MARK_REJECT);
	feed_verdict(&p, FLOW_QUEUE_NUM, NF_DROP, 0);
	assert_false(link_failed(p.l));
	close(fd);
	close_pair(&p);
}

/* Each: a fresh parent end stops on it. */
static void refused(void (*send)(struct pair *p))
{
	struct pair p;

	open_pair(&p, true);
	send(&p);
	assert_true(link_failed(p.l));
	close_pair(&p);
}

static void verdict_no_queue(struct pair *p)
{
	feed_verdict(p, FLOW_QUEUE_NUM, NF_ACCEPT, 0);
}

static void verdict_other_mark(struct pair *p)
{
	int fd = some_fd();

	feed_link(p, IPC_NFQ, FLOW_QUEUE_NUM, 0, fd);
	close(fd);
	feed_verdict(p, FLOW_QUEUE_NUM, NF_REPEAT, 0x64000000);
}

static void verdict_accept_with_mark(struct pair *p)
{
	int fd = some_fd();

	feed_link(p, IPC_NFQ, FLOW_QUEUE_NUM, 0, fd);
	close(fd);
	feed_verdict(p, FLOW_QUEUE_NUM, NF_ACCEPT, FLOW_MARK_ACCEPT);
}

static void verdict_stolen(struct pair *p)
{
	int fd = some_fd();

	feed_link(p, IPC_NFQ, FLOW_QUEUE_NUM, 0, fd);
	close(fd);
	feed_verdict(p, FLOW_QUEUE_NUM, NF_STOLEN, 0);
}

static void nfq_other_queue(struct pair *p)
{
	int fd = some_fd();

	feed_link(p, IPC_NFQ, 1, 0, fd);
	close(fd);
}

static void nfq_twice(struct pair *p)
{
	int fd = some_fd();

	feed_link(p, IPC_NFQ, FLOW_QUEUE_NUM, 0, fd);
	feed_link(p, IPC_NFQ, FLOW_QUEUE_NUM, 0, fd);
	close(fd);
}

static void fd_with_hello(struct pair *p)
{
	int fd = some_fd();

	feed_link(p, IPC_HELLO, 0, 1, fd);
	close(fd);
}

static void gate_to_parent(struct pair *p)
{
	feed_link(p, IPC_GATE, 0, 0, -1);
}

static void set_frame_on_link(struct pair *p)
{
	uint8_t f[IPC_FRAME_MAX];
	struct ipc_addr a = {.addr = {.family = AF_INET, .bytes = {8, 8, 8, 8}},
			     .ttl = 60};

	feed(p, f, ipc_encode_addrs(f, sizeof(f), IPC_ADD, 1, &a, 1), -1);
}

static void oversized(struct pair *p)
{
	static uint8_t f[IPC_FRAME_MAX + 16];

	memset(f, 0, sizeof(f));
	feed(p, f, (int)sizeof(f), -1);
}

static void test_parent_refuses(void **state)
{
	(void)state;
	refused(verdict_no_queue);
	refused(verdict_other_mark);
	refused(verdict_accept_with_mark);
	refused(verdict_stolen);
	refused(nfq_other_queue);
	refused(nfq_twice);
	refused(fd_with_hello);
	refused(gate_to_parent);
	refused(set_frame_on_link);
	refused(oversized);
}

static void on_done(void *arg, int status, const char *detail)
{
	struct seen *s = arg;

	(void)detail;
	s->dones++;
	s->done_status = status;
}

static void test_child_side(void **state)
{
	struct pair p;
	uint8_t buf[IPC_FRAME_MAX + 1], f[IPC_HDR_SIZE + 4];
	struct ipc_msg m;
	const char *why = "";
	int fd = -1;
	ssize_t n;

	(void)state;
	open_pair(&p, false);
	link_rules(p.l, NULL, IPC_RULES_CHANGED, on_done, &p.seen);
	n = ipc_recv(p.peer, buf, sizeof(buf), MSG_DONTWAIT, &fd);
	assert_int_equal(n, IPC_HDR_SIZE);
	assert_int_equal(ipc_decode(buf, (size_t)n, &m, &why), 0);
	assert_int_equal(m.type, IPC_RULES);
	assert_int_equal(m.count, IPC_RULES_CHANGED);
	assert_int_equal(p.seen.dones, 0);
	/* an answer to another id completes nothing */
	feed(&p, f, ipc_encode_done(f, sizeof(f), IPC_ADD_DONE, m.id + 1, 0),
	     -1);
	assert_int_equal(p.seen.dones, 0);
	feed(&p, f, ipc_encode_done(f, sizeof(f), IPC_ADD_DONE, m.id, -EIO),
	     -1);
	assert_int_equal(p.seen.dones, 1);
	assert_int_equal(p.seen.done_status, -EIO);
	feed_link(&p, IPC_GATE, 0, 0, -1);
	feed_link(&p, IPC_FORGET, 0, 0, -1);
	assert_int_equal(p.seen.gates, 1);
	assert_int_equal(p.seen.forgets, 1);
	assert_false(link_failed(p.l));
	/* the parent's close is a stop, not a failure */
	close(p.peer);
	p.peer = -1;
	event_base_loop(p.base, EVLOOP_NONBLOCK);
	assert_false(link_failed(p.l));
	link_free(p.l);
	event_base_free(p.base);
}

static void test_child_refuses_requests(void **state)
{
	struct pair p;

	(void)state;
	open_pair(&p, false);
	feed_link(&p, IPC_RULES, 0, 1, -1);
	assert_true(link_failed(p.l));
	close_pair(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parent_takes_its_frames),
	    cmocka_unit_test(test_parent_refuses),
	    cmocka_unit_test(test_child_side),
	    cmocka_unit_test(test_child_refuses_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
