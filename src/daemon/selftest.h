/* SPDX-License-Identifier: GPL-2.0-or-later */
/* selftest: probes from the workload's side that nothing gets around the
 * fence, each judged against a control made with the daemon's socket
 * mark (see selftest.c). Used by `dnsfence selftest` and by serve's
 * readiness gate. */
#ifndef DNSFENCE_SELFTEST_H
#define DNSFENCE_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/config.h"

enum selftest_verdict {
	SELFTEST_HELD = 0,     /* the control answered, the probe did not */
	SELFTEST_UNPROVEN = 1, /* neither answered: no proof either way */
	SELFTEST_OPEN = 2,     /* the probe got an answer: the fence leaks */
};

/* The longest a whole run takes (two rounds of probes and the denied
 * name), in ms: the readiness gate waits at most this plus a margin. */
#define SELFTEST_MAX_MS 6000

/* Fork the prober: a child that makes the controls with the caller's
 * privileges (CAP_NET_ADMIN for the mark, CAP_NET_RAW for ICMP when
 * held), then becomes uid/gid without any capability (from root) or
 * sheds every capability (already uid), and probes. It writes one line
 * per probe to the returned descriptor ("held TEXT", "unproven TEXT",
 * "open TEXT") and exits 0. The caller reads to EOF and reaps *pid.
 * -errno on failure (fork, pipe). */
int selftest_start(const struct config *cfg, uid_t uid, gid_t gid, pid_t *pid);

/* One line of the prober: its verdict, and *text pointing at the rest.
 * -EINVAL for a line that is none of the three. */
int selftest_parse(const char *line, enum selftest_verdict *v,
		   const char **text);

const char *selftest_verdict_name(enum selftest_verdict v);
/* What no probe can hold: on a VM with a vsock device (a guest CID on
 * /dev/vsock), any process's AF_VSOCK sockets reach the hypervisor past
 * every firewall rule. Logs one warning saying so and what to do; true
 * when it did. Needs read access to /dev/vsock (root), as at start. */
bool selftest_warn_vsock(void);
/* The daemon's form: the same text, as an environment fact. */
bool selftest_note_vsock(void);

/* Environment facts: what this machine cannot give (no vsock
 * protection, no conntrack ids, a self-test check that cannot be proved
 * here), which no operator setting fixes. The daemon gathers them while
 * it starts and logs them as one info line ("start: environment: A; B")
 * with selftest_facts_say(); one noted after that is logged at once.
 * Warnings stay for what the operator should fix. At most
 * SELFTEST_FACTS_MAX bytes are kept; the rest is counted. */
#define SELFTEST_FACTS_MAX 4096
void selftest_fact(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void selftest_facts_say(void);

/* What no probe sees either: a uid subject's process that runs a
 * program granting CAP_NET_ADMIN or CAP_NET_RAW (a file capability with
 * either in its permitted set: the rules themselves, or raw packets), or
 * a setuid-root one (every capability, and another uid), is beyond the
 * uid fence. When cfg names uid subjects, the directories of $PATH
 * (SELFTEST_PATH_DEFAULT without one; at most SELFTEST_DIRS_MAX of them,
 * SELFTEST_ENTRIES_MAX entries each) are scanned for such programs the
 * subjects may run; one warning per kind names up to
 * SELFTEST_SHOWN_MAX and how many. true when one was logged. */
#define SELFTEST_PATH_DEFAULT                                                  \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SELFTEST_DIRS_MAX    32
#define SELFTEST_ENTRIES_MAX 8192
#define SELFTEST_SHOWN_MAX   8
bool selftest_warn_capable(const struct config *cfg);

/* Does a security.capability value (struct vfs_cap_data, revision 1, 2
 * or 3) of len bytes put CAP_NET_ADMIN or CAP_NET_RAW in the permitted
 * set? Pure, for tests. */
bool selftest_cap_grants_net(const void *xattr, size_t len);

#endif
