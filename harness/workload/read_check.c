#include <errno.h>
#include <unistd.h>

#include "resid_harness.h"
#include "workload/read_check.h"

#define PIECE (64u << 10)

/* Not inlined, so that its buffer stays off the simulation's small stacks. */
__attribute__((noinline)) int read_check_file(int fd, const uint8_t *got,
					      uint64_t off, uint64_t len,
					      uint64_t *bad, uint64_t *compared)
{
	uint8_t buf[PIECE];
	uint64_t done = 0;
	int rc = 0;

	while (done < len) {
		uint64_t want = len - done < PIECE ? len - done : PIECE;
		ssize_t n = pread(fd, buf, want, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -ENODATA;
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			*bad += got[done + (uint64_t)i] != buf[i];
		done += (uint64_t)n;
	}
	if (compared)
		*compared = done;
	return rc;
}

uint64_t read_check(const struct expected *e, const uint8_t *got, uint64_t off,
		    uint64_t len, uint64_t *checked, uint64_t *wrong)
{
	uint64_t bad = 0, done;

	if (e->fd < 0)
		bad = resid_content_mismatches(got, off, len, e->seed);
	else if (read_check_file(e->fd, got, off, len, &bad, &done) < 0)
		bad += len - done;

	__atomic_add_fetch(checked, len, __ATOMIC_RELAXED);
	if (wrong)
		__atomic_add_fetch(wrong, bad, __ATOMIC_RELAXED);
	return bad;
}
