/* One function per test file; each adds its CUnit suite to the registry. */
#ifndef HARNESS_TESTS_SUITES_H
#define HARNESS_TESTS_SUITES_H

/* 1 in the ThreadSanitizer build (make tsan). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

void suite_content(void);      /* test_content.c */
void suite_chunks(void);       /* test_chunks.c */
void suite_config(void);       /* test_config.c */
void suite_policy(void);       /* test_policy.c */
void suite_belady(void);       /* test_belady.c */
void suite_trace(void);        /* test_belady.c */
void suite_layout(void);       /* test_layout.c */
void suite_cgroup(void);       /* test_cgroup.c */
void suite_cgroup_live(void);  /* test_cgroup_live.c */
void suite_kernel_facts(void); /* test_kernel_facts.c */
void suite_invariants(void);   /* test_invariants.c */
void suite_pager(void);        /* test_pager.c */
void suite_fault(void);        /* test_fault.c */
void suite_sim(void);          /* test_sim.c */
void suite_reftrace(void);     /* test_reftrace.c */
void suite_sim_guard(void);    /* test_sim_guard.c */
void suite_oracles(void);      /* test_oracles.c */
void suite_bugs(void);         /* test_bugs.c */
void suite_misuse(void);       /* test_misuse.c */
void suite_cli(void);          /* test_cli.c */
void suite_scenarios(void);    /* test_scenarios.c */
void suite_coverage(void);     /* test_coverage.c */
void suite_conformance(void);  /* test_conformance.c */
void suite_huge(void);         /* test_huge.c */
void suite_hands(void);        /* test_hands.c */
void suite_commands(void);     /* test_commands.c */
void suite_gguf(void);         /* test_gguf.c */
void suite_devclass(void);     /* test_devclass.c */

/* time_limit.c: every registered test in a child of its own under the
 * limit limit(suite, test) gives, in seconds; -1 with a line on stderr.
 * And the runner's own self-test suite. */
typedef unsigned (*time_limit_fn)(const char *suite, const char *test);
int time_limit_wrap_all(time_limit_fn limit);
void suite_time_limit_self_test(void);
void suite_hang_self_test(void);

#endif
