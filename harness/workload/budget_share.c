#include "resid.h"
#include "workload/budget_share.h"

uint64_t budget_share(uint64_t region_len, double share, uint64_t floor)
{
	uint64_t b = (uint64_t)((double)region_len * share) & ~(RESID_PAGE - 1);

	return b < floor ? floor : b;
}
