/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ifports: how many real containers sit behind the interface a query
 * arrived on, for the in-flight cap's interface bound (quota.c). */
#ifndef DNSFENCE_IFPORTS_H
#define DNSFENCE_IFPORTS_H

#include <stdint.h>

struct ifports;

struct ifports *ifports_new(void);
void ifports_free(struct ifports *p);
/* A bridge: its ports (/sys/class/net/NAME/brif/, at least 1); another
 * interface, or one that cannot be read: 1 (one peer behind it);
 * loopback or ifindex 0 (not known): 0 (not bounded). Read again when
 * older than a second, so a container that starts or stops counts
 * within a second. */
uint32_t ifports_count(struct ifports *p, unsigned ifindex);
/* The interface's name as last read by ifports_count ("?" when it has
 * none): no system call, for log lines written during a flood. */
const char *ifports_name(const struct ifports *p, unsigned ifindex);

#endif
