/* Judging a conformance step: every field equal, memory.stat within the
 * lag the kernel documents (design.md §2.6). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "conformance/conformance.h"

static const char *const op_names[] = {
	[C_END] = "end",           [C_FILL] = "FILL",
	[C_CONTINUE] = "CONTINUE", [C_WAKE] = "WAKE",
	[C_PUNCH] = "PUNCH",       [C_READ_UFFD] = "READ uffd",
	[C_TOUCH] = "TOUCH A",     [C_CLOSE_UFFD] = "CLOSE uffd",
	[C_DROP] = "DONTNEED A",
};

void conf_step_name(const struct conf_step *s, char *buf, size_t n)
{
	if (s->op == C_END || s->op == C_READ_UFFD || s->op == C_CLOSE_UFFD)
		snprintf(buf, n, "%s", op_names[s->op]);
	else
		snprintf(buf, n, "%s [%" PRIu64 ", +%" PRIu64 ")",
			 op_names[s->op], s->off, s->len);
}

int conf_diff(const struct conf_obs *a, const struct conf_obs *b,
	      uint64_t tolerance, char *buf, size_t n)
{
	int64_t d = a->shmem - b->shmem;
	size_t used = 0;
	int k = 0;

	buf[0] = '\0';
#define FIELD(bad, name)                                                       \
	do {                                                                   \
		if ((bad) && used < n) {                                       \
			used += (size_t)snprintf(buf + used, n - used, "%s%s", \
						 k++ ? ", " : "", name);       \
		}                                                              \
	} while (0)
	FIELD(a->rc != b->rc, "rc");
	FIELD(a->mapped != b->mapped, "mapped");
	FIELD(strcmp(a->msgs, b->msgs), "messages");
	FIELD(strcmp(a->pages, b->pages), "pages");
	FIELD(a->st_blocks != b->st_blocks, "st_blocks");
	FIELD(a->large != b->large, "large folios");
	FIELD((uint64_t)(d < 0 ? -d : d) > tolerance, "memory.stat");
	FIELD(strcmp(a->readers, b->readers), "readers");
	FIELD(strcmp(a->sweep, b->sweep), "reads through A");
#undef FIELD
	return k;
}
