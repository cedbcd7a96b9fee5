#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup_scope.h"
#include "cli/probe.h"
#include "rev.h"
#include "seam.h"
#include "workload/huge_leg.h"

/* The trial scope's limit: any valid one will do. */
#define TRIAL_LIMIT (64ull << 20)

static const struct resid_seam *const lx = &resid_seam_linux;

static void read_word(const char *path, char *buf, size_t cap)
{
	long got = lx->read_text(NULL, path, buf, cap);

	if (got <= 0)
		snprintf(buf, cap, "%s", got == -ENOENT ? "absent" : "unknown");
	buf[strcspn(buf, "\n")] = '\0';
}

/* "always [madvise] never" -> "madvise" */
static void selected(char *s)
{
	char *a = strchr(s, '['), *b = a ? strchr(a, ']') : NULL;

	if (a && b) {
		memmove(s, a + 1, (size_t)(b - a - 1));
		s[b - a - 1] = '\0';
	}
}

static void probe_uffd(struct probe *p)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = lx->uffd_open(NULL, O_CLOEXEC | O_NONBLOCK);
	int rc;

	if (fd < 0) {
		snprintf(p->uffd_error, sizeof(p->uffd_error), "%s",
			 strerror(-fd));
		return;
	}
	rc = lx->uffd_api(NULL, fd, &api);
	lx->close(NULL, fd);
	if (rc < 0) {
		snprintf(p->uffd_error, sizeof(p->uffd_error), "UFFDIO_API: %s",
			 strerror(-rc));
		return;
	}
	p->uffd_ok = 1;
	p->features = api.features;
	p->ioctls = api.ioctls;
}

/* The scenarios run in a child of this process's memory cgroup with swap
 * forbidden (I-3 holds there, design.md §2.6): make one as they would and remove
 * it, so that "yes" means the gate can start. The condition that held in
 * it, or -1 with the reason in err. */
static int trial_scope(char *err, size_t n)
{
	struct cg_scope sc;
	int cond;

	if (cg_scope_enter(&sc, "probe", TRIAL_LIMIT, err, n) < 0)
		return -1;
	cond = sc.cond;
	if (cg_scope_leave(&sc) < 0) {
		snprintf(err, n,
			 "cgroup: could not remove the trial cgroup %.300s",
			 sc.mem.dir);
		return -1;
	}
	return cond;
}

/* Bit i of UFFDIO_API's features and ioctls, as include/uapi/linux/
 * userfaultfd.h names them (UFFD_FEATURE_*, _UFFDIO_*; 7.3 added RWP and
 * RWP_ASYNC); a bit without a name here prints as bitN. */
static const char *const feature_names[] = {
	"PAGEFAULT_FLAG_WP",
	"EVENT_FORK",
	"EVENT_REMAP",
	"EVENT_REMOVE",
	"MISSING_HUGETLBFS",
	"MISSING_SHMEM",
	"EVENT_UNMAP",
	"SIGBUS",
	"THREAD_ID",
	"MINOR_HUGETLBFS",
	"MINOR_SHMEM",
	"EXACT_ADDRESS",
	"WP_HUGETLBFS_SHMEM",
	"WP_UNPOPULATED",
	"POISON",
	"WP_ASYNC",
	"MOVE",
	"RWP",
	"RWP_ASYNC",
};
static const char *const ioctl_names[64] = {
	"REGISTER", "UNREGISTER", "WAKE",         "COPY",
	"ZEROPAGE", "MOVE",       "WRITEPROTECT", "CONTINUE",
	"POISON",   "RWPROTECT",  "SET_MODE",     [63] = "API",
};

static void bit_names(uint64_t v, const char *const *names, size_t n, char *buf,
		      size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < 64 && len < cap; i++) {
		if (!(v & (1ull << i)))
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s",
					len ? " " : "");
		if (len >= cap)
			break;
		len += (size_t)(i < n && names[i] ?
					snprintf(buf + len, cap - len, "%s",
						 names[i]) :
					snprintf(buf + len, cap - len, "bit%zu",
						 i));
	}
}

void probe_feature_names(const struct probe *p, char *buf, size_t cap)
{
	bit_names(p->features, feature_names,
		  sizeof(feature_names) / sizeof(*feature_names), buf, cap);
}

void probe_ioctl_names(const struct probe *p, char *buf, size_t cap)
{
	bit_names(p->ioctls, ioctl_names, 64, buf, cap);
}

void probe_decide(struct probe *p, const char *cg_err)
{
	const uint64_t need = UFFD_FEATURE_MISSING_SHMEM |
			      UFFD_FEATURE_MINOR_SHMEM;

	p->can_run = 0;
	if (!p->uffd_ok)
		snprintf(p->verdict, sizeof(p->verdict),
			 "no: userfaultfd: %s "
			 "(run as root, or set vm.unprivileged_userfaultfd=1)",
			 p->uffd_error);
	else if ((p->features & need) != need)
		snprintf(p->verdict, sizeof(p->verdict),
			 "no: the kernel lacks "
			 "UFFD_FEATURE_MINOR_SHMEM (Linux >= 5.13 needed)");
	else if (cg_err)
		snprintf(p->verdict, sizeof(p->verdict), "no: %s", cg_err);
	else if (p->cg.version == CG_NONE)
		snprintf(p->verdict, sizeof(p->verdict),
			 "no: no memory cgroup "
			 "controller for this process (v2: add memory to the "
			 "parent's cgroup.subtree_control; v1: mount -t cgroup "
			 "-o memory memory /sys/fs/cgroup/memory; kernels since "
			 "6.11 may have no v1 memory controller)");
	else if (p->swap_cond < 0)
		snprintf(p->verdict, sizeof(p->verdict),
			 "no: swap is possible "
			 "in the scenarios' cgroups");
	else {
		p->can_run = 1;
		snprintf(p->verdict, sizeof(p->verdict), "yes");
	}
}

static void probe_huge(struct probe *p)
{
	char path[128];

	p->pmd = huge_leg_folio();
	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/transparent_hugepage/"
		 "hugepages-%" PRIu64 "kB/shmem_enabled",
		 p->pmd >> 10);
	read_word(path, p->shmem_pmd, sizeof(p->shmem_pmd));
	selected(p->shmem_pmd);
	p->huge_tmpfs = huge_leg_available(p->huge_why, sizeof(p->huge_why));
}

void probe_run(struct probe *p)
{
	struct cg_env env;
	char err[512];
	const char *cg_err = NULL;

	memset(p, 0, sizeof(*p));
	read_word("/proc/sys/kernel/osrelease", p->release, sizeof(p->release));
	read_word("/proc/sys/vm/unprivileged_userfaultfd", p->unprivileged,
		  sizeof(p->unprivileged));
	read_word("/sys/kernel/mm/transparent_hugepage/enabled", p->thp,
		  sizeof(p->thp));
	read_word("/sys/kernel/mm/transparent_hugepage/shmem_enabled",
		  p->shmem_thp, sizeof(p->shmem_thp));
	selected(p->thp);
	selected(p->shmem_thp);
	probe_huge(p);
	p->dev_userfaultfd = access("/dev/userfaultfd", F_OK) == 0;
	probe_uffd(p);
	cg_env_init(&env, lx->read_text, NULL);
	p->swap_cond = -1;
	if (cg_find_memory(&env, &p->cg, err, sizeof(err)) < 0)
		cg_err = err;
	else if (p->cg.version != CG_NONE && p->uffd_ok &&
		 (p->swap_cond = trial_scope(err, sizeof(err))) < 0)
		cg_err = err;
	if (cg_err)
		snprintf(p->swap_why, sizeof(p->swap_why), "%s", cg_err);
	probe_decide(p, cg_err);
}

int probe_json(const struct probe *p, char *buf, size_t cap)
{
	char fnames[512], inames[256];
	int n;

	probe_feature_names(p, fnames, sizeof(fnames));
	probe_ioctl_names(p, inames, sizeof(inames));
	n = snprintf(buf, cap,
		     "{\"kernel\":\"%s\",\"uffd\":%s,\"uffd_features\":\"%#" PRIx64
		     "\",\"uffd_ioctls\":\"%#" PRIx64
		     "\",\"uffd_feature_names\":\"%s\","
		     "\"uffd_ioctl_names\":\"%s\",\"minor_shmem\":%s,"
		     "\"poison\":%s,"
		     "\"dev_userfaultfd\":%s,\"unprivileged_userfaultfd\":\"%s\","
		     "\"cgroup_version\":\"%s\",\"cgroup_dir\":\"%s\","
		     "\"swap_total\":%" PRIu64 ",\"swap_condition\":\"%s\","
		     "\"thp\":\"%s\",\"shmem_thp\":\"%s\",\"pmd_folio\":%" PRIu64
		     ","
		     "\"huge_tmpfs\":%s,\"revision\":\"%s\","
		     "\"can_run\":%s}",
		     p->release, p->uffd_ok ? "true" : "false", p->features,
		     p->ioctls, fnames, inames,
		     p->features & UFFD_FEATURE_MINOR_SHMEM ? "true" : "false",
		     p->features & UFFD_FEATURE_POISON ? "true" : "false",
		     p->dev_userfaultfd ? "true" : "false", p->unprivileged,
		     cg_version_name(p->cg.version), p->cg.dir,
		     p->cg.swap_total,
		     p->swap_cond >= 0 ? cg_swap_cond_name(p->swap_cond) :
		     p->swap_why[0]    ? "none held" :
					 "not checked",
		     p->thp, p->shmem_thp, p->pmd,
		     p->huge_tmpfs ? "true" : "false", RESID_REV,
		     p->can_run ? "true" : "false");

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}
