/* What every contract client shares: built against the installed library
 * only (resid.h from pkg-config), as a user's program is. Each case is one
 * promise of resid.h: it prints "ok <promise>" or "FAIL <promise>: why";
 * ci/contract.sh counts the lines. */
#ifndef CONTRACT_CLIENT_H
#define CONTRACT_CLIENT_H

#include <errno.h>
#include <fcntl.h>
#include <resid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1ull << 20)

static int failures;

__attribute__((format(printf, 3, 4))) static inline void
verdict(int ok, const char *promise, const char *why, ...)
{
	va_list ap;

	if (ok) {
		printf("ok %s\n", promise);
	} else {
		printf("FAIL %s: ", promise);
		va_start(ap, why);
		vprintf(why, ap);
		va_end(ap);
		printf("\n");
		failures++;
	}
	fflush(stdout);
}

/* The byte a test file holds at off. */
static inline uint8_t byte_at(uint64_t off, unsigned seed)
{
	return (uint8_t)(off * 131 + off / 4096 * 7 + seed);
}

/* A file of len bytes of byte_at(); 0 or -1. */
static inline int make_file(const char *path, uint64_t len, unsigned seed)
{
	static uint8_t buf[1 << 16];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	for (uint64_t off = 0; off < len;) {
		size_t n = len - off < sizeof(buf) ? (size_t)(len - off) :
						     sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = byte_at(off + i, seed);
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return -1;
		}
		off += n;
	}
	return close(fd);
}

/* The bytes of [0, len) of the region that differ from the file's. */
static inline uint64_t wrong_bytes(const uint8_t *a, uint64_t len,
				   unsigned seed)
{
	uint64_t bad = 0;

	for (uint64_t off = 0; off < len; off++)
		bad += a[off] != byte_at(off, seed);
	return bad;
}

/* A region of the file with chunk, budget; NULL with err. */
static inline struct resid_region *open_file(const char *path, uint64_t len,
					     uint64_t chunk, uint64_t budget,
					     char err[RESID_ERRLEN])
{
	struct resid_config c;

	resid_config_init(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = path;
	c.region_len = len;
	c.chunk_size = chunk;
	c.budget_bytes = budget;
	return resid_open(&c, err);
}

/* Reads p, and says which signal the read raised (0: none) and where. */
static sigjmp_buf touch_jump;
static volatile sig_atomic_t touch_signo;
static void *volatile touch_addr;

static inline void touch_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	touch_signo = sig;
	touch_addr = si->si_addr;
	siglongjmp(touch_jump, 1);
}

static inline int touch(const volatile uint8_t *p, uint8_t *out, void **addr)
{
	struct sigaction sa = { .sa_sigaction = touch_handler,
				.sa_flags = SA_SIGINFO },
			 obus, osegv;

	touch_signo = 0;
	touch_addr = NULL;
	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	if (!sigsetjmp(touch_jump, 1))
		*out = *p;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	if (addr)
		*addr = touch_addr;
	return touch_signo;
}

/* The usage of the process's memory cgroup (v1 or v2), or -1. */
static inline long long cgroup_usage(void)
{
	char line[512], path[640];
	long long v = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	while (f && v < 0 && fgets(line, sizeof(line), f)) {
		char *rel = strchr(line, ':');
		int v1 = rel && !strncmp(rel, ":memory:", 8);

		if (!rel || (!v1 && strncmp(line, "0::", 3)))
			continue;
		rel = strchr(rel + 1, ':') + 1;
		rel[strcspn(rel, "\n")] = '\0';
		snprintf(path, sizeof(path),
			 v1 ? "/sys/fs/cgroup/memory%s/memory.usage_in_bytes" :
			      "/sys/fs/cgroup%s/memory.current",
			 rel);
		FILE *u = fopen(path, "r");

		if (u && fscanf(u, "%lld", &v) != 1)
			v = -1;
		if (u)
			fclose(u);
	}
	if (f)
		fclose(f);
	return v;
}

static inline int finish(void)
{
	return failures ? 1 : 0;
}

#endif
