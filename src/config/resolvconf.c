// SPDX-License-Identifier: GPL-2.0-or-later
/* resolvconf: reads the nameserver lines of /etc/resolv.conf, which is
 * where dnsfence finds its upstreams when the config names none.
 *
 * Only what glibc itself would use is taken: the first two words of a
 * line, "nameserver" and a bare address. A line longer than the buffer is
 * judged by its beginning and the rest of it is skipped, so the tail of a
 * long comment can never be read as a line of its own. Our own listen
 * addresses are left out: in the workload's resolv.conf, dnsfence is the
 * nameserver, and forwarding to ourselves would be a loop. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/netaddr.h"
#include "config/resolvconf.h"

#define NAMESERVER_PORT 53

static bool skip_rest_of_line(FILE *f, const char *line);
static int read_from(FILE *f, const struct config_endpoint *skip, size_t nskip,
		     struct config_endpoint **out, size_t *n);
static bool listed(const struct netaddr *a, const struct config_endpoint *e,
		   size_t n);
static int take_line(char *line, const struct config_endpoint *skip,
		     size_t nskip, struct config_endpoint **out, size_t *n);

/* After a line without its '\n' (longer than the buffer), read on to the
 * end of that line. False at the end of the file. */
static bool skip_rest_of_line(FILE *f, const char *line)
{
	int c;

	if (strchr(line, '\n') != NULL)
		return true;
	while ((c = getc(f)) != EOF && c != '\n')
		;
	return c != EOF;
}

static bool listed(const struct netaddr *a, const struct config_endpoint *e,
		   size_t n)
{
	struct netaddr b;

	for (size_t i = 0; i < n; i++) {
		if (netaddr_from_sockaddr((const struct sockaddr *)&e[i].sa,
					  &b) &&
		    netaddr_equal(a, &b))
			return true;
	}
	return false;
}

/* One line: append its nameserver to *out unless skipped. 0 or -ENOMEM. */
static int take_line(char *line, const struct config_endpoint *skip,
		     size_t nskip, struct config_endpoint **out, size_t *n)
{
	char *save = NULL, *kw, *addr;
	struct config_endpoint e, *grown;
	struct netaddr a;
	const char *why;

	kw = strtok_r(line, " \t\r\n", &save);
	addr = strtok_r(NULL, " \t\r\n", &save);
	if (kw == NULL || addr == NULL || strcmp(kw, "nameserver") != 0)
		return 0;
	/* resolv.conf holds bare addresses; "%zone" or ":port" do not parse */
	if (netaddr_parse(addr, &a) != 0)
		return 0;
	memset(&e, 0, sizeof(e));
	if (netaddr_parse_endpoint(addr, false, NAMESERVER_PORT, &e.sa, &e.len,
				   &why) != 0)
		return 0;
	if (listed(&a, skip, nskip) || listed(&a, *out, *n))
		return 0;
	grown = realloc(*out, (*n + 1) * sizeof(**out));
	if (grown == NULL)
		return -ENOMEM;
	grown[(*n)++] = e;
	*out = grown;
	return 0;
}

int resolvconf_read(const char *path, const struct config_endpoint *skip,
		    size_t nskip, struct config_endpoint **out, size_t *n)
{
	FILE *f = fopen(path, "re");
	int rc;

	*out = NULL;
	*n = 0;
	if (f == NULL)
		return -errno;
	rc = read_from(f, skip, nskip, out, n);
	fclose(f);
	return rc;
}

int resolvconf_read_trusted(const char *path,
			    const struct config_endpoint *skip, size_t nskip,
			    struct config_endpoint **out, size_t *n)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (f == NULL)
		return 0;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == 0 && (st.st_mode & 022) == 0)
		rc = read_from(f, skip, nskip, out, n);
	fclose(f);
	return rc;
}

/* Every line of f; on an error nothing is returned. */
static int read_from(FILE *f, const struct config_endpoint *skip, size_t nskip,
		     struct config_endpoint **out, size_t *n)
{
	char line[RESOLVCONF_LINE_MAX];
	int rc = 0;

	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		bool more = skip_rest_of_line(f, line);

		rc = take_line(line, skip, nskip, out, n);
		if (!more)
			break;
	}
	if (rc != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
