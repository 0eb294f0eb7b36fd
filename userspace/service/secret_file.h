/* SPDX-License-Identifier: GPL-2.0 */
/*
 * secret_file.h - the cookie key from a root-only file (--secret-file), so
 * that every host of a fleet, and every engine, issues the same cookies.
 *
 * The format: exactly 32 hexadecimal digits (128 bits, either case),
 * optionally followed by white space (a newline). Byte i of the key is the
 * pair of digits at 2i; key[0] is bytes 0..7 and key[1] bytes 8..15, each
 * read little-endian (SipHash's k0 and k1). Make one with
 *     umask 077; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >FILE
 * The file must be a regular file owned by root with no group or other
 * permission bits (chmod 600), and the key must not be all zeros.
 *
 * Owns: reading and checking that file. Must never print, log or keep the
 * key anywhere but the caller's buffer, nor take it from anywhere but a
 * file (never a command line, an environment variable or a pin).
 */
#ifndef BLITZ_SECRET_FILE_H
#define BLITZ_SECRET_FILE_H

#include <stdint.h>

#define BLITZ_SECRET_HEX_LEN 32 /* hex digits in the file: 128 bits */

/*
 * Read the key from path into key[2]. 0, or a negative errno with one line
 * printed saying what is wrong with the file and what to do (chown, chmod,
 * the length); key is then zeroed. The key's bytes are never printed.
 */
int blitz_secret_file_read(const char *path, uint64_t key[2]);

#endif /* BLITZ_SECRET_FILE_H */
