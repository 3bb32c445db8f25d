/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fwnat: the subjects' DNS redirect in the nat table and its conntrack
 * zone in the raw table (output scope). */
#ifndef DNSFENCE_FWNAT_H
#define DNSFENCE_FWNAT_H

#include <stddef.h>

#include "config/config.h"
#include "fence/fwexec.h"

/* Install (or, without subjects, remove) our nat and raw chains and
 * their jumps in both families, then read them back: 0, or -errno with
 * err. */
int fwnat_apply(const struct config *cfg, char *err, size_t errlen);

/* The nat and raw parts of one family's saved text (all tables) against
 * cfg: the number of differences, each passed to report, or -errno. */
int fwnat_compare(const struct config *cfg, int family, const char *saved,
		  void (*report)(void *arg, const char *line), void *arg);

/* Remove our nat and raw chains and jumps from family given its saved
 * text (both tables). */
int fwnat_remove_family(enum fwexec_backend b, int family, const char *saved,
			char *err, size_t errlen);

/* Remove them from both families on the backend(s) holding rules. */
int fwnat_remove(char *err, size_t errlen);

#endif
