/* Hazards 3 and 4: MADV_COLLAPSE, which khugepaged also does, on B and
 * on A (after MADV_HUGEPAGE undid the pager's MADV_NOHUGEPAGE), on a
 * huge=always tmpfs: collapse on a memfd depends on the machine's
 * shmem_enabled, which these programs do not change. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hazards/hazards.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define MID (HZ_PMD_PAGES / 2)
#define HEAD 16 /* pages written and CONTINUE'd of a huge folio */
#define KPF_THP 22

/* Whether the folio under B's page is a huge one: B's page is read (B
 * is not registered, so that maps it), its frame looked up in
 * /proc/kpageflags. 1, 0, 2 when only root may know, or -1 with
 * o->error. */
static int folio_huge(struct hz_region *r, size_t page)
{
	uint64_t e, flags;
	int fd, rc;

	(void)*(volatile char *)(r->b + page * HZ_PAGE);
	if (pread(r->pagemap, &e, sizeof(e),
		  ((uintptr_t)r->b / HZ_PAGE + page) * sizeof(e)) != sizeof(e))
		return hz_fail(r->o, "pread /proc/self/pagemap", errno,
			       "folio_huge");
	if (!(e & ((1ull << 55) - 1)) && geteuid())
		return 2; /* pagemap hides frames from others */
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hz_fail(r->o, "open /proc/kpageflags", errno,
			       "folio_huge");
	rc = pread(fd, &flags, sizeof(flags),
		   (e & ((1ull << 55) - 1)) * sizeof(flags)) == sizeof(flags);
	close(fd);
	if (!rc)
		return hz_fail(r->o, "pread /proc/kpageflags", errno,
			       "folio_huge");
	return (int)(flags >> KPF_THP & 1);
}

/* B writes 4 KiB folios: its MADV_NOHUGEPAGE wins over huge=always. */
static int fill_small(struct hz_region *r, size_t first, size_t n)
{
	int err = hz_advise(r->b, 0, HZ_PMD_PAGES, MADV_NOHUGEPAGE), huge;

	if (err)
		return hz_fail(r->o, "madvise(B, MADV_NOHUGEPAGE)", err,
			       "fill_small");
	if (hz_fill(r, first, n) < 0 || (huge = folio_huge(r, first)) < 0)
		return -1;
	return huge == 1 ? hz_fail(r->o, "B's write took a huge folio", 0,
				   "fill_small") :
			   0;
}

/* The collapse of A or B's first 2 MiB: o->err, o->refused. */
static int collapse(struct hz_region *r, char *map, const char *which)
{
	int err = hz_advise(map, 0, HZ_PMD_PAGES, MADV_HUGEPAGE);
	char what[64];

	if (err) {
		snprintf(what, sizeof(what), "madvise(%s, MADV_HUGEPAGE)",
			 which);
		return hz_fail(r->o, what, err, "collapse");
	}
	r->o->err = hz_advise(map, 0, HZ_PMD_PAGES, MADV_COLLAPSE);
	r->o->refused = r->o->err != 0;
	return 0;
}

/* 3: B collapsed over 4 KiB folios that A has CONTINUE'd. */
int hz_collapse_b(struct hz_out *o, int memfd)
{
	struct hz_region r;
	const char *read;
	int left, huge;

	if (hz_open(&r, o, HZ_PMD, !memfd,
		    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
		    0) < 0 ||
	    fill_small(&r, 0, HZ_PMD_PAGES) < 0 ||
	    hz_continue_ok(&r, 0, HZ_PMD_PAGES) < 0 ||
	    collapse(&r, r.b, "B") < 0 ||
	    (left = hz_present(&r, 0, HZ_PMD_PAGES)) < 0)
		return -1;
	o->of = HZ_PMD_PAGES;
	o->dropped = HZ_PMD_PAGES - left;
	if (hz_touch_answer(&r, 1, &read) < 0 || (huge = folio_huge(&r, 0)) < 0)
		return -1;
	snprintf(o->key, sizeof(o->key), "folio after: %s; the touch read %s",
		 huge == 2 ? "unknown (not root)" :
		 huge      ? "huge" :
			     "4 KiB",
		 read);
	return 0;
}

/* 4a (arg 0, 1): A collapsed over 4 KiB folios with a punched hole in
 * the middle, A registered MISSING|MINOR (0) or MINOR only (1).
 * 4b, 4c (arg 2, 3): A collapsed over a huge folio whose tail was
 * never written nor CONTINUE'd, registered MISSING|MINOR, and WP (3). */
int hz_collapse_a(struct hz_out *o, int arg)
{
	uint64_t mode = UFFDIO_REGISTER_MODE_MINOR;
	uint64_t feat = 0;
	struct hz_region r;
	const char *read = "- (it was mapped)";
	int64_t b0, b1;
	int left, never, zero, right, huge, memfd = arg >= 4;
	int hole = arg % 4 < 2;
	size_t touch = hole ? MID : HZ_PMD_PAGES - 1;

	if (arg % 4 != 1)
		mode |= UFFDIO_REGISTER_MODE_MISSING;
	if (arg % 4 == 3) {
		mode |= UFFDIO_REGISTER_MODE_WP;
		feat = UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	}
	if (hz_open(&r, o, HZ_PMD, !memfd, mode, feat) < 0)
		return -1;
	if (hole) {
		if (fill_small(&r, 0, HZ_PMD_PAGES) < 0 ||
		    hz_punch(&r, MID, 1) < 0 ||
		    hz_continue_ok(&r, 0, MID) < 0 ||
		    hz_continue_ok(&r, MID + 1, HZ_PMD_PAGES - MID - 1) < 0)
			return -1;
		o->of = HZ_PMD_PAGES - 1;
	} else {
		if (hz_fill(&r, 0, HEAD) < 0 || (huge = folio_huge(&r, 0)) < 0)
			return -1;
		if (!huge)
			return hz_fail(o,
				       "B's write on huge=always took a 4 KiB "
				       "folio",
				       0, "hz_collapse_a");
		if (hz_continue_ok(&r, 0, HEAD) < 0)
			return -1;
		o->of = HEAD;
	}
	/* never CONTINUE'd: the hole, or the folio's tail */
	size_t nfirst = hole ? MID : HEAD,
	       nlen = hole ? 1 : HZ_PMD_PAGES - HEAD;

	if ((b0 = hz_blocks(&r)) < 0 || collapse(&r, r.a, "A") < 0 ||
	    (b1 = hz_blocks(&r)) < 0 ||
	    (left = hz_present(&r, 0, HZ_PMD_PAGES)) < 0 ||
	    (never = hz_present(&r, nfirst, nlen)) < 0 ||
	    hz_read_mapped(&r, nfirst, nlen, &zero, &right) < 0)
		return -1;
	o->zeros = zero;
	o->dropped = o->of - (left - never);
	/* the page never CONTINUE'd, if the collapse left it unmapped */
	if (!hz_present(&r, touch, 1) && hz_touch_answer(&r, touch, &read) < 0)
		return -1;
	if (hole)
		snprintf(o->key, sizeof(o->key),
			 "st_blocks %s; the hole's "
			 "touch read %s",
			 b1 > b0  ? "grew" :
			 b1 == b0 ? "kept" :
				    "shrank",
			 read);
	else
		snprintf(o->key, sizeof(o->key),
			 "%d of %zu tail pages mapped; "
			 "a tail touch read %s",
			 never, nlen, read);
	snprintf(o->note, sizeof(o->note), "st_blocks %" PRId64 " -> %" PRId64,
		 b0, b1);
	return 0;
}
