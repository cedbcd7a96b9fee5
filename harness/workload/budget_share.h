/* Budgets: the pager takes bytes; the harness states a budget either as
 * whole chunks (a count times the chunk size) or as a share of the region,
 * converted here and nowhere else. */
#ifndef HARNESS_BUDGET_SHARE_H
#define HARNESS_BUDGET_SHARE_H

#include <stdint.h>

/* share (0..1] of region_len bytes, rounded down to a page and raised to
 * floor (the largest chunk, which the pager requires; 0: no floor). */
uint64_t budget_share(uint64_t region_len, double share, uint64_t floor);

#endif
