/* SPDX-License-Identifier: GPL-2.0-or-later */
/* configkeys: the per-key parsers of config.c's schema table, internal to
 * config and configkeys (no other module includes this header).
 *
 * Contract: config.c owns the table (specs[], one row per key: its parser,
 * range, default and meaning) and the walk over it; every function here
 * parses one key's value or one list entry into the struct config under
 * construction (struct pctx) and nothing else. A key_fn gets its table row
 * and the JSON member, or NULL when the key is absent, and then applies
 * the row's default through the same path as input. An item_fn gets one
 * string of a list and the key path to name in an error ("ports[2]").
 * All return 0 or -errno; a validation error is -EINVAL with the message
 * written to p->err as "KEY.PATH: reason" (configkeys_fail). */
#ifndef DNSFENCE_CONFIGKEYS_H
#define DNSFENCE_CONFIGKEYS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config/config.h"

#define CONFIGKEYS_PATH_LEN 96 /* a key path with its index, "ports[12]" */

enum kind { K_GROUP, K_INT, K_CHOICE, K_LIST, K_STRING };

struct pctx;
struct key_spec;
typedef int (*key_fn)(struct pctx *p, const struct key_spec *k, const cJSON *v);
typedef int (*item_fn)(struct pctx *p, const char *s, const char *path);

struct key_spec {
	const char *path;
	enum kind kind;
	key_fn parse;	      /* NULL for K_GROUP */
	uint32_t lo, hi, def; /* K_INT range and default; K_CHOICE index */
	uint32_t scale;	      /* K_INT: stored value = input * scale */
	size_t off;	      /* K_INT: uint32_t field; K_STRING: char * */
	item_fn item;	      /* K_LIST: one entry; lo = 1: not empty */
	const char *const *choices; /* K_CHOICE, NULL-terminated */
	const char *const *defs;    /* K_LIST/K_STRING default, as input */
	const char *type;	    /* NULL: generated from kind */
	const char *def_doc;	    /* NULL: generated from the default */
	const char *meaning;
};

struct pctx {
	const struct config_env *env;
	struct config *c;
	char *err;
	size_t errlen;
	const struct key_spec *specs; /* the table; rows index the arrays */
	const cJSON **given;	      /* per spec row */
	uint32_t *choice;	      /* per spec row: index into choices */
	/* Where "upstreams" came from when the file sets none (resolv.conf,
	 * or the original a container entrypoint saved), for the messages
	 * that refuse one; NULL when the file lists them. */
	const char *upstreams_file;
};

/* "PATH: reason" into p->err; returns -EINVAL. */
int configkeys_fail(struct pctx *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A value fit to echo: control bytes as '?', at most 64 bytes. */
void configkeys_show(const char *s, char *buf, size_t cap);
/* The candidate (of n) nearest to s by edit distance (ASCII case
 * ignored, a swap of neighbours one edit), when it is close enough to be
 * the one meant: at most 2 edits and fewer than half of s's length;
 * else NULL. For "did you mean". */
const char *configkeys_nearest(const char *s, const char *const *cands,
			       size_t n);

/* key_fn parsers, one per kind of row. */
int configkeys_int(struct pctx *p, const struct key_spec *k, const cJSON *v);
int configkeys_set_name(struct pctx *p, const struct key_spec *k,
			const cJSON *v);
int configkeys_list(struct pctx *p, const struct key_spec *k, const cJSON *v);
int configkeys_choice(struct pctx *p, const struct key_spec *k, const cJSON *v);
int configkeys_bool(struct pctx *p, const struct key_spec *k, const cJSON *v);
int configkeys_path(struct pctx *p, const struct key_spec *k, const cJSON *v);
int configkeys_upstreams(struct pctx *p, const struct key_spec *k,
			 const cJSON *v);
int configkeys_user(struct pctx *p, const struct key_spec *k, const cJSON *v);
int configkeys_metrics(struct pctx *p, const struct key_spec *k,
		       const cJSON *v);
int configkeys_state_dir(struct pctx *p, const struct key_spec *k,
			 const cJSON *v);

/* item_fn parsers: one list entry each. */
int configkeys_item_listen(struct pctx *p, const char *s, const char *path);
int configkeys_item_upstream(struct pctx *p, const char *s, const char *path);
int configkeys_item_name(struct pctx *p, const char *s, const char *path);
int configkeys_item_ecosystem(struct pctx *p, const char *s, const char *path);
int configkeys_item_port(struct pctx *p, const char *s, const char *path);
/* A "tcp/N" of name_check.tls_ports, and of name_check.http_ports (not
 * one of tls_ports: tls_ports is read first). */
int configkeys_item_tls_port(struct pctx *p, const char *s, const char *path);
int configkeys_item_http_port(struct pctx *p, const char *s, const char *path);
/* A "udp/N" of name_check.quic_ports. */
int configkeys_item_quic_port(struct pctx *p, const char *s, const char *path);
int configkeys_item_qtype(struct pctx *p, const char *s, const char *path);
/* "tcp/N", "udp/N" or "tcp/N-M" into *out, without storing it. */
int configkeys_parse_port(struct pctx *p, const char *s, const char *path,
			  struct config_port *out);
int configkeys_item_cidr(struct pctx *p, const char *s, const char *path);
/* One "source_cidrs" entry (forward scope). */
int configkeys_item_source_cidr(struct pctx *p, const char *s,
				const char *path);
int configkeys_item_interface(struct pctx *p, const char *s, const char *path);
int configkeys_item_host_allow(struct pctx *p, const char *s, const char *path);

/* What config.c's finish step needs once every row has run. */
/* DNSFENCE_EXTRA_HOSTS: comma-separated names appended to allow. */
int configkeys_extra_hosts(struct pctx *p, const char *list);
/* Drop later copies of a string, order of first occurrences kept. */
int configkeys_dedupe(char **arr, size_t *n);
/* The cross-key rules of p->c->scope (already set): interfaces and
 * host_allow only in forward scope, listen not loopback nor wildcard. */
int configkeys_check_scope(struct pctx *p);

#endif
