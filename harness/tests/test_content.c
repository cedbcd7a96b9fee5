/* The synthetic content of design.md §5.1: no aligned word is zero, every word
 * encodes its offset, and any changed byte is counted. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resid_harness.h"
#include "tests/suites.h"
#include "workload/content_file.h"
#include "workload/read_check.h"

static void no_zero_word_and_offset_encoded(void)
{
	for (uint64_t w = 0; w < (1u << 20); w += 8) {
		uint64_t v = resid_content_word(w, 42);

		CU_ASSERT_FATAL(v != 0);
		CU_ASSERT_FATAL((v >> 24) * 8 == w);
	}
	/* Two seeds differ: a chunk from another seed is caught. */
	CU_ASSERT(resid_content_word(4096, 1) != resid_content_word(4096, 2));
}

static void fill_matches_words_at_any_alignment(void)
{
	uint8_t buf[64];

	for (uint64_t off = 0; off < 16; off++) {
		resid_content_fill(buf, 1000 + off, sizeof(buf), 7);
		CU_ASSERT(resid_content_mismatches(buf, 1000 + off, sizeof(buf),
						   7) == 0);
	}
}

static void every_corruption_is_counted(void)
{
	enum { LEN = 8192 };
	uint8_t *buf = malloc(LEN);

	CU_ASSERT_FATAL(buf != NULL);
	resid_content_fill(buf, 4096, LEN, 3);
	buf[17] ^= 1;
	buf[LEN - 1] ^= 0x80;
	CU_ASSERT_EQUAL(resid_content_mismatches(buf, 4096, LEN, 3), 2);
	/* A punched hole reads as zeros: every word of it is caught. */
	resid_content_fill(buf, 4096, LEN, 3);
	memset(buf + 4096, 0, 4096);
	for (unsigned w = 4096; w < LEN; w += 8)
		CU_ASSERT_FATAL(
			resid_content_mismatches(buf + w, 4096 + w, 8, 3) > 0);
	/* The right bytes at the wrong offset (a misplaced chunk): every word
	 * is caught too. */
	resid_content_fill(buf, 0, LEN, 3);
	for (unsigned w = 0; w < LEN; w += 8)
		CU_ASSERT_FATAL(
			resid_content_mismatches(buf + w, 4096 + w, 8, 3) > 0);
	free(buf);
}

/* read_check against the content and against a file 100 bytes short of the
 * region, across its 64 KiB pieces; the totals add up. */
static void read_check_counts_every_wrong_byte(void)
{
	enum { LEN = 50 * 4096 };
	char path[] = "/tmp/residctl-read-check-XXXXXX";
	uint8_t *buf = malloc(LEN);
	int fd = mkstemp(path);
	const struct expected syn = { .seed = 5, .fd = -1 },
			      file = { .fd = fd };
	uint64_t checked = 0, wrong = 0;

	CU_ASSERT_FATAL(buf != NULL && fd >= 0);
	resid_content_fill(buf, 0, LEN, 5);
	CU_ASSERT_FATAL(write(fd, buf, LEN - 100) == LEN - 100);
	CU_ASSERT(read_check(&syn, buf, 0, LEN, &checked, &wrong) == 0);
	buf[70000] ^= 0xff;
	CU_ASSERT(read_check(&syn, buf, 0, LEN, &checked, &wrong) == 1);
	CU_ASSERT(read_check(&file, buf, 0, LEN, &checked, &wrong) == 101);
	CU_ASSERT(read_check(&file, buf + 4096, 4096, 4096, &checked, NULL) ==
		  0);
	CU_ASSERT_EQUAL(checked, 3 * (uint64_t)LEN + 4096);
	CU_ASSERT_EQUAL(wrong, 102);
	CU_ASSERT(unlink(path) == 0 && close(fd) == 0);
	free(buf);
}

/* The file legs' backing: its size is not a page multiple, every byte is
 * the content, and the directory goes with everything in it. */
static void content_file_round_trip(void)
{
	char dir[4096], path[4200], err[4400];
	static uint8_t got[(1 << 20)];
	uint64_t len = content_file_len(1 << 20, 7);
	struct stat st;
	int fd;

	CU_ASSERT(len % 4096 != 0 && len < (1 << 20) && len > (1 << 20) - 4096);
	CU_ASSERT_EQUAL_FATAL(content_dir_make(dir, sizeof(dir), err,
					       sizeof(err)),
			      0);
	CU_ASSERT_EQUAL_FATAL(content_file_make(dir, "f.bin", len, 7, path,
						sizeof(path), err, sizeof(err)),
			      0);
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(fstat(fd, &st) == 0 && (uint64_t)st.st_size == len);
	CU_ASSERT_EQUAL(pread(fd, got, len, 0), (ssize_t)len);
	CU_ASSERT_EQUAL(resid_content_mismatches(got, 0, len, 7), 0);
	close(fd);
	CU_ASSERT_EQUAL(content_dir_remove(dir), 0);
	CU_ASSERT(stat(dir, &st) < 0 && errno == ENOENT);
}

void suite_content(void)
{
	CU_pSuite s = CU_add_suite("content", NULL, NULL);

	CU_add_test(s, "a content file: unaligned, right, removed",
		    content_file_round_trip);

	CU_add_test(s, "no zero word, offset encoded",
		    no_zero_word_and_offset_encoded);
	CU_add_test(s, "fill matches at any alignment",
		    fill_matches_words_at_any_alignment);
	CU_add_test(s, "every corruption is counted",
		    every_corruption_is_counted);
	CU_add_test(s, "read_check counts every wrong byte",
		    read_check_counts_every_wrong_byte);
}
