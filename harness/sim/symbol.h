/* Code addresses of this executable by name (symbol.c). */
#ifndef HARNESS_SIM_SYMBOL_H
#define HARNESS_SIM_SYMBOL_H

#include <stdint.h>

/* The function of this executable (static ones too) that holds pc, or
 * NULL: outside it (a library), or no symbol table (stripped). */
const char *symbol_name(uintptr_t pc);

#endif
