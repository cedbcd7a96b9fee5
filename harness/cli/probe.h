/* The kernel probe: what this kernel offers the pager and whether it can run
 * here (residctl probe, the gate's and the storms' manifests). */
#ifndef HARNESS_PROBE_H
#define HARNESS_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_limits.h" /* cgroupfs.h, and the describer the probe prints */

struct probe {
	char release[128];
	int uffd_ok; /* a userfaultfd could be opened */
	char uffd_error[128];
	uint64_t features, ioctls;
	int dev_userfaultfd;   /* /dev/userfaultfd exists */
	char unprivileged[16]; /* vm.unprivileged_userfaultfd */
	struct cg_memory cg;
	int swap_cond;      /* the I-3 condition in the scenarios' child
				  * cgroup (a trial one), -1: none held */
	char swap_why[512]; /* why not, when -1 */
	char thp[64], shmem_thp[64];
	/* Huge folios in B (design.md §8): the PMD folio (0: no THP), what a
	 * memfd gets at that size (the size's own shmem_enabled unless it
	 * inherits the global one), and whether a tmpfs with huge= can be
	 * mounted here (tried in a mount namespace of a child's own). */
	uint64_t pmd;
	char shmem_pmd[64];
	int huge_tmpfs;
	char huge_why[512];
	int can_run;
	char verdict[640]; /* why not, or "yes" */
};

/* Reads the manifest, makes and removes a trial scenario cgroup, decides. */
void probe_run(struct probe *p);
/* The verdict (can_run, verdict) from the manifest fields; cg_err: the memory
 * cgroup could not be read or the trial cgroup made, else NULL. */
void probe_decide(struct probe *p, const char *cg_err);
/* The set bits of features and ioctls by name, space-separated
 * ("MISSING_SHMEM MINOR_SHMEM", "REGISTER UNREGISTER API"). */
void probe_feature_names(const struct probe *p, char *buf, size_t cap);
void probe_ioctl_names(const struct probe *p, char *buf, size_t cap);
int probe_json(const struct probe *p, char *buf, size_t cap);

#endif
