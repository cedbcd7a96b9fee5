/* The Linux side of the conformance table: the kernel's seam, in a memory
 * cgroup of its own (so that no other process's shmem is counted), a read
 * through A is a plain read, a page's state comes from mincore (page cache)
 * and /proc/self/pagemap (a PTE in A), and a reader has settled when it is
 * done or asleep in handle_userfault. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup_scope.h"
#include "cli/probe.h"
#include "conformance/conformance.h"
#include "proc/child.h"
#include "workload/huge_leg.h"

#define SCOPE_LIMIT (256ull << 20)
#define SETTLE_POLLS 10000 /* 1 ms apart: a reader stuck elsewhere */

struct lx {
	int pagemap;
};

static void lx_read_a(struct conf_side *side, const uint8_t *addr, uint8_t *dst,
		      uint64_t len)
{
	(void)side;
	memcpy(dst, addr, len);
}

static int lx_drop_a(struct conf_side *side, const uint8_t *addr, uint64_t len)
{
	(void)side;
	return madvise((void *)addr, len, MADV_DONTNEED) < 0 ? -errno : 0;
}

/* The first bytes of /proc/self/task/TID/NAME, "" when unreadable. */
static void task_file(int tid, const char *name, char *buf, size_t n)
{
	char path[64];
	ssize_t got = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		got = read(fd, buf, n - 1);
		close(fd);
	}
	buf[got > 0 ? got : 0] = '\0';
}

/* Asleep on its fault: state S, and the wait channel (when the kernel
 * names it) is the userfault's. */
static int asleep_on_fault(int tid)
{
	char buf[512], *st;

	task_file(tid, "stat", buf, sizeof(buf));
	st = strrchr(buf, ')');
	if (!st || st[1] != ' ' || st[2] != 'S')
		return 0;
	task_file(tid, "wchan", buf, sizeof(buf));
	/* "", "0" or an address: no symbol to check. */
	return !(buf[0] >= 'a' && buf[0] <= 'z') || strstr(buf, "userfault");
}

static int lx_settle(struct conf_side *side, struct conf_reader *r, int n)
{
	for (int i = 0; i < n; i++) {
		int polls = 0,
		    tid = __atomic_load_n(&r[i].tid, __ATOMIC_ACQUIRE);

		while (!__atomic_load_n(&r[i].done, __ATOMIC_ACQUIRE) &&
		       !asleep_on_fault(tid)) {
			if (++polls > SETTLE_POLLS) {
				snprintf(side->why, sizeof(side->why),
					 "reader "
					 "%d (tid %d) neither finished nor slept "
					 "on its fault in %d s",
					 i, tid, SETTLE_POLLS / 1000);
				return -1;
			}
			usleep(1000);
		}
	}
	return 0;
}

static char lx_page_state(struct conf_side *side, const uint8_t *a,
			  const uint8_t *b, uint64_t page)
{
	struct lx *lx = side->priv;
	uint64_t pte = 0, va = (uintptr_t)a + page * CONF_PAGE;
	unsigned char in = 0;

	if (pread(lx->pagemap, &pte, sizeof(pte),
		  (off_t)(va / CONF_PAGE * sizeof(pte))) == sizeof(pte) &&
	    pte >> 63)
		return 'M';
	if (mincore((void *)(b + page * CONF_PAGE), CONF_PAGE, &in) == 0 &&
	    (in & 1))
		return 'c';
	return '-';
}

/* A huge case runs in a child, with a tmpfs mounted huge=always in its own
 * mount namespace: the machine's mounts and THP settings stay as they
 * are. */
static void run_huge(struct conf_side *side, const struct conf_case *c,
		     struct conf_run *out)
{
	char dir[] = "/tmp/residctl-conf-huge-XXXXXX";
	struct conf_run *shared = mmap(NULL, sizeof(*out),
				       PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	pid_t pid = -1;

	memset(out, 0, sizeof(*out));
	if (shared == MAP_FAILED || !mkdtemp(dir)) {
		snprintf(out->error, sizeof(out->error), "huge case setup: %s",
			 strerror(errno));
		if (shared != MAP_FAILED)
			munmap(shared, sizeof(*out));
		return;
	}
	memset(shared, 0, sizeof(*shared));
	pid = child_fork();
	if (pid == 0) {
		struct lx *lx = side->priv;

		/* The parent's pagemap describes the parent's pages. */
		close(lx->pagemap);
		lx->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		if (huge_leg_enter(dir, shared->error, sizeof(shared->error)) <
		    0)
			_exit(1);
		side->huge_dir = dir;
		conf_exec(side, c, shared);
		_exit(0);
	}
	if (pid < 0 || child_reap(pid, &status, 0) < 0 || !WIFEXITED(status))
		snprintf(shared->error, sizeof(shared->error),
			 "the huge "
			 "case's child failed");
	*out = *shared;
	munmap(shared, sizeof(*out));
	rmdir(dir);
}

int conf_run_linux(const struct conf_case *const *cases, int n,
		   struct conf_run *out, uint64_t *tolerance, char *err,
		   size_t errlen)
{
	struct lx lx;
	struct conf_side side = {
		.name = "linux",
		.k = &resid_seam_linux,
		.read_a = lx_read_a,
		.drop_a = lx_drop_a,
		.settle = lx_settle,
		.page_state = lx_page_state,
		.priv = &lx,
	};
	struct cg_scope scope;
	struct probe p;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	probe_run(&p);
	if (!p.can_run) {
		snprintf(err, errlen, "can the pager run here? %s", p.verdict);
		return -1;
	}
	side.tolerance = cg_flush_tolerance(p.release,
					    cpus > 0 ? (unsigned)cpus : 1);
	*tolerance = side.tolerance;
	lx.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (lx.pagemap < 0) {
		snprintf(err, errlen, "cannot open /proc/self/pagemap: %s",
			 strerror(errno));
		return -1;
	}
	if (cg_scope_enter(&scope, "conformance", SCOPE_LIMIT, err, errlen) <
	    0) {
		close(lx.pagemap);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (cases[i]->huge)
			run_huge(&side, cases[i], &out[i]);
		else
			conf_exec(&side, cases[i], &out[i]);
	}
	close(lx.pagemap);
	if (cg_scope_leave(&scope) < 0) {
		snprintf(err, errlen, "could not remove the cgroup %s",
			 scope.mem.dir);
		return -1;
	}
	return 0;
}
