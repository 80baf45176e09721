/* strategies.h - the strategies the driver (search.c) lists; each in a file of its own. */
#ifndef FDT_STRATEGIES_H
#define FDT_STRATEGIES_H

#include "search/search.h"

extern const fdt_strategy fdt_strategy_exhaustive;
extern const fdt_strategy fdt_strategy_random;
extern const fdt_strategy fdt_strategy_guided;

#endif
