// SPDX-License-Identifier: GPL-2.0
/*
 * test_secret_file.c - the --secret-file reader (userspace/secret_file.c):
 * the key's byte order, and every file it must refuse (not root's, open
 * to group or others, not a regular file, too short or long, not hex,
 * all zeros, missing), with the key left zeroed. Files live in a private
 * temporary directory; ownership checks need root (SKIP otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "testlib.h"
#include "secret_file.h"

static char dir[] = "/tmp/blitz-secret-XXXXXX";
static char path[64];

/* Write s to the test file with mode and owner uid. */
static void put(const char *s, mode_t mode, uid_t uid)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		T_CHECK_MSG(0, "cannot write %s", path);
	if (fd >= 0)
		close(fd);
	if (chmod(path, mode) || (uid && chown(path, uid, (gid_t)-1)))
		T_CHECK_MSG(0, "cannot set mode/owner of %s", path);
}

static int read_key(uint64_t key[2])
{
	key[0] = key[1] = 0x5555;
	return blitz_secret_file_read(path, key);
}

static void test_key_byte_order(void)
{
	uint64_t key[2];

	put("000102030405060708090a0b0c0d0e0f\n", 0600, 0);
	T_EQ_INT(read_key(key), 0);
	T_CHECK(key[0] == 0x0706050403020100ULL);
	T_CHECK(key[1] == 0x0f0e0d0c0b0a0908ULL);
	/* Upper case, CRLF, no newline at all: the same key. */
	put("000102030405060708090A0B0C0D0E0F\r\n", 0400, 0);
	T_EQ_INT(read_key(key), 0);
	T_CHECK(key[1] == 0x0f0e0d0c0b0a0908ULL);
	put("000102030405060708090a0b0c0d0e0f", 0600, 0);
	T_EQ_INT(read_key(key), 0);
	T_CHECK(key[0] == 0x0706050403020100ULL);
}

static void test_bad_contents(void)
{
	static const char *const bad[] = {
		"",
		"\n",
		"000102030405060708090a0b0c0d0e0\n",   /* 31 digits */
		"000102030405060708090a0b0c0d0e0f0\n", /* 33 digits */
		"000102030405060708090a0b0c0d0e0g\n",  /* not hex */
		"00010203 0405060708090a0b0c0d0e0f\n", /* space inside */
		"0x0102030405060708090a0b0c0d0e0f\n",
		"00000000000000000000000000000000\n", /* all zeros */
		"000102030405060708090a0b0c0d0e0f\n"
		"000102030405060708090a0b0c0d0e0f\n", /* two keys */
	};
	uint64_t key[2];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(bad[i], 0600, 0);
		T_CHECK_MSG(read_key(key) == -EINVAL, "accepted case %zu", i);
		T_CHECK_MSG(!key[0] && !key[1], "key not zeroed, case %zu", i);
	}
}

static void test_bad_files(void)
{
	static const mode_t open_modes[] = {0640, 0604, 0620, 0602, 0610, 0644};
	uint64_t key[2];
	size_t i;

	if (geteuid() != 0)
		return (void)T_SKIP("not root: cannot make root-owned files");
	for (i = 0; i < sizeof(open_modes) / sizeof(open_modes[0]); i++) {
		put("000102030405060708090a0b0c0d0e0f\n", open_modes[i], 0);
		T_CHECK_MSG(read_key(key) == -EPERM, "mode %04o accepted",
			    (unsigned int)open_modes[i]);
		T_CHECK(!key[0] && !key[1]);
	}
	put("000102030405060708090a0b0c0d0e0f\n", 0600, 65534);
	T_EQ_INT(read_key(key), -EPERM);
	T_CHECK(!key[0] && !key[1]);
	unlink(path);
	T_EQ_INT(read_key(key), -ENOENT);
	T_CHECK(!key[0] && !key[1]);
	T_EQ_INT(blitz_secret_file_read(dir, key), -EINVAL); /* a directory */
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/key", dir);
	T_RUN(test_key_byte_order);
	T_RUN(test_bad_contents);
	T_RUN(test_bad_files);
	unlink(path);
	rmdir(dir);
	T_EXIT();
}
