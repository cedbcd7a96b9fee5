/* The memory cgroup as the pager sees it (design.md §2.6, I-3, I-10), and where
 * cgroup v1 and v2 memory settings are mapped onto each other: libcgroup
 * 2.0 does not translate them, so no other file spells a memory.* file
 * name or value (the harness's writes, cgroup_limits.h, are built on the
 * names here). No OS calls here: every read goes through the caller's
 * read_text (the pager passes its seam's). */
#ifndef RESID_CGROUPFS_H
#define RESID_CGROUPFS_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"

#define CG_PATH_MAX 4096
#define CG_UNLIMITED UINT64_MAX
#define CG_STAT_FILE "memory.stat"

/* Where the process's cgroup facts are read from. read_text has the seam's
 * contract: it reads the whole file into buf, NUL-terminated, at most cap - 1
 * bytes, and returns the byte count or -errno. */
struct cg_env {
	const char *proc_self_cgroup; /* default /proc/self/cgroup */
	const char *mountinfo;        /* default /proc/self/mountinfo */
	const char *meminfo;          /* default /proc/meminfo */
	long (*read_text)(void *ctx, const char *path, char *buf, size_t cap);
	void *ctx;
};

/* The default paths, with the caller's reader. */
void cg_env_init(struct cg_env *e,
		 long (*read_text)(void *ctx, const char *path, char *buf,
				   size_t cap),
		 void *ctx);

enum cg_version { CG_NONE = 0, CG_V1 = 1, CG_V2 = 2 };

struct cg_memory {
	int version;           /* enum cg_version */
	char dir[CG_PATH_MAX]; /* the cgroup's directory */
	char rel[CG_PATH_MAX]; /* its path below the mount point, "/" at the
				 * root: libcgroup's name for the group */
	uint64_t limit;        /* bytes; CG_UNLIMITED */
	uint64_t swap_limit;   /* v1: memory+swap; v2: swap alone */
	int has_swap_file;     /* the swap limit file exists */
	uint64_t swap_total;   /* SwapTotal of meminfo, bytes */
	/* What the ancestors up to the mount point say of swap
	 * (cg_read_limits), the nearest that says it: enum cg_swap_above. */
	int swap_above;
	uint64_t swap_above_limit; /* its memory limit */
	char swap_above_dir[CG_PATH_MAX];
};

/* Swap is charged up the tree, so an ancestor decides it too: v2 a
 * memory.swap.max of 0 forbids it below; v1 an ancestor whose limit equals
 * its memsw limit forbids swap to its own reclaim, while one with a limit
 * and a larger memsw limit lets its reclaim swap its descendants' pages. */
enum cg_swap_above {
	CG_ABOVE_SILENT,  /* no ancestor limits swap or memory */
	CG_ABOVE_FORBIDS, /* v2 swap.max 0; v1 memsw == limit, none allows */
	CG_ABOVE_ALLOWS,  /* v1: a limited ancestor's reclaim may swap */
};

/* Finds the process's memory cgroup (v2 when its memory controller is there,
 * else v1) and reads its limits. No memory controller at all is not an error:
 * version is CG_NONE and only swap_total is read. -1 with one line in err on
 * a read failure or a malformed file. */
int cg_find_memory(const struct cg_env *e, struct cg_memory *m, char *err,
		   size_t n);

/* The process's v1 cgroup of controller ctl ("blkio"): dir and rel of m
 * set, version CG_V1. 0; 1 when no v1 hierarchy mounts ctl (m zeroed); -1
 * with one line in err. */
int cg_find_v1(const struct cg_env *e, const char *ctl, struct cg_memory *m,
	       char *err, size_t n);

/* (Re)reads limit, swap_limit, has_swap_file and swap_total of m->dir, whose
 * version and rel are set, and the swap_above fields from its ancestors. -1
 * with one line in err. */
int cg_read_limits(const struct cg_env *e, struct cg_memory *m, char *err,
		   size_t n);

/* The mapping. */
const char *cg_limit_file(int version); /* NULL for CG_NONE */
const char *cg_swap_file(int version);  /* NULL for CG_NONE */
/* A limit file's text: a number, "max" on v2, v1's unlimited (the largest
 * page-counter value) as CG_UNLIMITED. 0, or -1 on anything else. */
int cg_parse_limit(int version, const char *text, uint64_t *out);
/* The room the tree leaves the cgroup: the smallest limit - usage over
 * m->dir and its ancestors up to the mount point (a sibling's usage is in
 * its parent's), as containers and systemd slices put the limit above the
 * process. */
struct cg_room {
	uint64_t room;         /* CG_UNLIMITED when no level has a limit */
	uint64_t limit, usage; /* of the tightest level */
	char dir[CG_PATH_MAX]; /* the tightest level, "" when none */
};
/* 0, or -1 with one line in err. */
int cg_read_room(const struct cg_env *e, const struct cg_memory *m,
		 struct cg_room *out, char *err, size_t n);

/* I-3: which condition makes swap impossible, strongest first. */
enum cg_swap_cond {
	CG_SWAP_V2_MAX_ZERO,       /* v2 memory.swap.max == 0 */
	CG_SWAP_V1_MEMSW_EQ_LIMIT, /* v1 memsw.limit == limit, both finite */
	CG_SWAP_NONE_CONFIGURED,   /* SwapTotal: 0 */
};
/* The condition that held, or -1 with a line in why naming the file to set
 * and its value (for a root cgroup, which cannot forbid swap: to run in a
 * child). It applies to the cgroup the region runs in (design.md §2.6) and its
 * ancestors (swap_above): v2 swap.max 0 at any level; v1 memsw == limit at
 * the cgroup, or at an ancestor of an unlimited one, and no limited
 * ancestor that allows swap. */
int cg_swap_check(const struct cg_memory *m, char *why, size_t n);
const char *cg_swap_cond_name(int cond); /* for the manifest */

/* memory.stat's shmem: v1 prefers the hierarchical total_shmem, else shmem;
 * v2 shmem. *key says which was used. -1 when no key is there or its
 * number is malformed. */
int cg_stat_shmem(int version, const char *stat, uint64_t *bytes,
		  const char **key);
/* Reads <dir>/memory.stat. 0; -errno of the read (-ENOENT for CG_NONE); or
 * -EBADMSG when the file has no well-formed shmem line. */
int cg_read_shmem(const struct cg_env *e, const struct cg_memory *m,
		  uint64_t *bytes);

/* memory.stat lags by up to what the kernel has not flushed: per online CPU,
 * a batch of 64 pages not yet counted plus the flush threshold (64 pages on
 * >= 6.1, 32 on 5.15..6.0; 64, conservative, for any other or unparseable
 * release). online_cpus 0 counts as 1. */
uint64_t cg_flush_tolerance(const char *kernel_release, unsigned online_cpus);

#endif
