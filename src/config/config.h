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

#include "base/instance.h"
#include "base/log.h"
#include "base/netaddr.h"

#define CONFIG_DEFAULT_STATE_DIR INSTANCE_DEFAULT_DIR
#define CONFIG_CONTROL_FILE	 "control.sock" /* in state_dir, by default */
#define CONFIG_DEFAULT_CONTROL	 CONFIG_DEFAULT_STATE_DIR "/" CONFIG_CONTROL_FILE
/* sun_path holds 108 bytes with the NUL. */
#define CONFIG_SOCKET_PATH_MAX 107

enum config_mode {
	CONFIG_MODE_ENFORCE = 0,
	CONFIG_MODE_AUDIT,
	CONFIG_MODE_OFF
};
enum config_deny { CONFIG_DENY_NXDOMAIN = 0, CONFIG_DENY_REFUSED };
/* output: fence this namespace's own egress (OUTPUT). forward: fence, from
 * the host, what comes in on `interfaces` (FORWARD and INPUT; fwforward.c). */
enum config_scope { CONFIG_SCOPE_OUTPUT = 0, CONFIG_SCOPE_FORWARD };
/* "name_check": the first bytes of each new flow to a set member on a TLS
 * port name their destination; enforce resets a flow whose name is not
 * allowed or was not answered with its address, audit logs it. */
enum config_name_check {
	CONFIG_NAME_CHECK_ENFORCE = 0,
	CONFIG_NAME_CHECK_AUDIT,
	CONFIG_NAME_CHECK_OFF
};

struct config_port {
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t first, last;
};

/* A replaced upstream endpoint and the end of its hold (monotonic
 * seconds). */
struct config_held {
	struct config_endpoint e;
	uint64_t until;
};

struct config {
	struct config_endpoint *listen;
	size_t n_listen;
	struct config_endpoint *upstreams;
	size_t n_upstreams;
	char **allow; /* lower case, no trailing dot, EXTRA_HOSTS appended */
	size_t n_allow;
	bool allow_psl_wildcards; /* "allow_public_suffix_wildcards" */
	char **ecosystems;
	size_t n_ecosystems;
	enum config_deny deny_rcode;
	uint16_t *qtypes; /* forwarded besides the common ones (qtype.c) */
	size_t n_qtypes;
	/* "wildcard_budget": new upstream questions below a wildcard, per
	 * (entry, client): a bucket of burst, refilled per_minute (budget.c);
	 * names deeper or with longer labels below it are denied. */
	uint32_t budget_burst, budget_per_minute;
	uint32_t budget_depth_max, budget_label_max;
	char *set4, *set6;
	uint32_t maxelem; /* "sets": {"maxelem": N}, default 65536 */
	uint32_t ttl_min, ttl_max;
	struct config_port *ports;
	size_t n_ports;
	struct netcidr *allow_cidrs;
	size_t n_allow_cidrs;
	char *user;
	enum config_mode mode;
	bool audit_denied_local;      /* "audit_denied": "local" */
	uint32_t upstream_timeout_ms; /* "upstream_timeout" in s, default 3 */
	uint32_t max_inflight;	      /* upstream questions, default 2048 */
	uint32_t failure_ttl;	      /* seconds, default 5 */
	uint32_t serve_stale;	      /* seconds past the TTL, 0 off */
	uint32_t guard_interval;      /* seconds, default 5 */
	uint32_t mark;		      /* SO_MARK of the upstream sockets */
	bool inbound_deny;	    /* "inbound": "deny": no replies to peers */
	enum log_level log_level;   /* "log": {"level": "info"} */
	enum log_format log_format; /* "log": {"format": "text"} */
	bool log_queries;	    /* "log": {"queries": false} */
	bool metrics_on;	    /* "metrics": "addr:port"; null: off */
	struct config_endpoint metrics;
	char *state_dir; /* "state_dir", default CONFIG_DEFAULT_STATE_DIR */
	/* "" or the policy fingerprint, kept by provenance_shed_allow when
	 * the allow list itself is dropped (the daemon's privileged parent
	 * needs only the fingerprint of it, for the rules' comment) */
	char policy_fp[17];
	enum config_scope scope; /* "scope", default output */
	char **interfaces; /* forward scope: names, a trailing '+' wildcard */
	size_t n_interfaces;
	char **host_allow; /* forward scope: "tcp/addr:port", normalized */
	size_t n_host_allow;
	struct netcidr *source_cidrs; /* forward: sources a fenced interface
				       * may carry; none: the host's routes */
	size_t n_source_cidrs;
	bool hairpin_deny;    /* forward: "hairpin": "deny" */
	bool hairpin_allow;   /* forward: "hairpin": "allow" (else fence) */
	bool bind_interfaces; /* forward: "bind": "interfaces" (else client) */
	/* forward, "bind": "client": the client sets (hash:ip,port,ip of
	 * client, port, address; config_client_set_name), "" otherwise */
	char client4[32], client6[32];
	uint32_t client_maxelem; /* "sets": {"client_maxelem": N} */
	char *control_socket;	 /* "control": {"socket": PATH} */
	bool control_watch;	 /* "control": {"watch": true} */
	bool selftest;		 /* the readiness gate, default true */
	/* Not a key: upstreams a reload replaced, still fenced as upstreams
	 * (the daemon's mark required) while the daemon's questions to them
	 * drain; reload.c fills and empties it, fwrules.c renders it. */
	struct config_endpoint *retired;
	size_t n_retired;
	/* Not a key: replaced upstreams whose questions drained (or that the
	 * rules of an earlier run named), their origin lines (rule 2) held
	 * until a late answer can no longer come; fence/held.c fills, saves
	 * and expires it, fwrules.c renders it. */
	struct config_held *held;
	size_t n_held;
	/* "subjects" (output scope): whom the fence applies to; none of the
	 * three lists given means every process of the namespace. */
	/* "local_upstream_user", resolved at parse: the uid whose sockets
	 * alone may answer the daemon for a loopback upstream (fwrules.c) */
	bool local_upstream_uid_set;
	uint32_t local_upstream_uid;
	uint32_t *subject_uids; /* "subjects.users", resolved at parse */
	size_t n_subject_uids;
	uint32_t *subject_gids; /* "subjects.groups", supplementary too */
	size_t n_subject_gids;
	char **subject_cgroups; /* "subjects.cgroups", cgroup v2 paths */
	size_t n_subject_cgroups;
	bool subject_lo_listener; /* "subjects.loopback": "listener" */
	struct config_port *subject_lo_ports; /* "subjects.loopback_ports" */
	size_t n_subject_lo_ports;
	enum config_name_check name_check; /* "name_check": {"mode": ...} */
	struct config_port *tls_ports;	   /* "name_check": {"tls_ports"} */
	size_t n_tls_ports;
	struct config_port *http_ports; /* "name_check": {"http_ports"} */
	size_t n_http_ports;
	struct config_port *quic_ports; /* "name_check": {"quic_ports"} */
	size_t n_quic_ports;
};

/* Whether the fence applies to named subjects only (config "subjects"). */
static inline bool config_has_subjects(const struct config *c)
{
	return c->n_subject_uids + c->n_subject_gids + c->n_subject_cgroups > 0;
}

/* Where the process environment would come from; tests fill it in.
 * NULL members mean "not set". */
struct config_env {
	const char *mode;	 /* DNSFENCE_MODE */
	const char *extra_hosts; /* DNSFENCE_EXTRA_HOSTS */
	const char *resolv_conf; /* path; NULL means /etc/resolv.conf */
	/* The original resolv.conf a container entrypoint saved before it
	 * pointed resolv.conf at us; NULL means CONFIG_SAVED_RESOLV_CONF
	 * ($DNSFENCE_STATE_DIR/resolv.conf.orig when that is set). */
	const char *saved_resolv_conf;
	/* The state directory when the file names none; NULL means
	 * CONFIG_DEFAULT_STATE_DIR (config_load: instance_default_dir). */
	const char *state_dir;
};

#define CONFIG_SAVED_RESOLV_CONF "/run/dnsfence/resolv.conf.orig"

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
/* The file config_load reads for path: path, else $DNSFENCE_CONFIG, else
 * CONFIG_DEFAULT_PATH. */
const char *config_path(const char *path);
/* CONFIG_DEFAULT_PATH: SYSCONFDIR/dnsfence/dnsfence.json of the build
 * (/etc/dnsfence/dnsfence.json for the prefix /usr), compiled into the
 * config layer from CMake's CMAKE_INSTALL_FULL_SYSCONFDIR. */
const char *config_default_path(void);
/* The whole file at path into *text (malloc'd, NUL-terminated) and *len.
 * 0; -ENOENT, -EIO or -ENOMEM with err starting with the path. */
int config_read_file(const char *path, char **text, size_t *len, char *err,
		     size_t errlen);
void config_free(struct config *c);

/* Is proto (IPPROTO_TCP/UDP) port one of `ports`? */
bool config_port_allowed(const struct config *cfg, uint8_t proto,
			 uint16_t port);

const char *config_mode_name(enum config_mode m);
const char *config_deny_name(enum config_deny d);
const char *config_log_format_name(enum log_format f);
const char *config_scope_name(enum config_scope s);
const char *config_name_check_name(enum config_name_check m);
/* Does the name check run in this config (enforce or audit, on a fence
 * with rules, scope output)? Its rules are installed, and HTTPS/SVCB
 * answers lose "ech", only then. */
static inline bool config_name_check_on(const struct config *c)
{
	return c->name_check != CONFIG_NAME_CHECK_OFF &&
	       c->mode != CONFIG_MODE_OFF && c->scope == CONFIG_SCOPE_OUTPUT;
}
/* Does an answer open its addresses for the asking client only (scope
 * forward, "bind": "client", a fence with rules)? The client sets exist,
 * the forward rule matches them, and an answer carries only addresses of
 * the family it was asked over, only then. */
static inline bool config_client_sets(const struct config *c)
{
	return c->scope == CONFIG_SCOPE_FORWARD && !c->bind_interfaces &&
	       c->mode != CONFIG_MODE_OFF;
}
/* The client set of the address set named set: its name cut to 24 bytes,
 * then "-client". */
void config_client_set_name(const char *set, char *buf, size_t cap);
/* "tcp/443", "udp/8000-8080" into buf. */
void config_port_format(const struct config_port *pt, char *buf, size_t cap);
/* Does one entry of list (n) hold every port of pt (same protocol)? */
bool config_port_covered(const struct config_port *list, size_t n,
			 const struct config_port *pt);
/* Does DNS stay open in this config: audit mode with "audit_denied":
 * "forward" (denied names forwarded, DNS to other resolvers let through,
 * both only logged)? false in enforce, and in audit with "local". */
static inline bool config_audit_dns_open(const struct config *c)
{
	return c->mode == CONFIG_MODE_AUDIT && !c->audit_denied_local;
}
/* Text of the config schema (key, type, default, meaning) as Markdown,
 * from the same table the parser uses; docs/configuration.md is exactly
 * this output. */
void config_print_reference(FILE *stream);

#endif
