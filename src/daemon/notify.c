// SPDX-License-Identifier: GPL-2.0-or-later
/* notify: systemd's readiness protocol, spoken directly. Type=notify
 * units wait for "READY=1" on the datagram socket named by $NOTIFY_SOCKET
 * before starting the units ordered after them; serve.c sends it only
 * once the listeners are bound, the privileges dropped, the guard
 * running and the self-test's probes held (selftest.c), so "active" means
 * "answers queries behind a fence proved from the workload's side".
 * The protocol is one AF_UNIX datagram of "KEY=VALUE\n" lines; a name
 * starting with '@' is in the abstract namespace (leading NUL byte, no
 * trailing NUL counted in the address length). No libsystemd: the same
 * binary runs in containers without it, where $NOTIFY_SOCKET is unset
 * and every call is a no-op. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/notify.h"

int notify_send(const char *state)
{
	return notify_send_to(getenv("NOTIFY_SOCKET"), state);
}

int notify_send_to(const char *socket_name, const char *state)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	size_t nlen, slen;
	socklen_t alen;
	ssize_t n;
	int fd, rc = 0;

	if (socket_name == NULL || socket_name[0] == '\0')
		return 0;
	if (state == NULL)
		return -EINVAL;
	nlen = strlen(socket_name);
	if ((socket_name[0] != '/' && socket_name[0] != '@') ||
	    nlen >= sizeof(sun.sun_path))
		return -EINVAL;
	memcpy(sun.sun_path, socket_name, nlen);
	if (socket_name[0] == '@')
		sun.sun_path[0] = '\0';
	alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + nlen +
			   (socket_name[0] == '/' ? 1 : 0));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	slen = strlen(state);
	n = sendto(fd, state, slen, MSG_NOSIGNAL, (struct sockaddr *)&sun,
		   alen);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != slen)
		rc = -EMSGSIZE;
	close(fd);
	return rc;
}
