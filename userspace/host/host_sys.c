// SPDX-License-Identifier: GPL-2.0
/*
 * host_sys.c - capabilities and sysctls (host_sys.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_sys.h"

int host_caps(uint64_t *effective)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	*effective = 0;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*effective = (uint64_t)data[0].effective |
		     ((uint64_t)data[1].effective << 32);
	return 0;
}

int host_sysctl_read(const char *name, char *buf, size_t len)
{
	char path[192];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? 0 : -EIO;
}

int host_sysctl_long(const char *name, long *v)
{
	char buf[32];
	int err = host_sysctl_read(name, buf, sizeof(buf));

	if (err)
		return err;
	return sscanf(buf, "%ld", v) == 1 ? 0 : -EIO;
}
