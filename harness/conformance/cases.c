/* The conformance table: seam-call sequences whose outcomes the simulated
 * kernel must reproduce (design.md §2.7). Offsets and lengths are in bytes; P(n)
 * is page n. Every case ends with the uffd closed and its readers joined. */
#include <string.h>

#include "conformance/conformance.h"

#define P(n) ((uint64_t)(n)*CONF_PAGE)
#define FILL(p, n)                 \
	{                          \
		C_FILL, P(p), P(n) \
	}
#define CONT(p, n)                     \
	{                              \
		C_CONTINUE, P(p), P(n) \
	}
#define WAKE(p, n)                 \
	{                          \
		C_WAKE, P(p), P(n) \
	}
#define PUNCH(p, n)                 \
	{                           \
		C_PUNCH, P(p), P(n) \
	}
#define TOUCH(p)                         \
	{                                \
		C_TOUCH, P(p), CONF_PAGE \
	}
#define READQ                     \
	{                         \
		C_READ_UFFD, 0, 0 \
	}
#define CLOSE                      \
	{                          \
		C_CLOSE_UFFD, 0, 0 \
	}
#define DROP(p, n)                 \
	{                          \
		C_DROP, P(p), P(n) \
	}

const struct conf_case conf_cases[] = {
	{ "uffd-read-empty",
	  "read(uffd) on an empty queue: EAGAIN",
	  4,
	  { READQ },
	  0 },
	{ "wake-no-waiter",
	  "UFFDIO_WAKE with nobody waiting: 0, also past "
	  "A; unaligned or empty: EINVAL",
	  4,
	  { WAKE(0, 4),
	    WAKE(8, 4),
	    { C_WAKE, 100, CONF_PAGE },
	    { C_WAKE, 0, 0 } },
	  0 },
	{ "continue-hole",
	  "CONTINUE over a hole: EFAULT, mapped = -EFAULT",
	  4,
	  { CONT(0, 1), CONT(1, 3) },
	  0 },
	{ "continue-filled",
	  "fill then CONTINUE: 0, mapped = len; reads "
	  "through A see the content",
	  4,
	  { FILL(0, 2), CONT(0, 2), TOUCH(0), TOUCH(1) },
	  0 },
	{ "continue-mapped",
	  "CONTINUE over a mapped page: EEXIST, mapped = "
	  "-EEXIST",
	  4,
	  { FILL(0, 1), CONT(0, 1), CONT(0, 1) },
	  0 },
	{ "continue-partial-hole",
	  "CONTINUE over a page then a hole: "
	  "EAGAIN, mapped = one page",
	  4,
	  { FILL(0, 1), CONT(0, 2) },
	  0 },
	{ "continue-partial-mapped",
	  "CONTINUE over a page then a mapped "
	  "page: EAGAIN, mapped = one page; mapped first: EEXIST",
	  4,
	  { FILL(0, 3), CONT(1, 1), CONT(0, 2), CONT(1, 2) },
	  0 },
	{ "continue-middle-mapped",
	  "CONTINUE over a range whose middle "
	  "page is mapped: EAGAIN, mapped = the pages before it; the retry "
	  "from there: EEXIST",
	  4,
	  { FILL(0, 4), CONT(2, 1), CONT(0, 4), CONT(2, 2), CONT(3, 1) },
	  0 },
	{ "continue-bad-range",
	  "CONTINUE unaligned, empty, or past A",
	  4,
	  { FILL(0, 4),
	    { C_CONTINUE, 100, CONF_PAGE },
	    { C_CONTINUE, 0, 0 },
	    CONT(3, 2) },
	  0 },
	{ "missing-fault",
	  "a read of a hole faults MISSING; fill and "
	  "CONTINUE wake it with the content",
	  4,
	  { TOUCH(1), FILL(1, 1), CONT(1, 1) },
	  0 },
	{ "minor-fault",
	  "a read of a page in the page cache faults MINOR",
	  4,
	  { FILL(2, 1), TOUCH(2), CONT(2, 1) },
	  0 },
	{ "wake-covers-mapped-only",
	  "a partial CONTINUE wakes only what it "
	  "mapped",
	  4,
	  { TOUCH(1), FILL(0, 1), CONT(0, 2), READQ, FILL(1, 1), CONT(1, 1) },
	  0 },
	{ "close-releases-minor",
	  "closing the uffd lets a MINOR faulter map "
	  "the page cache's page",
	  4,
	  { FILL(2, 1), TOUCH(2), CLOSE },
	  0 },
	{ "wake-refaults",
	  "WAKE of a faulter whose page is still absent: it "
	  "faults again; closing the uffd lets it read zeros",
	  4,
	  { TOUCH(3), WAKE(3, 1), READQ, READQ, CLOSE },
	  0 },
	{ "two-faulters",
	  "two readers of one hole: a message each; one "
	  "CONTINUE wakes both",
	  4,
	  { TOUCH(1), TOUCH(1), READQ, FILL(1, 1), CONT(1, 1) },
	  0 },
	{ "punch-under-faulter",
	  "a page punched under a MINOR faulter: "
	  "woken, it faults again MISSING",
	  4,
	  { FILL(2, 1), TOUCH(2), PUNCH(2, 1), WAKE(2, 1), READQ, FILL(2, 1),
	    CONT(2, 1) },
	  0 },
	{ "punch-then-access",
	  "after a punch the next read faults MISSING, "
	  "not MINOR",
	  4,
	  { FILL(0, 2), CONT(0, 2), PUNCH(0, 1), TOUCH(0), TOUCH(1), FILL(0, 1),
	    CONT(0, 1) },
	  0 },
	{ "punch-partial-page",
	  "a punch inside a page zeroes bytes and "
	  "keeps the page",
	  4,
	  { FILL(0, 1), CONT(0, 1), { C_PUNCH, 100, 200 }, TOUCH(0) },
	  0 },
	{ "punch-bad-range",
	  "a punch of nothing is EINVAL; past the end, 0",
	  4,
	  { FILL(0, 1), { C_PUNCH, 0, 0 }, PUNCH(3, 4) },
	  0 },
	{ "dontneed-refaults-minor",
	  "MADV_DONTNEED on A after CONTINUE: "
	  "the page stays in the page cache, its next read faults MINOR, a "
	  "CONTINUE maps it again",
	  4,
	  { FILL(0, 2), CONT(0, 2), DROP(0, 1), TOUCH(0), CONT(0, 1),
	    TOUCH(1) },
	  0 },
	{ "dontneed-range",
	  "MADV_DONTNEED over holes, cached and mapped "
	  "pages drops only A's entries; a CONTINUE of them all: 0",
	  4,
	  { FILL(0, 3), CONT(0, 2), DROP(0, 4), CONT(0, 3) },
	  0 },
	{ "dontneed-mapped-first",
	  "after a drop in the middle, CONTINUE "
	  "from a mapped page: EEXIST; from the dropped one: EAGAIN, one "
	  "page",
	  4,
	  { FILL(0, 3), CONT(0, 3), DROP(1, 1), CONT(0, 3), CONT(1, 2),
	    CONT(2, 1) },
	  0 },
	{ "dontneed-under-faulter",
	  "MADV_DONTNEED wakes no faulter; the "
	  "CONTINUE does",
	  4,
	  { FILL(0, 2), CONT(0, 1), TOUCH(1), DROP(0, 4), CONT(1, 1) },
	  0 },
	{ "dontneed-bad-range",
	  "MADV_DONTNEED unaligned: EINVAL; empty: 0; "
	  "a length short of a page covers the page",
	  4,
	  { FILL(0, 2),
	    CONT(0, 2),
	    { C_DROP, 100, CONF_PAGE },
	    { C_DROP, 0, 0 },
	    { C_DROP, 0, 100 } },
	  0 },
	{ "blocks-small",
	  "st_blocks and memory.stat after 4 KiB fills and "
	  "punches",
	  8,
	  { FILL(0, 1), FILL(2, 3), CONT(2, 2), PUNCH(3, 1), FILL(7, 1),
	    PUNCH(0, 8) },
	  0 },
	{ "blocks-2m",
	  "st_blocks and memory.stat after 2 MiB fills and "
	  "punches",
	  1024,
	  { FILL(0, 512), CONT(0, 512), FILL(512, 512), PUNCH(0, 512),
	    PUNCH(256, 768) },
	  0 },
	/* The huge path (design.md §8; 2 MiB folios on x86-64: 512 pages). */
	{ "huge-fill-folio",
	  "huge tmpfs: one page written brings its whole "
	  "folio; CONTINUE maps pages of it through a NOHUGEPAGE A",
	  1024,
	  { FILL(0, 1), CONT(0, 1), FILL(512, 512), CONT(512, 512),
	    TOUCH(600) },
	  1 },
	{ "huge-punch-whole",
	  "huge tmpfs: a punch of whole folios frees "
	  "them; the next read faults MISSING",
	  1024,
	  { FILL(0, 1024), CONT(0, 1024), PUNCH(0, 512), TOUCH(1),
	    PUNCH(512, 512) },
	  1 },
	{ "huge-punch-inside",
	  "huge tmpfs: a punch inside a folio splits it "
	  "and frees only the punched pages",
	  1024,
	  { FILL(0, 1024), CONT(0, 1024), PUNCH(128, 256), TOUCH(200),
	    PUNCH(0, 1024) },
	  1 },
};
const int conf_ncases = sizeof(conf_cases) / sizeof(conf_cases[0]);
_Static_assert(sizeof(conf_cases) / sizeof(conf_cases[0]) <= CONF_MAX_CASES,
	       "conformance runs every case in one call");

const struct conf_case *conf_case_find(const char *name)
{
	for (int i = 0; i < conf_ncases; i++)
		if (!strcmp(conf_cases[i].name, name))
			return &conf_cases[i];
	return NULL;
}
