#include <string.h>

#include "base/commands.h"

const struct command *command_find(const struct command *t, size_t n,
				   const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

void command_list(FILE *f, const struct command *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-12s %s\n", t[i].name, t[i].what);
}
