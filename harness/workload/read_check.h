/* "Read through A and compare every byte", written once for the scenarios,
 * the storms, the simulation and verify (design.md §5.1: every byte read is
 * checked, not a sample). */
#ifndef HARNESS_READ_CHECK_H
#define HARNESS_READ_CHECK_H

#include <stdint.h>

/* What the bytes of a region must hold. */
struct expected {
	uint64_t seed; /* the design.md §5.1 content of this seed, */
	int fd;        /* or, when >= 0, the bytes of this file (pread) */
};

/* Compares the len bytes at got, which stand at region offset off (read
 * through A, or the simulation's copy of them), with what they must hold.
 * Adds len to *checked and the wrong bytes to *wrong (NULL: not counted),
 * atomically since readers run concurrently; returns the wrong bytes. When
 * the file cannot be read further (it ends early), the bytes not compared
 * count as wrong: a caller that must tell the oracle's failure apart uses
 * read_check_file. */
uint64_t read_check(const struct expected *e, const uint8_t *got, uint64_t off,
		    uint64_t len, uint64_t *checked, uint64_t *wrong);

/* The file's bytes at [off, off+len) against got: short reads go on, EINTR
 * is retried, the wrong bytes are added to *bad and the bytes compared go to
 * *compared (NULL: not wanted). 0, or -errno when the oracle's own read
 * failed (-ENODATA: the file ends early). */
int read_check_file(int fd, const uint8_t *got, uint64_t off, uint64_t len,
		    uint64_t *bad, uint64_t *compared);

#endif
