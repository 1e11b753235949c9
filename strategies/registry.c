/* strategies/registry.c: the one table of strategy types, by name. Adding a strategy adds its file
 * and one row here. */
#include <string.h>
#include "strategies/strategy.h"

/* one extern per strategy file */
extern const mpt_strategy_type mpt_strategy_bo;
extern const mpt_strategy_type mpt_strategy_random, mpt_strategy_brute_force, mpt_strategy_ga, mpt_strategy_de,
  mpt_strategy_pso, mpt_strategy_firefly, mpt_strategy_sa, mpt_strategy_mls,
  mpt_strategy_ga_memetic;

static const mpt_strategy_type *const registry[] = {
  &mpt_strategy_random, &mpt_strategy_brute_force, &mpt_strategy_ga, &mpt_strategy_de, &mpt_strategy_pso,
  &mpt_strategy_firefly, &mpt_strategy_sa, &mpt_strategy_mls, &mpt_strategy_ga_memetic,
  &mpt_strategy_bo,
  NULL, /* keeps the array non-empty; rows go above */
};

int mpt_strategy_count(void) { return (int)(sizeof registry / sizeof registry[0]) - 1; }

const mpt_strategy_type *mpt_strategy_at(int i) {
  return (i >= 0 && i < mpt_strategy_count()) ? registry[i] : NULL;
}

const mpt_strategy_type *mpt_strategy_find(const char *name) {
  for (int i = 0; i < mpt_strategy_count(); i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}
