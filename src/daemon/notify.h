/* SPDX-License-Identifier: GPL-2.0-or-later */
/* notify: the sd_notify protocol (READY=1, STATUS=, STOPPING=1) without
 * libsystemd: one datagram to $NOTIFY_SOCKET. */
#ifndef DNSFENCE_NOTIFY_H
#define DNSFENCE_NOTIFY_H

/* Send state (newline-separated "KEY=VALUE" lines, e.g. "READY=1\nSTATUS=
 * serving") to the socket named by $NOTIFY_SOCKET: a path, or an abstract
 * name written with a leading '@'. Unset or empty: nothing is sent, 0.
 * 0 when the datagram was sent; -errno otherwise (-EINVAL for a name that
 * is neither absolute nor abstract, or too long). Never logs: the caller
 * decides whether a failure matters. */
int notify_send(const char *state);

/* notify_send() against an explicit socket name (tests). */
int notify_send_to(const char *socket_name, const char *state);

#endif
