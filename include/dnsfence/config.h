/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config: the JSON file (cJSON) turned into an immutable struct config,
 * validated with errors that name the key path and the reason. */
#ifndef DNSFENCE_CONFIG_H
#define DNSFENCE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "dnsfence/log.h"
#include "dnsfence/netaddr.h"

#define CONFIG_DEFAULT_PATH    "/etc/dnsfence/dnsfence.json"
#define CONFIG_DEFAULT_CONTROL "/run/dnsfence/control.sock"
/* sun_path holds 108 bytes with the NUL. */
#define CONFIG_SOCKET_PATH_MAX 107

enum config_mode {
	CONFIG_MODE_ENFORCE = 0,
	CONFIG_MODE_AUDIT,
	CONFIG_MODE_OFF
};
enum config_deny { CONFIG_DENY_NXDOMAIN = 0, CONFIG_DENY_REFUSED };

struct config_endpoint {
	struct sockaddr_storage sa;
	socklen_t len;
};

struct config_port {
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t first, last;
};

struct config {
	struct config_endpoint *listen;
	size_t n_listen;
	struct config_endpoint *upstreams;
	size_t n_upstreams;
	char **allow; /* lower case, no trailing dot, EXTRA_HOSTS appended */
	size_t n_allow;
	char **ecosystems;
	size_t n_ecosystems;
	enum config_deny deny_rcode;
	char *set4, *set6;
	uint32_t maxelem; /* "sets": {"maxelem": N}, default 65536 */
	uint32_t ttl_min, ttl_max;
	struct config_port *ports;
	size_t n_ports;
	struct netcidr *allow_cidrs;
	size_t n_allow_cidrs;
	char *user;
	enum config_mode mode;
	uint32_t upstream_timeout_ms; /* "upstream_timeout" in s, default 5 */
	uint32_t guard_interval;      /* seconds, default 5 */
	enum log_level log_level;     /* "log": {"level": "info"} */
	enum log_format log_format;   /* "log": {"format": "text"} */
	char *control_socket;	      /* "control": {"socket": PATH} */
	bool control_watch;	      /* "control": {"watch": true} */
};

/* Where the process environment would come from; tests fill it in.
 * NULL members mean "not set". */
struct config_env {
	const char *mode;	 /* DNSFENCE_MODE */
	const char *extra_hosts; /* DNSFENCE_EXTRA_HOSTS */
	const char *resolv_conf; /* path; NULL means /etc/resolv.conf */
};

/* Parse and validate JSON text. 0 and *out set, or -EINVAL with err
 * holding "KEY.PATH: reason" (e.g. "ports[0]: port 99999 out of range"). */
int config_parse(const char *text, size_t len, const struct config_env *env,
		 struct config **out, char *err, size_t errlen);
/* Read path (NULL: $DNSFENCE_CONFIG, else CONFIG_DEFAULT_PATH) and parse
 * it with the real environment (DNSFENCE_MODE, DNSFENCE_EXTRA_HOSTS).
 * -ENOENT/-EIO/-EINVAL with err set and starting with the path:
 * "/etc/dnsfence/dnsfence.json: ttl.min: expected an integer". */
int config_load(const char *path, struct config **out, char *err,
		size_t errlen);
/* The normalized config as JSON that config_parse accepts again.
 * malloc'd; NULL on allocation failure. */
char *config_to_json(const struct config *c);
void config_free(struct config *c);
/* Same normalized content (every field, lists in order). For reload
 * decisions and tests. */
bool config_equal(const struct config *a, const struct config *b);

const char *config_mode_name(enum config_mode m);
/* Text of the config schema (key, type, default, meaning) as Markdown,
 * from the same table the parser uses; docs/configuration.md is exactly
 * this output. */
void config_print_reference(FILE *stream);

#endif
