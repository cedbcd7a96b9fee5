/* The kernel probe: what this kernel offers the pager and whether it can run
 * here (residctl probe, the gate's and the storms' manifests). */
#ifndef HARNESS_PROBE_H
#define HARNESS_PROBE_H

#include <stdint.h>

#include "cgroupfs.h"

struct probe {
	char release[128];
	int uffd_ok;             /* a userfaultfd could be opened */
	char uffd_error[128];
	uint64_t features, ioctls;
	int dev_userfaultfd;     /* /dev/userfaultfd exists */
	char unprivileged[16];   /* vm.unprivileged_userfaultfd */
	struct cg_memory cg;
	int swap_cond;           /* cg_swap_check, -1: swap possible */
	char swap_why[256];
	char thp[64], shmem_thp[64];
	int can_run;
	char verdict[512];       /* why not, or "yes" */
};

void probe_run(struct probe *p);
int probe_json(const struct probe *p, char *buf, size_t cap);

#endif
