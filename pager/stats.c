/* Counters and the fetch-latency histogram. Counters are atomics; the
 * histogram's fields change together, so they share a lock. */
#include <errno.h>

#include "internal.h"

#ifdef RESID_HARNESS
/* Bug 4: the histogram updated without its lock by several workers, each
 * update a read, a scheduling point and a write. */
#define HIST_ADD(r, lv, v)                   \
	do {                                 \
		if (BUG(4))                  \
			PLAIN_ADD(r, lv, v); \
		else                         \
			(lv) += (v);         \
	} while (0)
#else
#define HIST_ADD(r, lv, v) ((lv) += (v))
#endif

static unsigned bucket_of(uint64_t ns)
{
	unsigned b = 0;

	while (ns > 1 && b < 39) {
		ns >>= 1;
		b++;
	}
	return b;
}

void stats_record_fetch(struct resid_region *r, struct chunk *c,
			uint64_t latency_ns)
{
	STAT_INC(r, fetches);
	STAT_ADD(r, fetch_bytes, c->len);
	int locked = !BUG(4);

	if (locked)
		SEAM(r, lock, &r->hist_lock);
	HIST_ADD(r, r->hist[bucket_of(latency_ns)], 1);
	HIST_ADD(r, r->st.latency_count, 1);
	HIST_ADD(r, r->st.latency_sum_ns, latency_ns);
	if (r->st.latency_count == 1 || latency_ns < r->st.latency_min_ns)
		r->st.latency_min_ns = latency_ns;
	if (latency_ns > r->st.latency_max_ns)
		r->st.latency_max_ns = latency_ns;
	if (locked)
		SEAM(r, unlock, &r->hist_lock);
}

void stats_snapshot(struct resid_region *r, struct resid_stats *out)
{
	SEAM(r, lock, &r->budget_lock);
	SEAM(r, lock, &r->hist_lock);
	/* Every field is a uint64_t; load each atomically. */
	const uint64_t *src = (const uint64_t *)&r->st;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	out->resident = r->resident;
	out->reserved = r->reserved;
	out->budget = r->budget;
	/* The histogram's own total, so I-14 compares two tallies. */
	out->latency_count = 0;
	for (unsigned i = 0; i < 40; i++)
		out->latency_count += r->hist[i];
	SEAM(r, unlock, &r->hist_lock);
	SEAM(r, unlock, &r->budget_lock);
}

int resid_get_stats(struct resid_region *r, struct resid_stats *out)
{
	int rc = region_usable(r);

	if (rc)
		return rc;
	if (!out)
		return -EINVAL;
	stats_snapshot(r, out);
	return 0;
}
