// SPDX-License-Identifier: GPL-2.0-or-later
/* fence: the commands behind the command line. setup installs the fence
 * (install.c: the sets, their reconcile with the policy fingerprint, the
 * rules: the sequence the guard's restore runs too) and proves it with
 * the same comparison `check` makes (drift); serve refuses to start
 * unless that comparison finds the fence in place, then hands over to
 * serve.c, which drops privileges; run does both in one process, so it
 * serves right after its own verification. mode "off" installs nothing,
 * loudly. Another config's fence in the namespace is refused, exit 4
 * (fwowner.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "fence/drift.h"
#include "cli/fence.h"
#include "fence/firewall.h"
#include "fence/fwforward.h"
#include "fence/fwowner.h"
#include "base/instance.h"
#include "fence/fwnat.h"
#include "base/log.h"
#include "daemon/restart.h"
#include "fence/install.h"
#include "fence/mldset.h"
#include "daemon/selftest.h"
#include "daemon/serve.h"
#include "sets/setsadm.h"

static void report_log(void *arg, const char *line);
static void report_stdout(void *arg, const char *line);
static int setup(const struct config *cfg, uid_t uid, gid_t gid);
static int install_verified(const struct config *cfg, uid_t uid, gid_t gid);
static int teardown(const struct config *cfg);
static int destroy_client_sets(const struct config *cfg, char *err,
			       size_t errlen);
static int serve_fenced(const struct config *cfg, const char *path, uid_t uid,
			gid_t gid, bool verify);

static void report_log(void *arg, const char *line)
{
	log_err((const char *)arg, "%s", line);
}

static void report_stdout(void *arg, const char *line)
{
	(void)arg;
	printf("%s\n", line);
}

/* Install the fence (install.c, the sequence the guard's restore runs
 * too, here with restart.c judging the entries of another policy), then
 * read it back. One view of the firewall (fw_snapshot) for the whole
 * step: each table is read once, and again after each of our writes. */
static int setup(const struct config *cfg, uid_t uid, gid_t gid)
{
	int r;

	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("setup",
			 "mode is \"off\": installing NO rules and NO sets; "
			 "the workload is NOT fenced");
		return 0;
	}
	fw_snapshot(true);
	r = install_verified(cfg, uid, gid);
	fw_snapshot(false);
	return r;
}

static int install_verified(const struct config *cfg, uid_t uid, gid_t gid)
{
	struct restart_owner owner = {uid, gid};
	char err[1024];
	int r;

	/* Another config's fence in this namespace: refused before the
	 * reconcile or the rules touch it (fwowner.h). */
	r = fwowner_foreign(cfg, false, err, sizeof(err));
	if (r != 0) {
		log_err("setup", "%s", err);
		return r > 0 ? -EBUSY : -EIO;
	}
	if (install_fence(cfg, INSTALL_RECONCILE, restart_keep, &owner, err,
			  sizeof(err)) != 0) {
		log_err("setup", "%s", err);
		return -EIO;
	}
	r = drift_compare(cfg, report_log, (void *)"setup", err, sizeof(err));
	if (r != 0) {
		log_err("setup", "verification failed%s%s", r < 0 ? ": " : "",
			r < 0 ? err : " (differences above)");
		return -EIO;
	}
	log_info("setup",
		 "rules and sets in place (mode %s, upstream traffic "
		 "for socket mark %#x only)",
		 config_mode_name(cfg->mode), (unsigned)cfg->mark);
	return 0;
}

/* Serve, after checking (verify) that the fence is in place. */
static int serve_fenced(const struct config *cfg, const char *path, uid_t uid,
			gid_t gid, bool verify)
{
	char err[512];
	int r;

	if (verify && cfg->mode != CONFIG_MODE_OFF) {
		r = drift_compare(cfg, report_log, (void *)"serve", err,
				  sizeof(err));
		if (r != 0) {
			log_err("serve",
				"%s: refusing to serve an unfenced namespace; "
				"run 'dnsfence setup' (or 'run') first",
				r < 0 ? err : "the fence is not in place");
			return -EIO;
		}
	}
	return serve_run(cfg, path, uid, gid);
}

int fence_run(const struct config *cfg, const char *path, uid_t uid, gid_t gid,
	      bool do_setup, bool do_serve)
{
	struct instance *in = NULL;
	char err[512];
	int r = 0;

	/* A second daemon is refused before it touches the fence, the
	 * state or the first one's control socket. */
	if (do_serve &&
	    (in = instance_claim(cfg->state_dir, cfg->control_socket, uid, gid,
				 err, sizeof(err))) == NULL) {
		log_err("main", "%s", err);
		return -EBUSY;
	}
	if (do_setup)
		r = setup(cfg, uid, gid);
	if (r == 0 && do_serve)
		r = serve_fenced(cfg, path, uid, gid, !do_setup);
	instance_release(in);
	return r;
}

int fence_check(const struct config *cfg)
{
	char err[512];
	int r;

	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("check", "mode is \"off\": no fence is expected, "
				  "nothing to compare");
		return 0;
	}
	selftest_warn_capable(cfg);
	fw_snapshot(true);
	r = drift_compare(cfg, report_stdout, NULL, err, sizeof(err));
	fw_snapshot(false);
	fflush(stdout);
	if (r < 0) {
		log_err("check", "%s", err);
		return r;
	}
	return r > 0 ? 1 : 0;
}

int fence_teardown(const struct config *cfg)
{
	int r;

	fw_snapshot(true);
	r = teardown(cfg);
	fw_snapshot(false);
	return r;
}

/* The client sets by their names, whatever "bind" says now: a fence set
 * up with "client" and torn down after a change to "interfaces" leaves
 * none behind. */
static int destroy_client_sets(const struct config *cfg, char *err,
			       size_t errlen)
{
	char c4[32], c6[32];

	config_client_set_name(cfg->set4, c4, sizeof(c4));
	config_client_set_name(cfg->set6, c6, sizeof(c6));
	return setsadm_destroy(c4, c6, err, errlen);
}

static int teardown(const struct config *cfg)
{
	char err[1024];
	int r = fwowner_foreign(cfg, true, err, sizeof(err));

	if (r != 0) {
		log_err("teardown", "%s", err);
		return r > 0 ? -EBUSY : -EIO;
	}

	if ((cfg->scope == CONFIG_SCOPE_FORWARD
		 ? fwfwd_remove(err, sizeof(err))
		 : (fw_remove(err, sizeof(err)) ||
		    fwnat_remove(err, sizeof(err)))) != 0) {
		log_err("teardown", "firewall: %s", err);
		r = -EIO;
	}
	if (setsadm_destroy(cfg->set4, cfg->set6, err, sizeof(err)) != 0) {
		log_err("teardown", "sets: %s", err);
		r = -EIO;
	}
	if (cfg->scope == CONFIG_SCOPE_FORWARD &&
	    destroy_client_sets(cfg, err, sizeof(err)) != 0) {
		log_err("teardown", "client sets: %s", err);
		r = -EIO;
	}
	if (cfg->scope == CONFIG_SCOPE_OUTPUT &&
	    mldset_destroy(cfg, err, sizeof(err)) != 0) {
		log_err("teardown", "MLD set: %s", err);
		r = -EIO;
	}
	if (r == 0)
		log_warn("teardown",
			 "rules and sets removed: outbound traffic is NO "
			 "LONGER fenced");
	return r;
}
