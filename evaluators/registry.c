/* evaluators/registry.c: the one table of evaluator types, by name. Adding an evaluator adds its file
 * and one row here. */
#include <string.h>
#include "evaluators/evaluator.h"

/* one extern per evaluator file */
extern const mpt_evaluator_type mpt_evaluator_auto;
extern const mpt_evaluator_type mpt_evaluator_sim;
extern const mpt_evaluator_type mpt_evaluator_cpu;
extern const mpt_evaluator_type mpt_evaluator_cuda;
extern const mpt_evaluator_type mpt_evaluator_hip;

static const mpt_evaluator_type *const registry[] = {
  &mpt_evaluator_auto,
  &mpt_evaluator_sim,
  &mpt_evaluator_cpu,
  &mpt_evaluator_cuda,
  &mpt_evaluator_hip,
  NULL, /* keeps the array non-empty; rows go above */
};

int mpt_evaluator_count(void) { return (int)(sizeof registry / sizeof registry[0]) - 1; }

const mpt_evaluator_type *mpt_evaluator_at(int i) {
  return (i >= 0 && i < mpt_evaluator_count()) ? registry[i] : NULL;
}

const mpt_evaluator_type *mpt_evaluator_find(const char *name) {
  for (int i = 0; i < mpt_evaluator_count(); i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}
