// SPDX-License-Identifier: GPL-2.0-or-later
/* observe: assembles the observability pieces for serve.c. The NFLOG
 * socket needs CAP_NET_ADMIN for its configuration, and so does the
 * conntrack event group the usage counts flows from; the state directory
 * may need root to be created: all happen here, before the drop. In
 * mode "off" there is no fence, so nothing to attribute or learn; only
 * the metrics endpoint runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observe/attrib.h"
#include "base/instance.h"
#include "observe/ctevents.h"
#include "observe/learn.h"
#include "base/log.h"
#include "observe/metrics.h"
#include "observe/nflog.h"
#include "observe/observe.h"
#include "observe/recent.h"
#include "observe/usage.h"

struct observe {
	struct recent *recent;
	struct attrib *attrib;
	struct nflog *nflog;
	struct learn *learn;
	struct usage *usage;
	struct ctevents *ct; /* flows for the usage counts */
	struct metrics *metrics;
	int queue_fd; /* METRICS_QUEUE_PROC, opened by observe_set_queue */
	uint16_t queue;
};

static void open_attribution(struct observe *o, struct event_base *base,
			     const struct config *cfg);
static void open_learn(struct observe *o, struct event_base *base,
		       const struct config *cfg, uid_t uid, gid_t gid);
static void on_flow(void *arg, const struct ct_flow *f);

static void open_attribution(struct observe *o, struct event_base *base,
			     const struct config *cfg)
{
	char err[512];

	o->recent = recent_new(RECENT_DEFAULT_MAX, cfg->ttl_min, cfg->ttl_max);
	o->attrib = attrib_new(cfg);
	if (o->recent == NULL || o->attrib == NULL) {
		log_warn("nflog", "out of memory: no blocked-flow attribution");
		return;
	}
	recent_set_global(o->recent);
	o->nflog = nflog_open(base, attrib_packet, o->attrib, err, sizeof(err));
	if (o->nflog == NULL)
		log_warn("nflog", "%s: blocked flows will not be attributed",
			 err);
}

static void open_learn(struct observe *o, struct event_base *base,
		       const struct config *cfg, uid_t uid, gid_t gid)
{
	char err[512];
	int fd = instance_open_dir(cfg->state_dir, uid, gid, err, sizeof(err));

	if (fd < 0) {
		log_warn("learn", "%s: `dnsfence suggest` will have no data",
			 err);
		return;
	}
	o->learn = learn_new(base, fd, cfg->state_dir,
			     config_mode_name(cfg->mode), uid);
	if (o->learn == NULL)
		log_warn("learn", "out of memory: no learned allowlist");
	learn_set_global(o->learn);
	fd = instance_open_dir(cfg->state_dir, uid, gid, err, sizeof(err));
	if (fd >= 0 &&
	    (o->usage = usage_new(base, fd, cfg->state_dir, uid)) == NULL)
		log_warn("usage", "out of memory: allow entries not counted");
	if (o->usage != NULL && o->recent != NULL &&
	    (o->ct = ctevents_open(base, on_flow, o, err, sizeof(err))) == NULL)
		log_warn("usage", "%s: flows per allow entry not counted", err);
}

/* A connection that got out: the name its address was answered for, if
 * the recent memory has it, counts a flow on that name's entry. */
static void on_flow(void *arg, const struct ct_flow *f)
{
	struct observe *o = arg;
	struct recent_info info;

	if (recent_get(o->recent, &f->dst, &info))
		usage_flow(o->usage, info.name);
}

struct usage *observe_usage(const struct observe *o)
{
	return o != NULL ? o->usage : NULL;
}

struct observe *observe_open(struct event_base *base, const struct config *cfg,
			     uid_t uid, gid_t gid)
{
	struct observe *o = calloc(1, sizeof(*o));
	char err[512];

	if (o == NULL)
		return NULL;
	o->queue_fd = -1;
	if (cfg->mode != CONFIG_MODE_OFF) {
		open_attribution(o, base, cfg);
		open_learn(o, base, cfg, uid, gid);
	}
	if (cfg->metrics_on) {
		o->metrics = metrics_open(base, cfg, err, sizeof(err));
		if (o->metrics == NULL) {
			log_err("metrics", "%s", err);
			observe_close(o);
			return NULL;
		}
		metrics_set_usage(o->metrics, o->usage);
		metrics_set_attrib(o->metrics, o->attrib);
	}
	return o;
}

void observe_set_queue(struct observe *o, uint16_t num)
{
	if (o == NULL || o->queue_fd >= 0)
		return;
	o->queue_fd = open(METRICS_QUEUE_PROC, O_RDONLY | O_CLOEXEC);
	if (o->queue_fd < 0) {
		log_warn("metrics", "%s: %s (no queue depth or drops)",
			 METRICS_QUEUE_PROC, strerror(errno));
		return;
	}
	o->queue = num;
	metrics_set_queue(o->metrics, o->queue_fd, num);
}

int observe_queue(const struct observe *o, struct metrics_queue *q)
{
	return o != NULL ? metrics_queue_read(o->queue_fd, o->queue, q)
			 : -EBADF;
}

struct attrib *observe_attrib(const struct observe *o)
{
	return o != NULL ? o->attrib : NULL;
}

const struct learn *observe_learn(const struct observe *o)
{
	return o != NULL ? o->learn : NULL;
}

void observe_quiet(struct observe *o, uid_t uid, uint64_t until_ms)
{
	if (o != NULL)
		attrib_quiet(o->attrib, uid, until_ms);
}

void observe_set_config(struct observe *o, const struct config *cfg)
{
	if (o == NULL)
		return;
	if (o->attrib != NULL)
		attrib_set_config(o->attrib, cfg);
	if (o->recent != NULL)
		recent_set_ttl(o->recent, cfg->ttl_min, cfg->ttl_max);
	if (o->learn != NULL)
		learn_set_mode(o->learn, config_mode_name(cfg->mode));
}

void observe_close(struct observe *o)
{
	if (o == NULL)
		return;
	metrics_close(o->metrics);
	if (o->queue_fd >= 0)
		close(o->queue_fd);
	nflog_close(o->nflog);
	learn_free(o->learn);
	ctevents_close(o->ct);
	usage_free(o->usage);
	attrib_free(o->attrib);
	recent_free(o->recent);
	free(o);
}
