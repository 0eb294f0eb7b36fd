// SPDX-License-Identifier: GPL-2.0
/* log.c - see log.h. Warnings go to stderr prefixed "blitz: ". */
#include <stdarg.h>
#include <stdio.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"

int blitz_log_level = LOG_INFO;

void blitz_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > blitz_log_level)
		return;
	va_start(ap, fmt);
	if (level == LOG_WARN) {
		fputs("blitz: ", stderr);
		vfprintf(stderr, fmt, ap);
	} else if (level == LOG_DEBUG) {
		vfprintf(stderr, fmt, ap);
	} else {
		vfprintf(stdout, fmt, ap);
	}
	va_end(ap);
}

static int lib_print(const char *fmt, va_list ap)
{
	if (blitz_log_level < LOG_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	return lib_print(fmt, ap);
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	return lib_print(fmt, ap);
}

void blitz_log_quiet_libs(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
