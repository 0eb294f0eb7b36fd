// SPDX-License-Identifier: GPL-2.0
/*
 * secret_file.c - read and check a --secret-file (see secret_file.h).
 *
 * Owns: the checks of the file (owner, mode, type) on the opened
 * descriptor, so what is checked is what is read, and the parse of its
 * 32 hex digits. Must never print the key or leave it in a buffer of its
 * own (the read buffer is wiped).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hex.h"
#include "log.h"
#include "secret_file.h"

#define MAKE_ONE                                                  \
	"make one with `umask 077; head -c 16 /dev/urandom | od " \
	"-An -tx1 | tr -d ' \\n' >%s`"

/* Owner, type and mode of the open file: root's alone. */
static int check_file(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st)) {
		pr_warn("cannot stat secret file %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_warn("secret file %s is not a regular file: give a file "
			"holding %d hex digits\n",
			path, BLITZ_SECRET_HEX_LEN);
		return -EINVAL;
	}
	if (st.st_uid != 0) {
		pr_warn("secret file %s is owned by uid %u, not root: `chown "
			"root:root %s`\n",
			path, (unsigned int)st.st_uid, path);
		return -EPERM;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		pr_warn("secret file %s is open to group or others (mode "
			"%04o): `chmod 600 %s`\n",
			path, (unsigned int)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/* buf[0..n): 32 hex digits, then only white space. */
static int parse_key(const char *path, const unsigned char *buf, size_t n,
		     uint64_t key[2])
{
	size_t digits = 0, i, end = n;
	uint8_t bytes[16] = {0};
	int v, b;

	while (end && (buf[end - 1] == '\n' || buf[end - 1] == '\r' ||
		       buf[end - 1] == ' ' || buf[end - 1] == '\t'))
		end--;
	for (i = 0; i < end; i++) {
		v = hex_digit(buf[i]);
		if (v < 0) {
			pr_warn("secret file %s: byte %zu is not a hex digit: "
				"the file holds %d hex digits; " MAKE_ONE "\n",
				path, i + 1, BLITZ_SECRET_HEX_LEN, path);
			return -EINVAL;
		}
		if (digits < 2 * sizeof(bytes))
			bytes[digits / 2] |=
				(uint8_t)(v << (digits % 2 ? 0 : 4));
		digits++;
	}
	if (digits != BLITZ_SECRET_HEX_LEN) {
		pr_warn("secret file %s holds %zu hex digits: it needs exactly "
			"%d (128 bits); " MAKE_ONE "\n",
			path, digits, BLITZ_SECRET_HEX_LEN, path);
		explicit_bzero(bytes, sizeof(bytes));
		return -EINVAL;
	}
	key[0] = key[1] = 0;
	for (b = 7; b >= 0; b--) {
		key[0] = key[0] << 8 | bytes[b];
		key[1] = key[1] << 8 | bytes[8 + b];
	}
	explicit_bzero(bytes, sizeof(bytes));
	if (!key[0] && !key[1]) {
		pr_warn("secret file %s holds an all-zero key: " MAKE_ONE "\n",
			path, path);
		return -EINVAL;
	}
	return 0;
}

int blitz_secret_file_read(const char *path, uint64_t key[2])
{
	/* Room for the digits, a CRLF, and a sign that there is more. */
	unsigned char buf[BLITZ_SECRET_HEX_LEN + 32];
	size_t n = 0;
	ssize_t r;
	int fd, err;

	key[0] = key[1] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot open secret file %s: %s\n", path,
			strerror(errno));
		return err;
	}
	err = check_file(fd, path);
	while (!err && n < sizeof(buf)) {
		r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			pr_warn("cannot read secret file %s: %s\n", path,
				strerror(errno));
		}
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!err)
		err = parse_key(path, buf, n, key);
	explicit_bzero(buf, sizeof(buf));
	if (err)
		key[0] = key[1] = 0;
	return err;
}
