/* Deadlock: a cycle in the wait-for graph of locks (and joins). Each
 * thread waiting for a held lock points at its owner, a joiner at the
 * thread it joins; the cycle found is printed hold by hold. */
#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"

/* The thread t's wait-for edge leads to, or NULL. */
static struct sim_thread *waits_for(struct sim *s, struct sim_thread *t)
{
	if (t->wait == W_LOCK && s->locks[t->wait_obj].owner >= 0)
		return s->threads[s->locks[t->wait_obj].owner];
	if (t->wait == W_JOIN)
		return s->threads[t->wait_obj];
	return NULL;
}

/* From the first thread in id order that reaches itself; s->run is free
 * scratch here. */
static int explain(struct sim *s)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i], *u = waits_for(s, t);
		uint32_t len = 1;

		s->run[0] = t;
		while (u && u != t && len < s->nthreads) {
			s->run[len++] = u;
			u = waits_for(s, u);
		}
		if (u != t)
			continue;
		s->why[0] = '\0';
		for (uint32_t k = 0; k < len; k++) {
			struct sim_thread *c = s->run[k];
			struct sim_thread *prev = s->run[(k + len - 1) % len];

			oracle_appendf(s->why, sizeof(s->why),
				       "%sthread %u (%s) ", k ? "; " : "",
				       c->id, c->name);
			/* c holds what the thread before it waits for */
			if (prev->wait == W_LOCK)
				oracle_appendf(s->why, sizeof(s->why),
					       "holds lock %llu, ",
					       (unsigned long long)
						       prev->wait_obj);
			if (c->wait == W_LOCK)
				oracle_appendf(s->why, sizeof(s->why),
					       "waits for lock %llu",
					       (unsigned long long)c->wait_obj);
			else
				oracle_appendf(s->why, sizeof(s->why),
					       "joins thread %llu",
					       (unsigned long long)c->wait_obj);
		}
		return 1;
	}
	return 0;
}

const struct oracle deadlock_oracle = {
	.name = "deadlock",
	.caught = "deadlock cycle",
	.quiescent = explain,
};
