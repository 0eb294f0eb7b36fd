// SPDX-License-Identifier: GPL-2.0
/*
 * engines.c - the engine table (engine.h): one row per engine; its
 * descriptor is in engine_<name>.c. The tiers `blitz serve --engine`
 * takes are these names and "auto".
 */
#include <string.h>

#include "engine.h"

const struct engine_desc *const engine_table[] = {
	&engine_xdp, &engine_afxdp, &engine_dpdk, &engine_epoll, NULL,
};

const struct engine_desc *engine_find(const char *name)
{
	const struct engine_desc *const *e;

	for (e = engine_table; *e; e++)
		if (!strcmp((*e)->name, name))
			return *e;
	return NULL;
}

/* "auto" and every name, joined by sep (last before the final one). */
static void tiers(char *buf, size_t len, const char *sep, const char *last)
{
	const struct engine_desc *const *e;
	size_t n = (size_t)snprintf(buf, len, "auto");

	for (e = engine_table; *e && n < len; e++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      e[1] ? sep : last, (*e)->name);
}

const char *engine_tier_names(void)
{
	static char buf[128];

	if (!buf[0])
		tiers(buf, sizeof(buf), "|", "|");
	return buf;
}

const char *engine_tier_list(void)
{
	static char buf[128];

	if (!buf[0])
		tiers(buf, sizeof(buf), ", ", " or ");
	return buf;
}
