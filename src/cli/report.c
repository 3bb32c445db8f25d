// SPDX-License-Identifier: GPL-2.0-or-later
/* report: a daemon's record (`dnsfence report`) or one exec's, built
 * once as a JSON tree from what the daemon keeps (suggest.json: denied
 * names, blocked flows; usage.json: allow entries used and allowed names
 * asked), then said several ways: a bounded summary on stderr (exec),
 * lines of text, Markdown tables, or that tree as JSON.
 *
 * `report` asks the running daemon over its control socket first (its
 * tables as they are now), else reads the files the stopped one left;
 * exec reads the files of its stopped private daemon. The files are read
 * through suggest's trusted reader (statefs.h's rule), so they are
 * bounded as the daemon bounds them (LEARN_NAMES_MAX names,
 * LEARN_FLOWS_MAX flows, USAGE_MAX entries, USAGE_NAMES_MAX allowed
 * names, at most 16 MiB each), and so is the report; the control
 * socket's answer is held to the same 16 MiB. Names come from the
 * workload's questions: every byte that is not printable is said as '?'
 * in text and every Markdown special is escaped in a table cell. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/log.h"
#include "cli/report.h"
#include "cli/suggest.h"
#include "config/policy.h"
#include "daemon/control.h"
#include "observe/learn.h"
#include "observe/usage.h"

#define REPLY_MAX (16u << 20) /* the control socket's answer, as a file */

static cJSON *read_state(const struct config *cfg, const char *name,
			 const char *list, int *rc, char *err, size_t errlen);
static int build(cJSON *rep, const cJSON *learned, const cJSON *usage,
		 const struct config *cfg, bool exec);
static int add_denied(cJSON *out, const cJSON *names, bool exec);
static int add_blocked(cJSON *out, const cJSON *flows, bool exec);
static int add_allowed(cJSON *out, const cJSON *entries);
static int add_names(cJSON *out, const cJSON *names, const struct config *cfg);
static const char *entry_source(const struct config *cfg, const char *entry,
				char *buf, size_t cap);
static char *ask_daemon(const char *socket, char *why, size_t whylen);
static int from_daemon(const char *text, cJSON **learned, cJSON **usage);
static void when(double t, char *buf, size_t cap);
static void print_item(FILE *out, const char *kind, const char *label,
		       const cJSON *it);
static void print_lines(FILE *out, const cJSON *rep,
			const char *const (*kinds)[2], size_t n_kinds, int max);
static void print_text(FILE *out, const cJSON *rep);
static const char *reason_text(const char *reason);
static void sort_array(cJSON *arr, int (*cmp)(const void *, const void *));
static int by_count(const void *a, const void *b);
static double num(const cJSON *o, const char *key);
static const char *str(const cJSON *o, const char *key);
static void say(FILE *out, const char *s);
static void print_summary(FILE *out, const cJSON *rep);
static void md_text(FILE *out, const char *s, bool code);
static void md_cell(FILE *out, const char *s, bool code);
static void print_markdown(FILE *out, const cJSON *rep);
static void md_denied(FILE *out, const cJSON *denied);
static void md_blocked(FILE *out, const cJSON *blocked);
static void md_allowed_names(FILE *out, const cJSON *names);
static void md_entries(FILE *out, const cJSON *entries);
static void print_dropped(FILE *out, const cJSON *rep, const char *head,
			  const char *tail);
static bool ends_with(const char *s, const char *tail);
static int from_state_dir(const struct config *cfg, const char *why,
			  cJSON **learned, cJSON **usage, char *err,
			  size_t errlen);
static int render(const struct config *cfg, const cJSON *learned,
		  const cJSON *usage, const char *source,
		  enum report_format fmt, FILE *out, char *err, size_t errlen);

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
 * object with no list when the file (or state_dir) is missing (nothing
 * seen: *rc is -ENOENT then). */
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
 * with the entry that allows it and the fix: exec's flag, or the config
 * key. The uid that asked and when, where suggest.json says (learn.c
 * may keep "uid", "first_seen" and "last_seen" per name). */
static int add_denied(cJSON *out, const cJSON *names, bool exec)
{
	const cJSON *it;
	char fix[1100];

	cJSON_ArrayForEach(it, names)
	{
		const char *name = str(it, "name");
		cJSON *o;

		if (name == NULL || suggest_never_proposed(name))
			continue;
		if (exec)
			snprintf(fix, sizeof(fix), "--allow %s", name);
		else
			snprintf(fix, sizeof(fix), "add \"%s\" to \"allow\"",
				 name);
		if ((o = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(out, o) ||
		    !cJSON_AddStringToObject(o, "name", name) ||
		    !cJSON_AddNumberToObject(o, "count", num(it, "count")) ||
		    !cJSON_AddStringToObject(o, "entry", name) ||
		    !cJSON_AddStringToObject(o, "fix", fix))
			return -ENOMEM;
		for (size_t k = 0; k < 3; k++) {
			static const char *const keep[] = {"uid", "first_seen",
							   "last_seen"};

			if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(
				it, keep[k])) &&
			    !cJSON_AddNumberToObject(o, keep[k],
						     num(it, keep[k])))
				return -ENOMEM;
		}
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
	    {"other_client", "answered, but to another client"},
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
static int add_blocked(cJSON *out, const cJSON *flows, bool exec)
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
				 exec ? "--port %s"
				      : "\"ports\": [\"%s\"] in the config",
				 pe);
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

/* Where entry comes from in cfg: "allow", "ecosystem NAME" (in buf),
 * or "not in the config" (an earlier policy's). */
static const char *entry_source(const struct config *cfg, const char *entry,
				char *buf, size_t cap)
{
	for (size_t i = 0; i < cfg->n_allow; i++) {
		if (strcmp(cfg->allow[i], entry) == 0)
			return "allow";
	}
	for (size_t i = 0; i < cfg->n_ecosystems; i++) {
		const char *const *h = policy_preset_hosts(cfg->ecosystems[i]);

		for (; h != NULL && *h != NULL; h++) {
			if (strcmp(*h, entry) == 0) {
				snprintf(buf, cap, "ecosystem %s",
					 cfg->ecosystems[i]);
				return buf;
			}
		}
	}
	return "not in the config";
}

/* Each allowed name asked: lookups, when, the addresses its answers
 * brought, the entry that allowed it and where that entry comes from. */
static int add_names(cJSON *out, const cJSON *names, const struct config *cfg)
{
	const cJSON *it, *a;
	char buf[300];

	cJSON_ArrayForEach(it, names)
	{
		const char *name = str(it, "name"), *entry = str(it, "entry");
		cJSON *o, *addrs;

		if (name == NULL)
			continue;
		if (entry == NULL)
			entry = "";
		if ((o = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(out, o) ||
		    !cJSON_AddStringToObject(o, "name", name) ||
		    !cJSON_AddNumberToObject(o, "count", num(it, "count")) ||
		    !cJSON_AddNumberToObject(o, "first_seen",
					     num(it, "first_seen")) ||
		    !cJSON_AddNumberToObject(o, "last_seen",
					     num(it, "last_seen")) ||
		    !cJSON_AddStringToObject(o, "entry", entry) ||
		    !cJSON_AddStringToObject(
			o, "from",
			entry[0] != '\0'
			    ? entry_source(cfg, entry, buf, sizeof(buf))
			    : "") ||
		    (addrs = cJSON_AddArrayToObject(o, "addresses")) == NULL)
			return -ENOMEM;
		cJSON_ArrayForEach(
		    a, cJSON_GetObjectItemCaseSensitive(it, "addresses"))
		{
			if (cJSON_IsString(a) &&
			    !cJSON_AddItemToArray(
				addrs, cJSON_CreateString(a->valuestring)))
				return -ENOMEM;
		}
	}
	sort_array(out, by_count);
	return 0;
}

static int build(cJSON *rep, const cJSON *learned, const cJSON *usage,
		 const struct config *cfg, bool exec)
{
	cJSON *d = cJSON_AddArrayToObject(rep, "denied");
	cJSON *b = cJSON_AddArrayToObject(rep, "blocked");
	cJSON *a = cJSON_AddArrayToObject(rep, "allowed");
	cJSON *n = cJSON_AddArrayToObject(rep, "allowed_names");
	int rc = d && b && a && n ? 0 : -ENOMEM;

	if (rc == 0)
		rc = add_denied(
		    d, cJSON_GetObjectItemCaseSensitive(learned, "names"),
		    exec);
	if (rc == 0)
		rc = add_blocked(
		    b, cJSON_GetObjectItemCaseSensitive(learned, "flows"),
		    exec);
	if (rc == 0)
		rc = add_allowed(
		    a, cJSON_GetObjectItemCaseSensitive(usage, "entries"));
	if (rc == 0)
		rc = add_names(
		    n, cJSON_GetObjectItemCaseSensitive(usage, "names"), cfg);
	if (rc == 0 &&
	    (!cJSON_AddNumberToObject(rep, "denied_dropped",
				      num(learned, "names_dropped")) ||
	     !cJSON_AddNumberToObject(rep, "blocked_dropped",
				      num(learned, "flows_dropped")) ||
	     !cJSON_AddNumberToObject(rep, "allowed_dropped",
				      num(usage, "entries_dropped")) ||
	     !cJSON_AddNumberToObject(rep, "allowed_names_dropped",
				      num(usage, "names_dropped"))))
		rc = -ENOMEM;
	return rc;
}

/* s on a terminal: every byte that is not printable ASCII as '?'. */
static void say(FILE *out, const char *s)
{
	for (; *s != '\0'; s++)
		fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', out);
}

/* t (wall seconds) as UTC ISO 8601, "-" for none. */
static void when(double t, char *buf, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, cap, "-");
}

/* One line of kind (a key of the report) for it, after label. */
static void print_item(FILE *out, const char *kind, const char *label,
		       const cJSON *it)
{
	const char *fix = str(it, "fix"), *name = str(it, "name");
	const cJSON *a;
	char t1[32], t2[32];
	double count = num(it, "count");

	if (strcmp(kind, "denied") == 0) {
		fprintf(out, "  %-8s ", label);
		say(out, name);
		fprintf(out, " (%.0f lookup%s", count, count == 1 ? "" : "s");
		if (cJSON_IsNumber(cJSON_GetObjectItem(it, "uid")))
			fprintf(out, ", uid %.0f", num(it, "uid"));
		if (cJSON_IsNumber(cJSON_GetObjectItem(it, "first_seen"))) {
			when(num(it, "first_seen"), t1, sizeof(t1));
			when(num(it, "last_seen"), t2, sizeof(t2));
			fprintf(out, ", first %s, last %s", t1, t2);
		}
		fputc(')', out);
	} else if (strcmp(kind, "blocked") == 0) {
		fprintf(out, "  %-8s ", label);
		say(out, str(it, "dst"));
		fprintf(out, " %s (%s: %s)", str(it, "port"), str(it, "reason"),
			str(it, "why"));
		if (name != NULL && name[0] != '\0') {
			fprintf(out, ", answered for ");
			say(out, name);
		}
		if (cJSON_IsNumber(cJSON_GetObjectItem(it, "uid")))
			fprintf(out, ", uid %.0f", num(it, "uid"));
		fprintf(out, ", %.0f time%s", count, count == 1 ? "" : "s");
	} else if (strcmp(kind, "allowed_names") == 0) {
		fprintf(out, "  %-8s ", label);
		say(out, name);
		when(num(it, "first_seen"), t1, sizeof(t1));
		when(num(it, "last_seen"), t2, sizeof(t2));
		fprintf(out, " (%.0f lookup%s, first %s, last %s; entry ",
			count, count == 1 ? "" : "s", t1, t2);
		say(out, str(it, "entry"));
		fprintf(out, " from %s)", str(it, "from"));
		cJSON_ArrayForEach(a, cJSON_GetObjectItem(it, "addresses"))
		{
			fputc(' ', out);
			say(out, a->valuestring);
		}
	} else {
		fprintf(out, "  %-8s ", label);
		say(out, str(it, "entry"));
		fprintf(out, " (%.0f question%s, %.0f flow%s)",
			num(it, "questions"),
			num(it, "questions") == 1 ? "" : "s", num(it, "flows"),
			num(it, "flows") == 1 ? "" : "s");
	}
	if (fix != NULL && fix[0] != '\0') {
		fprintf(out, "; fix: ");
		say(out, fix);
	}
	fputc('\n', out);
}

/* The lines of each kind ({key, label}), at most max of each (-1: all),
 * the rest counted. */
static void print_lines(FILE *out, const cJSON *rep,
			const char *const (*kinds)[2], size_t n_kinds, int max)
{
	for (size_t k = 0; k < n_kinds; k++) {
		const cJSON *arr = cJSON_GetObjectItem(rep, kinds[k][0]), *it;
		int i = 0, n = cJSON_GetArraySize(arr);

		cJSON_ArrayForEach(it, arr)
		{
			if (max >= 0 && i++ == max)
				break;
			print_item(out, kinds[k][0], kinds[k][1], it);
		}
		if (max >= 0 && n > max)
			fprintf(out, "  %-8s and %d more\n", kinds[k][1],
				n - max);
	}
}

static void print_summary(FILE *out, const cJSON *rep)
{
	static const char *const kinds[][2] = {{"denied", "denied"},
					       {"blocked", "blocked"},
					       {"allowed", "allowed"}};
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
	print_lines(out, rep, kinds, 3, REPORT_SUMMARY_LINES);
}

/* `report --format text`: every record, denied and blocked first, then
 * the allowed names and the allow entries used ("entry" lines). */
static void print_text(FILE *out, const cJSON *rep)
{
	static const char *const kinds[][2] = {{"denied", "denied"},
					       {"blocked", "blocked"},
					       {"allowed_names", "allowed"},
					       {"allowed", "entry"}};
	int nn = cJSON_GetArraySize(cJSON_GetObjectItem(rep, "allowed_names"));
	int nd = cJSON_GetArraySize(cJSON_GetObjectItem(rep, "denied"));
	int nb = cJSON_GetArraySize(cJSON_GetObjectItem(rep, "blocked"));

	fprintf(out,
		"dnsfence report (%s): %d name%s allowed, %d denied, %d "
		"flow%s blocked\n",
		str(rep, "source"), nn, nn == 1 ? "" : "s", nd, nb,
		nb == 1 ? "" : "s");
	print_lines(out, rep, kinds, 4, -1);
	print_dropped(out, rep, "past the bounds, not listed", "");
}

/* One Markdown table cell: '|', '\\', '`' and the emphasis and link
 * characters escaped, a byte that is not printable as '?'; in a code
 * span when code (where only '`' and '|' would matter: it is kept out). */
static void md_cell(FILE *out, const char *s, bool code)
{
	fputc(' ', out);
	md_text(out, s, code);
	fputs(" |", out);
}

/* s escaped as md_cell says, without the cell's spaces and bar. */
static void md_text(FILE *out, const char *s, bool code)
{
	fputs(code ? "`" : "", out);
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
	fputs(code ? "`" : "", out);
}

static void print_markdown(FILE *out, const cJSON *rep)
{
	if (cJSON_GetObjectItem(rep, "exit_status") != NULL)
		fprintf(out,
			"## dnsfence exec report\n\nThe command exited %.0f.\n",
			num(rep, "exit_status"));
	else
		fprintf(out, "## dnsfence report\n\nFrom %s.\n",
			str(rep, "source"));
	if (str(rep, "mode") != NULL && strcmp(str(rep, "mode"), "audit") == 0)
		fprintf(out, "\nAudit mode: nothing was denied or blocked; "
			     "the names and flows below are what enforce mode "
			     "would have denied and blocked.\n");
	md_denied(out, cJSON_GetObjectItem(rep, "denied"));
	md_blocked(out, cJSON_GetObjectItem(rep, "blocked"));
	md_allowed_names(out, cJSON_GetObjectItem(rep, "allowed_names"));
	md_entries(out, cJSON_GetObjectItem(rep, "allowed"));
	print_dropped(out, rep, "\nPast the bounds, not listed", ".");
}

static void md_denied(FILE *out, const cJSON *denied)
{
	const cJSON *it;

	fprintf(out, "\n### Denied names\n\n| Name | Lookups | Fix |\n"
		     "|---|---:|---|\n");
	cJSON_ArrayForEach(it, denied)
	{
		fputc('|', out);
		md_cell(out, str(it, "name"), true);
		fprintf(out, " %.0f |", num(it, "count"));
		md_cell(out, str(it, "fix"), true);
		fputc('\n', out);
	}
}

static void md_blocked(FILE *out, const cJSON *blocked)
{
	const cJSON *it;

	fprintf(out, "\n### Blocked flows\n\n| Destination | Port | Reason "
		     "| Answered for | Count | Fix | UID |\n"
		     "|---|---|---|---|---:|---|---:|\n");
	cJSON_ArrayForEach(it, blocked)
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
		if (cJSON_IsNumber(cJSON_GetObjectItem(it, "uid")))
			fprintf(out, " %.0f |\n", num(it, "uid"));
		else
			fprintf(out, " |\n");
	}
}

static void md_allowed_names(FILE *out, const cJSON *names)
{
	const cJSON *it, *a;
	char t[32];

	fprintf(out, "\n### Allowed names\n\n| Name | Lookups | Addresses | "
		     "Entry | First seen | Last seen |\n"
		     "|---|---:|---|---|---|---|\n");
	cJSON_ArrayForEach(it, names)
	{
		bool first = true;

		fputc('|', out);
		md_cell(out, str(it, "name"), true);
		fprintf(out, " %.0f | ", num(it, "count"));
		cJSON_ArrayForEach(a, cJSON_GetObjectItem(it, "addresses"))
		{
			fputs(first ? "" : ", ", out);
			md_text(out, a->valuestring, false);
			first = false;
		}
		fputs(" | ", out);
		md_text(out, str(it, "entry"), true);
		fputs(" (", out);
		md_text(out, str(it, "from"), false);
		when(num(it, "first_seen"), t, sizeof(t));
		fprintf(out, ") | %s |", t);
		when(num(it, "last_seen"), t, sizeof(t));
		fprintf(out, " %s |\n", t);
	}
}

static void md_entries(FILE *out, const cJSON *entries)
{
	const cJSON *it;

	fprintf(out, "\n### Allowed entries used\n\n| Entry | Questions | "
		     "Addresses | Flows |\n|---|---:|---:|---:|\n");
	cJSON_ArrayForEach(it, entries)
	{
		fputc('|', out);
		md_cell(out, str(it, "entry"), true);
		fprintf(out, " %.0f | %.0f | %.0f |\n", num(it, "questions"),
			num(it, "addresses"), num(it, "flows"));
	}
}

/* What rep's lists left out past their bounds, when any: "HEAD: N
 * denied names, ...TAIL". */
static void print_dropped(FILE *out, const cJSON *rep, const char *head,
			  const char *tail)
{
	double d = num(rep, "denied_dropped"), b = num(rep, "blocked_dropped"),
	       a = num(rep, "allowed_dropped"),
	       n = num(rep, "allowed_names_dropped");

	if (d + b + a + n > 0)
		fprintf(out,
			"%s: %.0f denied names, %.0f blocked flows, %.0f "
			"allow entries, %.0f allowed names%s\n",
			head, d, b, a, n, tail);
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
	if ((rc = build(rep, learned, usage, cfg, true)) != 0)
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

int report_format_parse(const char *s, enum report_format *out)
{
	static const struct {
		const char *name;
		enum report_format f;
	} fs[] = {
	    {"text", REPORT_TEXT}, {"md", REPORT_MD}, {"json", REPORT_JSON}};

	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		if (strcmp(s, fs[i].name) == 0) {
			*out = fs[i].f;
			return 0;
		}
	}
	return -EINVAL;
}

/* The running daemon's `report` answer (malloc'd text), or NULL with
 * why set: no daemon there, or it refused (an older daemon does not know
 * the command). */
static char *ask_daemon(const char *socket, char *why, size_t whylen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int rc;

	if (mem == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	rc = control_call(socket, "report", CONTROL_IO_TIMEOUT * 2, mem, why,
			  whylen);
	if (fclose(mem) != 0 && rc == 0) {
		rc = -ENOMEM;
		snprintf(why, whylen, "out of memory");
	}
	if (rc == 0 && (len == 0 || len > REPLY_MAX)) {
		rc = -EPROTO;
		snprintf(why, whylen, "an answer of %zu bytes", len);
	}
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		snprintf(why, whylen, "no daemon listens there");
	if (rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The daemon's answer split into its two records (each an object; a
 * daemon that keeps none said null: nothing seen). 0 or -EPROTO. */
static int from_daemon(const char *text, cJSON **learned, cJSON **usage)
{
	cJSON *root = cJSON_Parse(text), *l, *u;
	int rc = -EPROTO;

	if (!cJSON_IsObject(root))
		goto out;
	l = cJSON_DetachItemFromObjectCaseSensitive(root, "suggest");
	u = cJSON_DetachItemFromObjectCaseSensitive(root, "usage");
	*learned = cJSON_IsObject(l) ? l : cJSON_CreateObject();
	*usage = cJSON_IsObject(u) ? u : cJSON_CreateObject();
	if (*learned != l)
		cJSON_Delete(l);
	if (*usage != u)
		cJSON_Delete(u);
	rc = *learned != NULL && *usage != NULL ? 0 : -ENOMEM;
out:
	cJSON_Delete(root);
	return rc;
}

int report_run(const struct config *cfg, enum report_format fmt, FILE *out,
	       char *err, size_t errlen)
{
	cJSON *learned = NULL, *usage = NULL;
	char why[512], source[600];
	char *text = ask_daemon(cfg->control_socket, why, sizeof(why));
	int rc;

	if (text != NULL) {
		snprintf(source, sizeof(source),
			 "the running daemon, control socket %s",
			 cfg->control_socket);
		rc = report_render(cfg, text, source, fmt, out, err, errlen);
		free(text);
		return rc;
	}
	log_info("report",
		 "no report from the control socket %s (%s): reading "
		 "state_dir %s",
		 cfg->control_socket, why, cfg->state_dir);
	rc = from_state_dir(cfg, why, &learned, &usage, err, errlen);
	if (rc == 0) {
		snprintf(source, sizeof(source),
			 "state_dir %s (what the daemon wrote last)",
			 cfg->state_dir);
		rc = render(cfg, learned, usage, source, fmt, out, err, errlen);
	}
	cJSON_Delete(learned);
	cJSON_Delete(usage);
	return rc;
}

int report_render(const struct config *cfg, const char *text,
		  const char *source, enum report_format fmt, FILE *out,
		  char *err, size_t errlen)
{
	cJSON *learned = NULL, *usage = NULL;
	int rc = from_daemon(text, &learned, &usage);

	if (rc != 0)
		snprintf(err, errlen,
			 "the daemon on %s: its report is not understood",
			 cfg->control_socket);
	else
		rc = render(cfg, learned, usage, source, fmt, out, err, errlen);
	cJSON_Delete(learned);
	cJSON_Delete(usage);
	return rc;
}

/* What the last daemon wrote in state_dir: both files (either may be
 * missing, not both). */
static int from_state_dir(const struct config *cfg, const char *why,
			  cJSON **learned, cJSON **usage, char *err,
			  size_t errlen)
{
	int rl = 0, ru = 0;

	if ((*learned = read_state(cfg, LEARN_FILE, "names", &rl, err,
				   errlen)) == NULL)
		return rl;
	if ((*usage = read_state(cfg, USAGE_FILE, "entries", &ru, err,
				 errlen)) == NULL)
		return ru;
	if (rl == -ENOENT && ru == -ENOENT) {
		snprintf(err, errlen,
			 "nothing to report: no daemon answered on the "
			 "control socket %s (%s), and state_dir %s holds no "
			 "records (%s, %s). Has a daemon run with this config?",
			 cfg->control_socket, why, cfg->state_dir, LEARN_FILE,
			 USAGE_FILE);
		return -ENOENT;
	}
	return 0;
}

/* The report of learned and usage, from source, in fmt. */
static int render(const struct config *cfg, const cJSON *learned,
		  const cJSON *usage, const char *source,
		  enum report_format fmt, FILE *out, char *err, size_t errlen)
{
	cJSON *rep = cJSON_CreateObject();
	char *text = NULL;
	int rc = -ENOMEM;

	log_info("report", "from %s", source);
	if (rep == NULL || !cJSON_AddNumberToObject(rep, "version", 1) ||
	    !cJSON_AddStringToObject(rep, "source", source) ||
	    build(rep, learned, usage, cfg, false) != 0)
		goto out;
	rc = 0;
	if (fmt == REPORT_MD)
		print_markdown(out, rep);
	else if (fmt == REPORT_TEXT)
		print_text(out, rep);
	else if ((text = cJSON_Print(rep)) != NULL)
		fprintf(out, "%s\n", text);
	else
		rc = -ENOMEM;
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "the report: out of memory");
	free(text);
	cJSON_Delete(rep);
	return rc;
}
