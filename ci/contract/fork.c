/* resid.h, "fork()": a child forked after resid_open never reads a wrong
 * byte (its read of the region raises SIGSEGV), never adds pages to the
 * parent's memory, gets -ECHILD from calls on the region, and its
 * resid_close leaves the parent's region working.
 *
 *	fork FILE	(ci/contract.sh runs it alone in a cgroup) */
#include <sys/wait.h>

#include "client.h"

#define LEN (24 * MiB)
#define CHUNK MiB
#define BUDGET (4 * MiB)

/* The child's findings: its reads' through a pipe, its calls' as its exit
 * status. */
enum {
	READ_NOT_LOUD = 1, /* a read of the region returned a byte */
	CALLS_NOT_ECHILD = 2,
};

/* The reads' verdict goes to the parent first: the calls after may hang
 * (the alarm then ends the child). */
static int child(struct resid_region *r, const uint8_t *a, int fd)
{
	struct resid_stats st;
	char json[256];
	uint64_t off, len;
	int bits = 0, signo;
	uint8_t x;

	alarm(20);
	/* every page, resident in the parent or not */
	for (uint64_t at = 100; at < LEN; at += 4096) {
		signo = touch(a + at, &x, NULL);
		if (signo != SIGSEGV)
			bits |= READ_NOT_LOUD;
	}
	if (write(fd, &bits, sizeof(bits)) != sizeof(bits))
		return 3;
	bits = 0;
	if (resid_base(r) != NULL || resid_len(r) != 0 ||
	    resid_nchunks(r) != 0 || resid_chunk_of(r, 0) != RESID_NO_CHUNK ||
	    resid_notify_access(r, 0) != -ECHILD ||
	    resid_chunk_range(r, 0, &off, &len) != -ECHILD ||
	    resid_failure(r, NULL) != -ECHILD ||
	    resid_get_stats(r, &st) != -ECHILD ||
	    resid_manifest_json(r, json, sizeof(json)) != -ECHILD)
		bits |= CALLS_NOT_ECHILD;
	resid_close(r); /* its copies only: it must not hang or free the
			 * parent's */
	return bits;
}

int main(int argc, char **argv)
{
	struct resid_stats before, after;
	char err[RESID_ERRLEN];
	int status;

	if (argc != 2 || make_file(argv[1], LEN, 3) < 0) {
		fprintf(stderr,
			"usage: fork FILE (a path to write %llu bytes)\n", LEN);
		return 2;
	}
	struct resid_region *r = open_file(argv[1], LEN, CHUNK, BUDGET, err);

	if (!r) {
		fprintf(stderr, "fork: resid_open: %s\n", err);
		return 2;
	}
	const uint8_t *a = resid_base(r);
	uint8_t x;

	x = a[0]; /* chunk 0 resident in the parent */
	(void)x;
	resid_get_stats(r, &before);
	long long usage0 = cgroup_usage();
	int p[2], reads = -1;

	if (pipe(p) < 0) {
		fprintf(stderr, "fork: pipe: %s\n", strerror(errno));
		return 2;
	}
	pid_t pid = fork();

	if (pid == 0)
		_exit(child(r, a, p[1]));
	close(p[1]);
	if (pid < 0 || read(p[0], &reads, sizeof(reads)) < 0 ||
	    waitpid(pid, &status, 0) != pid) {
		fprintf(stderr, "fork: fork or waitpid failed: %s\n",
			strerror(errno));
		return 2;
	}
	long long usage1 = cgroup_usage();

	resid_get_stats(r, &after);
	int bits = WIFEXITED(status) ? WEXITSTATUS(status) : -1;

	verdict(reads == 0,
		"fork: a child's read of the region raises SIGSEGV, never a byte",
		"%s",
		reads < 0 ?
			"the child died before it told" :
			"the child read bytes of the region without a signal");
	verdict(bits == 0,
		"fork: calls on the region in a child return -ECHILD or NULL, "
		"its resid_close returns",
		"%s",
		bits < 0 ? "the child died of a signal (SIGALRM: a call hung)" :
			   "the child's calls answered as in the parent");
	/* Pages the child made would stay in the shared memfd: 24 MiB; the
	 * child's own stack and heap copies are far less. */
	verdict(usage0 < 0 || usage1 - usage0 < (long long)(4 * MiB),
		"fork: the child never grows the parent's memory",
		"the cgroup grew by %lld bytes while the child ran",
		usage1 - usage0);
	verdict(after.faults_missing + after.faults_minor ==
				before.faults_missing + before.faults_minor &&
			after.resident <= BUDGET,
		"fork: the parent's pager sees nothing of the child",
		"faults %llu -> %llu, resident %llu",
		(unsigned long long)(before.faults_missing +
				     before.faults_minor),
		(unsigned long long)(after.faults_missing + after.faults_minor),
		(unsigned long long)after.resident);
	uint64_t bad = wrong_bytes(a, LEN, 3);

	verdict(bad == 0 && resid_failure(r, NULL) == 0,
		"fork: the parent's region reads right after the child's close",
		"%llu wrong bytes, failure %d", (unsigned long long)bad,
		resid_failure(r, NULL));
	resid_close(r);
	return finish();
}
