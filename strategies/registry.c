/* strategies/registry.c: the one table of strategy types, by name, with each one's Kernel Tuner name (an
 * alias accepted wherever a strategy name is), and the table of Kernel Tuner's option names that mean the
 * same as one of ours. Adding a strategy adds its file and one row here. */
#include <stdio.h>
#include <string.h>
#include "strategies/strategy.h"

/* one extern per strategy file */
extern const mpt_strategy_type mpt_strategy_bo;
extern const mpt_strategy_type mpt_strategy_random, mpt_strategy_brute_force, mpt_strategy_ga, mpt_strategy_de,
  mpt_strategy_pso, mpt_strategy_firefly, mpt_strategy_sa, mpt_strategy_mls,
  mpt_strategy_ga_memetic, mpt_strategy_prior_order;

/* a strategy type and the name Kernel Tuner gives the same strategy (NULL: none; the same name: listed
 * anyway, so the table says which of Kernel Tuner's names mptune reads) */
typedef struct registry_row {
  const mpt_strategy_type *type;
  const char *kernel_tuner;
} registry_row;

static const registry_row registry[] = {
  {&mpt_strategy_random, "random_sample"},
  {&mpt_strategy_brute_force, "brute_force"},
  {&mpt_strategy_ga, "genetic_algorithm"},
  {&mpt_strategy_de, "diff_evo"},
  {&mpt_strategy_pso, "pso"},
  {&mpt_strategy_firefly, "firefly_algorithm"},
  {&mpt_strategy_sa, "simulated_annealing"},
  {&mpt_strategy_mls, "mls"},
  {&mpt_strategy_ga_memetic, NULL},
  {&mpt_strategy_bo, "bayes_opt"},
  {&mpt_strategy_prior_order, NULL},
  {NULL, NULL}, /* keeps the array non-empty; rows go above */
};

/* Kernel Tuner's name of an option of one strategy where ours differs and the meaning is the same */
typedef struct option_alias_row {
  const char *strategy, *kernel_tuner, *ours;
} option_alias_row;

static const option_alias_row option_aliases[] = {
  {"bo", "popsize", "initial_samples"},   /* bayes_opt: "Number of initial samples" */
  {"bo", "covariancekernel", "kernel"},   /* matern32, matern52 as ours */
  {"bo", "method", "acquisition"},        /* ei, poi, lcb, lcb-srinivas, multi as ours */
  {NULL, NULL, NULL},
};

int mpt_strategy_count(void) { return (int)(sizeof registry / sizeof registry[0]) - 1; }

const mpt_strategy_type *mpt_strategy_at(int i) {
  return (i >= 0 && i < mpt_strategy_count()) ? registry[i].type : NULL;
}

const char *mpt_strategy_kernel_tuner_name(int i) {
  return (i >= 0 && i < mpt_strategy_count()) ? registry[i].kernel_tuner : NULL;
}

const mpt_strategy_type *mpt_strategy_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < mpt_strategy_count(); i++)
    if (strcmp(registry[i].type->name, name) == 0) return registry[i].type;
  for (int i = 0; i < mpt_strategy_count(); i++)
    if (registry[i].kernel_tuner && strcmp(registry[i].kernel_tuner, name) == 0) return registry[i].type;
  return NULL;
}

const char *mpt_strategy_option_alias(const mpt_strategy_type *t, const char *key) {
  for (const option_alias_row *a = option_aliases; t && key && a->strategy; a++)
    if (strcmp(a->strategy, t->name) == 0 && strcmp(a->kernel_tuner, key) == 0) return a->ours;
  return NULL;
}

int mpt_strategy_option_aliases(const mpt_strategy_type *t, char *buf, size_t cap) {
  int n = 0;
  size_t len = 0;
  if (cap) buf[0] = '\0';
  for (const option_alias_row *a = option_aliases; t && a->strategy && len < cap; a++)
    if (strcmp(a->strategy, t->name) == 0)
      len += (size_t)snprintf(buf + len, cap - len, "%s%s (%s)", n++ ? ", " : "", a->kernel_tuner, a->ours);
  return n;
}
