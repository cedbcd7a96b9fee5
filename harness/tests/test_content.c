/* The synthetic content of SPEC §5.1: no aligned word is zero, every word
 * encodes its offset, and any changed byte is counted. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "resid_harness.h"
#include "suites.h"

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
		CU_ASSERT_FATAL(resid_content_mismatches(buf + w, 4096 + w, 8,
							 3) > 0);
	/* The right bytes at the wrong offset (a misplaced chunk): every word
	 * is caught too. */
	resid_content_fill(buf, 0, LEN, 3);
	for (unsigned w = 0; w < LEN; w += 8)
		CU_ASSERT_FATAL(resid_content_mismatches(buf + w, 4096 + w, 8,
							 3) > 0);
	free(buf);
}

void suite_content(void)
{
	CU_pSuite s = CU_add_suite("content", NULL, NULL);

	CU_add_test(s, "no zero word, offset encoded",
		    no_zero_word_and_offset_encoded);
	CU_add_test(s, "fill matches at any alignment",
		    fill_matches_words_at_any_alignment);
	CU_add_test(s, "every corruption is counted",
		    every_corruption_is_counted);
}
