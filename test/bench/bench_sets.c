// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_sets: the sets module against the real kernel, as a benchmark and
 * as the driver of test/e2e/test_sets_kernel.sh. Run it as root inside a
 * network namespace of its own (netlink_adds.sh and the e2e test do).
 *
 *   bench_sets [-n N] [-b PER_CALL] [-w WINDOW] [-t TTL] [--set4 S]
 *              [--set6 S] [--no-create]
 *	adds N distinct addresses (198.18.0.0/15 first, then 2001:db8::/32)
 *	through sets_add, PER_CALL addresses per call, WINDOW calls
 *	outstanding, and prints adds/s to completion (every add acked).
 *   bench_sets --print-restore [-n N] [-t TTL] [--set4 S] [--set6 S]
 *	prints the same addresses as `ipset restore` input.
 *   bench_sets --check create S4 S6 MAXELEM
 *   bench_sets --check check S4 S6
 *   bench_sets --check destroy S4 S6
 *   bench_sets --check add S4 S6 TTLMIN TTLMAX "ADDR/TTL ..." ...
 *	each quoted argument is one sets_add call, run one after the
 *	other in one process (so the never-shorten map carries over);
 *	prints "call K: status S added A skipped B" per call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "base/log.h"
#include "sets/sets.h"
#include "sets/setsadm.h"
#include "base/stats.h"

#define V4_COUNT 131072u /* 198.18.0.0/15 */

struct bench {
	struct event_base *base;
	struct sets *sets;
	struct dns_addr *addrs;
	size_t n, per_call, next, outstanding;
	size_t done_calls, failed_calls;
	int first_status;
};

static void make_addr(size_t i, uint32_t ttl, struct dns_addr *out);
static int issue(struct bench *b);
static void bench_done(void *arg, int status);
static const char *status_name(int status);
static int run_bench(int argc, char **argv);
static int run_check(int argc, char **argv);
static int check_add(int argc, char **argv);
static void check_done(void *arg, int status);
static double mono(void);

static void make_addr(size_t i, uint32_t ttl, struct dns_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->ttl = ttl;
	if (i < V4_COUNT) {
		uint32_t a = htonl(0xc6120000u + (uint32_t)i);

		out->addr.family = AF_INET;
		memcpy(out->addr.bytes, &a, 4);
	} else {
		uint32_t a = htonl((uint32_t)(i - V4_COUNT + 1));

		out->addr.family = AF_INET6;
		out->addr.bytes[0] = 0x20;
		out->addr.bytes[1] = 0x01;
		out->addr.bytes[2] = 0x0d;
		out->addr.bytes[3] = 0xb8;
		memcpy(out->addr.bytes + 12, &a, 4);
	}
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *status_name(int status)
{
	switch (status) {
	case 0:
		return "0";
	case -ENOENT:
		return "ENOENT";
	case -ENOSPC:
		return "ENOSPC";
	case -EIO:
		return "EIO";
	}
	return "other";
}

static int issue(struct bench *b)
{
	size_t k = b->n - b->next;

	if (k > b->per_call)
		k = b->per_call;
	if (k == 0)
		return 0;
	if (sets_add(b->sets, b->addrs + b->next, k, bench_done, b) < 0)
		return -ENOMEM;
	b->next += k;
	b->outstanding++;
	return 0;
}

static void bench_done(void *arg, int status)
{
	struct bench *b = arg;

	b->outstanding--;
	b->done_calls++;
	if (status != 0 && b->failed_calls++ == 0)
		b->first_status = status;
	if (issue(b) < 0 || (b->outstanding == 0 && b->next == b->n))
		event_base_loopbreak(b->base);
}

static int run_bench(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"set4", required_argument, NULL, '4'},
	    {"set6", required_argument, NULL, '6'},
	    {"no-create", no_argument, NULL, 'C'},
	    {"print-restore", no_argument, NULL, 'P'},
	    {NULL, 0, NULL, 0},
	};
	struct bench b = {.n = 200000, .per_call = 16};
	struct sets_params p = {.set4 = "dfbench4",
				.set6 = "dfbench6",
				.ttl_min = 60,
				.ttl_max = 86400};
	size_t window = 64, i;
	uint32_t ttl = 3600;
	bool create = true, print = false;
	char err[512];
	double t0, t1;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "n:b:w:t:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			b.n = strtoul(optarg, NULL, 10);
			break;
		case 'b':
			b.per_call = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			window = strtoul(optarg, NULL, 10);
			break;
		case 't':
			ttl = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case '4':
			p.set4 = optarg;
			break;
		case '6':
			p.set6 = optarg;
			break;
		case 'C':
			create = false;
			break;
		case 'P':
			print = true;
			break;
		default:
			return 2;
		}
	}
	if (b.n == 0 || b.per_call == 0 || window == 0 ||
	    b.n > V4_COUNT + 0xfffffffful)
		return 2;
	if (print) {
		struct dns_addr a;
		char txt[INET6_ADDRSTRLEN];

		for (i = 0; i < b.n; i++) {
			make_addr(i, ttl, &a);
			inet_ntop(a.addr.family, a.addr.bytes, txt,
				  sizeof(txt));
			printf("add %s %s timeout %u\n",
			       a.addr.family == AF_INET ? p.set4 : p.set6, txt,
			       sets_timeout(ttl, p.ttl_min, p.ttl_max));
		}
		return 0;
	}
	if (create && setsadm_create(p.set4, p.set6, (uint32_t)b.n + 1024, err,
				     sizeof(err)) < 0) {
		log_err("bench", "%s", err);
		return 1;
	}
	b.addrs = calloc(b.n, sizeof(*b.addrs));
	b.base = event_base_new();
	if (b.addrs == NULL || b.base == NULL)
		goto out;
	for (i = 0; i < b.n; i++)
		make_addr(i, ttl, &b.addrs[i]);
	b.sets = sets_open(b.base, &p, err, sizeof(err));
	if (b.sets == NULL) {
		log_err("bench", "%s", err);
		goto out;
	}
	t0 = mono();
	for (i = 0; i < window; i++)
		if (issue(&b) < 0)
			goto out;
	event_base_dispatch(b.base);
	t1 = mono();
	printf("sets_add: %zu addresses, %zu per call, %zu calls in flight: "
	       "%.3f s, %.0f adds/s; acked %llu, failed calls %zu (%s)\n",
	       b.n, b.per_call, window, t1 - t0, (double)b.n / (t1 - t0),
	       (unsigned long long)stats_get(STAT_ADDR_ADDED), b.failed_calls,
	       status_name(b.first_status));
	rc = b.failed_calls == 0 && b.next == b.n ? 0 : 1;
out:
	sets_close(b.sets);
	if (b.base != NULL)
		event_base_free(b.base);
	free(b.addrs);
	return rc;
}

struct check_call {
	struct event_base *base;
	int status;
	bool done;
};

static void check_done(void *arg, int status)
{
	struct check_call *cc = arg;

	cc->status = status;
	cc->done = true;
	event_base_loopbreak(cc->base);
}

static int check_add(int argc, char **argv)
{
	struct sets_params p = {0};
	struct event_base *base = event_base_new();
	struct sets *s = NULL;
	struct dns_addr addrs[64];
	char err[512];
	int i, rc = 0;

	if (argc < 5 || base == NULL)
		return 2;
	p.set4 = argv[0];
	p.set6 = argv[1];
	p.ttl_min = (uint32_t)strtoul(argv[2], NULL, 10);
	p.ttl_max = (uint32_t)strtoul(argv[3], NULL, 10);
	s = sets_open(base, &p, err, sizeof(err));
	if (s == NULL) {
		printf("open: %s\n", err);
		rc = 1;
		goto out;
	}
	for (i = 4; i < argc; i++) {
		struct check_call cc = {.base = base};
		char *save = NULL, *tok, *list = argv[i];
		uint64_t added = stats_get(STAT_ADDR_ADDED);
		uint64_t skipped = stats_get(STAT_ADDR_SKIPPED);
		size_t n = 0;

		for (tok = strtok_r(list, " ", &save); tok && n < 64;
		     tok = strtok_r(NULL, " ", &save), n++) {
			char *slash = strchr(tok, '/');

			memset(&addrs[n], 0, sizeof(addrs[n]));
			if (slash != NULL) {
				*slash = '\0';
				addrs[n].ttl =
				    (uint32_t)strtoul(slash + 1, NULL, 10);
			}
			addrs[n].addr.family =
			    strchr(tok, ':') ? AF_INET6 : AF_INET;
			if (inet_pton(addrs[n].addr.family, tok,
				      addrs[n].addr.bytes) != 1) {
				printf("bad address %s\n", tok);
				rc = 2;
				goto out;
			}
		}
		if (sets_add(s, addrs, n, check_done, &cc) < 0 || cc.done) {
			printf("call %d: sets_add failed or done early\n",
			       i - 3);
			rc = 1;
			goto out;
		}
		event_base_dispatch(base);
		printf("call %d: status %s added %llu skipped %llu\n", i - 3,
		       status_name(cc.status),
		       (unsigned long long)(stats_get(STAT_ADDR_ADDED) - added),
		       (unsigned long long)(stats_get(STAT_ADDR_SKIPPED) -
					    skipped));
		if (!cc.done || cc.status != 0)
			rc = 1;
	}
out:
	sets_close(s);
	event_base_free(base);
	return rc;
}

static int run_check(int argc, char **argv)
{
	char err[512] = "";
	int r;

	if (argc < 3)
		return 2;
	if (strcmp(argv[0], "add") == 0)
		return check_add(argc - 1, argv + 1);
	if (strcmp(argv[0], "create") == 0 && argc == 4)
		r = setsadm_create(argv[1], argv[2],
				   (uint32_t)strtoul(argv[3], NULL, 10), err,
				   sizeof(err));
	else if (strcmp(argv[0], "check") == 0)
		r = setsadm_check(argv[1], argv[2], err, sizeof(err));
	else if (strcmp(argv[0], "destroy") == 0)
		r = setsadm_destroy(argv[1], argv[2], err, sizeof(err));
	else
		return 2;
	printf("%s: %d%s%s\n", argv[0], r, r ? " " : "", r ? err : "");
	return r == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	log_setup(LOGL_INFO, LOG_FORMAT_TEXT, false);
	if (argc > 1 && strcmp(argv[1], "--check") == 0)
		return run_check(argc - 2, argv + 2);
	return run_bench(argc, argv);
}
