/* One conformance case on one side, through the seam only: set up a memfd
 * with mappings A and B and a uffd registered on A (as the pager does), run
 * the steps, and after each one record what the side shows. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "conformance/conformance.h"
#include "resid_harness.h"

#define WAIT_MS 10000 /* a reader that neither reads nor faults: a hang */

struct ctx {
	struct conf_side *side;
	const struct conf_case *c;
	struct conf_run *out;
	void *kx;
	int uffd, memfd;
	uint8_t *a, *b;
	uint64_t len;
	struct cg_env env;
	struct cg_memory cg;
	uint64_t shmem0;
	struct conf_reader readers[CONF_MAX_READERS];
	int nreaders;
};

#define SEAM(x, op, ...) ((x)->side->k->op((x)->kx, ##__VA_ARGS__))

static int fail(struct ctx *x, const char *what, long rc)
{
	snprintf(x->out->error, sizeof(x->out->error), "%s: %s", what,
		 rc < 0 ? strerror((int)-rc) : "failed");
	return -1;
}

static int setup(struct ctx *x)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_MISSING_SHMEM |
					      UFFD_FEATURE_MINOR_SHMEM };
	void *a, *b;
	char err[256];
	long rc;

	x->uffd = x->memfd = -1;
	x->len = (uint64_t)x->c->pages * CONF_PAGE;
	if ((rc = SEAM(x, uffd_open, O_CLOEXEC | O_NONBLOCK)) < 0)
		return fail(x, "userfaultfd", rc);
	x->uffd = (int)rc;
	if ((rc = SEAM(x, uffd_api, x->uffd, &api)) < 0)
		return fail(x, "UFFDIO_API", rc);
	rc = x->c->huge ? SEAM(x, tmpfile_create, x->side->huge_dir) :
			  SEAM(x, memfd_create, "residctl-conformance");
	if (rc < 0)
		return fail(x, x->c->huge ? "O_TMPFILE" : "memfd_create", rc);
	x->memfd = (int)rc;
	if ((rc = SEAM(x, ftruncate, x->memfd, x->len)) < 0)
		return fail(x, "ftruncate", rc);
	if ((rc = SEAM(x, map, x->memfd, x->len, PROT_READ, &a)) < 0)
		return fail(x, "mmap A", rc);
	x->a = a;
	if ((rc = SEAM(x, map, x->memfd, x->len, PROT_READ | PROT_WRITE, &b)) <
	    0)
		return fail(x, "mmap B", rc);
	x->b = b;
	/* EINVAL: a kernel without THP has nothing to forbid (design.md §2.7).
	 * A huge case's B allows huge folios only during a fill (fill_b). */
	if (((rc = SEAM(x, nohugepage, a, x->len)) < 0 && rc != -EINVAL) ||
	    ((rc = SEAM(x, nohugepage, b, x->len)) < 0 && rc != -EINVAL))
		return fail(x, "madvise(NOHUGEPAGE)", rc);

	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)a, .len = x->len },
		.mode = UFFDIO_REGISTER_MODE_MISSING |
			UFFDIO_REGISTER_MODE_MINOR,
	};

	if ((rc = SEAM(x, uffd_register, x->uffd, &reg)) < 0)
		return fail(x, "UFFDIO_REGISTER", rc);
	cg_env_init(&x->env, x->side->k->read_text, x->kx);
	if (cg_find_memory(&x->env, &x->cg, err, sizeof(err)) < 0) {
		snprintf(x->out->error, sizeof(x->out->error), "%s", err);
		return -1;
	}
	if ((rc = cg_read_shmem(&x->env, &x->cg, &x->shmem0)) < 0)
		return fail(x, "memory.stat", rc);
	return 0;
}

static void *reader_main(void *arg)
{
	struct conf_reader *r = arg;
	const struct resid_seam *k = r->side->k;
	uint8_t buf[CONF_PAGE];

	__atomic_store_n(&r->tid, gettid(), __ATOMIC_RELEASE);
	r->side->read_a(r->side, r->addr, buf, r->len);
	r->wrong = resid_content_mismatches(buf, r->off, r->len, CONF_SEED);
	for (uint64_t i = 0; i < r->len; i++)
		r->zeros += !buf[i];
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	k->notify_signal(k->ctx, r->fd);
	return NULL;
}

/* The messages on the uffd, as "MISSING@1 MINOR@2"; the count or -errno. */
static long read_msgs(struct ctx *x, char *buf, size_t n)
{
	struct uffd_msg m[8];
	long got = SEAM(x, uffd_read, x->uffd, m, 8);
	size_t used = 0;

	buf[0] = '\0';
	for (long i = 0; i < got && used < n; i++) {
		uint64_t addr = m[i].arg.pagefault.address;

		used += (size_t)
			snprintf(buf + used, n - used, "%s%s@%" PRId64,
				 i ? " " : "",
				 m[i].event != UFFD_EVENT_PAGEFAULT ? "EVENT" :
				 m[i].arg.pagefault.flags &
						 UFFD_PAGEFAULT_FLAG_MINOR ?
								      "MINOR" :
								      "MISSING",
				 (int64_t)(addr - (uintptr_t)x->a) / CONF_PAGE);
	}
	return got;
}

/* A reader of [off, +len) through A; returns once it has read or faulted
 * (then its message is read into obs). */
static int touch(struct ctx *x, const struct conf_step *s, struct conf_obs *o)
{
	struct conf_reader *r = &x->readers[x->nreaders];
	long rc;

	if (x->nreaders == CONF_MAX_READERS || s->len > CONF_PAGE)
		return fail(x,
			    "the table: too many readers or a read over "
			    "a page",
			    -EINVAL);
	*r = (struct conf_reader){ .side = x->side,
				   .addr = x->a + s->off,
				   .off = s->off,
				   .len = s->len };
	if ((rc = SEAM(x, notify_open)) < 0)
		return fail(x, "eventfd", rc);
	r->fd = (int)rc;
	if ((rc = SEAM(x, thread_start, &r->th, reader_main, r, "conf-reader")))
		return fail(x, "a reader thread", rc);
	x->nreaders++;
	rc = SEAM(x, wait_readable, x->uffd, r->fd, WAIT_MS);
	if (rc < 0)
		return fail(x, "poll", rc);
	if (rc == 0)
		return fail(x, "a reader neither read nor faulted", -ETIMEDOUT);
	if (rc & 1)
		o->rc = read_msgs(x, o->msgs, sizeof(o->msgs));
	return 0;
}

static void describe_pages(struct ctx *x, char *buf, size_t n)
{
	uint32_t cache = 0, mapped = 0;

	for (uint32_t p = 0; p < x->c->pages; p++) {
		char st = x->side->page_state(x->side, x->a, x->b, p);

		if (x->c->pages <= 32 && p + 1 < n)
			buf[p] = st;
		cache += st != '-';
		mapped += st == 'M';
	}
	if (x->c->pages <= 32)
		buf[x->c->pages < n ? x->c->pages : n - 1] = '\0';
	else
		snprintf(buf, n, "cache %u mapped %u", cache, mapped);
}

static void describe_readers(struct ctx *x, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < x->nreaders && used < n; i++) {
		const struct conf_reader *r = &x->readers[i];
		char what[32];

		if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
			snprintf(what, sizeof(what), "blocked");
		else if (!r->wrong)
			snprintf(what, sizeof(what), "content");
		else if (r->zeros == r->len)
			snprintf(what, sizeof(what), "zeros");
		else
			snprintf(what, sizeof(what), "mixed:%" PRIu64,
				 r->wrong);
		used += (size_t)snprintf(buf + used, n - used, "%sr%d:%s",
					 i ? " " : "", i, what);
	}
}

/* The content of [off, +len) written through B. In a huge case B allows
 * huge folios only meanwhile: otherwise khugepaged may collapse a split
 * folio's small pages in B's range between two observations, at a moment
 * of its own (seen on 6.1: a page faulted after the uffd closed grew into
 * a 2 MiB folio before the last observation). */
static int64_t fill_b(struct ctx *x, const struct conf_step *s)
{
	int64_t rc;
	int huge = x->c->huge;

	if (huge && (rc = SEAM(x, hugepage, x->b, x->len)) < 0 && rc != -EINVAL)
		return rc;
	rc = SEAM(x, backing_pread, -1, x->b + s->off, s->len, s->off);
	if (rc == (int64_t)s->len)
		resid_content_fill(x->b + s->off, s->off, s->len, CONF_SEED);
	if (huge) {
		int64_t r2 = SEAM(x, nohugepage, x->b, x->len);

		if (r2 < 0 && r2 != -EINVAL)
			return r2;
	}
	return rc;
}

/* Waits for the readers, then fills the state fields of o. */
static int observe(struct ctx *x, struct conf_obs *o)
{
	uint64_t shmem = 0;
	long rc;

	if (x->side->settle(x->side, x->readers, x->nreaders) < 0) {
		snprintf(x->out->error, sizeof(x->out->error), "%s",
			 x->side->why);
		return -1;
	}
	describe_pages(x, o->pages, sizeof(o->pages));
	describe_readers(x, o->readers, sizeof(o->readers));
	if ((rc = SEAM(x, fstat_blocks, x->memfd, &o->st_blocks)) < 0)
		return fail(x, "fstat", rc);
	if (x->a && (rc = SEAM(x, folio_census, x->a, x->len, &o->large)) < 0)
		return fail(x, "the folio census (kpageflags)", rc);
	if ((rc = cg_read_shmem(&x->env, &x->cg, &shmem)) < 0)
		return fail(x, "memory.stat", rc);
	o->shmem = (int64_t)(shmem - x->shmem0);
	return 0;
}

static int step(struct ctx *x, const struct conf_step *s, struct conf_obs *o)
{
	uint64_t addr = (uintptr_t)x->a + s->off;

	switch (s->op) {
	case C_FILL:
		o->rc = fill_b(x, s);
		break;
	case C_CONTINUE:
		o->rc = SEAM(x, uffd_continue, x->uffd, addr, s->len,
			     &o->mapped);
		break;
	case C_WAKE:
		o->rc = SEAM(x, uffd_wake, x->uffd, addr, s->len);
		break;
	case C_PUNCH:
		o->rc = SEAM(x, punch, x->memfd, s->off, s->len);
		break;
	case C_READ_UFFD:
		o->rc = read_msgs(x, o->msgs, sizeof(o->msgs));
		break;
	case C_TOUCH:
		if (touch(x, s, o) < 0)
			return -1;
		break;
	case C_CLOSE_UFFD:
		o->rc = SEAM(x, close, x->uffd);
		x->uffd = -1;
		break;
	case C_DROP:
		o->rc = x->side->drop_a(x->side, x->a + s->off, s->len);
		break;
	case C_END:
		break;
	}
	return observe(x, o);
}

/* Every page read through A by the case's thread: with the uffd closed no
 * read blocks (a hole reads as a new page of zeros). */
static void sweep(struct ctx *x, char *buf, size_t n)
{
	uint32_t k[3] = { 0, 0, 0 };
	uint8_t page[CONF_PAGE];

	for (uint32_t p = 0; p < x->c->pages; p++) {
		uint64_t off = (uint64_t)p * CONF_PAGE, zeros = 0;
		int kind;

		x->side->read_a(x->side, x->a + off, page, CONF_PAGE);
		for (uint32_t i = 0; i < CONF_PAGE; i++)
			zeros += !page[i];
		kind = !resid_content_mismatches(page, off, CONF_PAGE,
						 CONF_SEED) ?
			       0 :
		       zeros == CONF_PAGE ? 1 :
					    2;
		k[kind]++;
		if (x->c->pages <= 32 && p + 1 < n)
			buf[p] = "C0x"[kind];
	}
	if (x->c->pages <= 32)
		buf[x->c->pages < n ? x->c->pages : n - 1] = '\0';
	else
		snprintf(buf, n, "content %u zeros %u mixed %u", k[0], k[1],
			 k[2]);
}

/* Lets every reader go (closing the uffd releases its faulters), joins
 * them, and frees the case's objects. The last observation is taken
 * before the memfd goes, then every page is read through A. */
static void finish(struct ctx *x, struct conf_obs *o)
{
	int ok = 1;

	if (x->uffd >= 0) {
		SEAM(x, close, x->uffd);
		x->uffd = -1;
	}
	for (int i = 0; i < x->nreaders; i++)
		if (SEAM(x, thread_join, x->readers[i].th) < 0)
			ok = 0;
	if (x->memfd >= 0 && o && ok && observe(x, o) == 0) {
		sweep(x, o->sweep, sizeof(o->sweep));
		x->out->nobs++;
	}
	for (int i = 0; i < x->nreaders; i++)
		SEAM(x, close, x->readers[i].fd);
	if (x->a)
		SEAM(x, unmap, x->a, x->len);
	if (x->b)
		SEAM(x, unmap, x->b, x->len);
	if (x->memfd >= 0)
		SEAM(x, close, x->memfd);
}

void conf_exec(struct conf_side *side, const struct conf_case *c,
	       struct conf_run *out)
{
	struct ctx x = { .side = side, .c = c, .out = out, .kx = side->k->ctx };

	memset(out, 0, sizeof(*out));
	if (setup(&x) < 0) {
		finish(&x, NULL);
		return;
	}
	for (int i = 0; i < CONF_MAX_STEPS && c->steps[i].op != C_END; i++) {
		if (step(&x, &c->steps[i], &out->obs[out->nobs]) < 0) {
			finish(&x, NULL);
			return;
		}
		out->nobs++;
	}
	finish(&x, &out->obs[out->nobs]);
}
