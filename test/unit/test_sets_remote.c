// SPDX-License-Identifier: GPL-2.0-or-later
/* The sets module's remote transport (sets_open_remote), with the test
 * playing the privileged parent on the other end of the channel: an add
 * goes out as one IPC_ADD with the clamped timeouts and completes only
 * when its IPC_ADD_DONE comes back (never before: invariant 2 across
 * the split), after which the same answer is covered and sends nothing;
 * a batch longer than one frame completes once, after its last frame's
 * answer, whatever their order; dels go as IPC_DEL, sets_shorten's adds
 * as IPC_SHORTEN; the parent's -ENOENT is the batch's and clears the
 * map; and once the parent is gone, what was in flight and every later
 * change fail with -EIO instead of waiting or completing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "base/ipc.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "sets/sets.h"
#include "fixtures.h"

struct done {
	int n, status;
};

struct lab {
	struct event_base *base;
	struct sets *s;
	int parent;
};

static void on_done(void *arg, int status)
{
	struct done *d = arg;

	d->n++;
	d->status = status;
}

static void lab_open_with(struct lab *l, const struct sets_params *p);

static void lab_open(struct lab *l)
{
	struct sets_params p = {
	    .set4 = "t4", .set6 = "t6", .ttl_min = 5, .ttl_max = 600};

	lab_open_with(l, &p);
}

static void lab_open_with(struct lab *l, const struct sets_params *pp)
{
	struct sets_params p = *pp;
	int sv[2];
	char err[256];

	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	l->base = event_base_new();
	l->s = sets_open_remote(l->base, &p, sv[0], err, sizeof(err));
	if (l->s == NULL)
		fail_msg("sets_open_remote: %s", err);
	l->parent = sv[1];
}

static void lab_close(struct lab *l)
{
	sets_close(l->s);
	if (l->parent >= 0)
		close(l->parent);
	event_base_free(l->base);
}

static void spin(struct lab *l)
{
	for (int i = 0; i < 4; i++)
		event_base_loop(l->base, EVLOOP_NONBLOCK);
}

/* The next frame the parent got; fails when there is none. */
static struct ipc_msg *next_frame(struct lab *l)
{
	static struct ipc_msg m;
	uint8_t buf[IPC_FRAME_MAX + 1];
	const char *why = "";
	int fd = -1;
	ssize_t n = ipc_recv(l->parent, buf, sizeof(buf), MSG_DONTWAIT, &fd);

	if (n <= 0)
		fail_msg("no frame at the parent (%zd)", n);
	if (ipc_decode(buf, (size_t)n, &m, &why) != 0)
		fail_msg("the parent got a malformed frame: %s", why);
	return &m;
}

static bool no_frame(struct lab *l)
{
	uint8_t buf[16];

	return recv(l->parent, buf, sizeof(buf), MSG_DONTWAIT) < 0 &&
	       errno == EAGAIN;
}

static void answer(struct lab *l, uint32_t id, int32_t status)
{
	uint8_t frame[IPC_HDR_SIZE + 4];
	int len =
	    ipc_encode_done(frame, sizeof(frame), IPC_ADD_DONE, id, status);

	assert_int_equal(ipc_send(l->parent, frame, (size_t)len, -1), 0);
}

/* One add of a, answered by the parent with 0. */
static void add_acked(struct lab *l, const struct dns_addr *a, struct done *d)
{
	assert_int_equal(sets_add(l->s, a, 1, on_done, d), 0);
	spin(l);
	answer(l, next_frame(l)->id, 0);
	spin(l);
}

static void test_add_waits_for_the_parent(void **state)
{
	struct lab l;
	struct dns_addr a[2] = {{.addr = fixture_v4(10), .ttl = 1},
				{.addr = fixture_v4(11), .ttl = 100000}};
	struct done d = {0};
	struct ipc_msg *m;

	(void)state;
	lab_open(&l);
	assert_int_equal(sets_add(l.s, a, 2, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_int_equal(m->type, IPC_ADD);
	assert_int_equal(m->count, 2);
	assert_true(netaddr_equal(&m->addrs[0].addr, &a[0].addr));
	assert_int_equal(m->addrs[0].ttl, 5);	/* ttl.min */
	assert_int_equal(m->addrs[1].ttl, 600); /* ttl.max */
	assert_int_equal(d.n, 0); /* not before the parent's answer */
	assert_int_equal(sets_inflight(l.s), 2);
	answer(&l, m->id, 0);
	spin(&l);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(sets_inflight(l.s), 0);
	/* the same answer again: covered, nothing sent */
	assert_true(sets_covered(l.s, a, 2));
	assert_int_equal(sets_add(l.s, a, 2, on_done, &d), 0);
	spin(&l);
	assert_int_equal(d.n, 2);
	assert_true(no_frame(&l));
	lab_close(&l);
}

/* The DNS process's map after the guard recreated the sets (IPC_FORGET):
 * what it trusted is void, the next answer is sent. */
static void test_forget_sends_again(void **state)
{
	struct lab l;
	struct dns_addr a = {.addr = fixture_v4(12), .ttl = 60};
	struct done d = {0};
	size_t v4, v6;

	(void)state;
	lab_open(&l);
	add_acked(&l, &a, &d);
	assert_true(sets_covered(l.s, &a, 1));
	sets_forget(l.s);
	sets_entries(l.s, &v4, &v6);
	assert_int_equal(v4, 0);
	assert_false(sets_covered(l.s, &a, 1));
	assert_int_equal(sets_add(l.s, &a, 1, on_done, &d), 0);
	spin(&l);
	assert_int_equal(next_frame(&l)->type, IPC_ADD);
	lab_close(&l);
}

static uint64_t floor_until;
static struct netaddr floor_addr;

static uint64_t test_floor(void *arg, const struct netaddr *a, uint64_t now)
{
	(void)arg;
	(void)now;
	return netaddr_equal(a, &floor_addr) ? floor_until : 0;
}

/* The floor (prov's latest link for the address) is what an add sends
 * when its own TTL asks for less, whatever the window remembers: a
 * shorter answer past the window never shortens the entry. */
static void test_floor_keeps_the_longer_expiry(void **state)
{
	struct lab l;
	struct dns_addr a = {.addr = fixture_v4(13), .ttl = 30};
	struct dns_addr b = {.addr = fixture_v4(14), .ttl = 30};
	struct done d = {0};
	struct ipc_msg *m;

	(void)state;
	lab_open(&l);
	floor_addr = a.addr;
	floor_until = monotime_s() + 500;
	sets_set_floor(l.s, test_floor, NULL);
	assert_int_equal(sets_add(l.s, &a, 1, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_true(m->addrs[0].ttl >= 499 && m->addrs[0].ttl <= 500);
	answer(&l, m->id, 0);
	spin(&l);
	/* an address without a floor asks for its own */
	assert_int_equal(sets_add(l.s, &b, 1, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_int_equal(m->addrs[0].ttl, 30);
	answer(&l, m->id, 0);
	spin(&l);
	/* the window forgot both (as after SETS_FRESH_SECONDS): the floor
	 * still holds a */
	sets_forget(l.s);
	assert_int_equal(sets_add(l.s, &a, 1, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_true(m->addrs[0].ttl >= 499 && m->addrs[0].ttl <= 500);
	answer(&l, m->id, 0);
	spin(&l);
	/* without a floor the add asks for its own TTL again */
	sets_set_floor(l.s, NULL, NULL);
	sets_forget(l.s);
	assert_int_equal(sets_add(l.s, &a, 1, on_done, &d), 0);
	spin(&l);
	assert_int_equal(next_frame(&l)->addrs[0].ttl, 30);
	assert_int_equal(d.n, 3);
	lab_close(&l);
}

static void test_long_batch_in_frames(void **state)
{
	struct lab l;
	struct dns_addr a[200];
	struct done d = {0};
	uint32_t id1, id2;
	struct ipc_msg *m;

	(void)state;
	for (size_t i = 0; i < 200; i++) {
		a[i].addr = fixture_v4(100 + (uint32_t)i);
		a[i].ttl = 60;
	}
	lab_open(&l);
	assert_int_equal(sets_add(l.s, a, 200, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_int_equal(m->count, IPC_ADD_MAX);
	id1 = m->id;
	m = next_frame(&l);
	assert_int_equal(m->count, 200 - IPC_ADD_MAX);
	id2 = m->id;
	assert_int_equal(id2, id1 + IPC_ADD_MAX);
	answer(&l, id2, 0);
	spin(&l);
	assert_int_equal(d.n, 0);
	answer(&l, id1, 0);
	spin(&l);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	lab_close(&l);
}

static void test_del_and_shorten_frames(void **state)
{
	struct lab l;
	struct netaddr a = fixture_v4(20);
	uint64_t exp = monotime_s() + 30;
	struct done d = {0};
	struct ipc_msg *m;

	(void)state;
	lab_open(&l);
	assert_int_equal(sets_del(l.s, &a, 1, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_int_equal(m->type, IPC_DEL);
	assert_int_equal(m->addrs[0].ttl, 0);
	answer(&l, m->id, 0);
	assert_int_equal(sets_shorten(l.s, &a, &exp, 1, on_done, &d), 0);
	spin(&l);
	assert_int_equal(d.n, 1);
	m = next_frame(&l);
	assert_int_equal(m->type, IPC_SHORTEN);
	assert_true(m->addrs[0].ttl >= 29 && m->addrs[0].ttl <= 30);
	answer(&l, m->id, 0);
	spin(&l);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.status, 0);
	lab_close(&l);
}

/* With client sets ("bind": "client"): the addresses go as one IPC_ADD,
 * each client's entry of each address of its family as IPC_PAIR records
 * (the parent expands the ports), and the batch completes after both
 * frames' answers, whatever their order. A covered address sends no
 * IPC_ADD again, but its client entries always go. */
static void test_client_entries_in_pair_frames(void **state)
{
	struct sets_params p = {.set4 = "t4",
				.set6 = "t6",
				.ttl_min = 5,
				.ttl_max = 600,
				.client4 = "t4-client",
				.client6 = "t6-client"};
	struct dns_addr a[2] = {{.addr = fixture_v4(40), .ttl = 60},
				{.ttl = 60}};
	struct netaddr c[2] = {fixture_v4(90), fixture_v4(91)};
	struct done d = {0};
	struct ipc_msg *m;
	uint32_t add_id, pair_id;
	struct lab l;

	(void)state;
	assert_int_equal(netaddr_parse("2001:db8::41", &a[1].addr), 0);
	lab_open_with(&l, &p);
	assert_true(sets_has_clients(l.s));
	assert_int_equal(sets_add_for(l.s, a, 2, c, 2, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_int_equal(m->type, IPC_ADD);
	assert_int_equal(m->count, 1); /* a[0], then its client entries */
	add_id = m->id;
	m = next_frame(&l);
	assert_int_equal(m->type, IPC_PAIR);
	assert_int_equal(m->count, 2);
	assert_true(netaddr_equal(&m->pairs[0].client, &c[0]));
	assert_true(netaddr_equal(&m->pairs[1].client, &c[1]));
	assert_true(netaddr_equal(&m->pairs[0].addr, &a[0].addr));
	assert_int_equal(m->pairs[0].ttl, 60);
	pair_id = m->id;
	m = next_frame(&l); /* a[1]: no IPv6 client, no pair */
	assert_int_equal(m->type, IPC_ADD);
	assert_int_equal(m->count, 1);
	assert_true(no_frame(&l));
	answer(&l, m->id, 0);
	answer(&l, add_id, 0);
	spin(&l);
	assert_int_equal(d.n, 0); /* the client entries are not in yet */
	answer(&l, pair_id, 0);
	spin(&l);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	/* the same answer to one client: the address is covered, its
	 * client entry still goes, and the batch waits for it */
	assert_int_equal(sets_add_for(l.s, a, 1, &c[1], 1, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	assert_int_equal(m->type, IPC_PAIR);
	assert_int_equal(m->count, 1);
	assert_true(no_frame(&l));
	assert_int_equal(d.n, 1);
	answer(&l, m->id, -ENOENT); /* the client set is gone */
	spin(&l);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.status, -ENOENT);
	lab_close(&l);
}

static void test_parent_status_and_death(void **state)
{
	struct lab l;
	struct dns_addr a = {.addr = fixture_v4(30), .ttl = 60};
	struct dns_addr b = {.addr = fixture_v4(31), .ttl = 60};
	struct done d = {0}, e = {0};
	size_t v4, v6;
	struct ipc_msg *m;

	(void)state;
	lab_open(&l);
	add_acked(&l, &a, &d);
	sets_entries(l.s, &v4, &v6);
	assert_int_equal(v4, 1);
	/* the set is missing: the batch's status, the map cleared */
	assert_int_equal(sets_add(l.s, &b, 1, on_done, &d), 0);
	spin(&l);
	m = next_frame(&l);
	answer(&l, m->id, -ENOENT);
	spin(&l);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.status, -ENOENT);
	sets_entries(l.s, &v4, &v6);
	assert_int_equal(v4, 0);
	/* the parent dies with an add in flight: it fails, and so does
	 * every later one */
	assert_int_equal(sets_add(l.s, &a, 1, on_done, &e), 0);
	spin(&l);
	(void)next_frame(&l);
	close(l.parent);
	l.parent = -1;
	spin(&l);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.status, -EIO);
	assert_int_equal(sets_add(l.s, &b, 1, on_done, &e), 0);
	spin(&l);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.status, -EIO);
	assert_false(sets_covered(l.s, &b, 1));
	lab_close(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_waits_for_the_parent),
	    cmocka_unit_test(test_forget_sends_again),
	    cmocka_unit_test(test_floor_keeps_the_longer_expiry),
	    cmocka_unit_test(test_long_batch_in_frames),
	    cmocka_unit_test(test_del_and_shorten_frames),
	    cmocka_unit_test(test_parent_status_and_death),
	    cmocka_unit_test(test_client_entries_in_pair_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
