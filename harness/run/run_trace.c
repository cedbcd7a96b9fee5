/* residctl run --trace: the preload's references into a trace file. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/trace.h"
#include "base/err_line.h"
#include "run/run_trace.h"

/* dir/<pid>.trace's ids into *seq, *len of them. -1 with err. */
static int ids_read(const char *path, uint32_t nchunks, uint32_t **seq,
		    uint64_t *len, char *err, size_t n)
{
	FILE *f = fopen(path, "r");
	uint64_t cap = 0, k = 0;
	uint32_t *a = NULL;
	char line[32];

	if (!f)
		return err_line(err, n, "cannot read the references %s: %s",
				path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long v = strtoul(line, &end, 10);

		if (end == line || *end != '\n' || v >= nchunks) {
			fclose(f);
			free(a);
			return err_line(err, n,
					"the references %s: line %" PRIu64
					" is not a chunk id below %" PRIu32,
					path, k + 1, nchunks);
		}
		if (k == cap) {
			uint32_t *g = realloc(a, (cap ? cap * 2 : 1024) *
							 sizeof(*a));

			if (!g) {
				fclose(f);
				free(a);
				return err_line(err, n,
						"no memory for the references of %s",
						path);
			}
			a = g;
			cap = cap ? cap * 2 : 1024;
		}
		a[k++] = (uint32_t)v;
	}
	fclose(f);
	*seq = a;
	*len = k;
	return 0;
}

int run_trace_write(const char *dir, const char *path,
		    const struct resid_chunk_spec *chunks, uint32_t nchunks,
		    struct run_trace_info *info, char *err, size_t n)
{
	struct trace t = { .kind = TRACE_REFERENCE, .nchunks = nchunks };
	DIR *d = opendir(dir);
	struct dirent *e;
	char file[4200];
	int rc = 0;

	memset(info, 0, sizeof(*info));
	if (!d)
		return err_line(err, n, "cannot read %s: %s", dir,
				strerror(errno));
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		uint32_t *seq = NULL;
		uint64_t len = 0;

		if (pid <= 0 || strcmp(end, ".trace"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
		rc = ids_read(file, nchunks, &seq, &len, err, n);
		if (rc)
			break;
		if (!len) {
			free(seq);
			continue;
		}
		info->processes++;
		if (len > t.n) {
			free(t.seq);
			t.seq = seq;
			t.n = len;
			info->pid = pid;
		} else {
			free(seq);
		}
	}
	closedir(d);
	if (!rc && !t.n)
		rc = err_line(
			err, n,
			"no process recorded a reference: the program never read the file through the pager; --trace FILE not written");
	if (!rc && !(t.sizes = malloc(nchunks * sizeof(*t.sizes))))
		rc = err_line(err, n,
			      "no memory for the chunk sizes of --trace %s",
			      path);
	for (uint32_t i = 0; !rc && i < nchunks; i++)
		t.sizes[i] = (chunks[i].len + RESID_PAGE - 1) &
			     ~(RESID_PAGE - 1);
	if (!rc)
		rc = trace_write(path, &t, err, n);
	info->records = rc ? 0 : t.n;
	trace_free(&t);
	return rc;
}
