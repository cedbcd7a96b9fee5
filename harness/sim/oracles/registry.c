/* The oracle registry (oracles.def) as a table. */
#include <stdio.h>

#include "sim/oracles/registry.h"

/* Every controlled thread exited and no check said no. */
static const struct oracle pass_oracle = { .name = "pass" };

const struct oracle *const oracles[] = {
	&pass_oracle,
#define ORACLE(e, x) &x##_oracle,
#include "sim/oracles/oracles.def"
#undef ORACLE
};
const int noracles = sizeof(oracles) / sizeof(oracles[0]);

void oracle_caught(int v, const char *why, char *buf, size_t n)
{
	const struct oracle *o = v >= 0 && v < noracles ? oracles[v] : NULL;

	if (o && o->classify)
		o->classify(why, buf, n);
	else
		snprintf(buf, n, "%s",
			 o && o->caught ? o->caught :
			 o              ? o->name :
					  "unknown");
}
