// SPDX-License-Identifier: GPL-2.0
/*
 * loader_attach.c - the loader alone, through its API: attach the program
 * with a body from a file in afxdp or xdp mode, print what the pinned
 * config holds, detach.
 *
 *   loader_attach IFNAME AFXDP BODY_FILE
 *
 * AFXDP 1: afxdp mode, 0: xdp mode. Prints "mode M body B template T"
 * (T: the length of the GET keep-alive template). Exit 0; 1 when the
 * loader refused (its message on stderr); 2 on bad use or a bad body;
 * 3 when the config could not be read or the detach failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "cli.h"
#include "http.h"
#include "loader.h"
#include "log.h"

int main(int argc, char **argv)
{
	static struct http_responses resp;
	struct blitz_loader_opts lo = {0};
	struct blitz_service svc;
	struct blitz_loaded *l;
	struct blitz_config c;
	__u32 k = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s IFNAME AFXDP BODY_FILE\n", argv[0]);
		return 2;
	}
	lo.ifname = argv[1];
	lo.resp = &resp;
	lo.engine = atoi(argv[2]) ? BLITZ_MODE_AFXDP : BLITZ_MODE_XDP;
	service_init(&svc);
	if (service_read_body_file(&svc, argv[3]) || service_finish(&svc) ||
	    service_responses(&svc, &resp))
		return 2;
	lo.svc = &svc;
	blitz_log_quiet_libs();
	if (blitz_loader_attach(&lo, &l))
		return 1;
	if (bpf_map_lookup_elem(blitz_loaded_config_fd(l), &k, &c))
		return 3;
	printf("mode %u body %zu template %u\n", c.mode, svc.body_len,
	       c.resp[BLITZ_RESP_GET_KA].len);
	return blitz_loader_detach(l) ? 3 : 0;
}
