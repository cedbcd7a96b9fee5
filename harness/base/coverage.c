/* Code-probe coverage: per run, per campaign, and across the processes of
 * a suite through the file named by RESIDCTL_COVERAGE (see coverage.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/coverage.h"

#define HEADER "residctl-coverage 1"
#define FILE_MAX (64u << 10)

static const struct {
	const char *name, *what;
	int required;
} probes[CP_COUNT] = {
#define CP_ROW(n, req, w) [CP_##n] = { #n, w, req },
	RESID_CODE_PROBES(CP_ROW)
#undef CP_ROW
};

/* Every run this process counted: what RESIDCTL_COVERAGE gets at exit. */
static struct coverage process_total;

const char *coverage_name(int p)
{
	return p >= 0 && p < CP_COUNT ? probes[p].name : NULL;
}

int coverage_required(int p)
{
	return p >= 0 && p < CP_COUNT && probes[p].required;
}

const char *coverage_what(int p)
{
	return p >= 0 && p < CP_COUNT ? probes[p].what : NULL;
}

void coverage_mark(uint64_t mark[CP_COUNT])
{
	for (int p = 0; p < CP_COUNT; p++)
		mark[p] = __atomic_load_n(&resid_code_probes[p],
					  __ATOMIC_RELAXED);
}

void coverage_since(const uint64_t mark[CP_COUNT], uint64_t hits[CP_COUNT])
{
	coverage_mark(hits);
	for (int p = 0; p < CP_COUNT; p++)
		hits[p] -= mark[p];
}

void coverage_absorb(const uint64_t hits[CP_COUNT])
{
	for (int p = 0; p < CP_COUNT; p++)
		__atomic_add_fetch(&resid_code_probes[p], hits[p],
				   __ATOMIC_RELAXED);
}

static void add(struct coverage *c, const uint64_t hits[CP_COUNT])
{
	c->runs++;
	for (int p = 0; p < CP_COUNT; p++) {
		c->hits[p] += hits[p];
		c->in_runs[p] += hits[p] > 0;
	}
}

void coverage_add_run(struct coverage *c, const uint64_t hits[CP_COUNT])
{
	add(c, hits);
	add(&process_total, hits);
}

void coverage_merge(struct coverage *into, const struct coverage *c)
{
	into->runs += c->runs;
	for (int p = 0; p < CP_COUNT; p++) {
		into->hits[p] += c->hits[p];
		into->in_runs[p] += c->in_runs[p];
	}
}

int coverage_missed_required(const struct coverage *c)
{
	int n = 0;

	for (int p = 0; p < CP_COUNT; p++)
		n += probes[p].required && !c->hits[p];
	return n;
}

/* The names of the probes with no hit (only required ones when asked),
 * each between q and q, separated by sep. */
static void missed_list(FILE *f, const struct coverage *c, int required,
			const char *q, const char *sep)
{
	int k = 0;

	for (int p = 0; p < CP_COUNT; p++) {
		if (c->hits[p] || (required && !probes[p].required))
			continue;
		fprintf(f, "%s%s%s%s", k++ ? sep : "", q, probes[p].name, q);
	}
}

void coverage_json(FILE *f, const struct coverage *c)
{
	fprintf(f, "{\"runs\": %" PRIu64 ", \"probes\": {", c->runs);
	for (int p = 0; p < CP_COUNT; p++)
		fprintf(f,
			"%s\"%s\": {\"hits\": %" PRIu64 ", \"runs\": %" PRIu64
			", \"required\": %s}",
			p ? ", " : "", probes[p].name, c->hits[p],
			c->in_runs[p], probes[p].required ? "true" : "false");
	fputs("}, \"missed\": [", f);
	missed_list(f, c, 0, "\"", ", ");
	fputs("], \"missed_required\": [", f);
	missed_list(f, c, 1, "\"", ", ");
	fputs("]}", f);
}

void coverage_line(FILE *f, const char *indent, const struct coverage *c)
{
	int hit = 0;

	for (int p = 0; p < CP_COUNT; p++)
		hit += c->hits[p] > 0;
	fprintf(f, "%scode probes: %d of %d hit in %" PRIu64 " runs", indent,
		hit, CP_COUNT, c->runs);
	if (hit < CP_COUNT) {
		fputs("; missed: ", f);
		missed_list(f, c, 0, "", ", ");
	}
	if (coverage_missed_required(c)) {
		fputs(" (required: ", f);
		missed_list(f, c, 1, "", ", ");
		fputc(')', f);
	}
	fputc('\n', f);
}

static int probe_index(const char *name)
{
	for (int p = 0; p < CP_COUNT; p++)
		if (!strcmp(probes[p].name, name))
			return p;
	return -1;
}

/* Parses the file's text into c (zeroed first): the header, "runs N", then
 * "NAME HITS RUNS" lines. -1 with one line in err naming the bad line. */
static int parse(const char *path, char *text, struct coverage *c, char *err,
		 size_t n)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	char name[64];
	uint64_t a, b;
	int lineno = 1;

	memset(c, 0, sizeof(*c));
	if (!line || strcmp(line, HEADER)) {
		snprintf(err, n,
			 "%s: not a coverage file (no \"" HEADER "\" "
			 "line); give the file RESIDCTL_COVERAGE named",
			 path);
		return -1;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		int p;

		lineno++;
		if (!strncmp(line, "runs ", 5) && !cli_u64(line + 5, &a)) {
			c->runs = a;
			continue;
		}
		if (sscanf(line, "%63s %" SCNu64 " %" SCNu64, name, &a, &b) !=
			    3 ||
		    (p = probe_index(name)) < 0) {
			snprintf(err, n,
				 "%s:%d: \"%.60s\" is not a probe of "
				 "this build (NAME HITS RUNS); remove the file "
				 "and run the campaigns again",
				 path, lineno, line);
			return -1;
		}
		c->hits[p] = a;
		c->in_runs[p] = b;
	}
	return 0;
}

/* Reads all of fd into buf (NUL-terminated). -1 with err set. */
static int read_all(int fd, const char *path, char *buf, size_t cap, char *err,
		    size_t n)
{
	size_t got = 0;

	for (;;) {
		ssize_t k = pread(fd, buf + got, cap - 1 - got, (off_t)got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			snprintf(err, n, "cannot read %s: %s", path,
				 strerror(errno));
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
		if (got == cap - 1) {
			snprintf(err, n,
				 "%s is larger than %u bytes: not a "
				 "coverage file",
				 path, FILE_MAX);
			return -1;
		}
	}
	buf[got] = '\0';
	return 0;
}

int coverage_load(const char *path, struct coverage *c, char *err, size_t n)
{
	static char buf[FILE_MAX];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0) {
		snprintf(err, n, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	rc = read_all(fd, path, buf, sizeof(buf), err, n);
	close(fd);
	return rc < 0 ? -1 : parse(path, buf, c, err, n);
}

/* Under an exclusive lock: the file's counts plus ours, written back. */
static int merge_into(int fd, const char *path, char *err, size_t n)
{
	static char buf[FILE_MAX];
	struct coverage sum;
	size_t len;

	if (read_all(fd, path, buf, sizeof(buf), err, n) < 0)
		return -1;
	if (!buf[0])
		memset(&sum, 0, sizeof(sum));
	else if (parse(path, buf, &sum, err, n) < 0)
		return -1;
	coverage_merge(&sum, &process_total);
	len = (size_t)snprintf(buf, sizeof(buf), HEADER "\nruns %" PRIu64 "\n",
			       sum.runs);
	for (int p = 0; p < CP_COUNT; p++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s %" PRIu64 " %" PRIu64 "\n",
					probes[p].name, sum.hits[p],
					sum.in_runs[p]);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, len, 0) != (ssize_t)len) {
		snprintf(err, n, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int coverage_save_env(void)
{
	const char *path = getenv("RESIDCTL_COVERAGE");
	char err[256];
	int fd, rc;

	if (!path || !*path || !process_total.runs)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr,
			"residctl: RESIDCTL_COVERAGE: cannot open %s: "
			"%s\n",
			path, strerror(errno));
		return -1;
	}
	/* Stages may run side by side: one writer at a time. */
	while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		snprintf(err, sizeof(err), "cannot lock %s: %s", path,
			 strerror(errno));
	else
		rc = merge_into(fd, path, err, sizeof(err));
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "residctl: RESIDCTL_COVERAGE: %s\n", err);
		return -1;
	}
	/* Saved: a later save adds only the runs counted after this one. */
	memset(&process_total, 0, sizeof(process_total));
	return 0;
}
