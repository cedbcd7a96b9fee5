/* resid.h: two regions in one process are independent: each reads its own
 * file right and keeps within its own budget while both are read in turn.
 *
 *	two FILE1 FILE2 */
#include "client.h"

#define LEN (12 * MiB)
#define CHUNK MiB

int main(int argc, char **argv)
{
	char err[RESID_ERRLEN];
	struct resid_region *r[2];
	uint64_t budget[2] = { 3 * MiB, 5 * MiB }, bad[2] = { 0, 0 };

	if (argc != 3 || make_file(argv[1], LEN, 11) < 0 ||
	    make_file(argv[2], LEN, 13) < 0) {
		fprintf(stderr, "usage: two FILE1 FILE2\n");
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		r[i] = open_file(argv[1 + i], LEN, CHUNK, budget[i], err);
		if (!r[i]) {
			fprintf(stderr, "two: resid_open: %s\n", err);
			return 2;
		}
	}
	/* chunk by chunk, alternating, twice over */
	for (uint64_t at = 0; at < 2 * LEN; at += CHUNK)
		for (int i = 0; i < 2; i++) {
			const uint8_t *a = resid_base(r[i]) + at % LEN;

			resid_notify_access(r[i],
					    resid_chunk_of(r[i], at % LEN));
			for (uint64_t k = 0; k < CHUNK; k++)
				bad[i] += a[k] !=
					  byte_at(at % LEN + k, 11 + 2 * i);
		}
	for (int i = 0; i < 2; i++) {
		struct resid_stats s;

		resid_get_stats(r[i], &s);
		verdict(bad[i] == 0 && s.resident_max <= budget[i] &&
				resid_failure(r[i], NULL) == 0,
			i ? "two regions: the second reads its own file right "
			    "within its own budget" :
			    "two regions: the first reads its own file right "
			    "within its own budget",
			"%llu wrong bytes, resident at most %llu of %llu",
			(unsigned long long)bad[i],
			(unsigned long long)s.resident_max,
			(unsigned long long)budget[i]);
	}
	resid_close(r[0]);
	resid_close(r[1]);
	return finish();
}
