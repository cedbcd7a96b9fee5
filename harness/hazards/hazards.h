/* The kernel's hands on A and B (docs/kernels.md, "The kernel's hands"):
 * small programs of userfaultfd, a memfd (or a file on a huge=always
 * tmpfs) mapped twice and the calls applications and the kernel make on
 * such a mapping, each measuring what the kernel did. No pager code: the
 * rows say what the pager must expect, kernel by kernel. */
#ifndef HARNESS_HAZARDS_H
#define HARNESS_HAZARDS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/userfaultfd.h>

#define HZ_PAGE 4096u
#define HZ_PMD (2u << 20)
#define HZ_PMD_PAGES (HZ_PMD / HZ_PAGE)

/* What one hazard measured. Numbers are -1 where they do not apply. */
struct hz_out {
	int na;          /* 1: cannot be measured here, note says why */
	int error;       /* 1: the setup failed, note says what and where */
	int hung;        /* set by the runner: past the time limit */
	int err;         /* errno of the call measured; 0: it succeeded */
	int dropped, of; /* of `of` entries of A mapped before, how many
			  * the call dropped (pagemap's present bit) */
	int zeros;       /* pages of A mapped with zeros, no fault raised */
	int refused;     /* a collapse: 1 refused, 0 done */
	char fault[16];  /* the next touch's fault: minor, missing, none */
	char key[160];   /* the rest of the outcome, compared across kernels */
	char note[240];  /* what is not compared (timings, moved pages) */
	char backing[8]; /* memfd or huge */
};

/* A hazard: fills out, returns 0 (also for na), -1 with error set. */
typedef int hz_fn(struct hz_out *o, int arg);

/* THP: the kernel has transparent huge pages; ROOT: root; HUGE: both,
 * for a huge=always tmpfs in a mount namespace of the hazard's own. */
enum { HZ_NEEDS_THP = 1, HZ_NEEDS_ROOT = 2, HZ_NEEDS_HUGE = 3 };

struct hazard {
	const char *name;
	hz_fn *fn;
	int arg;
	int needs;
	int limit_s; /* past it, the row is "hung" */
	const char *what;
	const char *on618; /* hz_outcome() as measured on 6.18 */
};

extern const struct hazard hazards[];
extern const int nhazards;

/* The rows of hazards.def, what one residctl hazards run holds at most. */
enum {
	HZ_COUNT = 0
#define HAZARD(name, fn, arg, needs, limit, what, on618) +1
#include "hazards/hazards.def"
#undef HAZARD
};

/* The index of the hazard named name, or -1. */
int hz_find(const char *name);

/* The outcome as one line: the fields and the key, what kernels are
 * compared by. */
void hz_outcome(const struct hz_out *o, char *buf, size_t n);
/* One hazard in a forked child under its limit; o always filled. */
void hz_run(const struct hazard *h, struct hz_out *o);

/* A region as the pager has it: fd mapped twice, A read-only and
 * registered with userfaultfd, B read-write, both aligned to HZ_PMD. */
struct hz_region {
	int fd, uffd, pagemap;
	char *a, *b;
	size_t len;
	uint64_t features; /* what UFFDIO_API granted */
	struct hz_out *o;  /* failures are written to o->note */
};

/* Opens len bytes on a memfd, or (huge) on a file of a huge=always tmpfs
 * mounted on /tmp in this process's own mount namespace; A registered
 * with mode, features asked of UFFDIO_API. 0, or -1 with o->error. */
int hz_open(struct hz_region *r, struct hz_out *o, size_t len, int huge,
	    uint64_t mode, uint64_t features);
/* The byte the pager would write at offset off (never zero). */
uint8_t hz_byte(size_t off);
/* Writes the content of pages [first, first + n) through B (a
 * MADV_NOHUGEPAGE mapping: 4 KiB folios even on a huge tmpfs). */
int hz_fill(struct hz_region *r, size_t first, size_t n);
/* The same with pwrite, as the pager fills: the pages are mapped in A
 * alone once CONTINUE'd, and MADV_PAGEOUT and MADV_COLD pass over pages
 * mapped twice. -1 with o->error. */
int hz_write(struct hz_region *r, size_t first, size_t n);
/* UFFDIO_CONTINUE of pages [first, first + n): 0 or the errno; *mapped
 * the bytes the kernel says it mapped. */
int hz_continue(struct hz_region *r, size_t first, size_t n, int64_t *mapped);
/* Like hz_continue, and a failure is the setup's. */
int hz_continue_ok(struct hz_region *r, size_t first, size_t n);
int hz_punch(struct hz_region *r, size_t first, size_t n);
/* madvise of pages [first, first + n) of a mapping: 0 or the errno. */
int hz_advise(char *map, size_t first, size_t n, int advice);
/* How many of A's pages [first, first + n) are mapped, without touching
 * them (/proc/self/pagemap); -1 with o->error. */
int hz_present(struct hz_region *r, size_t first, size_t n);
/* Of A's mapped pages in [first, first + n): *zero those reading zero,
 * *right those reading the content. -1 with o->error. */
int hz_read_mapped(struct hz_region *r, size_t first, size_t n, int *zero,
		   int *right);
/* st_blocks of the file. */
int64_t hz_blocks(struct hz_region *r);

/* A thread touching A's page. */
struct hz_touch {
	struct hz_region *r;
	size_t page;
	int done;      /* atomic */
	uint8_t value; /* what it read */
	unsigned long thread;
};
int hz_touch_start(struct hz_touch *t, struct hz_region *r, size_t page);
/* Waits up to ms for the toucher; 1 done, 0 still blocked. */
int hz_touch_wait(struct hz_touch *t, int ms);
/* The next fault message within ms: 1 with kind ("minor", "missing",
 * "wp") and the page, 0 when none came; -1 with o->error. */
int hz_fault(struct hz_region *r, int ms, char kind[16], size_t *page);
/* Touches page, answers a minor fault with a CONTINUE and a missing one
 * with the content through B and a CONTINUE: o->fault, and "right",
 * "zero" or "wrong" for the byte read into what. -1 with o->error. */
int hz_touch_answer(struct hz_region *r, size_t page, const char **what);

/* Sets o->error with "what: strerror(err) (where)"; returns -1. */
int hz_fail(struct hz_out *o, const char *what, int err, const char *where);
/* The errno's name ("EAGAIN"), "0" for 0. */
const char *hz_errname(int err);

/* The hazards, one file an idea (hazards.def names them). */
hz_fn hz_advice;     /* DONTNEED, PAGEOUT, COLD on A */
hz_fn hz_collapse_b; /* MADV_COLLAPSE on B over 4 KiB folios */
hz_fn hz_collapse_a; /* MADV_HUGEPAGE + MADV_COLLAPSE on A */
hz_fn hz_cont_range; /* a 2 MiB CONTINUE over a mapped page or a hole */
hz_fn hz_populate;   /* MADV_POPULATE_READ from a second thread */
hz_fn hz_border;     /* a CONTINUE across a VMA border */
hz_fn hz_compaction; /* compact_memory while A is mapped */

#endif
