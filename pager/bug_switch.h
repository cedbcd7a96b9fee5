/* The seven historical concurrency bugs of design.md §6 and three of the shapes
 * a maintainer writes (8 a condition wait under `if`, 9 the chunk
 * lock dropped around a policy update, 10 a signal where close needs a
 * broadcast), switched back on in harness builds only: bit n of resid_bugs
 * turns on bug n. In the production
 * library BUG(n) is the constant 0 and no bug's code is compiled. */
#ifndef RESID_BUG_SWITCH_H
#define RESID_BUG_SWITCH_H

#ifdef RESID_HARNESS
extern unsigned resid_bugs;
#define BUG(n) ((__atomic_load_n(&resid_bugs, __ATOMIC_RELAXED) >> (n)) & 1u)

/* Bugs 4, 5 and 6: a plain read-modify-write of shared memory, with a
 * scheduling point between the read and the write so that the simulated
 * scheduler can preempt there (an annotated shared-memory access, design.md §4).
 * On real threads the point is a no-op and the access is a plain race. */
#define PLAIN_ADD(r, lv, v)                          \
	do {                                         \
		__typeof__(lv) old_ = (lv);          \
		SEAM(r, yield, "plain-rmw");         \
		(lv) = (__typeof__(lv))(old_ + (v)); \
	} while (0)
#else
#define BUG(n) 0
#endif

#endif
