// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for the privileged parent's frame reader
 * (setwriter_judge: ipc_decode, then invariants 3 and 5 on every
 * address of an add): any bytes are refused or are one IPC_ADD whose
 * addresses all may enter a set, one IPC_DEL, one IPC_SHORTEN or one
 * IPC_SOCKET of UDP or TCP over IPv4 or IPv6; an
 * accepted frame is exactly what ipc_encode_addrs writes for what was
 * read (one frame, one meaning); and a shorten's every address, against
 * an entry known or not, never lengthens a known entry and never puts an
 * address the config refuses, or a timeout past ttl.max, into a set.
 * The same bytes are judged again under a forward-scope config with the
 * client sets, where one IPC_PAIR is accepted too: its every answered
 * address may enter a set, each client is of its address's family, no
 * record lacks a timeout, and it is what ipc_encode_pairs writes; the
 * output-scope config refuses every IPC_PAIR. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/ipc.h"
#include "config/config.h"
#include "daemon/setwriter.h"
#include "resolve/admit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check_shorten(const struct ipc_addr *a);

static const char CONFIG[] =
    "{\"listen\": [\"127.0.0.1:53\"], \"upstreams\": [\"198.18.0.1\", "
    "\"[2001:db8::1]\"], \"allow\": [\"a.test\"], \"allow_cidrs\": "
    "[\"10.1.0.0/16\"]}";

static const char FORWARD[] =
    "{\"scope\": \"forward\", \"interfaces\": [\"br0\"], \"listen\": "
    "[\"172.30.0.1:53\"], \"upstreams\": [\"198.18.0.1\", "
    "\"[2001:db8::1]\"], \"allow\": [\"a.test\"], \"allow_cidrs\": "
    "[\"10.1.0.0/16\"]}";

static struct config *parse(const char *text)
{
	struct config_env env = {NULL, NULL, "/nonexistent/resolv.conf", NULL,
				 NULL};
	struct config *c = NULL;
	char err[256];

	if (config_parse(text, strlen(text), &env, &c, err, sizeof(err)))
		abort();
	return c;
}

static const struct config *config(void)
{
	static struct config *c;

	if (c == NULL)
		c = parse(CONFIG);
	return c;
}

static const struct config *config_forward(void)
{
	static struct config *c;

	if (c == NULL)
		c = parse(FORWARD);
	if (!config_client_sets(c))
		abort();
	return c;
}

/* The forward config's judgement of the same bytes: a pair frame only
 * there, and then every record as the file's note says. */
static void check_forward(const uint8_t *data, size_t size, int out_r)
{
	static struct ipc_msg m;
	static uint8_t again[IPC_FRAME_MAX];
	char why[256];
	int r =
	    setwriter_judge(config_forward(), data, size, &m, why, sizeof(why));
	int len;

	if (r != 0) {
		if ((r != -EINVAL && r != -EPERM) || why[0] == '\0')
			abort();
		return;
	}
	if (m.type != IPC_PAIR)
		return;
	if (out_r == 0 || m.count == 0 || m.count > IPC_PAIR_MAX)
		abort();
	for (size_t i = 0; i < m.count; i++) {
		if (admit_check(config_forward(), &m.pairs[i].addr) !=
			ADMIT_OK ||
		    m.pairs[i].client.family != m.pairs[i].addr.family ||
		    m.pairs[i].ttl == 0)
			abort();
	}
	len = ipc_encode_pairs(again, sizeof(again), m.id, m.pairs, m.count);
	if (len < 0 || (size_t)len != size || memcmp(again, data, size) != 0)
		abort();
}

/* Against no entry, an expired one, and entries of 1 s and of the
 * record's own time left: never longer than the entry, never an add of
 * what the config refuses or past ttl.max. */
static void check_shorten(const struct ipc_addr *a)
{
	const uint64_t now = 100000;
	const uint64_t known[] = {0, now - 1, now, now + 1, now + a->ttl};
	const struct config *c = config();
	uint64_t exp;

	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		if (!setwriter_shorten_ok(c, a, now, known[k], &exp))
			continue;
		if (exp <= now)
			abort();
		if (known[k] > now && exp >= known[k])
			abort();
		if (known[k] <= now && (admit_check(c, &a->addr) != ADMIT_OK ||
					exp > now + c->ttl_max))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ipc_msg m;
	static uint8_t again[IPC_FRAME_MAX];
	char why[256];
	int r = setwriter_judge(config(), data, size, &m, why, sizeof(why));
	int len;

	check_forward(data, size, r);
	if (r != 0) {
		if ((r != -EINVAL && r != -EPERM) || why[0] == '\0')
			abort();
		return 0;
	}
	if (m.type == IPC_SOCKET) {
		len = ipc_encode_socket(again, sizeof(again), m.id, m.family,
					m.socktype);
		if (len < 0 || (size_t)len != size ||
		    memcmp(again, data, size) != 0)
			abort();
		return 0;
	}
	if ((m.type != IPC_ADD && m.type != IPC_DEL && m.type != IPC_SHORTEN) ||
	    m.count == 0 || m.count > IPC_ADD_MAX)
		abort();
	for (size_t i = 0; m.type == IPC_ADD && i < m.count; i++) {
		if (admit_check(config(), &m.addrs[i].addr) != ADMIT_OK)
			abort();
	}
	for (size_t i = 0; m.type == IPC_SHORTEN && i < m.count; i++)
		check_shorten(&m.addrs[i]);
	len = ipc_encode_addrs(again, sizeof(again), m.type, m.id, m.addrs,
			       m.count);
	if (len < 0 || (size_t)len != size || memcmp(again, data, size) != 0)
		abort();
	return 0;
}
