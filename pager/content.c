/* Synthetic content (design.md §5.1): each aligned 8-byte word holds its own word
 * index in the high 40 bits and 24 seeded bits below with the lowest set, so
 * no word is zero and a hole, a stale chunk or a misplaced chunk shows at any
 * byte. */
#include <string.h>

#include "resid.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

uint64_t resid_content_word(uint64_t word_off, uint64_t seed)
{
	uint64_t idx = word_off / 8;

	return (idx << 24) | (mix(idx ^ mix(seed)) & 0xfffffe) | 1;
}

/* The word holding `off`, and how many of its bytes from off lie before
 * end; *skip is off's place in the word. */
static unsigned piece(uint64_t off, uint64_t end, uint64_t seed, uint64_t *w,
		      unsigned *skip)
{
	unsigned take;

	*w = resid_content_word(off & ~7ull, seed);
	*skip = (unsigned)(off & 7);
	take = 8 - *skip;
	return take > end - off ? (unsigned)(end - off) : take;
}

void resid_content_fill(uint8_t *dst, uint64_t off, uint64_t len, uint64_t seed)
{
	uint64_t end = off + len, w;
	unsigned skip;

	while (off < end) {
		unsigned take = piece(off, end, seed, &w, &skip);

		memcpy(dst, (uint8_t *)&w + skip, take);
		dst += take;
		off += take;
	}
}

#ifdef RESID_HARNESS
uint64_t resid_content_mismatches(const uint8_t *buf, uint64_t off,
				  uint64_t len, uint64_t seed)
{
	uint64_t bad = 0, end = off + len, w;
	unsigned skip;

	/* A word at a time; bytes are counted only inside a word that
	 * differs. */
	while (off < end) {
		unsigned take = piece(off, end, seed, &w, &skip);
		uint64_t got;

		/* Whole aligned words are the common case: one compare. */
		if (take == 8) {
			memcpy(&got, buf, 8);
			if (got == w) {
				buf += 8;
				off += 8;
				continue;
			}
		}
		if (memcmp(buf, (uint8_t *)&w + skip, take))
			for (unsigned i = 0; i < take; i++)
				bad += buf[i] != ((uint8_t *)&w)[skip + i];
		buf += take;
		off += take;
	}
	return bad;
}
#endif
