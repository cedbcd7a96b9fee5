/* Region setup and teardown (design.md §2.1): cgroup check, userfaultfd probe,
 * memfd mapped twice, backing store, chunk table, budget, threads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define NEED_FEATURES (UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM)
/* How a failed chunk fails loudly (failure.c): poison, else SIGBUS to the
 * faulting thread, whose id the messages then carry. */
#define FAIL_FEATURES (UFFD_FEATURE_POISON | UFFD_FEATURE_THREAD_ID)
/* A registered for write-protect too (no page is ever protected: no such
 * fault comes) so that the kernel never maps a huge folio into A, whatever
 * the application advises: a collapse (MADV_COLLAPSE, khugepaged) would map
 * bytes not fetched yet without a fault. Linux >= 5.19. */
#define GUARD_FEATURES UFFD_FEATURE_WP_HUGETLBFS_SHMEM

static void read_line(struct resid_region *r, const char *path, char *buf,
		      size_t cap)
{
	long n = SEAM(r, read_text, path, buf, cap);

	if (n <= 0) {
		snprintf(buf, cap, "unknown");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* Asks the kernel what it offers, on a descriptor of its own: UFFDIO_API
 * may be called once per descriptor. */
static int probe_uffd(struct resid_region *r, char *err, size_t n)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = SEAM(r, uffd_open, O_CLOEXEC | O_NONBLOCK);
	int rc;

	if (fd < 0) {
		snprintf(err, n,
			 "userfaultfd: %s: run as root or set "
			 "vm.unprivileged_userfaultfd=1",
			 strerror(-fd));
		return fd;
	}
	rc = SEAM(r, uffd_api, fd, &api);
	SEAM(r, close, fd);
	if (rc < 0) {
		snprintf(err, n, "UFFDIO_API: %s", strerror(-rc));
		return rc;
	}
	r->uffd_features = api.features;
	r->uffd_ioctls = api.ioctls;
	if ((api.features & NEED_FEATURES) != NEED_FEATURES) {
		snprintf(err, n,
			 "this kernel's userfaultfd lacks %s: the "
			 "pager needs Linux >= 5.13 with shmem minor faults",
			 !(api.features & UFFD_FEATURE_MINOR_SHMEM) ?
				 "UFFD_FEATURE_MINOR_SHMEM" :
				 "UFFD_FEATURE_MISSING_SHMEM");
		return -ENOTSUP;
	}
	if (!(api.features & FAIL_FEATURES)) {
		snprintf(err, n,
			 "this kernel's userfaultfd has neither "
			 "UFFD_FEATURE_POISON nor UFFD_FEATURE_THREAD_ID: a "
			 "failed read could not raise SIGBUS");
		return -ENOTSUP;
	}
	return 0;
}

static int open_uffd(struct resid_region *r, char *err, size_t n)
{
	int flags = O_CLOEXEC | O_NONBLOCK;
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = NEED_FEATURES | (r->uffd_features &
					     (FAIL_FEATURES | GUARD_FEATURES)),
	};
	int rc;

	INV_ASSERT(inv_uffd_nonblock(flags));
	r->uffd = SEAM(r, uffd_open, flags);
	if (r->uffd < 0) {
		snprintf(err, n, "userfaultfd: %s", strerror(-r->uffd));
		return r->uffd;
	}
	rc = SEAM(r, uffd_api, r->uffd, &api);
	if (rc < 0) {
		snprintf(err, n, "UFFDIO_API with shmem features: %s",
			 strerror(-rc));
		return rc;
	}
	return 0;
}

static int map_region(struct resid_region *r, char *err, size_t n)
{
	void *a, *b;
	int rc;

	r->memfd = huge_open_file(r);
	if (r->memfd < 0) {
		snprintf(err, n, "%s: %s",
			 r->huge && r->cfg.huge_dir ?
				 "open(huge_dir, O_TMPFILE)" :
				 "memfd_create",
			 strerror(-r->memfd));
		return r->memfd;
	}
	/* ftruncate only: fallocate would make the whole region resident. */
	rc = SEAM(r, ftruncate, r->memfd, r->file_len);
	if (rc < 0) {
		snprintf(err, n, "ftruncate(memfd, %llu): %s",
			 (unsigned long long)r->file_len, strerror(-rc));
		return rc;
	}
	rc = SEAM(r, map, r->memfd, r->len, PROT_READ, &a);
	if (rc < 0) {
		snprintf(err, n, "mmap A: %s", strerror(-rc));
		return rc;
	}
	r->a = a;
	rc = SEAM(r, map, r->memfd, r->file_len, PROT_READ | PROT_WRITE, &b);
	if (rc < 0) {
		snprintf(err, n, "mmap B: %s", strerror(-rc));
		return rc;
	}
	r->b = b;
	/* EINVAL: the kernel has no THP (PREEMPT_RT), nothing to forbid */
	if ((rc = SEAM(r, nohugepage, a, r->len)) < 0 && rc != -EINVAL) {
		snprintf(err, n, "madvise(A, MADV_NOHUGEPAGE): %s",
			 strerror(-rc));
		return rc;
	}
	if ((rc = huge_advise_b(r)) < 0) {
		snprintf(err, n, "madvise(B, %s): %s",
			 r->huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
			 strerror(-rc));
		return rc;
	}
	struct uffdio_register reg = {
		.range = { .start = (uint64_t)(uintptr_t)a, .len = r->len },
		.mode = UFFDIO_REGISTER_MODE_MISSING |
			UFFDIO_REGISTER_MODE_MINOR,
	};

	if (r->uffd_features & GUARD_FEATURES) {
		reg.mode |= UFFDIO_REGISTER_MODE_WP;
		rc = SEAM(r, uffd_register, r->uffd, &reg);
		/* a kernel that offers the feature but not on this mapping */
		if (rc == -EINVAL)
			reg.mode &= ~(uint64_t)UFFDIO_REGISTER_MODE_WP;
	}
	if (!(reg.mode & UFFDIO_REGISTER_MODE_WP))
		rc = SEAM(r, uffd_register, r->uffd, &reg);
	if (rc < 0) {
		snprintf(err, n, "UFFDIO_REGISTER (missing|minor): %s",
			 strerror(-rc));
		return rc;
	}
	if (!(reg.ioctls & (1ull << _UFFDIO_CONTINUE))) {
		snprintf(err, n,
			 "UFFDIO_CONTINUE is not offered on the "
			 "registered range: the kernel lacks shmem minor "
			 "faults");
		return -ENOTSUP;
	}
	r->poison = (r->uffd_features & UFFD_FEATURE_POISON) &&
		    (reg.ioctls & (1ull << _UFFDIO_POISON));
	return 0;
}

static int init_sync(struct resid_region *r)
{
	SEAM(r, mutex_init, &r->budget_lock);
	SEAM(r, mutex_init, &r->policy_lock);
	SEAM(r, mutex_init, &r->q_lock);
	SEAM(r, mutex_init, &r->hist_lock);
	trace_init(r);
	SEAM(r, cond_init, &r->q_cond);
	SEAM(r, cond_init, &r->idle_cond);
	r->cand = calloc(r->nchunks, sizeof(*r->cand));
	if (!r->cand || ring_init(&r->demand, r->nchunks) ||
	    ring_init(&r->prefetch, r->nchunks) ||
	    ring_init(&r->retain, r->cfg.prefetch_depth))
		return -ENOMEM;
	return 0;
}

static int make_policy(struct resid_region *r, char *err, size_t n)
{
	struct policy_params p = {
		.kind = r->cfg.policy,
		.nchunks = r->nchunks,
		/* declared_len 0 means the chunk order 0..n-1. */
		.declared_seq = r->cfg.declared_len ? r->cfg.declared_seq :
						      NULL,
		.declared_len = r->cfg.declared_len,
		.signal = r->cfg.signal,
	};

	r->policy = policy_create(&p, err, n);
	return r->policy ? 0 : -1;
}

static int start_threads(struct resid_region *r, char *err, size_t n)
{
	int rc;

	r->stopfd = SEAM(r, notify_open);
	if (r->stopfd < 0) {
		snprintf(err, n, "eventfd: %s", strerror(-r->stopfd));
		return r->stopfd;
	}
	r->workers = calloc(r->cfg.fetch_workers, sizeof(*r->workers));
	if (!r->workers) {
		snprintf(err, n, "out of memory for %u workers",
			 r->cfg.fetch_workers);
		return -ENOMEM;
	}
	rc = SEAM(r, thread_start, &r->dispatcher, dispatch_main, r,
		  "resid-disp");
	if (rc < 0) {
		snprintf(err, n, "starting the dispatcher: %s", strerror(-rc));
		return rc;
	}
	r->dispatcher_up = 1;
	for (; r->nworkers < r->cfg.fetch_workers; r->nworkers++) {
		rc = SEAM(r, thread_start, &r->workers[r->nworkers],
			  worker_main, r, "resid-fetch");
		if (rc < 0) {
			snprintf(err, n, "starting fetch worker %u: %s",
				 r->nworkers, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

struct resid_region *resid_open(const struct resid_config *cfg,
				char err[RESID_ERRLEN])
{
	struct resid_region *r;

	if (!err) {
		errno = EINVAL;
		return NULL;
	}
	if (!cfg) {
		snprintf(err, RESID_ERRLEN,
			 "cfg is NULL: pass a struct "
			 "resid_config filled by resid_config_init()");
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, RESID_ERRLEN, "out of memory");
		return NULL;
	}
	r->cfg = *cfg;
	if (cfg->harness)
		r->h = *cfg->harness;
	else
		resid_harness_init(&r->h);
	r->cfg.path = NULL; /* the caller's string is not kept */
	r->seam = r->h.seam ? r->h.seam : &resid_seam_linux;
	r->sx = r->seam->ctx;
	r->owner = SEAM(r, process_id);
	r->uffd = r->memfd = r->stopfd = r->backing_fd = r->plain_fd = -1;
	err[0] = '\0';

	read_line(r, "/proc/sys/kernel/osrelease", r->release,
		  sizeof(r->release));
	read_line(r, "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
		  r->shmem_thp, sizeof(r->shmem_thp));
	r->cfg.fetch_workers = config_workers(cfg);
	r->workers_auto = !cfg->fetch_workers;
	r->st.fetch_workers = r->cfg.fetch_workers;
	if (config_check(cfg, err, RESID_ERRLEN) ||
	    reconcile_setup(r, err, RESID_ERRLEN) ||
	    probe_uffd(r, err, RESID_ERRLEN) ||
	    backing_open(r, cfg->path, err, RESID_ERRLEN) ||
	    chunks_build(r, err, RESID_ERRLEN) ||
	    config_check_budget(r, err, RESID_ERRLEN) ||
	    config_check_declared(r, err, RESID_ERRLEN) ||
	    headroom_check(r, err, RESID_ERRLEN))
		goto fail;
	r->len = r->chunks[r->nchunks - 1].off + r->chunks[r->nchunks - 1].len;
	r->budget = cfg->budget_bytes;
	if (huge_choose(r, err, RESID_ERRLEN) ||
	    open_uffd(r, err, RESID_ERRLEN) || map_region(r, err, RESID_ERRLEN))
		goto fail;
	if (init_sync(r)) {
		snprintf(err, RESID_ERRLEN, "out of memory for %u chunks",
			 r->nchunks);
		goto fail;
	}
	if (make_policy(r, err, RESID_ERRLEN) ||
	    reconcile_baseline(r, err, RESID_ERRLEN) ||
	    start_threads(r, err, RESID_ERRLEN))
		goto fail;
	return r;
fail:
	resid_close(r);
	return NULL;
}

/* The tables of the region, the heap's alone. */
static void free_tables(struct resid_region *r)
{
	if (r->policy)
		policy_destroy(r->policy);
	ring_free(&r->demand);
	ring_free(&r->prefetch);
	ring_free(&r->retain);
	free(r->cand);
	free(r->workers);
	free(r->chunks);
	free(r);
}

/* The descriptors the process holds, whichever process it is: a forked
 * child holds copies until it closes them. */
static void close_fds(struct resid_region *r)
{
	int fds[] = { r->uffd, r->memfd, r->stopfd, r->backing_fd,
		      r->plain_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			SEAM(r, close, fds[i]);
}

int region_usable(const struct resid_region *r)
{
	if (!r)
		return -EINVAL;
	return SEAM(r, process_id) == r->owner ? 0 : -ECHILD;
}

void resid_close(struct resid_region *r)
{
	if (!r)
		return;
	if (region_usable(r) == -ECHILD) {
		/* A forked child: no threads, no mappings (MADV_DONTFORK)
		 * and locks perhaps copied held. Its copies of the
		 * descriptors and tables are all it has to give back. */
		close_fds(r);
		free_tables(r);
		return;
	}
	if (r->dispatcher_up) {
		SEAM(r, lock, &r->q_lock);
		r->stopping = 1;
#ifdef RESID_HARNESS
		/* Bug 10: one idle worker woken to stop, the others left
		 * asleep on q_cond: the joins below never return. */
		if (BUG(10))
			SEAM(r, cond_signal, &r->q_cond);
		else
#endif
			SEAM(r, cond_broadcast, &r->q_cond);
		SEAM(r, unlock, &r->q_lock);
		SEAM(r, notify_signal, r->stopfd);
		SEAM(r, thread_join, r->dispatcher);
		for (uint32_t i = 0; i < r->nworkers; i++)
			SEAM(r, thread_join, r->workers[i]);
		SEAM(r, mutex_destroy, &r->budget_lock);
		SEAM(r, mutex_destroy, &r->policy_lock);
		SEAM(r, mutex_destroy, &r->q_lock);
		SEAM(r, mutex_destroy, &r->hist_lock);
		trace_destroy(r);
		SEAM(r, cond_destroy, &r->q_cond);
		SEAM(r, cond_destroy, &r->idle_cond);
	}
	if (r->a)
		SEAM(r, unmap, r->a, r->len);
	if (r->b)
		SEAM(r, unmap, r->b, r->file_len);
	/* A child forked meanwhile may still hold the memfd: its pages go
	 * now, not when the child lets go. */
	if (r->memfd >= 0 && r->file_len)
		(void)SEAM(r, punch, r->memfd, 0, r->file_len);
	close_fds(r);
	for (uint32_t i = 0; r->chunks && i < r->nchunks; i++)
		SEAM(r, mutex_destroy, &r->chunks[i].lock);
	free_tables(r);
}

const uint8_t *resid_base(const struct resid_region *r)
{
	return region_usable(r) ? NULL : r->a;
}

uint64_t resid_len(const struct resid_region *r)
{
	return region_usable(r) ? 0 : r->len;
}

uint32_t resid_nchunks(const struct resid_region *r)
{
	return region_usable(r) ? 0 : r->nchunks;
}

uint32_t resid_chunk_of(const struct resid_region *r, uint64_t off)
{
	return !region_usable(r) && off < r->len ? chunks_find(r, off) :
						   RESID_NO_CHUNK;
}

int resid_chunk_range(const struct resid_region *r, uint32_t chunk,
		      uint64_t *off, uint64_t *len)
{
	int rc = region_usable(r);

	if (rc)
		return rc;
	if (chunk >= r->nchunks || !off || !len)
		return -EINVAL;
	*off = r->chunks[chunk].off;
	*len = r->chunks[chunk].len;
	return 0;
}
