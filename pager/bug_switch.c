/* The bug switches' one word (see bug_switch.h); harness builds only. */
#ifdef RESID_HARNESS
#include "bug_switch.h"

unsigned resid_bugs;
#else
/* ISO C wants a translation unit to declare something. */
typedef int resid_no_bug_switches;
#endif
