/* The gate's huge leg (design.md §8): huge folios in B from a tmpfs mounted
 * with huge=always in the scenario child's own mount namespace, so the
 * machine's THP settings and mounts stay as they are. */
#ifndef HARNESS_HUGE_LEG_H
#define HARNESS_HUGE_LEG_H

#include <stddef.h>
#include <stdint.h>

/* The PMD folio in bytes (hpage_pmd_size); 0 without THP. */
uint64_t huge_leg_folio(void);
/* Whether the leg can run here: a child mounts such a tmpfs and unmounts
 * it. 1, or 0 with why (e.g. a PREEMPT_RT kernel: no THP). */
int huge_leg_available(char *why, size_t n);
/* A fresh empty directory under /tmp (n >= 26) for runs to mount such a
 * tmpfs on, each in its own namespace; the caller removes it. 0, or -1
 * with errno. */
int huge_leg_mountpoint(char *dir, size_t n);
/* In the scenario's child: a mount namespace of its own, and a tmpfs
 * with huge=always on dir. 0, or -1 with err. */
int huge_leg_enter(const char *dir, char *err, size_t n);

#endif
