/* The simulated kernel checked against the kernel (design.md §4, §2.7): a table
 * of seam-call sequences runs on the Linux seam and on the simulated one,
 * and the outcomes are compared field by field. cases.c is the table,
 * exec.c runs a case on either side, linux_side.c and sim_side.c supply
 * what only a side can do (a read through A, waiting for readers to settle,
 * the state of a page), compare.c judges and prints. Harness builds only. */
#ifndef HARNESS_CONFORMANCE_H
#define HARNESS_CONFORMANCE_H

#include <stdint.h>
#include <stdio.h>

#include "seam.h"

#define CONF_PAGE 4096u
#define CONF_MAX_STEPS 16
#define CONF_MAX_READERS 4
#define CONF_SEED 7 /* the content's seed */
/* The cases one residctl conformance runs, the table's among them; past
 * it the command refuses. */
#define CONF_MAX_CASES 64

enum conf_op {
	C_END,
	C_FILL,      /* backing read into B over [off, +len), content written */
	C_CONTINUE,  /* UFFDIO_CONTINUE over A [off, +len) */
	C_WAKE,      /* UFFDIO_WAKE over A [off, +len) */
	C_PUNCH,     /* fallocate(PUNCH_HOLE | KEEP_SIZE) over [off, +len) */
	C_READ_UFFD, /* read(uffd), non-blocking, up to 8 messages */
	C_TOUCH,     /* a new thread reads [off, +len) through A; waits until
		       * it has read or has faulted (its message is read) */
	C_CLOSE_UFFD, /* close the uffd: its faulters are let go */
	C_DROP,       /* madvise(MADV_DONTNEED) over A [off, +len) */
};

struct conf_step {
	enum conf_op op;
	uint64_t off, len;
};

struct conf_case {
	const char *name;
	const char *what;
	uint32_t pages; /* the memfd's size */
	struct conf_step steps[CONF_MAX_STEPS];
	/* The file is made with O_TMPFILE on a tmpfs mounted huge=always
	 * (the huge path's, design.md §8); the simulated kernel's folio is then
	 * the kernel's PMD size. */
	int huge;
};

extern const struct conf_case conf_cases[];
extern const int conf_ncases;
const struct conf_case *conf_case_find(const char *name);

/* What one side saw after a step (the last entry: after the uffd is closed
 * and every reader joined). Every field is compared. */
struct conf_obs {
	int64_t rc;         /* the call's return: -errno, a count, 0 */
	int64_t mapped;     /* CONTINUE's mapped field */
	char msgs[96];      /* messages read: "MISSING@1 MINOR@2", "" */
	char pages[40];     /* per page: - hole, c page cache, M mapped in
			       * A; or "cache N mapped M" past 32 pages */
	uint64_t st_blocks; /* fstat of the memfd */
	uint64_t large;     /* bytes mapped in A in large folios (the
			       * census of I-9's check) */
	int64_t shmem;      /* memory.stat shmem minus the case's start;
			       * compared within the sides' lag tolerance */
	char readers[96];   /* each reader: blocked, content, zeros, or
			       * mixed:N (N bytes not the content) */
	char sweep[40];     /* the last entry only: every page read through
			       * A once the uffd is closed, C content, 0
			       * zeros, x mixed; or counts past 32 pages */
};

struct conf_run {
	struct conf_obs obs[CONF_MAX_STEPS + 1];
	int nobs;
	char error[256]; /* the case could not run (setup, a hang) */
};

struct conf_reader;

/* A seam and what only its side can do. */
struct conf_side {
	const char *name;
	const struct resid_seam *k;
	/* A read through mapping A, faulting as the kernel does. */
	void (*read_a)(struct conf_side *side, const uint8_t *addr,
		       uint8_t *dst, uint64_t len);
	/* A's entries over [addr, +len) dropped (MADV_DONTNEED): 0 or
	 * -errno. */
	int (*drop_a)(struct conf_side *side, const uint8_t *addr,
		      uint64_t len);
	/* Returns when every reader not done sleeps on its fault; -1 with
	 * side->why set when one did neither. */
	int (*settle)(struct conf_side *side, struct conf_reader *r, int n);
	/* '-', 'c' or 'M' for a page of the memfd (a: mapping A, b: B). */
	char (*page_state)(struct conf_side *side, const uint8_t *a,
			   const uint8_t *b, uint64_t page);
	uint64_t tolerance;   /* bytes memory.stat may lag on this side */
	const char *huge_dir; /* where a huge case makes its file */
	void *priv;
	char why[256];
};

struct conf_reader {
	struct conf_side *side;
	const uint8_t *addr;
	uint64_t off, len;
	resid_thread th;
	int fd;   /* signalled when the read is done */
	int tid;  /* atomic; Linux: the thread, to see where it
			       * sleeps (known to the caller through the
			       * kernel, which TSan does not see) */
	int done; /* atomic */
	uint64_t wrong, zeros;
};

/* Runs case c on side (in a controlled thread on the simulated side). */
void conf_exec(struct conf_side *side, const struct conf_case *c,
	       struct conf_run *out);

/* The Linux seam, in a child memory cgroup of its own, removed after. -1
 * with one line in err when the pager cannot run here. */
int conf_run_linux(const struct conf_case *const *cases, int n,
		   struct conf_run *out, uint64_t *tolerance, char *err,
		   size_t errlen);
/* The simulated kernel. */
int conf_run_sim(const struct conf_case *const *cases, int n,
		 struct conf_run *out, char *err, size_t errlen);

/* Fields that differ between the sides at step i, as "rc, pages", into
 * buf; 0 when they agree. tolerance: memory.stat's. */
int conf_diff(const struct conf_obs *a, const struct conf_obs *b,
	      uint64_t tolerance, char *buf, size_t n);
/* "FILL [0, +8192)" */
void conf_step_name(const struct conf_step *s, char *buf, size_t n);

#endif
