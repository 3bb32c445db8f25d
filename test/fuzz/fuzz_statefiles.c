// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for the readers of what the unprivileged DNS process writes
 * and others read back: state_dir's suggest.json and usage.json, loaded by
 * the next daemon (learn.c, usage.c: through the real file path, statefs's
 * open and the size bound, then the tables' own bounds), and the control
 * socket's "report" answer, which `dnsfence report` reads as root
 * (report.c: every field of both records, printed as text, Markdown and
 * JSON). One input is all of them: the same bytes are written as both
 * files and given as the answer. Nothing may crash or overrun; what was
 * loaded must print back as JSON that parses. The files live in a
 * directory of the fuzzer's own under /dev/shm (tmpfs: the daemon's
 * fsync costs nothing there), removed at exit. */
#include <cjson/cJSON.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "cli/report.h"
#include "config/config.h"
#include "observe/learn.h"
#include "observe/usage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static struct event_base *base;
static struct config *cfg;

static void remove_dir(void)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/" LEARN_FILE, dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" USAGE_FILE, dir);
	unlink(path);
	rmdir(dir);
}

static void set_up(void)
{
	static const char json[] =
	    "{\"upstreams\": [\"198.18.0.1\"], \"allow\": "
	    "[\"www.example.com\", "
	    "\"*.cdn.example\", \"api.example.org\"], \"state_dir\": "
	    "\"/nonexistent\", \"log\": {\"level\": \"error\"}}";
	char err[256];

	snprintf(dir, sizeof(dir), "/dev/shm/fuzz_statefiles.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_statefiles.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
	}
	atexit(remove_dir);
	log_setup(LOGL_ERR, LOG_FORMAT_TEXT, false);
	if ((base = event_base_new()) == NULL ||
	    config_parse(json, sizeof(json) - 1, NULL, &cfg, err,
			 sizeof(err)) != 0)
		abort();
}

static void put(const char *name, const uint8_t *data, size_t size)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

/* text must parse as JSON: what the daemon writes and answers. */
static void parses(char *text)
{
	cJSON *j = text != NULL ? cJSON_Parse(text) : NULL;

	if (j == NULL)
		abort();
	cJSON_Delete(j);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum report_format fmts[] = {REPORT_TEXT, REPORT_MD,
						  REPORT_JSON};
	struct learn *l;
	struct usage *u;
	char *text, err[512];
	FILE *out;
	int fd;

	if (base == NULL)
		set_up();
	put(LEARN_FILE, data, size);
	put(USAGE_FILE, data, size);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	if ((l = learn_new(base, fd, dir, "enforce", getuid())) == NULL)
		abort();
	parses(learn_text(l));
	learn_free(l);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	if ((u = usage_new(base, fd, dir, getuid())) == NULL)
		abort();
	usage_track(u, cfg, NULL);
	parses(usage_text(u));
	usage_free(u);

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if ((out = fopen("/dev/null", "w")) == NULL)
		abort();
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		int rc = report_render(cfg, text, "the fuzzer", fmts[i], out,
				       err, sizeof(err));

		if (rc != 0 && err[0] == '\0')
			abort(); /* every refusal says why */
	}
	fclose(out);
	free(text);
	return 0;
}
