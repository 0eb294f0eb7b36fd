/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cmd_doctor_int.h - what the parts of `blitz doctor` share: the rows and
 * what the checks learnt. cmd_doctor.c holds the verb and its output,
 * cmd_doctor_system.c the machine's rows (kernel, privileges, sysctls,
 * bpffs, memory, dpdk), cmd_doctor_nic.c the interface's rows and probes.
 * Only those three include it.
 */
#ifndef BLITZ_CMD_DOCTOR_INT_H
#define BLITZ_CMD_DOCTOR_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/btf.h>

#include "http.h"
#include "loader.h"
#include "service.h"

enum verdict { V_OK, V_WARN, V_FAIL };

#define MAX_ROWS 40

struct row {
	char check[20];
	enum verdict v;
	char value[112];
	char hint[240];
};

struct doctor {
	struct row rows[MAX_ROWS];
	int n;
	const char *ifname;
	int ifindex;
	bool probe;
	struct btf *btf;
	uint64_t caps;
	/* What the rows learnt, for the engine `auto` would pick. */
	bool privileged, bpffs, body_fits, mtu_native, native, have_features;
	unsigned int mtu;
	uint64_t features;
	struct blitz_attached att;
	struct blitz_service svc;
	struct http_responses resp; /* of svc: the body row */
};

/* A row; and the hint of the row just added. */
void __attribute__((format(printf, 4, 5)))
doctor_add(struct doctor *d, const char *check, enum verdict v, const char *fmt,
	   ...);
void __attribute__((format(printf, 2, 3)))
doctor_hint(struct doctor *d, const char *fmt, ...);

/* A row of a yes/no check: ok_value when ok, else bad_value at verdict
 * bad. Returns ok, so that a caller adds the hint of a bad row. */
bool doctor_flag(struct doctor *d, const char *check, bool ok,
		 const char *ok_value, enum verdict bad, const char *bad_value);

/* cmd_doctor_system.c: the kernel, privileges, sysctls and bpffs rows. */
void doctor_check_host(struct doctor *d);
/* The locked-memory row, for the afxdp engine's UMEM of queues queues. */
void doctor_check_memlock(struct doctor *d, unsigned int queues);
/* The connection tables of the afxdp and dpdk engines over queues. */
void doctor_check_conn_memory(struct doctor *d, unsigned int queues);
/* Hugepages, vfio/IOMMU and the blitz-dpdk binary. */
void doctor_check_dpdk(struct doctor *d);

/* cmd_doctor_nic.c: every row of d->ifname, and with d->probe the probes. */
void doctor_check_interface(struct doctor *d);

#endif /* BLITZ_CMD_DOCTOR_INT_H */
