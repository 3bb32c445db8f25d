// SPDX-License-Identifier: GPL-2.0-or-later
/* ifports: the real containers behind an interface, read from sysfs.
 *
 * A bridge's ports are the veths of its containers (Docker, Podman and
 * compose networks alike): a container cannot add one from inside its
 * namespace, whatever addresses it forges. The count is asked only when
 * a query needs a new upstream question, and kept for IFPORTS_TTL_MS in
 * a small table (the fenced interfaces are few); an entry that has not
 * been asked for the longest is replaced. What cannot be read counts as
 * one container (bounded, not open): an interface gone, no sysfs. */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/monotime.h"
#include "resolve/ifports.h"

#define IFPORTS_CACHE	 32
#define IFPORTS_TTL_MS	 1000
#define LOOPBACK_IFINDEX 1 /* lo, in every network namespace */

struct ifports_entry {
	unsigned ifindex; /* 0: free */
	uint32_t ports;
	char name[IF_NAMESIZE]; /* "": not known */
	uint64_t read_ms, asked_ms;
};

struct ifports {
	struct ifports_entry e[IFPORTS_CACHE];
};

static uint32_t read_ports(unsigned ifindex, char *name);
static struct ifports_entry *entry_for(struct ifports *p, unsigned ifindex);

struct ifports *ifports_new(void)
{
	return calloc(1, sizeof(struct ifports));
}

void ifports_free(struct ifports *p)
{
	free(p);
}

uint32_t ifports_count(struct ifports *p, unsigned ifindex)
{
	uint64_t now = monotime_ms();
	struct ifports_entry *e;

	if (ifindex == 0)
		return 0;
	e = entry_for(p, ifindex);
	if (e->ifindex != ifindex || now - e->read_ms >= IFPORTS_TTL_MS) {
		e->ifindex = ifindex;
		e->ports = read_ports(ifindex, e->name);
		e->read_ms = now;
	}
	e->asked_ms = now;
	return e->ports;
}

/* The entry of ifindex, else the one asked for the longest time ago. */
static struct ifports_entry *entry_for(struct ifports *p, unsigned ifindex)
{
	struct ifports_entry *old = &p->e[0];

	for (size_t i = 0; i < IFPORTS_CACHE; i++) {
		if (p->e[i].ifindex == ifindex)
			return &p->e[i];
		if (p->e[i].asked_ms < old->asked_ms)
			old = &p->e[i];
	}
	return old;
}

const char *ifports_name(const struct ifports *p, unsigned ifindex)
{
	for (size_t i = 0; ifindex != 0 && i < IFPORTS_CACHE; i++) {
		if (p->e[i].ifindex == ifindex && p->e[i].name[0] != '\0')
			return p->e[i].name;
	}
	return "?";
}

/* The count for ifindex; its name into name (IF_NAMESIZE, "" when it has
 * none). */
static uint32_t read_ports(unsigned ifindex, char *name)
{
	char path[64];
	struct dirent *d;
	uint32_t ports = 0;
	DIR *dir;

	if (if_indextoname(ifindex, name) == NULL) {
		name[0] = '\0';
		return 1;
	}
	if (ifindex == LOOPBACK_IFINDEX)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/brif", name);
	dir = opendir(path);
	if (dir == NULL)
		return 1; /* not a bridge: one peer */
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] != '.')
			ports++;
	}
	closedir(dir);
	return ports > 0 ? ports : 1;
}
