// SPDX-License-Identifier: GPL-2.0-or-later
/* fwscope: the public fw_render, fw_apply, fw_check and fw_compare
 * (declared in firewall.h, where their callers look), dispatching on the
 * config's scope: forward to fwforward.c, output to firewall.c's fwout_*.
 * The dispatch sits above both scopes, so neither the engine (firewall.c)
 * nor a scope calls up. */
#include "fence/firewall.h"
#include "fence/fwforward.h"
#include "fence/fwnat.h"

static int compare_output(const struct config *cfg, int family,
			  const char *saved,
			  void (*report)(void *arg, const char *line),
			  void *arg);

/* The output scope is its filter part (firewall.c) and, for named
 * subjects, its nat part (fwnat.c). */
static int compare_output(const struct config *cfg, int family,
			  const char *saved,
			  void (*report)(void *arg, const char *line),
			  void *arg)
{
	int ret = fwout_compare(cfg, family, saved, report, arg);
	int nat = ret < 0 ? 0 : fwnat_compare(cfg, family, saved, report, arg);

	return ret < 0 ? ret : nat < 0 ? nat : ret + nat;
}

char *fw_render(const struct config *cfg, int family)
{
	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_tables_text(cfg, family, "");
	return fwout_render(cfg, family);
}

int fw_apply(const struct config *cfg, char *err, size_t errlen)
{
	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_apply(cfg, err, errlen);
	int ret = fwout_apply(cfg, err, errlen);

	return ret || cfg->mode == CONFIG_MODE_OFF
		   ? ret
		   : fwnat_apply(cfg, err, errlen);
}

int fw_check(const struct config *cfg, fw_report_fn report, void *arg)
{
	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_check(cfg, report, arg);
	return fw_check_with(cfg, compare_output, report, arg);
}

int fw_compare(const struct config *cfg, int family, const char *saved,
	       fw_report_fn report, void *arg)
{
	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_compare(cfg, family, saved, report, arg);
	return compare_output(cfg, family, saved, report, arg);
}
