/* The code probes' counters (see code_probe.h); harness builds only. */
#ifdef RESID_HARNESS
#include "code_probe.h"

uint64_t resid_code_probes[CP_COUNT];
#else
/* ISO C wants a translation unit to declare something. */
typedef int resid_no_code_probes;
#endif
