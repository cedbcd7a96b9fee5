/* The folio choice of a region (design.md §8 "Huge folios in B", I-9). B holds
 * huge folios only where no punch can split one: every chunk starts on a
 * multiple of the PMD folio, and the last chunk holds its tail up to the
 * next folio boundary (the file is sized to it, the fetch writes zeros
 * there), so every punch covers whole folios. Where they come from is the
 * admin's choice, never changed here: a directory on a tmpfs mounted with
 * huge= (cfg.huge_dir, a file made there with O_TMPFILE), or shmem_enabled
 * (global, or the PMD size's own): always, within_size or force give a
 * memfd's writes huge folios; advise gives them to B's MADV_HUGEPAGE
 * faults, so the fetch then writes through B. Any other region keeps 4 KiB
 * pages, as before. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define THP "/sys/kernel/mm/transparent_hugepage/"

enum { SRC_NONE, SRC_WRITE, SRC_ADVISE };

static int read_sys(struct resid_region *r, const char *path, char *buf,
		    size_t cap)
{
	long n = SEAM(r, read_text, path, buf, cap);

	if (n <= 0)
		buf[0] = '\0';
	return n > 0;
}

/* The PMD folio in bytes; 0 on a kernel without THP (PREEMPT_RT). */
static uint64_t pmd_folio(struct resid_region *r)
{
	char buf[32];

	return read_sys(r, THP "hpage_pmd_size", buf, sizeof(buf)) ?
		       strtoull(buf, NULL, 10) :
		       0;
}

/* A shmem_enabled line's selected word as a source. */
static int shmem_source(const char *line)
{
	if (strstr(line, "[always]") || strstr(line, "[within_size]") ||
	    strstr(line, "[force]"))
		return SRC_WRITE;
	return strstr(line, "[advise]") ? SRC_ADVISE : SRC_NONE;
}

/* What a memfd gets at PMD size: the size's own setting (6.8+), unless it
 * inherits the global one. */
static int memfd_source(struct resid_region *r, uint64_t folio)
{
	char path[96], line[128];

	snprintf(path, sizeof(path),
		 THP "hugepages-%" PRIu64 "kB/"
		     "shmem_enabled",
		 folio >> 10);
	if (read_sys(r, path, line, sizeof(line)) && !strstr(line, "[inherit]"))
		return shmem_source(line);
	return shmem_source(r->shmem_thp);
}

/* Whether a write into a memfd may allocate huge folios at any size:
 * only a mapping's fault honours MADV_NOHUGEPAGE, a write has none. */
static int writes_may_be_huge(struct resid_region *r)
{
	char path[96], line[128];

	if (shmem_source(r->shmem_thp) == SRC_WRITE)
		return 1;
	for (unsigned kb = 8; kb <= 2048; kb *= 2) { /* 4 KiB pages: to PMD */
		snprintf(path, sizeof(path), THP "hugepages-%ukB/shmem_enabled",
			 kb);
		if (read_sys(r, path, line, sizeof(line)) &&
		    (strstr(line, "[always]") || strstr(line, "[within_size]")))
			return 1;
	}
	return 0;
}

/* The mountinfo line of the mount that holds dir: the longest mount point
 * that is dir or a parent of it. */
static const char *mount_of(const char *info, const char *dir, char *mp,
			    size_t n)
{
	const char *best = NULL;
	size_t best_len = 0;

	for (const char *l = info; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char point[1024];

		/* id parent major:minor root point ... */
		if (sscanf(l, "%*s %*s %*s %*s %1023s", point) != 1)
			continue;
		size_t k = strlen(point);

		if (k < best_len && best)
			continue;
		if (strcmp(point, "/") &&
		    (strncmp(dir, point, k) || (dir[k] && dir[k] != '/')))
			continue;
		if (!best || k > best_len) {
			best = l;
			best_len = k;
			snprintf(mp, n, "%s", point);
		}
	}
	return best;
}

/* cfg.huge_dir's source: its mount must be a tmpfs with huge=always,
 * within_size or advise. SRC_NONE with why set otherwise. */
static int dir_source(struct resid_region *r, const char *dir, char *why,
		      size_t n)
{
	char *info = malloc(1 << 20), type[64] = "", opts[1024] = "";
	char mp[1024] = "";
	const char *l = NULL, *sep;
	int src = SRC_NONE;

	if (dir[0] != '/') {
		snprintf(why, n, "it is not an absolute path");
		free(info);
		return SRC_NONE;
	}
	if (info &&
	    SEAM(r, read_text, "/proc/self/mountinfo", info, 1 << 20) > 0)
		l = mount_of(info, dir, mp, sizeof(mp));
	sep = l ? strstr(l, " - ") : NULL;
	if (!sep || sscanf(sep, " - %63s %*s %1023s", type, opts) != 2) {
		snprintf(why, n, "its mount is not in /proc/self/mountinfo");
		free(info);
		return SRC_NONE;
	}
	free(info);
	if (!strcmp(type, "tmpfs")) {
		if (strstr(opts, "huge=always") ||
		    strstr(opts, "huge=within_size"))
			src = SRC_WRITE;
		else if (strstr(opts, "huge=advise"))
			src = SRC_ADVISE;
	}
	if (src == SRC_NONE)
		snprintf(why, n,
			 "it is on %s (%s), not a tmpfs mounted with "
			 "huge=always, within_size or advise",
			 mp, type);
	return src;
}

/* The first chunk that does not start on a folio boundary, or nchunks. */
static uint32_t first_unaligned(const struct resid_region *r, uint64_t folio)
{
	uint32_t i = 0;

	while (i < r->nchunks && r->chunks[i].off % folio == 0)
		i++;
	return i;
}

int huge_choose(struct resid_region *r, char *err, size_t n)
{
	const char *dir = r->cfg.huge_dir;
	uint64_t folio = pmd_folio(r);
	struct chunk *last = &r->chunks[r->nchunks - 1];
	uint64_t hold = folio ? (last->len + folio - 1) / folio * folio : 0;
	uint32_t bad = folio ? first_unaligned(r, folio) : 0;
	char why[1200] = "";
	int src = SRC_NONE;

	r->folio = RESID_PAGE;
	r->file_len = r->len;
	r->fill_b = writes_may_be_huge(r);
	if (dir && folio &&
	    (src = dir_source(r, dir, why, sizeof(why))) == SRC_NONE) {
		snprintf(err, n,
			 "huge_dir %s: %s: mount one (mount -t tmpfs -o "
			 "huge=within_size none DIR) or leave huge_dir NULL",
			 dir, why);
		return -EINVAL;
	}
	if (!dir && folio)
		src = memfd_source(r, folio);
	if (!folio)
		snprintf(r->b_folios, sizeof(r->b_folios),
			 "4 KiB: the kernel "
			 "has no transparent huge pages");
	else if (bad < r->nchunks)
		snprintf(r->b_folios, sizeof(r->b_folios),
			 "4 KiB: chunk %u "
			 "starts at %" PRIu64 ", not a multiple of the %" PRIu64
			 " KiB folio",
			 bad, r->chunks[bad].off, folio >> 10);
	else if (hold > r->cfg.budget_bytes)
		snprintf(r->b_folios, sizeof(r->b_folios),
			 "4 KiB: the last "
			 "chunk rounded up to the folio (%" PRIu64 ") exceeds "
			 "budget_bytes",
			 hold);
	else if (src == SRC_NONE)
		snprintf(r->b_folios, sizeof(r->b_folios),
			 "4 KiB: shmem_"
			 "enabled gives a memfd no huge folios and huge_dir is "
			 "not set");
	if (!folio || bad < r->nchunks || hold > r->cfg.budget_bytes ||
	    src == SRC_NONE)
		return 0;
	r->huge = 1;
	r->folio = folio;
	r->fill_b = src == SRC_ADVISE;
	last->hold = hold;
	if (hold > r->max_chunk)
		r->max_chunk = hold;
	r->file_len = last->off + hold;
	snprintf(r->b_folios, sizeof(r->b_folios),
		 "%" PRIu64 " KiB: %s%s, "
		 "written %s",
		 folio >> 10, dir ? "tmpfs huge= at " : "shmem_enabled",
		 dir ? dir : "",
		 r->fill_b ? "through B (MADV_HUGEPAGE)" : "with pwrite");
	return 0;
}

/* The file B and A map: on the huge path from huge_dir when given (read
 * during resid_open only, as path is), else a memfd. */
int huge_open_file(struct resid_region *r)
{
	return r->huge && r->cfg.huge_dir ?
		       SEAM(r, tmpfile_create, r->cfg.huge_dir) :
		       SEAM(r, memfd_create, "residctl");
}
/* B on the huge path asks for huge folios where the source is advise; on
 * the 4 KiB path it forbids them, as A always does. EINVAL: the kernel has
 * no THP (PREEMPT_RT), nothing to forbid. */
int huge_advise_b(struct resid_region *r)
{
	int rc;

	if (r->huge)
		return r->fill_b ? SEAM(r, hugepage, r->b, r->file_len) : 0;
	rc = SEAM(r, nohugepage, r->b, r->file_len);
	return rc == -EINVAL ? 0 : rc;
}

#ifdef RESID_HARNESS
int resid_huge(const struct resid_region *r)
{
	return r->huge;
}
#endif
