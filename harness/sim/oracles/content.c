/* The content oracle (design.md §5.1): every byte an application thread reads
 * is compared with the content it must hold, a function of its offset and
 * the seed in which no aligned word is zero and every word encodes its own
 * offset, so a hole, a stale chunk or a chunk in the wrong slot shows. */
#include <inttypes.h>

#include "sim/oracles/sim_oracle.h"
#include "workload/read_check.h"

uint64_t oracle_content(struct sim *s, const uint8_t *buf, uint64_t off,
			uint64_t len, uint64_t seed, uint32_t chunk,
			uint64_t skip, uint64_t *checked)
{
	const struct expected e = { .seed = seed, .fd = -1 };
	uint64_t bad = read_check(&e, buf, off, len, checked, NULL);

	if (bad)
		sim_fail(s,
			 "%" PRIu64 " bytes wrong in chunk %u [+%" PRIu64
			 ", +%" PRIu64 ")",
			 bad, chunk, skip, len);
	return bad;
}
