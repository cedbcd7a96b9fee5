/* Accounting against the kernel (design.md §2.6, I-7). fstat(memfd).st_blocks is
 * exact and must lie in [resident, resident + reserved]: in-flight fetches
 * populate B before they commit. memory.stat's shmem lags by the kernel's
 * per-CPU batching and flush threshold, which bound the tolerance
 * (cg_flush_tolerance), not a guess. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Counts the CPUs in a list such as "0-3,5". */
static unsigned online_cpus(struct resid_region *r)
{
	char buf[256];
	unsigned n = 0;
	char *p = buf;

	if (SEAM(r, read_text, "/sys/devices/system/cpu/online", buf,
		 sizeof(buf)) <= 0)
		return 0;
	while (*p >= '0' && *p <= '9') {
		unsigned long a = strtoul(p, &p, 10), b = a;

		if (*p == '-')
			b = strtoul(p + 1, &p, 10);
		n += b >= a ? (unsigned)(b - a + 1) : 0;
		if (*p == ',')
			p++;
	}
	return n;
}

/* cgroup files are read again after a transient error (EIO, EINTR): a
 * passing fault must not refuse a region or skip a check. */
static long read_retry(void *ctx, const char *path, char *buf, size_t cap)
{
	struct resid_region *r = ctx;
	long n = -EIO;

	for (int i = 0; i < 8 && (n == -EIO || n == -EINTR); i++) {
		n = SEAM(r, read_text, path, buf, cap);
		if (n == -EIO || n == -EINTR) {
			STAT_INC(r, cgroup_read_errors);
			CODE_PROBE(1, cgroup_read_retried);
		}
	}
	return n;
}

int reconcile_setup(struct resid_region *r, char *err, size_t n)
{
	char why[512];

	cg_env_init(&r->cg_env, read_retry, r);
	if (cg_find_memory(&r->cg_env, &r->cg, err, n) < 0)
		return -EIO;
	r->have_cgroup = r->cg.version != CG_NONE;
	r->swap_condition = cg_swap_check(&r->cg, why, sizeof(why));
	if (r->swap_condition < 0 && !r->h.allow_swap) {
		snprintf(err, n, "refusing to start (I-3): %s", why);
		return -EPERM;
	}
	r->cpus = online_cpus(r);
	r->tolerance = cg_flush_tolerance(r->release, r->cpus);
	return 0;
}

int reconcile_baseline(struct resid_region *r, char *err, size_t n)
{
	int rc;

	if (!r->have_cgroup)
		return 0;
	rc = cg_read_shmem(&r->cg_env, &r->cg, &r->shmem_baseline);
	if (rc < 0) {
		snprintf(err, n, "cannot read shmem from %s/%s: %s", r->cg.dir,
			 CG_STAT_FILE, strerror(-rc));
		return rc;
	}
	return 0;
}

/* st_blocks above resident + reserved is not yet a failure: shmem lowers
 * i_blocks late when a punch races a page allocation in the same memfd
 * (design.md §2.6). A page count decides; an excess it does not confirm is the
 * kernel's lag, counted, and the count stands in for st_blocks. */
static void confirm_excess(struct resid_region *r, struct resid_accounting *acc)
{
	uint64_t present;

	if (acc->st_bytes <= acc->resident + acc->reserved ||
	    SEAM(r, memfd_present, r->memfd, &present) < 0 ||
	    present > acc->resident + acc->reserved)
		return;
	acc->st_lag = acc->st_bytes - present;
	acc->st_bytes = present;
	STAT_INC(r, st_blocks_lag);
}

/* Fills acc from the kernel; budget lock held. */
static int measure(struct resid_region *r, struct resid_accounting *acc)
{
	uint64_t blocks = 0;
	int rc = SEAM(r, fstat_blocks, r->memfd, &blocks);

	memset(acc, 0, sizeof(*acc));
	acc->resident = r->resident;
	acc->reserved = r->reserved;
	acc->st_bytes = blocks * 512;
	acc->shmem_baseline = r->shmem_baseline;
	acc->tolerance = r->tolerance;
	if (rc < 0)
		return rc;
	confirm_excess(r, acc);
	if (r->have_cgroup) {
		rc = cg_read_shmem(&r->cg_env, &r->cg, &acc->shmem);
		acc->have_cgroup = rc == 0;
		CODE_PROBE(rc < 0, cgroup_read_failed);
	}
	return 0;
}

#ifdef RESID_HARNESS
/* Bug 1: the comparison leaves out the bytes in-flight fetches reserved and
 * may already have read into the memfd. The exact check of I-7 judges the
 * verdict: a failure it does not confirm is a false alarm. */
static int check_ignoring_reserved(struct resid_region *r,
				   struct resid_accounting *acc, char *why,
				   size_t n)
{
	struct resid_accounting used = *acc;
	char exact[RESID_ERRLEN];

	used.reserved = 0;
	if (inv_accounting_holds(&used, why, n))
		return 0;
	STAT_INC(r, reconcile_failures);
	if (inv_accounting(acc, exact, sizeof(exact)))
		inv_report(7,
			   "false RECONCILE FAILED: %s, but with the %" PRIu64
			   " reserved bytes of in-flight fetches the exact "
			   "check holds",
			   why, acc->reserved);
	return -1;
}
#endif

/* memory.stat can stay past the tolerance until the kernel's periodic
 * flush (every 2 s) when a read skips its own flush, as a 6.12-rt guest
 * showed once: 2 MiB behind a punch, with st_blocks exact. A shmem
 * deviation alone is reported only if reads over the next flush period
 * (twice over) all confirm it; the budget lock, held, keeps the expected
 * range still. A cgroup that keeps deviating (other shmem in it) stalls
 * the pager so at most once a minute: a confirmed deviation is reported
 * at once for the next minute. */
#define SHMEM_CONFIRM_READS 16
#define SHMEM_CONFIRM_GAP_NS 250000000ull
#define SHMEM_CONFIRM_QUIET_NS 60000000000ull

static void confirm_shmem(struct resid_region *r, struct resid_accounting *acc)
{
	struct resid_accounting st_only = *acc;
	char why[RESID_ERRLEN];

	st_only.have_cgroup = 0;
	if (!acc->have_cgroup || inv_accounting_holds(acc, why, sizeof(why)) ||
	    !inv_accounting_holds(&st_only, why, sizeof(why)) ||
	    SEAM(r, clock_ns) < r->shmem_confirm_at)
		return;
	for (int i = 0; i < SHMEM_CONFIRM_READS; i++) {
		SEAM(r, sleep_ns, SHMEM_CONFIRM_GAP_NS);
		if (cg_read_shmem(&r->cg_env, &r->cg, &acc->shmem) < 0)
			return;
		if (inv_accounting_holds(acc, why, sizeof(why))) {
			STAT_INC(r, shmem_lag);
			return;
		}
	}
	r->shmem_confirm_at = SEAM(r, clock_ns) + SHMEM_CONFIRM_QUIET_NS;
}

static int check(struct resid_region *r, struct resid_accounting *acc,
		 char *why, size_t n)
{
	int rc = measure(r, acc);

	STAT_INC(r, reconciles);
	if (rc < 0) {
		snprintf(why, n, "fstat(memfd): %s", strerror(-rc));
		STAT_INC(r, reconcile_failures);
		return -1;
	}
#ifdef RESID_HARNESS
	if (BUG(1))
		return check_ignoring_reserved(r, acc, why, n);
#endif
	confirm_shmem(r, acc);
	if (!inv_accounting(acc, why, n)) {
		STAT_INC(r, reconcile_failures);
		return -1;
	}
	return 0;
}

void reconcile_locked(struct resid_region *r, int due)
{
	struct resid_accounting acc;
	char why[RESID_ERRLEN];

	if (!due)
		return;
	r->since_reconcile = 0;
	check(r, &acc, why, sizeof(why));
}

#ifdef RESID_HARNESS
int resid_reconcile(struct resid_region *r, struct resid_accounting *acc,
		    char why[RESID_ERRLEN])
{
	int rc;

	why[0] = '\0';
	SEAM(r, lock, &r->budget_lock);
	rc = check(r, acc, why, RESID_ERRLEN);
	SEAM(r, unlock, &r->budget_lock);
	return rc;
}
#endif
