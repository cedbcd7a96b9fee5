/* resid.h, struct resid_config's path: a regular file. A FIFO, a
 * directory and a device are refused at once (a FIFO's open must not wait
 * for a writer) with a line that names cfg.path. ci/contract.sh's time-out
 * turns a hang into a failure.
 *
 *	special FIFO DIRECTORY DEVICE */
#include "client.h"

static void refused(const char *path, const char *promise)
{
	char err[RESID_ERRLEN] = "";
	struct resid_region *r = open_file(path, 4 * MiB, MiB, 2 * MiB, err);

	verdict(!r && strstr(err, path) && strstr(err, "not a regular file"),
		promise, "%s", r ? "it opened" : err);
	resid_close(r);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: special FIFO DIRECTORY DEVICE\n");
		return 2;
	}
	refused(argv[1], "special files: a FIFO as path is refused at once, "
			 "naming it");
	refused(argv[2], "special files: a directory as path is refused, "
			 "naming it");
	refused(argv[3], "special files: a device as path is refused, "
			 "naming it");
	return finish();
}
