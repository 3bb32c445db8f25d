// SPDX-License-Identifier: GPL-2.0-or-later
/* selftest: the fence proved from the workload's side before anything
 * trusts it (`dnsfence selftest`, and serve's readiness gate).
 *
 * A probe is a packet a workload could send to get around the resolver:
 * DNS over UDP and TCP straight to each upstream (on its port and on 53,
 * unless ADDR:53 is dnsfence's own listener),
 * DoT (tcp/853), a TCP connection on an allowed port and on another to an
 * address no answer gave (the upstream's own: it never enters the sets),
 * UDP 443 (QUIC) when `ports` does not allow it, and an ICMP or ICMPv6
 * echo; then a denied name through dnsfence, with the daemon's counter of
 * upstream questions read before and after over the control socket. The
 * namespace's routers get an echo and DNS too, without a control (none
 * reaches them through the fence): they are reported only when they
 * answer.
 *
 * A probe that gets no answer proves nothing unless the same packet
 * would have been answered without the fence. So every probe is made
 * twice: first as a control, from a socket carrying the daemon's mark
 * (the one thing the rules let through to an upstream, on any port),
 * with the caller's privileges; then as the workload, from a child that
 * has become `user` with no capability at all and no mark. The verdict:
 *   open      the probe was answered (a reply, a connection, an ICMP
 *             port unreachable from the far end): the fence leaks;
 *   held      the control was answered and the probe was not;
 *   unproven  neither was: "could not prove", never "passed".
 * A TCP reset is no answer: the fence's own REJECT sends one, so a port
 * the far end resets even for the control proves nothing. UDP is
 * different: the fence answers with "administratively prohibited", the
 * far end with "port unreachable".
 *
 * The denied name goes through the listener (open to every uid) before
 * the drop: the control socket it reads the counter from is root's and
 * the daemon's only.
 *
 * The prober is a forked child, so that the caller can keep its
 * privileges (the CLI) or keep serving (the daemon must answer the
 * denied name while the probes run); each round of probes runs at once
 * under one deadline, with poll. Results come back as lines on a pipe. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/vm_sockets.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "daemon/control.h"
#include "dns/dnsmsg.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "config/policy.h"
#include "daemon/privs.h"
#include "daemon/reload.h"
#include "daemon/selftest.h"

#define ROUND_MS      1500 /* one round of probes (or of controls) */
#define PROBES_MAX    64
#define DENIED_MS     2000
#define PORT_DOT      853
#define PORT_QUIC     443
#define ICMP_ECHO_SEQ 0x4446 /* "DF"; raw sockets send it as written */

enum kind { K_DNS_UDP, K_TCP, K_UDP, K_ICMP };

enum outcome {
	O_PENDING = 0,
	O_ANSWERED, /* a reply, a connection, a port unreachable */
	O_RESET,    /* TCP reset: the fence's REJECT or the far end */
	O_BLOCKED,  /* refused here (EPERM) or administratively prohibited */
	O_SILENT,   /* nothing within the round */
	O_ERROR,    /* the socket could not be made or sent on */
};

struct probe {
	char what[160];
	enum kind kind;
	struct sockaddr_storage to;
	socklen_t tolen;
	int fd;
	int icmp_fd; /* the raw socket opened before the drop, or -1 */
	uint16_t id;
	enum outcome ctl, got;
	int ctl_err, got_err;
	bool uncontrolled; /* no control can reach it: it can only find */
};

struct prober {
	const struct config *cfg;
	uid_t uid;
	gid_t gid;
	FILE *out;
	struct probe p[PROBES_MAX];
	size_t n;
};

static void add(struct prober *pr, enum kind kind, const struct sockaddr *sa,
		uint16_t port, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void plan(struct prober *pr);
static uint16_t other_port(const struct config *cfg);
static bool has_v6_routes(void);
static void add_gateways(struct prober *pr);
static void add_gateway(struct prober *pr, const struct sockaddr *sa);
static int open_socket(const struct probe *p, bool marked, uint32_t mark,
		       int *err);
static void start(struct probe *p, bool marked, uint32_t mark, enum outcome *o,
		  int *e);
static void on_ready(struct probe *p, short revents, enum outcome *o, int *e);
static enum outcome from_errno(const struct probe *p, int e);
static void run_round(struct prober *pr, bool marked);
static size_t build_probe_query(uint16_t id, uint8_t *buf, size_t cap);
static size_t build_echo(const struct probe *p, uint8_t *buf, size_t cap);
static bool is_echo_reply(const struct probe *p, const uint8_t *buf,
			  size_t len);
static void judge(struct prober *pr, const struct probe *p);
static const char *describe(enum outcome o, int e, char *buf, size_t cap);
static void open_icmp(struct prober *pr);
static void denied_name(struct prober *pr);
static int counters(const struct config *cfg, double *queries,
		    double *forwarded, char *err, size_t errlen);
static int ask_listener(const struct config *cfg, const char *name, int *rcode,
			char *err, size_t errlen);
static void say(struct prober *pr, enum selftest_verdict v, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));
static void child(const struct config *cfg, uid_t uid, gid_t gid, int fd);

const char *selftest_verdict_name(enum selftest_verdict v)
{
	return v == SELFTEST_OPEN   ? "open"
	       : v == SELFTEST_HELD ? "held"
				    : "unproven";
}

int selftest_parse(const char *line, enum selftest_verdict *v,
		   const char **text)
{
	static const enum selftest_verdict all[] = {
	    SELFTEST_HELD, SELFTEST_UNPROVEN, SELFTEST_OPEN};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const char *name = selftest_verdict_name(all[i]);
		size_t n = strlen(name);

		if (strncmp(line, name, n) == 0 && line[n] == ' ') {
			*v = all[i];
			*text = line + n + 1;
			return 0;
		}
	}
	return -EINVAL;
}

int selftest_start(const struct config *cfg, uid_t uid, gid_t gid, pid_t *pid)
{
	int p[2], e;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	*pid = fork();
	if (*pid < 0) {
		e = errno;
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (*pid == 0) {
		close(p[0]);
		child(cfg, uid, gid, p[1]);
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

/* In the child: the controls with our privileges, then the probes as
 * uid without any, then the denied name. Never returns to the caller's
 * code (the caller _exits). */
static void child(const struct config *cfg, uid_t uid, gid_t gid, int fd)
{
	static struct prober pr;
	char err[512];

	/* The daemon's handlers write to its event loop's signal pipe,
	 * which this copy shares: a signal here must not reach it. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	pr.cfg = cfg;
	pr.uid = uid;
	pr.gid = gid;
	pr.out = fdopen(fd, "w");
	if (pr.out == NULL)
		return;
	setvbuf(pr.out, NULL, _IOLBF, 0);
	if (cfg->scope == CONFIG_SCOPE_FORWARD) {
		say(&pr, SELFTEST_UNPROVEN,
		    "scope forward: the probes must start behind the fenced "
		    "interfaces (in a container); the host's own traffic is "
		    "not fenced");
		goto out;
	}
	if (cfg->n_subject_uids + cfg->n_subject_gids + cfg->n_subject_cgroups >
	    0) {
		/* The fence holds only the subjects, and their DNS is
		 * redirected to dnsfence: probes as `user` would get out by
		 * design, and an answer to port 53 could be our own. */
		say(&pr, SELFTEST_UNPROVEN,
		    "subjects: the fence applies to the named users, groups "
		    "and cgroups only, and the self-test does not probe as "
		    "one of them");
		goto out;
	}
	plan(&pr);
	open_icmp(&pr);
	run_round(&pr, true);
	denied_name(&pr); /* the control socket may be root's and ours only */
	if (privs_shed(uid, gid, err, sizeof(err)) != 0) {
		say(&pr, SELFTEST_UNPROVEN,
		    "cannot become uid %u without capabilities: %s",
		    (unsigned)uid, err);
		goto out;
	}
	run_round(&pr, false);
	for (size_t i = 0; i < pr.n; i++)
		judge(&pr, &pr.p[i]);
out:
	fclose(pr.out);
}

/* The local CID of a guest transport, or 0 when there is none (no vsock
 * device, no access, or the host side's VMADDR_CID_HOST). */
static unsigned vsock_guest_cid(void)
{
	unsigned cid = VMADDR_CID_ANY;
	int fd = open("/dev/vsock", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (ioctl(fd, IOCTL_VM_SOCKETS_GET_LOCAL_CID, &cid) != 0)
		cid = VMADDR_CID_ANY;
	close(fd);
	return cid == VMADDR_CID_ANY || cid <= VMADDR_CID_HOST ? 0 : cid;
}

#define VSOCK_TEXT                                                             \
	"this machine is a VM with a vsock device (local CID %u): "            \
	"AF_VSOCK sockets, which no process needs a privilege to open, "       \
	"reach the hypervisor (CID 2) past every firewall rule, in any "       \
	"network namespace; refuse socket family 40 and io_uring_setup in "    \
	"the workload's seccomp profile, or run it under `dnsfence exec`, "    \
	"which does (docs/security.md)"

bool selftest_warn_vsock(void)
{
	unsigned cid = vsock_guest_cid();

	if (cid == 0)
		return false;
	log_warn("selftest", VSOCK_TEXT, cid);
	return true;
}

bool selftest_note_vsock(void)
{
	unsigned cid = vsock_guest_cid();

	if (cid == 0)
		return false;
	selftest_fact(VSOCK_TEXT, cid);
	return true;
}

static struct {
	char text[SELFTEST_FACTS_MAX];
	size_t len, dropped;
	bool said;
} facts;

void selftest_fact(const char *fmt, ...)
{
	char one[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	if (facts.said) {
		log_info("start", "environment: %s", one);
		return;
	}
	n = snprintf(facts.text + facts.len, sizeof(facts.text) - facts.len,
		     "%s%s", facts.len > 0 ? "; " : "", one);
	if (n < 0 || (size_t)n >= sizeof(facts.text) - facts.len) {
		facts.text[facts.len] = '\0'; /* whole facts only */
		facts.dropped++;
		return;
	}
	facts.len += (size_t)n;
}

void selftest_facts_say(void)
{
	if (facts.said)
		return;
	facts.said = true;
	if (facts.len == 0 && facts.dropped == 0)
		return;
	if (facts.dropped > 0)
		log_info("start", "environment: %s; and %zu more", facts.text,
			 facts.dropped);
	else
		log_info("start", "environment: %s", facts.text);
}

bool selftest_cap_grants_net(const void *xattr, size_t len)
{
	const uint8_t *b = xattr;
	uint32_t magic, permitted;

	if (len < 8)
		return false;
	magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		(uint32_t)b[3] << 24;
	if (((magic & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_1 &&
	     len < XATTR_CAPS_SZ_1) ||
	    ((magic & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_2 &&
	     len < XATTR_CAPS_SZ_2) ||
	    ((magic & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_3 &&
	     len < XATTR_CAPS_SZ_3) ||
	    ((magic & VFS_CAP_REVISION_MASK) != VFS_CAP_REVISION_1 &&
	     (magic & VFS_CAP_REVISION_MASK) != VFS_CAP_REVISION_2 &&
	     (magic & VFS_CAP_REVISION_MASK) != VFS_CAP_REVISION_3))
		return false;
	/* data[0].permitted: capabilities 0..31, both ours among them */
	permitted = (uint32_t)b[4] | (uint32_t)b[5] << 8 |
		    (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
	return (permitted & (1u << CAP_NET_ADMIN | 1u << CAP_NET_RAW)) != 0;
}

/* May a process of cfg's subject uids run a file of st? Any group or
 * other execute bit counts (the subjects' groups are not known here). */
static bool subject_may_run(const struct config *cfg, const struct stat *st)
{
	if (st->st_mode & (S_IXGRP | S_IXOTH))
		return true;
	for (size_t i = 0; (st->st_mode & S_IXUSR) && i < cfg->n_subject_uids;
	     i++)
		if (st->st_uid == cfg->subject_uids[i])
			return true;
	return false;
}

/* Append path to list (up to SELFTEST_SHOWN_MAX names) and count it. */
static void note_capable(char *list, size_t cap, size_t *n, const char *path)
{
	size_t len = strlen(list);

	if (*n < SELFTEST_SHOWN_MAX && len + strlen(path) + 3 < cap)
		snprintf(list + len, cap - len, "%s%s", len ? ", " : "", path);
	(*n)++;
}

bool selftest_warn_capable(const struct config *cfg)
{
	const char *env = getenv("PATH");
	char dirs[4096], capl[2048] = "", suidl[2048] = "";
	char path[PATH_MAX], xattr[XATTR_CAPS_SZ_3];
	size_t n_dirs = 0, n_cap = 0, n_suid = 0;
	char *save = NULL;

	if (cfg->n_subject_uids == 0)
		return false;
	snprintf(dirs, sizeof(dirs), "%s",
		 env != NULL && env[0] != '\0' ? env : SELFTEST_PATH_DEFAULT);
	for (char *dir = strtok_r(dirs, ":", &save);
	     dir != NULL && n_dirs < SELFTEST_DIRS_MAX;
	     dir = strtok_r(NULL, ":", &save)) {
		DIR *d = dir[0] == '/' ? opendir(dir) : NULL;
		struct dirent *e;
		size_t n = 0;

		if (d == NULL)
			continue;
		n_dirs++;
		while ((e = readdir(d)) != NULL && n++ < SELFTEST_ENTRIES_MAX) {
			struct stat st;
			ssize_t len;

			if (e->d_name[0] == '.' ||
			    fstatat(dirfd(d), e->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) != 0 ||
			    !S_ISREG(st.st_mode) || !subject_may_run(cfg, &st))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if ((st.st_mode & S_ISUID) && st.st_uid == 0)
				note_capable(suidl, sizeof(suidl), &n_suid,
					     path);
			len = getxattr(path, "security.capability", xattr,
				       sizeof(xattr));
			if (len > 0 &&
			    selftest_cap_grants_net(xattr, (size_t)len))
				note_capable(capl, sizeof(capl), &n_cap, path);
		}
		closedir(d);
	}
	if (n_cap > 0)
		log_warn("selftest",
			 "%zu program(s) on PATH that the uid subjects may run "
			 "hold a file capability granting cap_net_admin or "
			 "cap_net_raw: %s%s; a subject's process running one "
			 "can change the rules themselves (net_admin) or send "
			 "packets it builds (net_raw), which the fence judges "
			 "by their headers alone. Remove the capability "
			 "('setcap -r FILE'), take the subjects' execute "
			 "permission, or run them with no_new_privs (`dnsfence "
			 "exec` does) (docs/security.md)",
			 n_cap, capl,
			 n_cap > SELFTEST_SHOWN_MAX ? ", ..." : "");
	if (n_suid > 0)
		log_warn("selftest",
			 "%zu setuid-root program(s) on PATH that the uid "
			 "subjects may run: %s%s; one run by a subject holds "
			 "every capability, cap_net_admin included, as another "
			 "uid, outside the uid fence. Run the subjects with "
			 "no_new_privs (`dnsfence exec` does, and systemd's "
			 "NoNewPrivileges=) or fence them by cgroup "
			 "(docs/security.md)",
			 n_suid, suidl,
			 n_suid > SELFTEST_SHOWN_MAX ? ", ..." : "");
	return n_cap > 0 || n_suid > 0;
}

static void say(struct prober *pr, enum selftest_verdict v, const char *fmt,
		...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(pr->out, "%s %s\n", selftest_verdict_name(v), line);
}

static void add(struct prober *pr, enum kind kind, const struct sockaddr *sa,
		uint16_t port, const char *fmt, ...)
{
	struct probe *p;
	va_list ap;

	if (pr->n == PROBES_MAX)
		return;
	p = &pr->p[pr->n++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->fd = -1;
	p->icmp_fd = -1;
	p->tolen = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
					    : sizeof(struct sockaddr_in6);
	memcpy(&p->to, sa, p->tolen);
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)&p->to)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&p->to)->sin6_port = htons(port);
	va_start(ap, fmt);
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
	va_end(ap);
	if (getrandom(&p->id, sizeof(p->id), 0) != sizeof(p->id))
		p->id = (uint16_t)(pr->n * 7919u);
}

/* Is ADDR:53 one of the daemon's own listeners? An upstream on a
 * loopback address beside the listener (a local resolver on
 * 127.0.0.1:5353, dnsfence on 127.0.0.1:53): "a resolver on ADDR:53" is
 * then dnsfence itself, whose answer proves nothing open. A wildcard
 * listener on 53 answers every loopback address. */
static bool own_listener(const struct config *cfg, const struct sockaddr *sa)
{
	static const uint8_t zero[16], v6_loopback[16] = {[15] = 1};
	struct netaddr up, l;
	size_t n;
	bool loopback;

	if (!netaddr_from_sockaddr(sa, &up))
		return false;
	n = up.family == AF_INET ? 4 : 16;
	loopback = up.family == AF_INET
		       ? up.bytes[0] == 127
		       : memcmp(up.bytes, v6_loopback, 16) == 0;
	for (size_t i = 0; i < cfg->n_listen; i++) {
		const struct sockaddr *ls =
		    (const struct sockaddr *)&cfg->listen[i].sa;

		if (netaddr_port(ls) != 53 || !netaddr_from_sockaddr(ls, &l) ||
		    l.family != up.family)
			continue;
		if (netaddr_equal(&l, &up) ||
		    (loopback && memcmp(l.bytes, zero, n) == 0))
			return true;
	}
	return false;
}

/* What a workload could try against each upstream address. */
static void plan(struct prober *pr)
{
	const struct config *cfg = pr->cfg;
	bool v6 = false;

	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&cfg->upstreams[i].sa;
		struct netaddr na;
		char a[NETADDR_STRLEN + 2];
		uint16_t port = (uint16_t)netaddr_port(sa), tcp = 0;

		if (!netaddr_from_sockaddr(sa, &na))
			continue;
		v6 |= sa->sa_family == AF_INET6;
		netaddr_format(&na, a + 1, sizeof(a) - 2);
		if (sa->sa_family == AF_INET6) {
			a[0] = '[';
			strcat(a, "]");
		} else {
			memmove(a, a + 1, strlen(a + 1) + 1);
		}
		add(pr, K_DNS_UDP, sa, port,
		    "DNS over UDP to the upstream %s:%u directly", a, port);
		add(pr, K_TCP, sa, port,
		    "DNS over TCP to the upstream %s:%u directly", a, port);
		if (port != 53 && !own_listener(cfg, sa)) {
			add(pr, K_DNS_UDP, sa, 53,
			    "DNS over UDP to a resolver on %s:53", a);
			add(pr, K_TCP, sa, 53,
			    "DNS over TCP to a resolver on %s:53", a);
		}
		add(pr, K_TCP, sa, PORT_DOT, "DNS over TLS to %s:%u", a,
		    PORT_DOT);
		for (size_t k = 0; k < cfg->n_ports && tcp == 0; k++) {
			if (cfg->ports[k].proto == IPPROTO_TCP)
				tcp = cfg->ports[k].first;
		}
		if (tcp != 0)
			add(pr, K_TCP, sa, tcp,
			    "TCP to %s:%u, an allowed port of an address no "
			    "answer gave",
			    a, tcp);
		add(pr, K_TCP, sa, other_port(cfg),
		    "TCP to %s:%u, a port not in `ports`", a, other_port(cfg));
		if (!config_port_allowed(cfg, IPPROTO_UDP, PORT_QUIC))
			add(pr, K_UDP, sa, PORT_QUIC,
			    "UDP (QUIC) to %s:%u, not in `ports`", a,
			    PORT_QUIC);
		add(pr, K_ICMP, sa, 0, "ICMP%s echo to %s",
		    sa->sa_family == AF_INET ? "" : "v6", a);
	}
	if (cfg->n_upstreams == 0)
		say(pr, SELFTEST_UNPROVEN,
		    "no upstream: nothing the daemon knows would answer a "
		    "probe");
	if (!v6 && has_v6_routes())
		say(pr, SELFTEST_UNPROVEN,
		    "IPv6: the namespace has IPv6 routes, but no upstream has "
		    "an IPv6 address to probe");
	add_gateways(pr);
}

/* The routers of the namespace's routes (/proc/net/route and
 * ipv6_route), probed too: no control reaches them through the fence,
 * so they prove nothing when silent and are reported only when one
 * answers (a v6 router answering an echo finds an IPv4-only fence even
 * when every upstream is IPv4). */
static void add_gateways(struct prober *pr)
{
	char line[256], dev[32], hop[33];
	unsigned dst, gw, flags;
	FILE *f = fopen("/proc/net/route", "re");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		struct sockaddr_in sin = {.sin_family = AF_INET};

		if (sscanf(line, "%31s %x %x %x", dev, &dst, &gw, &flags) ==
			4 &&
		    (flags & 0x2) != 0 && gw != 0) { /* RTF_GATEWAY */
			sin.sin_addr.s_addr = gw;    /* printed as stored */
			add_gateway(pr, (struct sockaddr *)&sin);
		}
	}
	if (f != NULL)
		fclose(f);
	f = fopen("/proc/net/ipv6_route", "re");
	while (f != NULL &&
	       fscanf(f, "%*32s %*s %*s %*s %32s %*s %*s %*s %*s %31s", hop,
		      dev) == 2) {
		struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};

		for (size_t i = 0; i < 16; i++) {
			unsigned b;

			if (sscanf(hop + 2 * i, "%2x", &b) != 1)
				break;
			sin6.sin6_addr.s6_addr[i] = (uint8_t)b;
		}
		if (IN6_IS_ADDR_UNSPECIFIED(&sin6.sin6_addr) ||
		    strcmp(dev, "lo") == 0)
			continue;
		if (IN6_IS_ADDR_LINKLOCAL(&sin6.sin6_addr))
			sin6.sin6_scope_id = if_nametoindex(dev);
		add_gateway(pr, (struct sockaddr *)&sin6);
	}
	if (f != NULL)
		fclose(f);
}

static void add_gateway(struct prober *pr, const struct sockaddr *sa)
{
	char a[NETADDR_STRLEN];
	struct netaddr na, u;
	size_t first = pr->n;

	if (!netaddr_from_sockaddr(sa, &na))
		return;
	for (size_t i = 0; i < pr->cfg->n_upstreams; i++) {
		if (netaddr_from_sockaddr(
			(const struct sockaddr *)&pr->cfg->upstreams[i].sa,
			&u) &&
		    netaddr_equal(&u, &na))
			return; /* probed above, with controls */
	}
	for (size_t i = 0; i < pr->n; i++) {
		if (pr->p[i].uncontrolled &&
		    pr->p[i].to.ss_family == sa->sa_family &&
		    netaddr_from_sockaddr((struct sockaddr *)&pr->p[i].to,
					  &u) &&
		    netaddr_equal(&u, &na))
			return;
	}
	netaddr_format(&na, a, sizeof(a));
	add(pr, K_ICMP, sa, 0, "ICMP%s echo to the router %s",
	    sa->sa_family == AF_INET ? "" : "v6", a);
	add(pr, K_DNS_UDP, sa, 53, "DNS over UDP to the router %s, port %u", a,
	    53u);
	add(pr, K_TCP, sa, 53, "DNS over TCP to the router %s, port %u", a,
	    53u);
	for (size_t i = first; i < pr->n; i++)
		pr->p[i].uncontrolled = true;
}

/* A TCP port `ports` does not allow (ssh first: a real service). */
static uint16_t other_port(const struct config *cfg)
{
	static const uint16_t candidates[] = {22, 25, 8443, 9418, 2222};

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]);
	     i++) {
		if (!config_port_allowed(cfg, IPPROTO_TCP, candidates[i]))
			return candidates[i];
	}
	return 1;
}

/* Any IPv6 route out of this namespace, besides loopback, link-local and
 * multicast? (/proc/net/ipv6_route: destination in hex, device last.) */
static bool has_v6_routes(void)
{
	FILE *f = fopen("/proc/net/ipv6_route", "re");
	char dst[33], dev[32];
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fscanf(f, "%32s %*s %*s %*s %*s %*s %*s %*s %*s %31s",
				dst, dev) == 2) {
		found = strcmp(dev, "lo") != 0 &&
			strncmp(dst, "fe80", 4) != 0 &&
			strncmp(dst, "ff", 2) != 0;
	}
	fclose(f);
	return found;
}

/* The raw echo sockets of the probe round, while CAP_NET_RAW may still
 * be raised: a workload would send the same echo through a ping socket,
 * and both go through the same OUTPUT chain. */
static void open_icmp(struct prober *pr)
{
	(void)privs_raise(CAP_NET_RAW);
	for (size_t i = 0; i < pr->n; i++) {
		struct probe *p = &pr->p[i];
		int fam = p->to.ss_family;

		if (p->kind != K_ICMP)
			continue;
		p->icmp_fd =
		    socket(fam, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			   fam == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
		if (p->icmp_fd < 0)
			p->got_err = errno;
	}
}

static int open_socket(const struct probe *p, bool marked, uint32_t mark,
		       int *err)
{
	int fam = p->to.ss_family, fd;

	if (p->kind == K_ICMP && !marked) {
		*err = p->got_err != 0 ? p->got_err : EBADF;
		return p->icmp_fd >= 0 ? dup(p->icmp_fd) : -1;
	}
	fd = socket(fam,
		    (p->kind == K_TCP	 ? SOCK_STREAM
		     : p->kind == K_ICMP ? SOCK_RAW
					 : SOCK_DGRAM) |
			SOCK_NONBLOCK | SOCK_CLOEXEC,
		    p->kind != K_ICMP ? 0
		    : fam == AF_INET  ? IPPROTO_ICMP
				      : IPPROTO_ICMPV6);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (marked &&
	    setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0) {
		*err = errno;
		close(fd);
		return -1;
	}
	return fd;
}

/* Send the probe; *o is left pending when an answer is awaited. */
static void start(struct probe *p, bool marked, uint32_t mark, enum outcome *o,
		  int *e)
{
	uint8_t buf[1300];
	size_t len = 0;

	p->fd = open_socket(p, marked, mark, e);
	if (p->fd < 0) {
		*o = O_ERROR;
		return;
	}
	if (connect(p->fd, (struct sockaddr *)&p->to, p->tolen) < 0 &&
	    errno != EINPROGRESS) {
		*e = errno;
		*o = from_errno(p, errno);
		return;
	}
	if (p->kind == K_TCP)
		return;
	if (p->kind == K_DNS_UDP) {
		len = build_probe_query(p->id, buf, sizeof(buf));
	} else if (p->kind == K_ICMP) {
		len = build_echo(p, buf, sizeof(buf));
	} else {
		memset(buf, 0, sizeof(buf));
		buf[0] = 0xc3; /* a QUIC long header's first byte */
		len = 1200;
	}
	if (send(p->fd, buf, len, MSG_NOSIGNAL) < 0) {
		*e = errno;
		*o = from_errno(p, errno);
	}
}

/* What an error on the socket means. A UDP "connection refused" is an
 * ICMP port unreachable from the far end: the packet got there. */
static enum outcome from_errno(const struct probe *p, int e)
{
	if (e == ECONNREFUSED)
		return p->kind == K_TCP ? O_RESET : O_ANSWERED;
	if (e == EPERM || e == EACCES || e == EHOSTUNREACH)
		return O_BLOCKED;
	return O_ERROR;
}

static void on_ready(struct probe *p, short revents, enum outcome *o, int *e)
{
	uint8_t buf[1500];
	socklen_t elen = sizeof(*e);
	ssize_t n;

	if (p->kind == K_TCP) {
		if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, e, &elen) < 0)
			*e = errno;
		*o = *e == 0 ? O_ANSWERED : from_errno(p, *e);
		return;
	}
	(void)revents;
	while ((n = recv(p->fd, buf, sizeof(buf), 0)) >= 0 || errno == EINTR) {
		if (n < 0)
			continue;
		if (p->kind == K_ICMP && !is_echo_reply(p, buf, (size_t)n))
			continue;
		if (p->kind == K_DNS_UDP &&
		    (n < 4 || buf[0] != (p->id >> 8) ||
		     buf[1] != (p->id & 0xff) || !(buf[2] & 0x80)))
			continue;
		*o = O_ANSWERED;
		return;
	}
	if (errno != EAGAIN) {
		*e = errno;
		*o = from_errno(p, errno);
	}
}

static void run_round(struct prober *pr, bool marked)
{
	struct pollfd pfd[PROBES_MAX];
	size_t idx[PROBES_MAX];
	uint64_t deadline = monotime_ms() + ROUND_MS, now;

	for (size_t i = 0; i < pr->n; i++) {
		struct probe *p = &pr->p[i];

		p->id ^= marked ? 0 : 0x5a5a; /* control and probe differ */
		if (marked && p->uncontrolled) {
			p->ctl = O_SILENT;
			continue;
		}
		start(p, marked, pr->cfg->mark, marked ? &p->ctl : &p->got,
		      marked ? &p->ctl_err : &p->got_err);
	}
	while ((now = monotime_ms()) < deadline) {
		size_t n = 0;

		for (size_t i = 0; i < pr->n; i++) {
			struct probe *p = &pr->p[i];

			if ((marked ? p->ctl : p->got) != O_PENDING)
				continue;
			pfd[n].fd = p->fd;
			pfd[n].events = p->kind == K_TCP ? POLLOUT : POLLIN;
			idx[n++] = i;
		}
		if (n == 0 ||
		    (poll(pfd, n, (int)(deadline - now)) < 0 && errno != EINTR))
			break;
		for (size_t k = 0; k < n; k++) {
			struct probe *p = &pr->p[idx[k]];

			if (pfd[k].revents != 0)
				on_ready(p, pfd[k].revents,
					 marked ? &p->ctl : &p->got,
					 marked ? &p->ctl_err : &p->got_err);
		}
	}
	for (size_t i = 0; i < pr->n; i++) {
		struct probe *p = &pr->p[i];
		enum outcome *o = marked ? &p->ctl : &p->got;

		if (*o == O_PENDING)
			*o = O_SILENT;
		if (p->fd >= 0)
			close(p->fd);
		p->fd = -1;
	}
}

/* "." NS without recursion: any resolver or server answers it at once. */
static size_t build_probe_query(uint16_t id, uint8_t *buf, size_t cap)
{
	struct dns_writer w;

	dns_writer_init(&w, buf, cap);
	dns_write_u16(&w, id);
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 1);
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 0);
	dns_write_u8(&w, 0);
	dns_write_u16(&w, DNS_TYPE_NS);
	dns_write_u16(&w, 1);
	return w.err != 0 ? 0 : w.pos;
}

/* An echo request (ICMPv6: the kernel fills in the checksum). */
static size_t build_echo(const struct probe *p, uint8_t *buf, size_t cap)
{
	uint32_t sum = 0;
	size_t len = 16;

	if (cap < len)
		return 0;
	memset(buf, 0, len);
	buf[0] = p->to.ss_family == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
	/* The identifier is what conntrack keys an echo on: random per
	 * probe, so no earlier echo's entry (a control's, or one from
	 * when the fence was open) lets this one through. */
	buf[4] = (uint8_t)(p->id >> 8);
	buf[5] = (uint8_t)p->id;
	buf[6] = ICMP_ECHO_SEQ >> 8;
	buf[7] = ICMP_ECHO_SEQ & 0xff;
	memcpy(buf + 8, "dnsfence", 8);
	if (p->to.ss_family != AF_INET)
		return len;
	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)(buf[i] << 8 | buf[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	buf[2] = (uint8_t)(~sum >> 8);
	buf[3] = (uint8_t)~sum;
	return len;
}

/* Ours: an echo reply with our id and sequence (IPv4 raw sockets hand
 * over the IP header too; the socket is connected, so the source is the
 * target). */
static bool is_echo_reply(const struct probe *p, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	if (p->to.ss_family == AF_INET) {
		if (len < 20)
			return false;
		off = (size_t)(buf[0] & 0x0f) * 4;
	}
	if (len < off + 8)
		return false;
	return buf[off] == (p->to.ss_family == AF_INET ? ICMP_ECHOREPLY
						       : ICMP6_ECHO_REPLY) &&
	       buf[off + 4] == (uint8_t)(p->id >> 8) &&
	       buf[off + 5] == (uint8_t)p->id &&
	       buf[off + 6] == ICMP_ECHO_SEQ >> 8 &&
	       buf[off + 7] == (ICMP_ECHO_SEQ & 0xff);
}

static const char *describe(enum outcome o, int e, char *buf, size_t cap)
{
	switch (o) {
	case O_ANSWERED:
		return "answered";
	case O_RESET:
		return "reset";
	case O_BLOCKED:
		snprintf(buf, cap, "refused (%s)", strerror(e));
		return buf;
	case O_SILENT:
		return "no answer";
	default:
		snprintf(buf, cap, "not sent (%s)", strerror(e));
		return buf;
	}
}

static void judge(struct prober *pr, const struct probe *p)
{
	char c[96], g[96];

	if (p->uncontrolled && p->got != O_ANSWERED)
		return; /* silence proves nothing without a control */
	if (p->got == O_ANSWERED)
		say(pr, SELFTEST_OPEN,
		    "%s: answered uid %u without capabilities or the socket "
		    "mark; the fence is open there",
		    p->what, (unsigned)pr->uid);
	else if (p->got == O_ERROR)
		say(pr, SELFTEST_UNPROVEN,
		    "%s: the probe could not be sent: %s", p->what,
		    describe(p->got, p->got_err, g, sizeof(g)));
	else if (p->ctl == O_ANSWERED)
		say(pr, SELFTEST_HELD, "%s: %s (with the daemon's mark: %s)",
		    p->what, describe(p->got, p->got_err, g, sizeof(g)),
		    describe(p->ctl, p->ctl_err, c, sizeof(c)));
	else
		say(pr, SELFTEST_UNPROVEN,
		    "%s: no control target (with the daemon's mark too: %s)",
		    p->what, describe(p->ctl, p->ctl_err, c, sizeof(c)));
}

/* A denied name through dnsfence must not make it ask the upstream. */
static void denied_name(struct prober *pr)
{
	const struct config *cfg = pr->cfg;
	char name[64], err[512] = "";
	double q0, f0, q1, f1;
	struct policy *pol;
	uint32_t rnd = 0;
	int rcode = 0;
	bool allowed;

	(void)getrandom(&rnd, sizeof(rnd), 0);
	snprintf(name, sizeof(name), "selftest-%08x.dnsfence.invalid",
		 (unsigned)rnd);
	pol = reload_build_policy(cfg, err, sizeof(err));
	allowed = pol == NULL || policy_match_text(pol, name);
	policy_free(pol);
	if (allowed) {
		say(pr, SELFTEST_UNPROVEN,
		    "a denied name through dnsfence: %s is allowed by this "
		    "policy",
		    name);
		return;
	}
	if (counters(cfg, &q0, &f0, err, sizeof(err)) != 0) {
		say(pr, SELFTEST_UNPROVEN,
		    "a denied name through dnsfence: cannot read the daemon's "
		    "upstream counter: %s",
		    err);
		return;
	}
	if (ask_listener(cfg, name, &rcode, err, sizeof(err)) != 0) {
		say(pr, SELFTEST_UNPROVEN, "a denied name through dnsfence: %s",
		    err);
		return;
	}
	if (counters(cfg, &q1, &f1, err, sizeof(err)) != 0) {
		say(pr, SELFTEST_UNPROVEN, "a denied name through dnsfence: %s",
		    err);
		return;
	}
	if (f1 == f0)
		say(pr, SELFTEST_HELD,
		    "a denied name (%s) through dnsfence: answered rcode %d "
		    "locally, no upstream question",
		    name, rcode);
	else if (q1 - q0 == 1)
		say(pr, SELFTEST_OPEN,
		    "a denied name (%s) through dnsfence: the daemon asked "
		    "the upstream (%.0f question%s)",
		    name, f1 - f0, f1 - f0 == 1 ? "" : "s");
	else
		say(pr, SELFTEST_UNPROVEN,
		    "a denied name through dnsfence: %.0f other queries came "
		    "in meanwhile",
		    q1 - q0 - 1);
}

/* One A query for name to the first listener (a wildcard one on
 * loopback), as a client would send it; 0 and *rcode once the reply with
 * our ID comes, else -errno with err set. */
static int ask_listener(const struct config *cfg, const char *name, int *rcode,
			char *err, size_t errlen)
{
	struct sockaddr_storage to = cfg->listen[0].sa;
	uint8_t q[DNS_MAX_NAME + 32], wire[DNS_MAX_NAME], buf[1500];
	size_t wlen = sizeof(wire);
	uint64_t deadline = monotime_ms() + DENIED_MS, now;
	struct dns_writer w;
	uint16_t id = 0;
	int fd, rc = -ETIMEDOUT;

	if (to.ss_family == AF_INET &&
	    ((struct sockaddr_in *)&to)->sin_addr.s_addr == htonl(INADDR_ANY))
		((struct sockaddr_in *)&to)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	else if (to.ss_family == AF_INET6 &&
		 IN6_IS_ADDR_UNSPECIFIED(
		     &((struct sockaddr_in6 *)&to)->sin6_addr))
		((struct sockaddr_in6 *)&to)->sin6_addr = in6addr_loopback;
	if (cfg->n_listen == 0 || dns_name_from_text(name, wire, &wlen) != 0) {
		snprintf(err, errlen, "no listener to ask");
		return -EINVAL;
	}
	(void)getrandom(&id, sizeof(id), 0);
	dns_writer_init(&w, q, sizeof(q));
	dns_write_u16(&w, id);
	dns_write_u16(&w, DNS_FLAG_RD);
	dns_write_u16(&w, 1);
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 0);
	dns_write_bytes(&w, wire, wlen);
	dns_write_u16(&w, DNS_TYPE_A);
	dns_write_u16(&w, 1);
	fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || w.err != 0 ||
	    connect(fd, (struct sockaddr *)&to, cfg->listen[0].len) < 0 ||
	    send(fd, q, w.pos, 0) < 0) {
		rc = fd >= 0 && w.err != 0 ? -EINVAL : -errno;
		snprintf(err, errlen, "cannot ask the listener: %s",
			 strerror(-rc));
		goto out;
	}
	while ((now = monotime_ms()) < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n >= 4 && buf[0] == (id >> 8) && buf[1] == (id & 0xff) &&
		    (buf[2] & 0x80)) {
			*rcode = buf[3] & 0x0f;
			rc = 0;
			goto out;
		}
	}
	snprintf(err, errlen, "dnsfence did not answer within %d ms",
		 DENIED_MS);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The daemon's counters of queries and of upstream questions. */
static int counters(const struct config *cfg, double *queries,
		    double *forwarded, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	const cJSON *ctr, *q, *f;
	cJSON *root = NULL;
	int r;

	if (mem == NULL)
		return -ENOMEM;
	r = control_call(cfg->control_socket, "status json", CONTROL_IO_TIMEOUT,
			 mem, err, errlen);
	fclose(mem);
	if (r == 0 && (root = cJSON_ParseWithLength(text, len)) != NULL) {
		ctr = cJSON_GetObjectItemCaseSensitive(root, "counters");
		q = cJSON_GetObjectItemCaseSensitive(ctr, "queries");
		f = cJSON_GetObjectItemCaseSensitive(ctr, "forwarded");
		if (cJSON_IsNumber(q) && cJSON_IsNumber(f)) {
			*queries = q->valuedouble;
			*forwarded = f->valuedouble;
		} else {
			r = -EPROTO;
		}
	} else if (r == 0) {
		r = -EPROTO;
	}
	if (r == -EPROTO)
		snprintf(err, errlen, "status json without the counters");
	else if (r > 0)
		r = -EIO;
	cJSON_Delete(root);
	free(text);
	return r;
}
