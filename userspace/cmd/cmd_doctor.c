// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_doctor.c - `blitz doctor [ifname] [--json] [--probe]`: is this
 * machine, and this interface, ready for blitz? One aligned table, one
 * row per check, each ok / warn / fail with what to do.
 *
 * The system rows: the kernel and the features blitz uses (XDP links,
 * TCX, the hand-off kfunc, bpf_ktime_get_tai_ns: read from the kernel's
 * BTF), the sysctls of this network namespace the hand-off needs, bpffs,
 * the locked-memory limit, and for the dpdk engine hugepages, vfio/IOMMU
 * and the blitz-dpdk binary. The interface rows: the driver and what it
 * offers (the netdev family's xdp-features, nic_info.h), queues against
 * CPUs, MTU against the program and the body, LRO, what is attached and
 * pinned, and the engine `serve --engine auto` would pick.
 *
 * Owns: the verb, its options, the rows and their order, the table and
 * the JSON; the checks are in cmd_doctor_system.c (the machine) and
 * cmd_doctor_nic.c (the interface and the probes).
 * Must never change anything it does not undo: it reads, except with
 * --probe, which attaches a pass-all XDP program natively and detaches it,
 * and binds an AF_XDP socket in zero-copy mode and closes it (on a real
 * NIC either can reset its rings, hence only when asked).
 * Exit status: 0 when every row is ok or warn, 1 when any is fail.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "cmd_doctor_int.h"
#include "host_sys.h"
#include "log.h"

static const char *const verdict_name[] = {"ok", "warn", "fail"};

enum { OPT_JSON = OPT_CMD_BASE, OPT_PROBE };

static const struct opt_spec doctor_opts[] = {
	{OPT_JSON, "json", NULL, "one JSON object instead of the table", 0, 0},
	{OPT_PROBE, "probe", NULL,
	 "also attach a pass-all XDP program natively and bind an AF_XDP "
	 "socket in zero-copy mode, then undo both (may reset a NIC's rings)",
	 0, 0},
	{0},
};

const struct cmd_spec cmd_doctor_spec = {
	.name = "doctor",
	.operands = "[ifname]",
	.summary = "check this machine and an interface for blitz",
	.about = "Check that this machine (and <ifname>) can run blitz: one "
		 "row per check, ok / warn / fail with what to do. Reads only: "
		 "nothing is attached unless --probe. The service options say "
		 "which body to check.",
	.notes = "Exit status: 0 when every row is ok or warn, 1 when any "
		 "fails.",
	.groups = {doctor_opts, options_service, options_common},
};

void doctor_add(struct doctor *d, const char *check, enum verdict v,
		const char *fmt, ...)
{
	struct row *r;
	va_list ap;

	if (d->n >= MAX_ROWS)
		return;
	r = &d->rows[d->n++];
	snprintf(r->check, sizeof(r->check), "%s", check);
	r->v = v;
	va_start(ap, fmt);
	vsnprintf(r->value, sizeof(r->value), fmt, ap);
	va_end(ap);
	r->hint[0] = '\0';
}

bool doctor_flag(struct doctor *d, const char *check, bool ok,
		 const char *ok_value, enum verdict bad, const char *bad_value)
{
	doctor_add(d, check, ok ? V_OK : bad, "%s", ok ? ok_value : bad_value);
	return ok;
}

/* The hint of the row just added. */
void doctor_hint(struct doctor *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->n)
		return;
	va_start(ap, fmt);
	vsnprintf(d->rows[d->n - 1].hint, sizeof(d->rows[0].hint), fmt, ap);
	va_end(ap);
}

/* ---- output ---- */

static void print_table(const struct doctor *d)
{
	size_t w_check = strlen("CHECK"), w_value = strlen("VALUE"), l;
	const struct row *r;
	int i;

	for (i = 0; i < d->n; i++) {
		if ((l = strlen(d->rows[i].check)) > w_check)
			w_check = l;
		if ((l = strlen(d->rows[i].value)) > w_value)
			w_value = l;
	}
	printf("%-*s  %-6s  %-*s  %s\n", (int)w_check, "CHECK", "STATUS",
	       (int)w_value, "VALUE", "WHAT TO DO");
	for (i = 0; i < d->n; i++) {
		r = &d->rows[i];
		if (r->hint[0])
			printf("%-*s  %-6s  %-*s  %s\n", (int)w_check, r->check,
			       verdict_name[r->v], (int)w_value, r->value,
			       r->hint);
		else /* no trailing blanks */
			printf("%-*s  %-6s  %s\n", (int)w_check, r->check,
			       verdict_name[r->v], r->value);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const struct doctor *d, const int count[3])
{
	int i;

	printf("{\"interface\":");
	if (d->ifname)
		json_str(d->ifname);
	else
		printf("null");
	printf(",\"ok\":%d,\"warn\":%d,\"fail\":%d,\"checks\":[", count[V_OK],
	       count[V_WARN], count[V_FAIL]);
	for (i = 0; i < d->n; i++) {
		printf("%s{\"check\":", i ? "," : "");
		json_str(d->rows[i].check);
		printf(",\"status\":\"%s\",\"value\":",
		       verdict_name[d->rows[i].v]);
		json_str(d->rows[i].value);
		printf(",\"hint\":");
		json_str(d->rows[i].hint);
		printf("}");
	}
	printf("]}\n");
}

struct doctor_args {
	struct doctor *d;
	bool json;
};

/* One of doctor's options (--json, --probe, the service's) into ctx
 * (struct doctor_args): cli_parse_opts. */
static int doctor_opt(int opt, char *arg, void *ctx)
{
	struct doctor_args *a = ctx;

	if (opt == OPT_JSON) {
		a->json = true;
		return 1;
	}
	if (opt == OPT_PROBE) {
		a->d->probe = true;
		return 1;
	}
	return options_service_apply(&a->d->svc, opt, arg);
}

int cmd_doctor(int argc, char **argv)
{
	int r, i, ret = 1, count[3] = {0};
	struct doctor_args a = {0};
	struct doctor *d;

	d = calloc(1, sizeof(*d));
	if (!d) {
		pr_warn("out of memory\n");
		return 1;
	}
	service_init(&d->svc);
	a.d = d;
	r = cli_parse(&cmd_doctor_spec, argc, argv, doctor_opt, &a, 0, 1);
	if (r != CLI_CONTINUE) {
		ret = r;
		goto out;
	}
	if (service_finish(&d->svc))
		goto out;
	if (optind < argc)
		d->ifname = argv[optind];
	if (d->probe && !d->ifname) {
		pr_warn("--probe needs an interface: blitz doctor <ifname> "
			"--probe\n");
		goto out;
	}
	blitz_log_quiet_libs();
	host_caps(&d->caps); /* none when unreadable: the rows say so */
	d->btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(d->btf))
		d->btf = NULL;

	doctor_check_host(d);
	if (d->ifname) {
		doctor_check_interface(d);
	} else {
		doctor_check_memlock(d, 1);
		doctor_check_conn_memory(d, 1);
	}
	doctor_check_dpdk(d);

	for (i = 0; i < d->n; i++)
		count[d->rows[i].v]++;
	if (a.json)
		print_json(d, count);
	else
		print_table(d);
	ret = count[V_FAIL] ? 1 : 0;
out:
	if (d->btf)
		btf__free(d->btf);
	service_free(&d->svc);
	free(d);
	return ret;
}
