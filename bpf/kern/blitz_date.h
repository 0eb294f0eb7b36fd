/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_date.h - the Date header of the BPF programs (the XDP engine and
 * the TC program's multi-segment replies): the IMF-fixdate of the current
 * second, per CPU, recomputed when the second changes.
 *
 * Owns: the date_cache map (each program that includes this has its own)
 * and the formatting. Must never read the clock more than once per jiffy.
 * Include after vmlinux.h and bpf_helpers.h; needs struct blitz_config.
 */
#ifndef BLITZ_DATE_H
#define BLITZ_DATE_H

#include "blitz_csum.h"

/* The Date header of the current second, recomputed when it changes. */
struct blitz_date {
	__u64 jiffies; /* when the clock was last read */
	__u64 sec;     /* unix second the bytes show */
	__u32 sum;     /* native 16-bit sum of the bytes from an even offset */
	__u8 bytes[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_date);
} date_cache SEC(".maps");

/* Brace lists: clang 14 puts string literals in a section its BTF
 * misplaces; 40 bytes keeps it out of a mergeable .rodata.cst32. */
static const __u8 wday_names[40] = {'S', 'u', 'n', 'M', 'o', 'n', 'T',
				    'u', 'e', 'W', 'e', 'd', 'T', 'h',
				    'u', 'F', 'r', 'i', 'S', 'a', 't'};
static const __u8 month_names[64] = {
	'J', 'a', 'n', 'F', 'e', 'b', 'M', 'a', 'r', 'A', 'p', 'r',
	'M', 'a', 'y', 'J', 'u', 'n', 'J', 'u', 'l', 'A', 'u', 'g',
	'S', 'e', 'p', 'O', 'c', 't', 'N', 'o', 'v', 'D', 'e', 'c'};

/* v & mask, computed so that clang cannot drop a mask it proves useless:
 * the verifier does not track % and needs to see the bound. */
static __always_inline __u32 opaque_mask(__u32 v, __u32 mask)
{
	asm volatile("" : "+r"(v));
	return v & mask;
}

static __always_inline void put2(__u8 *p, __u32 v)
{
	p[0] = (__u8)('0' + v / 10);
	p[1] = (__u8)('0' + v % 10);
}

/* IMF-fixdate of a unix second (civil-from-days on 400-year eras). */
static __noinline void date_fill(struct blitz_date *d, __u64 sec)
{
	__u64 days = sec / 86400, sod = sec % 86400;
	__u64 z = days + 719468, era = z / 146097, doe = z - era * 146097;
	__u64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	__u64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	__u64 mp = (5 * doy + 2) / 153;
	__u32 day = (__u32)(doy - (153 * mp + 2) / 5 + 1);
	__u32 mon = (__u32)(mp < 10 ? mp + 3 : mp - 9);
	__u32 year = (__u32)(yoe + era * 400 + (mon <= 2));
	__u32 wd = (__u32)((days + 4) % 7), sum = 0, i;
	__u8 *b = d->bytes;

	if (year > 9999)
		year = 9999;
	for (i = 0; i < 3; i++) {
		b[i] = wday_names[opaque_mask(wd * 3 + i, 31)];
		b[8 + i] = month_names[opaque_mask((mon - 1) * 3 + i, 63)];
	}
	b[3] = ',';
	b[4] = ' ';
	put2(b + 5, day);
	b[7] = ' ';
	b[11] = ' ';
	put2(b + 12, year / 100);
	put2(b + 14, year % 100);
	b[16] = ' ';
	put2(b + 17, (__u32)(sod / 3600));
	b[19] = ':';
	put2(b + 20, (__u32)(sod / 60 % 60));
	b[22] = ':';
	put2(b + 23, (__u32)(sod % 60));
	b[25] = ' ';
	b[26] = 'G';
	b[27] = 'M';
	b[28] = 'T';
	/* Native sum, as a 16-bit load of each byte pair would see it. */
	for (i = 0; i < 28; i += 2)
		sum += *(__u16 *)(b + i);
	b[29] = 0;
	sum += *(__u16 *)(b + 28);
	d->sum = blitz_fold(sum);
	d->sec = sec;
}

static __always_inline struct blitz_date *
date_now(const struct blitz_config *cfg)
{
	__u32 key = 0;
	struct blitz_date *d = bpf_map_lookup_elem(&date_cache, &key);
	__u64 sec, j;

	if (!d)
		return 0;
	/* The TAI clock costs a helper call and a clock read per frame;
	 * jiffies are nearly free. Read the clock once per tick, so the Date
	 * turns over at most one tick (<= 4 ms) after the second does. */
	j = bpf_jiffies64();
	if (d->jiffies == j)
		return d;
	d->jiffies = j;
	sec = (bpf_ktime_get_tai_ns() + (__u64)cfg->tai_to_unix_ns) /
	      1000000000ULL;
	if (d->sec != sec)
		date_fill(d, sec);
	return d;
}

#endif /* BLITZ_DATE_H */
