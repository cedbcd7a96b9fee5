/* /proc, /sys and the cgroup as read_text serves them: a cgroup v2
 * machine whose memory.stat lags as the kernel's does. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

#define CGROUP "/sys/fs/cgroup/sim/"

static const struct {
	const char *path, *text;
} files[] = {
	{ "/proc/self/cgroup", "0::/sim\n" },
	{ "/proc/self/mountinfo",
	  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	  "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - "
	  "proc proc rw\n"
	  "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime "
	  "shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	  "40 22 0:30 / " SIM_HUGE_DIR " rw,relatime shared:9 - tmpfs tmpfs "
	  "rw,size=65536k,huge=always\n" },
	{ CGROUP "cgroup.controllers", "cpu io memory pids\n" },
	{ CGROUP "memory.max", "1073741824\n" },
	{ CGROUP "memory.swap.max", "0\n" },
	{ "/proc/meminfo",
	  "MemTotal:        8388608 kB\n"
	  "MemFree:         4194304 kB\nSwapTotal:             0 kB\n"
	  "SwapFree:              0 kB\n" },
	{ "/proc/sys/kernel/osrelease", "6.18.0-sim\n" },
	{ "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
	  "always within_size advise [never] deny force\n" },
	{ "/sys/devices/system/cpu/online", "0-1\n" },
};

/* memory.stat's shmem catches up only when it is more than the lag
 * behind (or ahead), like the kernel's per-CPU batching. */
static uint64_t shmem_now(const struct sim *s)
{
	uint64_t now = 0;

	for (uint32_t i = 0; i < s->nmemfds; i++)
		now += s->memfds[i]->npresent * SIM_PAGE;
	return now;
}

static uint64_t shmem_reported(struct sim *s)
{
	uint64_t now = shmem_now(s), d;

	d = now > s->stat_reported ? now - s->stat_reported :
				     s->stat_reported - now;
	if (d > s->cfg.stat_lag_bytes)
		s->stat_reported = now;
	return s->stat_reported;
}

static long put_text(char *buf, size_t cap, const char *text)
{
	size_t n = strlen(text);

	n = n < cap - 1 ? n : cap - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	return (long)n;
}

long kernel_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	struct sim *s = ctx;
	char stat[256];
	uint64_t shmem;

	sched_point(s, OP_READ_TEXT, sim_str_hash(path));
	if (!cap)
		return -EINVAL;
	if (!strcmp(path, CGROUP "memory.current")) {
		/* The headroom check's usage: the memfds' pages alone. */
		snprintf(stat, sizeof(stat), "%llu\n",
			 (unsigned long long)shmem_now(s));
		return put_text(buf, cap, stat);
	}
	if (!strcmp(path, "/sys/kernel/mm/transparent_hugepage/"
			  "hpage_pmd_size")) {
		snprintf(stat, sizeof(stat), "%llu\n",
			 (unsigned long long)kernel_folio(s));
		return put_text(buf, cap, stat);
	}
	if (!strcmp(path, CGROUP "memory.stat")) {
		shmem = shmem_reported(s);
		snprintf(stat, sizeof(stat),
			 "anon 0\nfile %llu\nkernel 0\n"
			 "shmem %llu\nfile_mapped 0\nshmem_thp 0\n",
			 (unsigned long long)shmem, (unsigned long long)shmem);
		return put_text(buf, cap, stat);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(path, files[i].path))
			return put_text(buf, cap, files[i].text);
	return -ENOENT; /* /proc/self/smaps too: the THP check is skipped */
}
