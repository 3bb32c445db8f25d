// SPDX-License-Identifier: GPL-2.0-or-later
/* sandbox: the DNS process's capability drop and seccomp filter (see
 * sandbox.h).
 *
 * The list was built from strace of the daemon's serving loop across the
 * suite's DNS paths (UDP and TCP queries, c-ares upstreams, the cache,
 * set adds, NFLOG attribution, metrics, the control socket, reload with
 * its thread and eventfd, the config watch, the state files, syslog):
 * what it did after the privilege drop, minus what only the privileged
 * parent does (execve of iptables, fork and wait for the guard's and the
 * self-test's children, kill, capget/capset and the uid calls). Anything
 * else kills the whole process (SCMP_ACT_KILL_PROCESS: SIGSYS, never a
 * thread left half alive), which the parent sees and logs.
 *
 * The names are resolved on the running architecture; one the
 * architecture does not have (e.g. a legacy call) is skipped. The filter
 * is one list of names rather than argument checks: the descriptors it
 * works on are what bound the process (it has no capability), and
 * argument filters on pointers cannot be checked in seccomp anyway. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include <seccomp.h>

#include "daemon/privs.h"
#include "daemon/sandbox.h"

static const char *const allowed[] = {
    /* memory and threads (the reload's parse thread, malloc) */
    "brk",
    "mmap",
    "munmap",
    "mprotect",
    "mremap",
    "madvise",
    "futex",
    "clone",
    "clone3",
    "set_robust_list",
    "rseq",
    "set_tid_address",
    "exit",
    "exit_group",
    "gettid",
    "getpid",
    /* the death signal's check after the uid change (serve.c) */
    "getppid",
    "sched_yield",
    /* glibc's CPU count and the sanitizers' runtime at thread start */
    "sched_getaffinity",
    "getrandom",
    "prlimit64",
    "prctl",
    "sigaltstack",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "tgkill",
    "restart_syscall",
    /* time */
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "clock_nanosleep",
    "nanosleep",
    /* the event loop (libevent: epoll, its signal socketpair) */
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "poll",
    "ppoll",
    "eventfd2",
    "pipe2",
    "socketpair",
    /* sockets: listeners (inherited), TCP clients, upstreams, the IPC
     * channel, syslog */
    "socket",
    "connect",
    "bind",
    "accept4",
    "shutdown",
    "getsockname",
    "getpeername",
    "getsockopt",
    "setsockopt",
    "sendto",
    "sendmsg",
    "sendmmsg",
    "recvfrom",
    "recvmsg",
    "recvmmsg",
    "read",
    "readv",
    "write",
    "writev",
    "pread64",
    "pwrite64",
    "close",
    "dup",
    "dup3",
    "fcntl",
    "ioctl",
    /* files: the config (reload), the state files, the watch */
    "openat",
    "newfstatat",
    "fstat",
    "statx",
    "lseek",
    "getdents64",
    "readlinkat",
    "access",
    "faccessat",
    "faccessat2",
    "ftruncate",
    "fsync",
    "fdatasync",
    "renameat",
    "renameat2",
    "unlinkat",
    "unlink", /* the control socket's path at exit */
    "flock",
    "fchmod",
    "fchown",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    /* identity checks that change nothing */
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "uname",
};

int sandbox_filter(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int rc = -ENOMEM;

	if (ctx == NULL) {
		snprintf(err, errlen, "seccomp_init: out of memory");
		return rc;
	}
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr == __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (rc != 0) {
			snprintf(err, errlen, "seccomp_rule_add(%s): %s",
				 allowed[i], strerror(-rc));
			goto out;
		}
	}
	rc = seccomp_load(ctx);
	if (rc != 0)
		snprintf(err, errlen, "seccomp_load: %s", strerror(-rc));
out:
	seccomp_release(ctx);
	return rc == 0 ? 0 : -EPERM;
}

int sandbox_enter(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	int rc = privs_shed(uid, gid, err, errlen);

	if (rc != 0)
		return rc;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "no_new_privs is not set");
		return -EPERM;
	}
	return sandbox_filter(err, errlen);
}
