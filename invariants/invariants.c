#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants.h"

static const char *const titles[INV_MAX + 1] = {
	[1] = "pager never touches mapping A",
	[2] = "uffd non-blocking, EAGAIN is empty",
	[3] = "swap impossible for the region",
	[4] = "punch only RESIDENT, unpinned, not a target",
	[5] = "CONTINUE only when populated, maps len",
	[6] = "state changes under the chunk lock",
	[7] = "accounting matches the kernel",
	[8] = "dispatch on state, not fault type",
	[9] = "no punch splits a folio",
	[10] = "outside input validated",
	[11] = "resident <= budget at every instant",
	[12] = "pins balance",
	[13] = "no lost fault",
	[14] = "counter conservation",
};

static inv_handler handler;
static void *handler_arg;

const char *inv_title(int id)
{
	return id >= 1 && id <= INV_MAX ? titles[id] : "unknown invariant";
}

void inv_set_handler(inv_handler h, void *arg)
{
	handler = h;
	handler_arg = arg;
}

void inv_report(int id, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (handler)
		handler(id, msg, handler_arg);
#ifdef RESID_HARNESS
	/* libresid never prints: the production build only counts. */
	else
		fprintf(stderr, "invariant I-%d (%s) violated: %s\n", id,
			inv_title(id), msg);
#endif
}

int inv_not_in_a(const void *p, uint64_t len, const void *a, uint64_t alen)
{
	uintptr_t s = (uintptr_t)p, e = s + len;
	uintptr_t as = (uintptr_t)a, ae = as + alen;

	if (e <= as || s >= ae)
		return 1;
	inv_report(1, "buffer [%#" PRIxPTR ", +%" PRIu64 ") overlaps mapping A",
		   s, len);
	return 0;
}

int inv_uffd_nonblock(int open_flags)
{
	if (open_flags & 04000) /* O_NONBLOCK, spelled to keep fcntl.h out */
		return 1;
	inv_report(2, "uffd opened without O_NONBLOCK (flags %#x)", open_flags);
	return 0;
}

int inv_punch_ok(uint32_t chunk, int state_resident, int32_t pin, int retained)
{
	if (state_resident && pin == 0 && !retained)
		return 1;
	inv_report(4, "chunk %u punched while %s, pin %d%s", chunk,
		   state_resident ? "RESIDENT" : "not RESIDENT", pin,
		   retained ? ", a prefetch target" : "");
	return 0;
}

int inv_continue_ok(uint32_t chunk, uint64_t populated, uint64_t len,
		    uint64_t mapped)
{
	if (populated == len && mapped == len)
		return 1;
	inv_report(5,
		   "chunk %u: CONTINUE with %" PRIu64 " of %" PRIu64
		   " bytes populated, mapped %" PRIu64,
		   chunk, populated, len, mapped);
	return 0;
}

int inv_locked(uint32_t chunk, int held)
{
	if (held)
		return 1;
	inv_report(6, "chunk %u changed state without its lock", chunk);
	return 0;
}

int inv_accounting_holds(const struct resid_accounting *a, char *why, size_t n)
{
	uint64_t lo = a->resident, hi = a->resident + a->reserved;

	if (a->st_bytes < lo || a->st_bytes > hi) {
		snprintf(why, n,
			 "st_blocks*512 = %" PRIu64
			 " outside [resident %" PRIu64
			 ", resident+reserved %" PRIu64 "]",
			 a->st_bytes, lo, hi);
		return 0;
	}
	if (a->have_cgroup) {
		uint64_t slo = lo + a->shmem_baseline,
			 shi = hi + a->shmem_baseline;

		slo = slo > a->tolerance ? slo - a->tolerance : 0;
		shi += a->tolerance;
		if (a->shmem < slo || a->shmem > shi) {
			snprintf(why, n,
				 "memory.stat shmem = %" PRIu64
				 " outside [%" PRIu64 ", %" PRIu64
				 "] (resident %" PRIu64 ", reserved %" PRIu64
				 ", baseline %" PRIu64 ", tolerance %" PRIu64
				 ")",
				 a->shmem, slo, shi, a->resident, a->reserved,
				 a->shmem_baseline, a->tolerance);
			return 0;
		}
	}
	return 1;
}

int inv_accounting(const struct resid_accounting *a, char *why, size_t n)
{
	if (inv_accounting_holds(a, why, n))
		return 1;
	inv_report(7, "%s", why);
	return 0;
}

int inv_accounting_quiescent(uint64_t st_bytes, uint64_t resident,
			     uint64_t reserved)
{
	if (st_bytes == resident && reserved == 0)
		return 1;
	inv_report(7,
		   "at quiescence st_blocks*512 = %" PRIu64
		   ", resident %" PRIu64 ", reserved %" PRIu64
		   ": must be equal, nothing "
		   "reserved",
		   st_bytes, resident, reserved);
	return 0;
}

int inv_no_thp(const char *smaps, const void *start)
{
	static const char *const keys[] = {
		"AnonHugePages:",
		"ShmemPmdMapped:",
		"FilePmdMapped:",
	};
	char head[32];
	const char *p;

	snprintf(head, sizeof(head), "%" PRIxPTR "-", (uintptr_t)start);
	for (p = smaps; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, head, strlen(head)))
			break;
	if (!p)
		return -1;
	/* The mapping's fields run until the next "start-end" header. */
	for (p = strchr(p, '\n');
	     p && p[1] && !strchr("0123456789abcdef", p[1]);
	     p = strchr(p + 1, '\n')) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i]);

			if (strncmp(p + 1, keys[i], k))
				continue;
			unsigned long kb = strtoul(p + 1 + k, NULL, 10);

			if (kb) {
				inv_report(9, "mapping at %p has %s %lu kB",
					   start, keys[i], kb);
				return 0;
			}
		}
	}
	return 1;
}

int inv_folios(int huge, uint64_t large, const char *why)
{
	if (huge || large == 0)
		return 1;
	inv_report(9,
		   "%" PRIu64 " bytes in large folios in a region on the "
		   "4 KiB path (%s): a punch there may split one",
		   large, why);
	return 0;
}

int inv_budget(uint64_t resident, uint64_t budget)
{
	if (resident <= budget)
		return 1;
	inv_report(11, "resident %" PRIu64 " > budget %" PRIu64, resident,
		   budget);
	return 0;
}

int inv_pin(uint32_t chunk, int32_t pin, int quiescent)
{
	if (pin >= 0 && (!quiescent || pin == 0))
		return 1;
	inv_report(12, "chunk %u pin count %d%s", chunk, pin,
		   quiescent ? " at quiescence" : "");
	return 0;
}

int inv_dropped(uint32_t chunk, int state_resident, uint64_t dropped,
		uint64_t hold, uint64_t folio)
{
	if (!dropped ||
	    (state_resident && dropped < hold && dropped % folio == 0))
		return 1;
	inv_report(4,
		   "chunk %u has %" PRIu64 " bytes dropped%s, of %" PRIu64
		   " held (folio %" PRIu64 "): a dropped prefix is whole "
		   "folios of a RESIDENT chunk, short of its end",
		   chunk, dropped, state_resident ? "" : " while not RESIDENT",
		   hold, folio);
	return 0;
}

int inv_resident_sum(uint64_t held_sum, uint64_t resident)
{
	if (held_sum == resident)
		return 1;
	inv_report(7,
		   "resident %" PRIu64 " but the RESIDENT chunks hold %" PRIu64
		   " (each its hold less its dropped prefix)",
		   resident, held_sum);
	return 0;
}

int inv_conservation(const struct resid_stats *s, uint64_t fetched_len_sum)
{
	if (s->fetches == s->continues_ok && s->fetches == s->latency_count &&
	    s->fetch_bytes == fetched_len_sum)
		return 1;
	inv_report(14,
		   "fetches %" PRIu64 ", CONTINUEs ok %" PRIu64
		   ", histogram %" PRIu64 ", bytes %" PRIu64
		   " vs chunk sum %" PRIu64,
		   s->fetches, s->continues_ok, s->latency_count,
		   s->fetch_bytes, fetched_len_sum);
	return 0;
}
