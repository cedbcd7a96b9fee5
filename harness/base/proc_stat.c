/* /proc/<pid>/stat: after the command name in parentheses (which may hold
 * anything), fields 3 (state) to 22 (starttime). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/proc_stat.h"

int proc_stat_read(const char *path, struct proc_stat *st)
{
	char text[1024], *p;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	p = fgets(text, sizeof(text), f);
	fclose(f);
	p = p ? strrchr(text, ')') : NULL;
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu %lld %lld %*d %*d %*d %*d %llu",
			 &st->state, &st->utime, &st->stime, &st->cutime,
			 &st->cstime, &st->start) != 6) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
