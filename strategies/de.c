/* strategies/de.c: `de`, the constraint-aware differential evolution of Willemsen et al.: a population of
 * popsize x (parameters with more than one value) members in value-index space, valid initial members
 * by LHS (init=lhs-conditional by default: an LHS of the uniform distribution over the valid
 * configurations; with 16 x dims members the initial population is half of a 220-evaluation budget, and
 * the other strategies' LHS of the valid marginals favours configurations with many valid neighbours:
 * docs/PERFORMANCE.md, "de: an unbiased initial population"), mutant/trial vectors by best1bin (or
 * rand1bin, best2bin, rand2bin, currenttobest1bin) with F and CR, rounded to the nearest value index; an invalid trial is repaired to a random valid
 * configuration at the smallest index distance. Greedy selection after each generation of trials.
 * constraint_aware=0 is the penalty variant: random Cartesian initial population and invalid trials get
 * a penalty fitness without evaluation (so they always lose the selection: a wasted iteration). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/evo_common.h"
#include "strategies/evo_transfer.h"

enum { DE_BEST1, DE_RAND1, DE_BEST2, DE_RAND2, DE_CUR2BEST1 };

typedef struct de_state {
  evo e;
  int P, aware, method, phase, chain, immediate;
  int lo, hi;                  /* members [lo, hi) have trials in evaluation */ /* phase 0: nothing yet, 1: population in evaluation, 2: trials */
  double F, CR;
  int *pop, *trial;            /* P x dims value indices */
  int64_t *pid, *tid;
  double *v;                   /* dims scratch */
  int *freed;                  /* indices of parameters with more than one value */
  int n_freed;
} de_state;

static const mpt_option_spec de_options[] = {
  {"popsize", MPT_OPT_INT, "16", "population size per parameter with more than one value", NULL, 1, 1000},
  {"F", MPT_OPT_DOUBLE, "0.7", "differential weight (mutation)", NULL, 0, 2},
  {"CR", MPT_OPT_DOUBLE, "0.6", "crossover probability", NULL, 0, 1},
  {"method", MPT_OPT_STRING, "best1bin", "mutation scheme", "best1bin|rand1bin|best2bin|rand2bin|currenttobest1bin", 1, 0},
  {"repair", MPT_OPT_STRING, "index_distance", "constraint-aware: an invalid trial goes to a random valid configuration at "
   "the smallest index distance, or along the neighbour chain (strictly-adjacent, adjacent, Hamming, index-distance)",
   "index_distance|chain", 1, 0},
  {"updating", MPT_OPT_STRING, "immediate", "immediate: trials are made for as many members as an ask wants and the "
   "best vector is updated as soon as they are told (scipy's default); deferred: one batch of popsize trials per "
   "generation", "immediate|deferred", 1, 0},
  EVO_AWARE_OPTIONS_INIT("lhs-conditional"),
  EVO_FRESH_OPTION,
  EVO_TRANSFER_OPTION,
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int de_init_pop(de_state *g) {
  evo *e = &g->e;
  int dims = e->dims;
  int n = 0;
  int64_t keep = e->generations > 0 ? evo_best_of(e, g->pid, g->P) : -1; /* a restart keeps the best member */
  {
    int64_t *ids = malloc((size_t)g->P * sizeof *ids);
    if (!ids) return MPT_ERR_NOMEM;
    int64_t c = evo_sample_init(e, g->aware, g->P, ids);
    if (c < 0) { free(ids); return (int)c; }
    for (; n < c; n++) {
      g->pid[n] = ids[n];
      mpt_space_config(e->sp, ids[n], g->pop + (size_t)n * dims);
    }
    free(ids);
    /* a space smaller than the population: repeat members */
    for (int i = n; i < g->P && n > 0; i++) {
      g->pid[i] = g->pid[i % n];
      memcpy(g->pop + (size_t)i * dims, g->pop + (size_t)(i % n) * dims, (size_t)dims * sizeof(int));
    }
  }
  if (keep >= 0) {
    g->pid[0] = keep;
    mpt_space_config(e->sp, keep, g->pop);
  }
  e->free_gens = 0;
  return 0;
}

static int pick(de_state *g, int excl1, int excl2, int excl3, int excl4) {
  for (;;) {
    int r = (int)mpt_rng_below(&g->e.s->rng, (uint64_t)g->P);
    if (g->P <= 5) return r;
    if (r != excl1 && r != excl2 && r != excl3 && r != excl4) return r;
  }
}

static int de_step(mpt_strategy *s, evo *e) {
  de_state *g = s->data;
  int dims = e->dims, P = g->P;
  if (g->phase == 0 || e->free_gens >= EVO_STALL_LIMIT) {
    int rc = de_init_pop(g);
    if (rc < 0) return rc;
    if (evo_submit(e, g->pid, P)) return MPT_ERR_NOMEM;
    g->phase = 1;
    return 0;
  }
  if (g->phase == 2) { /* greedy selection */
    for (int i = g->lo; i < g->hi; i++) {
      if (evo_fitness(e, g->tid[i]) <= evo_fitness(e, g->pid[i])) {
        g->pid[i] = g->tid[i];
        memcpy(g->pop + (size_t)i * dims, g->trial + (size_t)i * dims, (size_t)dims * sizeof(int));
      }
    }
  }
  int best = 0;
  for (int i = 1; i < P; i++)
    if (evo_fitness(e, g->pid[i]) < evo_fitness(e, g->pid[best])) best = i;
  /* the members that get a trial now: all (deferred) or the next `want` in turn (immediate) */
  int lo = 0, hi = P;
  if (g->immediate) {
    lo = g->phase == 2 && g->hi < P ? g->hi : 0;
    int want = e->want < 1 ? 1 : e->want;
    hi = lo + want < P ? lo + want : P;
  }
  g->lo = lo;
  g->hi = hi;
  evo_gen_begin(e);
  for (int i = lo; i < hi; i++) {
    int r1 = pick(g, i, best, -1, -1), r2 = pick(g, i, best, r1, -1), r3 = pick(g, i, best, r1, r2);
    int r4 = pick(g, i, r1, r2, r3);
    const int *xi = g->pop + (size_t)i * dims, *xb = g->pop + (size_t)best * dims;
    const int *x1 = g->pop + (size_t)r1 * dims, *x2 = g->pop + (size_t)r2 * dims;
    const int *x3 = g->pop + (size_t)r3 * dims, *x4 = g->pop + (size_t)r4 * dims;
    int jr = g->n_freed > 0 ? g->freed[mpt_rng_below(&s->rng, (uint64_t)g->n_freed)] : 0;
    for (int d = 0; d < dims; d++) {
      double m;
      switch (g->method) {
      case DE_RAND1: m = x3[d] + g->F * (x1[d] - x2[d]); break;
      case DE_BEST2: m = xb[d] + g->F * (x1[d] - x2[d] + x3[d] - x4[d]); break;
      case DE_RAND2: m = x4[d] + g->F * (x1[d] - x2[d] + x3[d] - (double)xi[d]); break;
      case DE_CUR2BEST1: m = xi[d] + g->F * (xb[d] - xi[d] + x1[d] - x2[d]); break;
      default: m = xb[d] + g->F * (x1[d] - x2[d]); break;
      }
      g->v[d] = (d == jr || mpt_rng_uniform(&s->rng) < g->CR) ? m : (double)xi[d];
    }
    int *t = g->trial + (size_t)i * dims;
    evo_round_index(e, g->v, t);
    int64_t id = evo_place(e, t, g->aware, !g->chain);
    if (g->aware && id < 0) { id = g->pid[i]; memcpy(t, xi, (size_t)dims * sizeof(int)); } /* keeps the member */
    g->tid[i] = id;
    if (evo_gen_add(e, id)) return MPT_ERR_NOMEM;
  }
  evo_gen_end(e);
  g->phase = 2;
  return 0;
}

static void de_destroy(mpt_strategy *s) {
  de_state *g = s->data;
  if (g) {
    free(g->pop); free(g->trial); free(g->pid); free(g->tid); free(g->v); free(g->freed);
  }
  evo_state_free(s);
}

static int de_create(mpt_strategy *s, mpt_error *err) {
  int rc = evo_state_new(s, sizeof(de_state), "de", de_step, err);
  if (rc) return rc;
  de_state *g = s->data;
  g->P = (int)mpt_strategy_opt_int(s, "popsize") * g->e.free_dims;
  if (g->P < 4) g->P = 4;
  g->F = mpt_strategy_opt_double(s, "F");
  g->CR = mpt_strategy_opt_double(s, "CR");
  g->aware = evo_read_aware(&g->e);
  evo_read_fresh(&g->e, g->aware);
  g->chain = strcmp(mpt_strategy_opt_str(s, "repair"), "chain") == 0;
  g->immediate = strcmp(mpt_strategy_opt_str(s, "updating"), "immediate") == 0;
  const char *m = mpt_strategy_opt_str(s, "method");
  g->method = strcmp(m, "rand1bin") == 0 ? DE_RAND1 : strcmp(m, "best2bin") == 0 ? DE_BEST2
            : strcmp(m, "rand2bin") == 0 ? DE_RAND2 : strcmp(m, "currenttobest1bin") == 0 ? DE_CUR2BEST1 : DE_BEST1;
  int dims = g->e.dims > 0 ? g->e.dims : 1;
  size_t pd = (size_t)g->P * (size_t)dims;
  g->pop = malloc(pd * sizeof(int));
  g->trial = malloc(pd * sizeof(int));
  g->pid = malloc((size_t)g->P * sizeof(int64_t));
  g->tid = malloc((size_t)g->P * sizeof(int64_t));
  g->v = malloc((size_t)dims * sizeof(double));
  g->freed = malloc((size_t)dims * sizeof(int));
  if (!g->pop || !g->trial || !g->pid || !g->tid || !g->v || !g->freed) {
    de_destroy(s);
    return mpt_error_set(err, MPT_ERR_NOMEM, "de: out of memory");
  }
  for (int d = 0; d < g->e.dims; d++)
    if (g->e.nv[d] > 1) g->freed[g->n_freed++] = d;
  return 0;
}

const mpt_strategy_type mpt_strategy_de =
  EVO_STRATEGY_TYPE("de",
                    "constraint-aware differential evolution (Willemsen et al.)",
                    de_options, de_create, de_destroy);
