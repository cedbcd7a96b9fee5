#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "repro/repro_internal.h"

static const char *const names[NDETECTORS] = {
	[DET_PCT] = "scheduler PCT",
	[DET_RANDOM] = "scheduler random",
	[DET_STORM] = "real-kernel storm",
	[DET_TSAN] = "TSan, real threads",
};

const char *detector_name(enum detector d)
{
	return names[d];
}

/* design.md §6 and docs/bugs/: the scheduler catches them all; TSan bugs
 * 4, 5, 6; the real-kernel watchdog bugs 2 (and 3, the same hang), 7 and
 * 10 (close hangs in its joins); H-1's storm bug 11. */
int detector_expected(int bug, enum detector d)
{
	switch (d) {
	case DET_PCT:
	case DET_RANDOM:
		return bug != 0;
	case DET_TSAN:
		return bug >= 4 && bug <= 6;
	case DET_STORM:
		return bug == 2 || bug == 3 || bug == 7 || bug == 10 ||
		       bug == 11;
	default:
		return 0;
	}
}

void repro_run(int bug, enum detector d, const struct repro_opts *o,
	       struct detection *out)
{
	*out = (struct detection){ 0 };
	if (d == DET_PCT || d == DET_RANDOM)
		repro_sched(bug, d, o, out);
	else
		repro_real(bug, d, o, out);
}

int repro_self_path(char *buf, size_t n)
{
	ssize_t k = readlink("/proc/self/exe", buf, n - 1);

	if (k <= 0)
		return -1;
	buf[k] = '\0';
	return 0;
}

void detection_free(struct detection *d)
{
	free(d->replay);
	d->replay = NULL;
}
