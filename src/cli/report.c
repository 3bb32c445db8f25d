// SPDX-License-Identifier: GPL-2.0-or-later
/* report: one exec's record, built once as a JSON tree from the files its
 * stopped daemon wrote (suggest.json: denied names, blocked flows;
 * usage.json: allow entries used), then said three ways: a bounded
 * summary on stderr, Markdown tables, or that tree as JSON.
 *
 * The files are read through suggest's trusted reader (statefs.h's rule),
 * so they are bounded as the daemon bounds them (LEARN_NAMES_MAX names,
 * LEARN_FLOWS_MAX flows, USAGE_MAX entries, at most 16 MiB each), and so
 * is the report. Names come from the workload's questions: every byte
 * that is not printable is said as '?' on stderr and every Markdown
 * special is escaped in a table cell. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/report.h"
#include "cli/suggest.h"
#include "observe/learn.h"
#include "observe/usage.h"

static cJSON *read_state(const struct config *cfg, const char *name,
			 const char *list, int *rc, char *err, size_t errlen);
static int build(cJSON *rep, const cJSON *learned, const cJSON *usage);
static int add_denied(cJSON *out, const cJSON *names);
static int add_blocked(cJSON *out, const cJSON *flows);
static int add_allowed(cJSON *out, const cJSON *entries);
static const char *reason_text(const char *reason);
static void sort_array(cJSON *arr, int (*cmp)(const void *, const void *));
static int by_count(const void *a, const void *b);
static double num(const cJSON *o, const char *key);
static const char *str(const cJSON *o, const char *key);
static void say(FILE *out, const char *s);
static void print_summary(FILE *out, const cJSON *rep);
static void md_cell(FILE *out, const char *s, bool code);
static void print_markdown(FILE *out, const cJSON *rep);
static bool ends_with(const char *s, const char *tail);

int report_check_path(const char *path, char *err, size_t errlen)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (path[0] == '\0' || (slash != NULL && slash[1] == '\0')) {
		snprintf(err, errlen, "--report %s: give a file name", path);
		return -EINVAL;
	}
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir)) {
		snprintf(err, errlen, "--report: the path is too long");
		return -ENAMETOOLONG;
	} else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) != 0) {
		snprintf(err, errlen, "--report %s: %s: %s", path, dir,
			 strerror(errno));
		return -ENOENT;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--report %s: %s is not a directory",
			 path, dir);
		return -ENOTDIR;
	}
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen,
			 "--report %s: it exists and is not a regular file "
			 "(a directory or a symbolic link): name a file",
			 path);
		return -EINVAL;
	}
	return 0;
}

/* cfg's state file name parsed, with list (its array) checked; an
 * object with no list when the file is missing (nothing seen). */
static cJSON *read_state(const struct config *cfg, const char *name,
			 const char *list, int *rc, char *err, size_t errlen)
{
	char *text = suggest_read_state(cfg, name, rc, err, errlen);
	cJSON *j;

	if (text == NULL && *rc == -ENOENT)
		return cJSON_CreateObject();
	if (text == NULL)
		return NULL;
	j = cJSON_Parse(text);
	free(text);
	if (!cJSON_IsObject(j) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, list))) {
		cJSON_Delete(j);
		*rc = -EINVAL;
		snprintf(err, errlen, "%s/%s: not a dnsfence state file",
			 cfg->state_dir, name);
		return NULL;
	}
	*rc = 0;
	return j;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Most counted first, then by the first string member (name, dst, entry). */
static int by_count(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a,
		    *y = *(const cJSON *const *)b;
	double cx = num(x, "count") + num(x, "questions");
	double cy = num(y, "count") + num(y, "questions");

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(cJSON_GetStringValue(x->child),
		      cJSON_GetStringValue(y->child));
}

static void sort_array(cJSON *arr, int (*cmp)(const void *, const void *))
{
	int n = cJSON_GetArraySize(arr);
	cJSON **v = n > 1 ? calloc((size_t)n, sizeof(*v)) : NULL;

	if (v == NULL)
		return; /* unsorted, still whole */
	for (int i = 0; i < n; i++)
		v[i] = cJSON_DetachItemFromArray(arr, 0);
	qsort(v, (size_t)n, sizeof(*v), cmp);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, v[i]);
	free(v);
}

/* Each denied name but the special-use ones (the readiness probe's),
 * with the flag that allows it. */
static int add_denied(cJSON *out, const cJSON *names)
{
	const cJSON *it;
	char fix[300];

	cJSON_ArrayForEach(it, names)
	{
		const char *name = str(it, "name");
		cJSON *o;

		if (name == NULL || suggest_never_proposed(name))
			continue;
		snprintf(fix, sizeof(fix), "--allow %s", name);
		if ((o = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(out, o) ||
		    !cJSON_AddStringToObject(o, "name", name) ||
		    !cJSON_AddNumberToObject(o, "count", num(it, "count")) ||
		    !cJSON_AddStringToObject(o, "fix", fix))
			return -ENOMEM;
	}
	sort_array(out, by_count);
	return 0;
}

static const char *reason_text(const char *reason)
{
	static const char *const texts[][2] = {
	    {"never_answered", "no name was answered with this address"},
	    {"expired", "the answer for its name had expired"},
	    {"port", "its port is not in `ports`"},
	    {"dns", "DNS to another resolver than dnsfence"},
	    {"not_in_set", "answered, but not in the set"},
	    {"protocol", "neither TCP nor UDP"},
	    {"source", "a source address not of the interface"},
	    {"name", "the name check refused its first bytes"},
	    {"answerer", "a local socket answered dnsfence's upstream"},
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (strcmp(reason, texts[i][0]) == 0)
			return texts[i][1];
	}
	return reason;
}

/* Each blocked flow: where to, why, and the fix where one exists (a
 * port not allowed, to an address answered for a name: a `ports`
 * entry). */
static int add_blocked(cJSON *out, const cJSON *flows)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, flows)
	{
		const char *dst = str(it, "dst"), *why = str(it, "reason");
		const char *name = str(it, "name");
		double proto = num(it, "proto");
		char pe[32], fix[64] = "";
		cJSON *o;

		if (dst == NULL || why == NULL)
			continue;
		if (proto == IPPROTO_TCP || proto == IPPROTO_UDP)
			snprintf(pe, sizeof(pe), "%s/%.0f",
				 proto == IPPROTO_TCP ? "tcp" : "udp",
				 num(it, "port"));
		else
			snprintf(pe, sizeof(pe), "proto %.0f", proto);
		if (strcmp(why, "port") == 0 && name != NULL &&
		    name[0] != '\0' && pe[0] != 'p')
			snprintf(fix, sizeof(fix),
				 "\"ports\": [\"%s\"] in the config", pe);
		if ((o = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(out, o) ||
		    !cJSON_AddStringToObject(o, "dst", dst) ||
		    !cJSON_AddStringToObject(o, "port", pe) ||
		    !cJSON_AddStringToObject(o, "reason", why) ||
		    !cJSON_AddStringToObject(o, "why", reason_text(why)) ||
		    !cJSON_AddStringToObject(o, "name", name ? name : "") ||
		    !cJSON_AddNumberToObject(o, "count", num(it, "count")) ||
		    !cJSON_AddStringToObject(o, "fix", fix))
			return -ENOMEM;
		if (cJSON_IsNumber(
			cJSON_GetObjectItemCaseSensitive(it, "uid")) &&
		    !cJSON_AddNumberToObject(o, "uid", num(it, "uid")))
			return -ENOMEM;
	}
	sort_array(out, by_count);
	return 0;
}

/* Each allow entry this run used (asked for, or flows to its answers). */
static int add_allowed(cJSON *out, const cJSON *entries)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, entries)
	{
		const char *entry = str(it, "entry");
		cJSON *o;

		if (entry == NULL ||
		    (num(it, "questions") == 0 && num(it, "flows") == 0))
			continue;
		if ((o = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(out, o) ||
		    !cJSON_AddStringToObject(o, "entry", entry) ||
		    !cJSON_AddNumberToObject(o, "questions",
					     num(it, "questions")) ||
		    !cJSON_AddNumberToObject(o, "addresses",
					     num(it, "addresses")) ||
		    !cJSON_AddNumberToObject(o, "flows", num(it, "flows")))
			return -ENOMEM;
	}
	sort_array(out, by_count);
	return 0;
}

static int build(cJSON *rep, const cJSON *learned, const cJSON *usage)
{
	cJSON *d = cJSON_AddArrayToObject(rep, "denied");
	cJSON *b = cJSON_AddArrayToObject(rep, "blocked");
	cJSON *a = cJSON_AddArrayToObject(rep, "allowed");
	int rc = d && b && a ? 0 : -ENOMEM;

	if (rc == 0)
		rc = add_denied(
		    d, cJSON_GetObjectItemCaseSensitive(learned, "names"));
	if (rc == 0)
		rc = add_blocked(
		    b, cJSON_GetObjectItemCaseSensitive(learned, "flows"));
	if (rc == 0)
		rc = add_allowed(
		    a, cJSON_GetObjectItemCaseSensitive(usage, "entries"));
	if (rc == 0 &&
	    (!cJSON_AddNumberToObject(rep, "denied_dropped",
				      num(learned, "names_dropped")) ||
	     !cJSON_AddNumberToObject(rep, "blocked_dropped",
				      num(learned, "flows_dropped")) ||
	     !cJSON_AddNumberToObject(rep, "allowed_dropped",
				      num(usage, "entries_dropped"))))
		rc = -ENOMEM;
	return rc;
}

/* s on a terminal: every byte that is not printable ASCII as '?'. */
static void say(FILE *out, const char *s)
{
	for (; *s != '\0'; s++)
		fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', out);
}

static void print_summary(FILE *out, const cJSON *rep)
{
	static const char *const kinds[] = {"denied", "blocked", "allowed"};
	int nd = cJSON_GetArraySize(cJSON_GetObjectItem(rep, "denied"));
	int nb = cJSON_GetArraySize(cJSON_GetObjectItem(rep, "blocked"));

	const char *mode = str(rep, "mode");
	bool audit = mode != NULL && strcmp(mode, "audit") == 0;

	if (nd == 0 && nb == 0)
		return;
	if (audit) /* nothing was denied: say what enforce would have done */
		fprintf(out,
			"dnsfence: exec: audit: %d name%s would be denied, "
			"%d flow%s would be blocked (all went through):\n",
			nd, nd == 1 ? "" : "s", nb, nb == 1 ? "" : "s");
	else
		fprintf(out,
			"dnsfence: exec: %d name%s denied, %d flow%s "
			"blocked:\n",
			nd, nd == 1 ? "" : "s", nb, nb == 1 ? "" : "s");
	for (size_t k = 0; k < 3; k++) {
		const cJSON *arr = cJSON_GetObjectItem(rep, kinds[k]), *it;
		int i = 0, n = cJSON_GetArraySize(arr);

		cJSON_ArrayForEach(it, arr)
		{
			const char *fix = str(it, "fix"),
				   *name = str(it, "name");

			if (i++ == REPORT_SUMMARY_LINES)
				break;
			fprintf(out, "  %-8s ", kinds[k]);
			if (k == 0) {
				say(out, str(it, "name"));
				fprintf(out, " (%.0f lookup%s)",
					num(it, "count"),
					num(it, "count") == 1 ? "" : "s");
			} else if (k == 1) {
				say(out, str(it, "dst"));
				fprintf(out, " %s (%s: %s)", str(it, "port"),
					str(it, "reason"), str(it, "why"));
				if (name != NULL && name[0] != '\0') {
					fprintf(out, ", answered for ");
					say(out, name);
				}
				fprintf(out, ", %.0f time%s", num(it, "count"),
					num(it, "count") == 1 ? "" : "s");
			} else {
				say(out, str(it, "entry"));
				fprintf(out, " (%.0f question%s, %.0f flow%s)",
					num(it, "questions"),
					num(it, "questions") == 1 ? "" : "s",
					num(it, "flows"),
					num(it, "flows") == 1 ? "" : "s");
			}
			if (fix != NULL && fix[0] != '\0') {
				fprintf(out, "; fix: ");
				say(out, fix);
			}
			fputc('\n', out);
		}
		if (n > REPORT_SUMMARY_LINES)
			fprintf(out, "  %-8s and %d more\n", kinds[k],
				n - REPORT_SUMMARY_LINES);
	}
}

/* One Markdown table cell: '|', '\\', '`' and the emphasis and link
 * characters escaped, a byte that is not printable as '?'; in a code
 * span when code (where only '`' and '|' would matter: it is kept out). */
static void md_cell(FILE *out, const char *s, bool code)
{
	fputs(code ? " `" : " ", out);
	for (; s != NULL && *s != '\0'; s++) {
		if (*s < 0x20 || *s >= 0x7f || *s == '`')
			fputc('?', out);
		else if (*s == '|')
			fputs("\\|", out);
		else if (!code && strchr("\\*_[]<>#", *s) != NULL)
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
	fputs(code ? "` |" : " |", out);
}

static void print_markdown(FILE *out, const cJSON *rep)
{
	const cJSON *it;

	fprintf(out, "## dnsfence exec report\n\nThe command exited %.0f.\n",
		num(rep, "exit_status"));
	if (str(rep, "mode") != NULL && strcmp(str(rep, "mode"), "audit") == 0)
		fprintf(out, "\nAudit mode: nothing was denied or blocked; "
			     "the names and flows below are what enforce mode "
			     "would have denied and blocked.\n");
	fprintf(out, "\n### Denied names\n\n| Name | Lookups | Fix |\n"
		     "|---|---:|---|\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(rep, "denied"))
	{
		fputc('|', out);
		md_cell(out, str(it, "name"), true);
		fprintf(out, " %.0f |", num(it, "count"));
		md_cell(out, str(it, "fix"), true);
		fputc('\n', out);
	}
	fprintf(out, "\n### Blocked flows\n\n| Destination | Port | Reason "
		     "| Answered for | Count | Fix |\n"
		     "|---|---|---|---|---:|---|\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(rep, "blocked"))
	{
		const char *fix = str(it, "fix");

		fputc('|', out);
		md_cell(out, str(it, "dst"), true);
		md_cell(out, str(it, "port"), false);
		fprintf(out, " %s:", str(it, "reason"));
		md_cell(out, str(it, "why"), false);
		md_cell(out, str(it, "name"), false);
		fprintf(out, " %.0f |", num(it, "count"));
		md_cell(out, fix, fix != NULL && fix[0] != '\0');
		fputc('\n', out);
	}
	fprintf(out, "\n### Allowed entries used\n\n| Entry | Questions | "
		     "Addresses | Flows |\n|---|---:|---:|---:|\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(rep, "allowed"))
	{
		fputc('|', out);
		md_cell(out, str(it, "entry"), true);
		fprintf(out, " %.0f | %.0f | %.0f |\n", num(it, "questions"),
			num(it, "addresses"), num(it, "flows"));
	}
	if (num(rep, "denied_dropped") + num(rep, "blocked_dropped") +
		num(rep, "allowed_dropped") >
	    0)
		fprintf(out,
			"\nPast the bounds, not listed: %.0f denied names, "
			"%.0f blocked flows, %.0f allow entries.\n",
			num(rep, "denied_dropped"), num(rep, "blocked_dropped"),
			num(rep, "allowed_dropped"));
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

int report_exec(const struct config *cfg, int status, const char *path,
		FILE *summary, char *err, size_t errlen)
{
	cJSON *learned = NULL, *usage = NULL, *rep = cJSON_CreateObject();
	char *text = NULL;
	FILE *f = NULL;
	int rc = -ENOMEM, fd;

	if (rep == NULL || !cJSON_AddNumberToObject(rep, "version", 1) ||
	    !cJSON_AddNumberToObject(rep, "exit_status", status) ||
	    !cJSON_AddStringToObject(rep, "mode", config_mode_name(cfg->mode)))
		goto nomem;
	if ((learned = read_state(cfg, LEARN_FILE, "names", &rc, err,
				  errlen)) == NULL ||
	    (usage = read_state(cfg, USAGE_FILE, "entries", &rc, err,
				errlen)) == NULL)
		goto out;
	if ((rc = build(rep, learned, usage)) != 0)
		goto nomem;
	print_summary(summary, rep);
	if (path == NULL)
		goto out;
	rc = -ENOMEM;
	if (!ends_with(path, ".md") && (text = cJSON_Print(rep)) == NULL)
		goto nomem;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		rc = -errno;
		snprintf(err, errlen, "--report %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (text != NULL)
		fprintf(f, "%s\n", text);
	else
		print_markdown(f, rep);
	rc = fclose(f) == 0 ? 0 : -errno;
	if (rc != 0)
		snprintf(err, errlen, "--report %s: %s", path, strerror(-rc));
	goto out;
nomem:
	rc = -ENOMEM;
	snprintf(err, errlen, "the report: out of memory");
out:
	free(text);
	cJSON_Delete(learned);
	cJSON_Delete(usage);
	cJSON_Delete(rep);
	return rc;
}
