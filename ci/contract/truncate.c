/* resid.h, "Failures after open" and "Truncation": the backing file
 * shrinks under an open region. A chunk resident then keeps its old bytes
 * until evicted; a chunk fetched after, past the new end, raises SIGBUS at
 * the address read; resid_failure says ENODATA and the chunk;
 * failed_faults counts the fault; the chunks before the new end still
 * read right.
 *
 *	truncate FILE */
#include "client.h"

#define LEN (8 * MiB)
#define CHUNK MiB

int main(int argc, char **argv)
{
	char err[RESID_ERRLEN];
	uint32_t chunk = 0;
	void *at = NULL;
	uint8_t x;

	if (argc != 2 || make_file(argv[1], LEN, 17) < 0) {
		fprintf(stderr, "usage: truncate FILE\n");
		return 2;
	}
	struct resid_region *r = open_file(argv[1], LEN, CHUNK, 2 * CHUNK, err);

	if (!r) {
		fprintf(stderr, "truncate: resid_open: %s\n", err);
		return 2;
	}
	const uint8_t *a = resid_base(r);

	x = a[7 * CHUNK]; /* chunk 7 resident */
	(void)x;
	if (truncate(argv[1], 4 * CHUNK) < 0) {
		fprintf(stderr, "truncate: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	verdict(touch(a + 7 * CHUNK + 5, &x, NULL) == 0 &&
			x == byte_at(7 * CHUNK + 5, 17),
		"truncation: a chunk resident when the file shrinks keeps its "
		"old bytes until evicted",
		"read %u, the old byte is %u", x, byte_at(7 * CHUNK + 5, 17));
	const uint8_t *past = a + 5 * CHUNK + 4096 + 12;
	int signo = touch(past, &x, &at);

	verdict(signo == SIGBUS && at == (const void *)past,
		"truncation: a chunk past the new end raises SIGBUS at the "
		"address read",
		"signal %d at %p, read at %p", signo, at, (const void *)past);
	int e = resid_failure(r, &chunk);

	verdict(e == ENODATA && chunk == 5,
		"truncation: resid_failure reports ENODATA and the chunk",
		"%d (%s), chunk %u", e, strerror(e), chunk);
	struct resid_stats s;

	resid_get_stats(r, &s);
	verdict(s.failed_faults >= 1 && s.failed_chunks == 1,
		"failures: failed_faults counts the fault answered with SIGBUS",
		"failed_faults %llu, failed_chunks %llu",
		(unsigned long long)s.failed_faults,
		(unsigned long long)s.failed_chunks);
	verdict(touch(a + CHUNK + 99, &x, NULL) == 0 &&
			x == byte_at(CHUNK + 99, 17),
		"truncation: the chunks before the new end keep working",
		"read %u, want %u", x, byte_at(CHUNK + 99, 17));
	resid_close(r);
	return finish();
}
