/* SPDX-License-Identifier: GPL-2.0-or-later */
/* learn: what the fence denied (or, in audit mode, would have denied),
 * with counts, bounded, and written atomically to STATE_DIR/suggest.json
 * for `dnsfence suggest`. */
#ifndef DNSFENCE_LEARN_H
#define DNSFENCE_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "observe/nflog.h"

#define LEARN_FILE	    "suggest.json"
#define LEARN_NAMES_MAX	    4096
#define LEARN_FLOWS_MAX	    256
#define LEARN_WRITE_SECONDS 5

struct event_base;
struct learn;

/* Takes over dirfd (the state directory, instance_open_dir); writes every
 * LEARN_WRITE_SECONDS when something changed, and at learn_free. mode is the
 * config's mode name. What an earlier run left in suggest.json is read
 * back (statefs_open_file's trust, for a daemon running as uid) when it
 * was saved in the same mode: audit's "would be denied" and enforce's
 * denials are never mixed. */
struct learn *learn_new(struct event_base *base, int dirfd, const char *dir,
			const char *mode, uid_t uid);
void learn_free(struct learn *l);
/* A reload's mode name (static): the next write says it. */
void learn_set_mode(struct learn *l, const char *mode);
/* Write STATE_DIR/suggest.json now (temporary file, fsync, rename). */
int learn_write(struct learn *l);
/* What suggest.json would hold now (malloc'd JSON text; NULL on ENOMEM):
 * the control socket's answer to `suggest`, which includes the last
 * lookup, where the file may lag by LEARN_WRITE_SECONDS. */
char *learn_text(const struct learn *l);

/* The daemon's instance (NULL: nothing is learned), and the hooks: a
 * name the policy does not allow (dotted text), and an attributed blocked
 * flow (name: what the address was answered for, or NULL). */
void learn_set_global(struct learn *l);
/* Write text to name in the directory dirfd as a whole: a temporary
 * ".NAME.tmp", fsync, rename. 0 or -errno. usage.c writes with it too. */
int learn_write_file(int dirfd, const char *name, const char *text);
/* name in dirfd, NUL-terminated, when statefs_open_file trusts it for a
 * daemon running as uid and it is under LEARN_READ_MAX bytes; else NULL
 * (a refused file is logged at warning under sys). */
#define LEARN_READ_MAX (8u << 20)
char *learn_read_file(int dirfd, const char *dir, const char *name, uid_t uid,
		      const char *sys);
/* root (taken over, may be NULL) printed and written with
 * learn_write_file; the first failure after a success is logged, naming
 * dir/name (*warned remembers it). 0 or -errno. */
struct cJSON;
/* o's number under key, as a count, a time or a port read back from a
 * state file: 0 unless a number in 0..2^53. */
double learn_num(const struct cJSON *o, const char *key);
int learn_save(int dirfd, const char *dir, const char *name, struct cJSON *root,
	       bool *warned);
/* A question for a denied name (qtype and the client's id: a retry of
 * the same type and id counts once). true when the name is new: the
 * caller may then say who asked (learn_name_uid). */
bool learn_name(const char *name, uint16_t qtype, uint16_t id);
/* The uid of the process that first asked name (sockuid.h). */
void learn_name_uid(const char *name, uint32_t uid);
void learn_flow(const struct nflog_pkt *pkt, const char *reason,
		const char *name);
size_t learn_names(const struct learn *l);

#endif
