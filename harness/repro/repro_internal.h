/* Shared by the files of harness/repro/. */
#ifndef HARNESS_REPRO_INTERNAL_H
#define HARNESS_REPRO_INTERNAL_H

#include "repro/repro.h"

void repro_sched(int bug, enum detector det, const struct repro_opts *o,
		 struct detection *d);
void repro_real(int bug, enum detector det, const struct repro_opts *o,
		struct detection *d);

#endif
