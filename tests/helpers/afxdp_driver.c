// SPDX-License-Identifier: GPL-2.0
/*
 * afxdp_driver.c - the loader in afxdp mode and the afxdp engine, nothing
 * else (no serve, no epoll fallback, no supervisor): what an e2e test runs
 * to check the engine and its TCP core alone.
 *
 *   afxdp_driver IFNAME PORT [BODY_FILE]
 *
 * With BODY_FILE the engine answers that body; the program is attached
 * with a one-byte body (its templates are unused in afxdp mode), so a body
 * larger than an XDP template is the engine's alone. Runs until SIGINT or
 * SIGTERM; exit 0, 1 when the loader or the engine failed, 2 on bad use.
 */
#include <signal.h>
#include <stdio.h>

#include "afxdp_engine.h"
#include "cli.h"
#include "http.h"
#include "loader.h"
#include "log.h"

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

int main(int argc, char **argv)
{
	static struct http_responses resp;
	struct blitz_service svc, small;
	struct blitz_loader_opts lo = {0};
	struct afxdp_engine_opts eo = {0};
	struct blitz_loaded *l;
	int ret;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s IFNAME PORT [BODY_FILE]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	service_init(&svc);
	if (service_set_port(&svc, argv[2]) ||
	    (argc == 4 && service_read_body_file(&svc, argv[3])) ||
	    service_finish(&svc) || service_responses(&svc, &resp))
		return argc == 4 ? 1 : 2;
	small = svc;
	if (argc == 4) {
		small.body = "x";
		small.body_len = 1;
	}
	lo.ifname = argv[1];
	lo.engine = BLITZ_MODE_AFXDP;
	lo.svc = &small;
	blitz_log_quiet_libs();
	if (blitz_loader_attach(&lo, &l))
		return 1;
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	eo.ifname = argv[1];
	eo.xsks_fd = blitz_loaded_xsks_fd(l);
	eo.svc = &svc;
	eo.resp = &resp;
	eo.cpu_first = -1;
	eo.counters_fd = blitz_loaded_counters_fd(l);
	ret = afxdp_engine_run(&eo, &stop);
	blitz_loader_detach(l);
	return ret ? 1 : 0;
}
