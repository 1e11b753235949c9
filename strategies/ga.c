/* strategies/ga.c: `ga`, the constraint-aware genetic algorithm of Willemsen et al. ("Constraint-aware
 * Optimization in Auto-Tuning"): valid initial population by LHS, rank-based parent selection
 * (beta(1, 2.5) over the sorted population, as Kernel Tuner), single-point (or two-point / uniform)
 * crossover, an invalid child repaired to a valid neighbour (strictly-adjacent, adjacent, Hamming,
 * index-distance) and then, with chance 1/mutation_chance, mutated to a random valid Hamming neighbour
 * (repair before mutation, as the paper: the mutation never stands in for the repair chain), drawn
 * gene-wise by default (a parameter uniformly, then one of its valid other values: option mutation).
 * constraint_aware=0 is the penalty variant: random Cartesian initial population, mutation changes one
 * parameter to any value, invalid children stay in the population with a penalty fitness (they cost
 * no evaluation but occupy a population slot, i.e. a wasted iteration). Here: the options, the populations and
 * the generation step; the breeding is in ga_breed.c, the memetic mode in ga_memetic.c, the state in ga_internal.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/ga_internal.h"
#include "strategies/evo_transfer.h"

/* the GA's option rows; ga and ga_memetic differ only in the defaults of pressure, mode, immigrants and
 * mutation (ga_memetic keeps the neighbour-uniform mutation it was tuned with: gene-wise measured no better
 * there, 0.555 vs 0.561 at 300 repeats) */
#define GA_OPTIONS(PRESSURE, MODE, IMMIGRANTS, IMMIGRANTS_HELP, MUTATION) { \
  {"popsize", MPT_OPT_INT, "20", "population size", NULL, 2, 10000}, \
  {"mutation_chance", MPT_OPT_INT, "5", "a child mutates with chance 1/mutation_chance", NULL, 1, 1000000}, \
  {"mutation", MPT_OPT_STRING, MUTATION, "constraint-aware mutation to a random valid Hamming neighbour, drawn gene-wise " \
   "(gene: a parameter uniformly among those with a valid other value, then one of those values uniformly) or " \
   "uniformly over the neighbours (neighbour, as Kernel Tuner: parameters with many values mutate more often)", \
   "gene|neighbour", 1, 0}, \
  {"method", MPT_OPT_STRING, "single_point", "crossover", "single_point|two_point|uniform", 1, 0}, \
  {"elitism", MPT_OPT_BOOL, "1", "carry the best member into the next generation", NULL, 1, 0}, \
  {"pressure", MPT_OPT_DOUBLE, PRESSURE, "selection pressure: parents are ranks drawn from beta(1, pressure)", NULL, 0.1, 1000}, \
  {"repair", MPT_OPT_BOOL, "1", "constraint-aware: repair an invalid child (1) or draw another (0)", NULL, 1, 0}, \
  {"mode", MPT_OPT_STRING, MODE, "generational: a new population each generation; steady: each ask breeds " \
   "children that replace the worst members when better; memetic: each child is improved by first-improvement " \
   "Hamming local search before it replaces the worst member", "generational|steady|memetic", 1, 0}, \
  {"local", MPT_OPT_DOUBLE, "0", "fraction of children that are untried Hamming neighbours of the best members " \
   "(memetic local search)", NULL, 0, 1}, \
  {"immigrants", MPT_OPT_DOUBLE, IMMIGRANTS, IMMIGRANTS_HELP, NULL, 0, 1}, \
  {"stagnation", MPT_OPT_INT, "0", "restart after this many generations without a better best member (0: never)", NULL, 0, 1000000}, \
  EVO_AWARE_OPTIONS, \
  EVO_TRANSFER_OPTION, \
  {NULL, 0, NULL, NULL, NULL, 0, 0}, \
}

static const mpt_option_spec ga_options[] =
  GA_OPTIONS("2.5", "generational", "0", "fraction of each generation replaced by random unseen configurations", "gene");

/* `ga_memetic`: the same GA with defaults for the memetic mode (Lamarckian local search of children,
 * low selection pressure, 30% random starts), tuned on the convolution spaces (docs/PERFORMANCE.md) */
static const mpt_option_spec memetic_options[] =
  GA_OPTIONS("0.5", "memetic", "0.3", "fraction of each generation (memetic: of the local searches) started from random "
             "unseen configurations", "neighbour");
static int ga_init_pop(ga_state *g) {
  evo *e = &g->e;
  int dims = e->dims, n = 0;
  /* a restart keeps the best member of the old population (not the best told: see evo_common.h) */
  int64_t keep = e->generations > 0 ? evo_best_of(e, g->pid, g->n_pop) : -1;
  {
    int64_t *ids = malloc((size_t)g->P * sizeof *ids);
    if (!ids) return MPT_ERR_NOMEM;
    int64_t c = evo_sample_init(e, g->aware, g->P, ids);
    if (c < 0) { free(ids); return (int)c; }
    for (int64_t i = 0; i < c; i++, n++) {
      g->pid[n] = ids[i];
      mpt_space_config(e->sp, ids[i], g->pop + (size_t)n * dims);
    }
    free(ids);
  }
  g->n_pop = n;
  memset(g->climbed, 0, (size_t)g->P);
  if (keep >= 0 && n > 0) {
    g->pid[0] = keep;
    g->climbed[0] = 1;
    mpt_space_config(e->sp, keep, g->pop);
  }
  e->free_gens = 0;
  return 0;
}

static int ga_step(mpt_strategy *s, evo *e) {
  ga_state *g = s->data;
  int dims = e->dims;
  if (g->n_pop > 0) { /* stagnation: no better best member for stag_limit generations */
    int64_t b = evo_best_of(e, g->pid, g->n_pop);
    double fb = evo_fitness(e, b);
    if (fb < g->best_seen) { g->best_seen = fb; g->stag = 0; }
    else g->stag++;
  }
  if (g->n_pop == 0 || e->free_gens >= EVO_STALL_LIMIT || (g->stag_limit > 0 && g->stag >= g->stag_limit)) {
    g->stag = 0;
    int rc = ga_init_pop(g);
    if (rc < 0) return rc;
    g->n_child = 0;
    g->climb = -1;
    g->n_prop = 0;
  } else if (g->memetic) {
    return ga_memetic_step(g);
  } else if (g->steady) {
    /* children evaluated: each replaces the worst member when better and not already a member */
    for (int c = 0; c < g->n_child; c++) {
      int64_t id = g->npid[c];
      double fc = evo_fitness(e, id);
      int in, worst = ga_worst_member(g, id, &in);
      if (in || !(fc < evo_fitness(e, g->pid[worst]))) continue;
      g->pid[worst] = id;
      memcpy(g->pop + (size_t)worst * dims, g->npop + (size_t)c * dims, (size_t)dims * sizeof(int));
    }
    ga_rank(g);
    int want = e->want < 1 ? 1 : e->want > g->P ? g->P : e->want, m = 0;
    int rc = ga_breed(g, 0, want, g->pid, g->n_pop, &m);
    if (rc < 0) return rc;
    g->n_child = m;
    return evo_submit(e, g->npid, m);
  } else {
    ga_rank(g);
    int m = 0;
    if (g->elitism) {
      memcpy(g->npop, g->pop + (size_t)g->order[0] * dims, (size_t)dims * sizeof(int));
      g->npid[0] = g->pid[g->order[0]];
      m = 1;
    }
    int n_imm = (int)(g->immig * g->P + 0.5);
    for (int i = 0; i < n_imm && m < g->P; i++) { /* random immigrants */
      int64_t id = evo_random_unseen(e);
      if (id < 0) break;
      mpt_space_config(e->sp, id, g->npop + (size_t)m * dims);
      g->npid[m++] = id;
    }
    int rc = ga_breed(g, m, g->P, NULL, 0, &m);
    if (rc < 0) return rc;
    int *tp = g->pop; g->pop = g->npop; g->npop = tp;
    int64_t *ti = g->pid; g->pid = g->npid; g->npid = ti;
    g->n_pop = m;
  }
  return evo_submit(e, g->pid, g->n_pop);
}

static void ga_destroy(mpt_strategy *s) {
  ga_state *g = s->data;
  if (g) {
    free(g->list); free(g->prop); free(g->climbed);
    free(g->pop); free(g->npop); free(g->pid); free(g->npid); free(g->order); free(g->f);
  }
  evo_state_free(s);
}

static int ga_create(mpt_strategy *s, mpt_error *err) {
  int rc = evo_state_new(s, sizeof(ga_state), "ga", ga_step, err);
  if (rc) return rc;
  ga_state *g = s->data;
  g->P = (int)mpt_strategy_opt_int(s, "popsize");
  g->mut = mpt_strategy_opt_int(s, "mutation_chance");
  g->aware = evo_read_aware(&g->e);
  g->elitism = mpt_strategy_opt_bool(s, "elitism");
  g->immig = mpt_strategy_opt_double(s, "immigrants");
  g->pressure = mpt_strategy_opt_double(s, "pressure");
  g->repair = mpt_strategy_opt_bool(s, "repair");
  g->gene_mutation = strcmp(mpt_strategy_opt_str(s, "mutation"), "gene") == 0;
  g->local = mpt_strategy_opt_double(s, "local");
  g->steady = strcmp(mpt_strategy_opt_str(s, "mode"), "steady") == 0;
  g->memetic = strcmp(mpt_strategy_opt_str(s, "mode"), "memetic") == 0;
  g->climb = -1;
  g->prop = malloc((size_t)g->P * sizeof(int64_t));
  g->climbed = calloc((size_t)g->P, 1);
  if (!g->prop || !g->climbed) { ga_destroy(s); return mpt_error_set(err, MPT_ERR_NOMEM, "ga: out of memory"); }
  g->stag_limit = (int)mpt_strategy_opt_int(s, "stagnation");
  g->best_seen = INFINITY;
  const char *m = mpt_strategy_opt_str(s, "method");
  g->method = strcmp(m, "two_point") == 0 ? 1 : strcmp(m, "uniform") == 0 ? 2 : 0;
  size_t pd = (size_t)g->P * (size_t)(g->e.dims > 0 ? g->e.dims : 1);
  g->pop = malloc(pd * sizeof(int));
  g->npop = malloc(pd * sizeof(int));
  g->pid = malloc((size_t)g->P * sizeof(int64_t));
  g->npid = malloc((size_t)g->P * sizeof(int64_t));
  g->order = malloc((size_t)g->P * sizeof(int));
  g->f = malloc((size_t)g->P * sizeof(double));
  if (!g->pop || !g->npop || !g->pid || !g->npid || !g->order || !g->f) {
    ga_destroy(s);
    return mpt_error_set(err, MPT_ERR_NOMEM, "ga: out of memory");
  }
  return 0;
}

const mpt_strategy_type mpt_strategy_ga =
  EVO_STRATEGY_TYPE("ga",
                    "constraint-aware genetic algorithm (Willemsen et al.)",
                    ga_options, ga_create, ga_destroy);

const mpt_strategy_type mpt_strategy_ga_memetic =
  EVO_STRATEGY_TYPE("ga_memetic",
                    "memetic GA: children improved by Hamming local search (ga with mode=memetic defaults)",
                    memetic_options, ga_create, ga_destroy);
