// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for the privileged parent's frame reader
 * (setwriter_judge: ipc_decode, then invariants 3 and 5 on every
 * address): any bytes are refused or are one IPC_ADD whose addresses all
 * may enter a set, and an accepted frame is exactly what ipc_encode_add
 * writes for what was read (one frame, one meaning). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/ipc.h"
#include "config/config.h"
#include "daemon/setwriter.h"
#include "resolve/admit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char CONFIG[] =
    "{\"listen\": [\"127.0.0.1:53\"], \"upstreams\": [\"198.18.0.1\", "
    "\"[2001:db8::1]\"], \"allow\": [\"a.test\"], \"allow_cidrs\": "
    "[\"10.1.0.0/16\"]}";

static const struct config *config(void)
{
	static struct config *c;
	struct config_env env = {NULL, NULL, "/nonexistent/resolv.conf", NULL,
				 NULL};
	char err[256];

	if (c == NULL &&
	    config_parse(CONFIG, strlen(CONFIG), &env, &c, err, sizeof(err)))
		abort();
	return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ipc_msg m;
	static uint8_t again[IPC_FRAME_MAX];
	char why[256];
	int r = setwriter_judge(config(), data, size, &m, why, sizeof(why));
	int len;

	if (r != 0) {
		if ((r != -EINVAL && r != -EPERM) || why[0] == '\0')
			abort();
		return 0;
	}
	if (m.type != IPC_ADD || m.count == 0 || m.count > IPC_ADD_MAX)
		abort();
	for (size_t i = 0; i < m.count; i++) {
		if (admit_check(config(), &m.addrs[i].addr) != ADMIT_OK)
			abort();
	}
	len = ipc_encode_add(again, sizeof(again), m.id, m.addrs, m.count);
	if (len < 0 || (size_t)len != size || memcmp(again, data, size) != 0)
		abort();
	return 0;
}
