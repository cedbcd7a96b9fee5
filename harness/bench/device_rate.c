/* residctl bench device: the device alone under a device class, the rate
 * every benchmark's figures are held to: the file read in order with
 * O_DIRECT, one stream of large blocks, from a cgroup under the class. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli.h"
#include "bench/bench.h"

#define LIMIT (64 * MiB) /* the process and one block */

static const char about[] =
	"  Reads FILE in order with O_DIRECT, one read of --block bytes at a\n"
	"  time (default 8M), from the start again at its end, for --seconds\n"
	"  (default 2, at least one read), in a cgroup whose reads of FILE's\n"
	"  block device are held to --device-class (host: none). Prints MB/s\n"
	"  (10^6 bytes/s); --json writes it. The benchmarks measure the same\n"
	"  in their rotation (the arm or mode 'device'). Needs root. Exit 0, 1\n"
	"  when the read failed, 2 on bad input (a class, or FILE on tmpfs or\n"
	"  overlay with a class that throttles).\n";

struct dev_job {
	const char *path;
	uint64_t size, block;
	double seconds;
};

struct dev_res {
	uint64_t bytes;
	double seconds;
};

static int measure(void *arg, void *out, char *err, size_t n)
{
	const struct dev_job *j = arg;
	struct dev_res *r = out;
	int fd = open(j->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	void *buf = mmap(NULL, j->block, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t off = 0;
	double t0;
	int rc = 0;

	if (fd < 0 || buf == MAP_FAILED) {
		snprintf(err, n,
			 "cannot open %s with O_DIRECT or map a buffer: %s",
			 j->path, strerror(errno));
		rc = -1;
		goto out;
	}
	memset(buf, 0, j->block); /* its pages exist before the clock */
	t0 = mono_now();
	do {
		uint64_t len = j->size - off < j->block ? j->size - off :
							  j->block;

		if (bench_pread_full(fd, buf, len, off)) {
			snprintf(err, n,
				 "O_DIRECT read of %s at %" PRIu64 ": %s",
				 j->path, off,
				 errno ? strerror(errno) : "end of file");
			rc = -1;
			break;
		}
		r->bytes += len;
		off = off + len == j->size ? 0 : off + len;
		r->seconds = mono_now() - t0;
	} while (!child_stop_signal() && r->seconds < j->seconds);
out:
	if (fd >= 0)
		close(fd);
	if (buf != MAP_FAILED)
		munmap(buf, j->block);
	return rc;
}

static int write_json(const char *path, const struct dev_job *j,
		      const struct bench_class *c, const struct dev_res *r,
		      double mbps)
{
	struct bench_out o;
	char err[600];
	int ok;

	if (bench_out_open(&o, path, err, sizeof(err)) == 0) {
		ok = fprintf(o.f,
			     "{\"file\": \"%s\", \"device_class\": \"%s\", "
			     "\"limit_bps\": %" PRIu64
			     ", \"limit_iops\": %" PRIu64
			     ", \"block\": %" PRIu64 ", \"bytes\": %" PRIu64
			     ", \"seconds\": %.3f, \"device_mbps\": "
			     "%.1f}\n",
			     j->path, devclass_label(&c->dc), c->dc.rbps,
			     c->dc.riops, j->block, r->bytes, r->seconds,
			     mbps) > 0;
		if (bench_out_close(&o, ok, err, sizeof(err)) == 0)
			return 0;
	}
	fprintf(stderr, "residctl bench device: %s\n", err);
	return 1;
}

int bench_device(int argc, char **argv)
{
	struct bench_class c = { 0 };
	struct dev_job j = { .block = 8 * MiB };
	struct dev_res r = { 0 };
	uint64_t secs = 2;
	const char *json = NULL;
	char err[600];
	struct stat st;
	double mbps;
	struct cli_opt opts[] = {
		{ "file", CLI_TEXT, &j.path, .arg = "PATH",
		  .help = "the file to read (on the device measured)" },
		DEVCLASS_OPT(&c.dc),
		{ "seconds", CLI_U64, &secs, .arg = "S", .min = 1, .max = 600,
		  .what = "seconds", .help = "how long to read (default 2)" },
		{ "block", CLI_BYTES, &j.block, .arg = "BYTES",
		  .min = RESID_PAGE, .max = 256 * MiB, .align = RESID_PAGE,
		  .what = "block size", .help = "bytes per read (default 8M)" },
		{ "json", CLI_TEXT, &json, .arg = "FILE",
		  .help = "write the figures as JSON" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "bench device",
				       .about = about,
				       .opts = opts };
	int rc = cli_parse(&spec, argc, argv);

	if (rc >= 0)
		return rc;
	if (!j.path) {
		fprintf(stderr, "residctl bench device: name the file to read "
				"with --file PATH\n");
		return 2;
	}
	if (stat(j.path, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < RESID_PAGE)
		return bench_bad("device", "file", j.path,
				 "give a regular "
				 "file of at least 4 KiB");
	if ((rc = bench_class_setup("device", &c, j.path)))
		return rc;
	j.size = (uint64_t)st.st_size / RESID_PAGE * RESID_PAGE;
	if (j.block > j.size)
		j.block = j.size;
	j.seconds = (double)secs;
	child_stop_softly();
	if (bench_in_child_class("bench-device", LIMIT + j.block, &c, measure,
				 &j, &r, sizeof(r), err, sizeof(err))) {
		fprintf(stderr, "residctl bench device: %s\n", err);
		return 1;
	}
	mbps = r.seconds > 0 ? (double)r.bytes / r.seconds / 1e6 : 0;
	printf("device %s, class %s: %.1f MB/s (%.1f MiB/s), %" PRIu64
	       " MiB in %.2f s, %" PRIu64 " KiB reads\n",
	       j.path, devclass_label(&c.dc), mbps, mbps * 1e6 / (double)MiB,
	       r.bytes / MiB, r.seconds, j.block >> 10);
	return json ? write_json(json, &j, &c, &r, mbps) : 0;
}
