/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suggest: `dnsfence suggest`, an `allow` list learned from what the
 * fence denied (STATE_DIR/suggest.json, written by learn.c), never
 * broader than a registrable domain (Public Suffix List, libpsl). */
#ifndef DNSFENCE_SUGGEST_H
#define DNSFENCE_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"

/* `ports` entries a suggestion adds at most (flows refused by port). */
#define SUGGEST_PORTS_MAX 16

/* Names no suggestion ever holds: the special-use names no upstream can
 * answer (.invalid, the probe and readiness names among them;
 * localhost, .onion, .local). */
bool suggest_never_proposed(const char *name);

/* Does a label of name look like encoded data, the exfiltration pattern
 * (`mzxw6ytboi4tqmzq.evil.example`)? A run of SUGGEST_ENCODED_RUN or more
 * characters between hyphens that is hex (digits and letters), or whose
 * characters carry SUGGEST_ENCODED_BITS bits or more each (Shannon
 * entropy) with two digits or more or few vowels (under a quarter of its
 * letters): base32, base64. On true, the label (cut to cap - 1 bytes) and
 * its kind ("hex", "base32/base64"). A heuristic for a reviewer's eyes:
 * it warns, it decides nothing. */
#define SUGGEST_ENCODED_RUN  16
#define SUGGEST_ENCODED_BITS 3.4
bool suggest_looks_encoded(const char *name, char *label, size_t cap,
			   const char **kind);

/* Distinct names directly below one parent that make it `*.parent`. */
#define SUGGEST_SIBLINGS 3

struct suggest_name {
	const char *name; /* lower case, no trailing dot */
	uint64_t count;
};

/* The allow entries for names seen at least min_count times: exact names,
 * except that SUGGEST_SIBLINGS or more names directly below one parent
 * become `*.parent`, and only when the parent is the registrable domain
 * or below it (never `*.co.uk`, `*.github.io`). A name that is itself a
 * public suffix is left out. *out: sorted, unique, malloc'd strings in a
 * malloc'd array (free with suggest_free_list). 0 or -ENOMEM; -ENOENT
 * when no Public Suffix List can be loaded. */
int suggest_collapse(const struct suggest_name *in, size_t n,
		     uint64_t min_count, char ***out, size_t *n_out);
void suggest_free_list(char **list, size_t n);

/* An ecosystem preset is proposed in place of learned names when
 * SUGGEST_PRESET_HOSTS or more of its hosts were learned (every host, for
 * a preset with fewer): one host alone does not bring in the others. */
#define SUGGEST_PRESET_HOSTS 2
/* Presets suggest_presets returns at most. */
#define SUGGEST_PRESETS_MAX 32

/* Is name one of preset's hosts (an exact host, or below a "*.parent"
 * host)? false for an unknown preset. */
bool suggest_preset_holds(const char *preset, const char *name);

/* The ecosystem presets (policy.h's table, in its order) that the names
 * seen at least min_count times point at, as SUGGEST_PRESET_HOSTS says:
 * their static names in presets (at most cap), and taken[i] true for each
 * in[i] one of them holds (suggest_preset_holds), false for the others.
 * Only a preset's own hosts are ever taken: a name it does not hold
 * (gist.github.com for "github") stays for suggest_collapse. The number of
 * presets. */
size_t suggest_presets(const struct suggest_name *in, size_t n,
		       uint64_t min_count, const char **presets, size_t cap,
		       bool *taken);

/* cfg's state_dir/name (suggest.json, usage.json), only when statefs.h's
 * rule trusts the directory and the file for the daemon's user: anyone
 * else could have planted the names it suggests or the uses it counts.
 * Its text (malloc'd, at most 16 MiB), or NULL with *rc (-ENOENT: no
 * such file yet) and err set. */
char *suggest_read_state(const struct config *cfg, const char *name, int *rc,
			 char *err, size_t errlen);

/* Ask the daemon on cfg->control_socket for what it learned, else read
 * cfg->state_dir/suggest.json, and print `{"allow": [...]}` to out:
 * cfg's own allow entries first, then the learned ones (those of a preset
 * suggest_presets proposes left out); `"ecosystems": [...]`, cfg's then
 * the proposed presets, when there are any; and, when flows
 * to answered names were refused by their port, `"ports": [...]`: cfg's
 * entries, then those. Each blocked flow is described in the log (a DNS
 * bypass as one). 0, or -errno with err
 * set (-ENOENT: no state file yet). */
int suggest_run(const struct config *cfg, uint64_t min_count, FILE *out,
		char *err, size_t errlen);
/* suggest_run, and `"explain": [...]` after the lists: per learned allow
 * entry its count (questions), first seen, the uids that asked (where
 * recorded) and, for a wildcard, the names behind it; per proposed
 * preset ("ecosystem") the same, with the names it covers; an entry whose
 * names look encoded (suggest_looks_encoded) carries a warning (stderr
 * says it with or without explain). */
int suggest_run_explained(const struct config *cfg, uint64_t min_count,
			  FILE *out, char *err, size_t errlen);

/* `dnsfence prune`: print {"allow": [...]}, cfg's allow without the
 * entries cfg->state_dir/usage.json says were unused for unused_s
 * seconds (an entry it does not know is kept), and, when cfg has
 * ecosystems, "ecosystems": [...] without the presets none of whose hosts
 * was used for unused_s (a preset with a host the file does not know is
 * kept); each dropped entry and preset is named on err_out. 0, or -errno
 * with err set. */
int suggest_prune(const struct config *cfg, int64_t unused_s, FILE *out,
		  FILE *err_out, char *err, size_t errlen);

/* `dnsfence diff OTHER.json`: "+ NAME" for each entry of path's "allow"
 * (a suggest or prune output, or a config file) that cfg's allow lacks,
 * "- NAME" for each it drops; then "+ ecosystem NAME" and
 * "- ecosystem NAME" the same for its "ecosystems" (none when it has no
 * such key). The number of differences, or -errno with err set. */
int suggest_diff(const struct config *cfg, const char *path, FILE *out,
		 char *err, size_t errlen);

#endif
