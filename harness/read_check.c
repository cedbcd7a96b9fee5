#include <errno.h>
#include <unistd.h>

#include "read_check.h"
#include "resid.h"

#define PIECE (64u << 10)

/* The file's bytes at [off, off+len) against got, a piece at a time; not
 * inlined, so that its buffer stays off the simulation's small stacks. */
__attribute__((noinline))
static uint64_t file_mismatches(int fd, const uint8_t *got, uint64_t off,
				uint64_t len)
{
	uint8_t buf[PIECE];
	uint64_t bad = 0, done = 0;

	while (done < len) {
		uint64_t want = len - done < PIECE ? len - done : PIECE;
		ssize_t n = pread(fd, buf, want, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return bad + (len - done);
		for (ssize_t i = 0; i < n; i++)
			bad += got[done + (uint64_t)i] != buf[i];
		done += (uint64_t)n;
	}
	return bad;
}

uint64_t read_check(const struct expected *e, const uint8_t *got,
		    uint64_t off, uint64_t len, uint64_t *checked,
		    uint64_t *wrong)
{
	uint64_t bad = e->fd >= 0 ? file_mismatches(e->fd, got, off, len) :
		resid_content_mismatches(got, off, len, e->seed);

	__atomic_add_fetch(checked, len, __ATOMIC_RELAXED);
	if (wrong)
		__atomic_add_fetch(wrong, bad, __ATOMIC_RELAXED);
	return bad;
}
