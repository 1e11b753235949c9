/* strategies/firefly.c: `firefly`, the constraint-aware firefly algorithm of Willemsen et al.: fireflies
 * live in [0,1] per parameter (value index scaled) and start at valid configurations chosen by LHS; each
 * generation every firefly moves towards every brighter one (lower objective) by
 * B0 exp(-gamma r^2) (x_j - x_i) + alpha (u - 0.5), in order, then all are rounded to the nearest value
 * indices and repaired to a valid neighbour when invalid (strictly-adjacent, adjacent, Hamming,
 * index-distance), and evaluated together (one generation = one batch).
 * constraint_aware=0 is the penalty variant: random Cartesian start, no repair, invalid positions get a
 * penalty fitness without evaluation (a wasted iteration). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/evo_common.h"

typedef struct ff_state {
  evo e;
  int P, aware, started;
  double B0, gamma, alpha;
  double *x;               /* P x dims positions (unit space) */
  double *f;               /* fitness at generation start */
  int64_t *pid;
} ff_state;

static const mpt_option_spec ff_options[] = {
  {"popsize", MPT_OPT_INT, "20", "number of fireflies", NULL, 1, 10000},
  {"B0", MPT_OPT_DOUBLE, "1.0", "attractiveness at distance 0", NULL, 0, 10},
  {"gamma", MPT_OPT_DOUBLE, "1.0", "light absorption coefficient", NULL, 0, 100},
  {"alpha", MPT_OPT_DOUBLE, "0.2", "random step size", NULL, 0, 10},
  {"constraint_aware", MPT_OPT_BOOL, "1", "LHS of valid configs and repair (1) or penalty for invalid (0)", NULL, 1, 0},
  {"init", MPT_OPT_STRING, "lhs", "initial population of valid configurations: Latin hypercube (lhs) or uniformly "
   "random (random; the penalty variant always starts uniformly random)", "lhs|random", 1, 0},
  {"invalid_costs", MPT_OPT_BOOL, "1", "penalty variant: an invalid candidate costs one evaluation (a random "
   "configuration whose result the search does not use) as before constraint-awareness (1), or nothing (0)", NULL, 1, 0},
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int ff_init(ff_state *g) {
  evo *e = &g->e;
  int dims = e->dims;
  int *idx = e->idx_tmp;
  int64_t keep = e->generations > 0 ? evo_best_of(e, g->pid, g->P) : -1; /* a restart keeps the best member */
  int64_t *ids = NULL, c = 0;
  {
    ids = malloc((size_t)g->P * sizeof *ids);
    if (!ids) return MPT_ERR_NOMEM;
    c = evo_sample_init(e, g->aware, g->P, ids);
    if (c == 0 && e->generations > 0) { free(ids); e->free_gens = 0; return 0; } /* nothing untried: keep */
    if (c <= 0) { free(ids); return c < 0 ? (int)c : MPT_ERR_INTERNAL; }
  }
  for (int i = 0; i < g->P; i++) {
    g->pid[i] = ids[i % c];
    mpt_space_config(e->sp, g->pid[i], idx);
    evo_to_unit(e, idx, g->x + (size_t)i * dims);
  }
  if (keep >= 0) {
    g->pid[0] = keep;
    mpt_space_config(e->sp, keep, idx);
    evo_to_unit(e, idx, g->x);
  }
  free(ids);
  e->free_gens = 0;
  return 0;
}

static int ff_step(mpt_strategy *s, evo *e) {
  ff_state *g = s->data;
  int dims = e->dims;
  if (!g->started || e->free_gens >= EVO_STALL_LIMIT) {
    int rc = ff_init(g);
    if (rc < 0) return rc;
    g->started = 1;
  } else {
    for (int i = 0; i < g->P; i++) g->f[i] = evo_fitness(e, g->pid[i]);
    int *idx = e->idx_tmp;
    for (int i = 0; i < g->P; i++) {
      double *xi = g->x + (size_t)i * dims;
      int moved = 0;
      for (int j = 0; j < g->P; j++) {
        if (!(g->f[j] < g->f[i])) continue;
        const double *xj = g->x + (size_t)j * dims;
        double r2 = 0;
        for (int d = 0; d < dims; d++) r2 += (xi[d] - xj[d]) * (xi[d] - xj[d]);
        double beta = g->B0 * exp(-g->gamma * r2);
        for (int d = 0; d < dims; d++) {
          xi[d] += beta * (xj[d] - xi[d]) + g->alpha * (mpt_rng_uniform(&s->rng) - 0.5);
          if (xi[d] < 0) xi[d] = 0;
          if (xi[d] > 1) xi[d] = 1;
        }
        moved = 1;
      }
      if (!moved) { /* the brightest walks randomly */
        for (int d = 0; d < dims; d++) {
          xi[d] += g->alpha * (mpt_rng_uniform(&s->rng) - 0.5);
          if (xi[d] < 0) xi[d] = 0;
          if (xi[d] > 1) xi[d] = 1;
        }
      }
      evo_round_unit(e, xi, idx);
      if (g->aware) {
        int64_t id = evo_repair(e, idx, 0);
        if (id >= 0) {
          mpt_space_config(e->sp, id, idx);
          evo_to_unit(e, idx, xi);
        }
        g->pid[i] = id;
      } else {
        g->pid[i] = evo_lookup(e, idx);
      }
    }
  }
  evo_gen_begin(e);
  for (int i = 0; i < g->P; i++)
    if (evo_gen_add(e, g->pid[i])) return MPT_ERR_NOMEM;
  evo_gen_end(e);
  return 0;
}

static void ff_destroy(mpt_strategy *s) {
  ff_state *g = s->data;
  if (!g) return;
  evo_free(&g->e);
  free(g->x); free(g->f); free(g->pid);
  free(g);
  s->data = NULL;
}

static int ff_create(mpt_strategy *s, mpt_error *err) {
  ff_state *g = calloc(1, sizeof *g);
  if (!g) return mpt_error_set(err, MPT_ERR_NOMEM, "firefly: out of memory");
  s->data = g;
  int rc = evo_init(&g->e, s, err);
  if (rc) { free(g); s->data = NULL; return rc; }
  g->P = (int)mpt_strategy_opt_int(s, "popsize");
  g->B0 = mpt_strategy_opt_double(s, "B0");
  g->gamma = mpt_strategy_opt_double(s, "gamma");
  g->alpha = mpt_strategy_opt_double(s, "alpha");
  g->aware = mpt_strategy_opt_bool(s, "constraint_aware");
  g->e.burn_invalid = !g->aware && mpt_strategy_opt_bool(s, "invalid_costs");
  g->e.init_random = strcmp(mpt_strategy_opt_str(s, "init"), "random") == 0;
  size_t dims = (size_t)(g->e.dims > 0 ? g->e.dims : 1);
  g->x = malloc((size_t)g->P * dims * sizeof(double));
  g->f = malloc((size_t)g->P * sizeof(double));
  g->pid = malloc((size_t)g->P * sizeof(int64_t));
  if (!g->x || !g->f || !g->pid) {
    ff_destroy(s);
    return mpt_error_set(err, MPT_ERR_NOMEM, "firefly: out of memory");
  }
  return 0;
}

static int ff_ask(mpt_strategy *s, int n, int64_t *ids) {
  ff_state *g = s->data;
  return evo_ask(&g->e, n, ids, ff_step);
}

static void ff_tell(mpt_strategy *s, const mpt_obs *obs, int n) {
  ff_state *g = s->data;
  evo_tell(&g->e, obs, n);
}

const mpt_strategy_type mpt_strategy_firefly = {
  .name = "firefly",
  .summary = "constraint-aware firefly algorithm (Willemsen et al.)",
  .options = ff_options,
  .create = ff_create,
  .ask = ff_ask,
  .tell = ff_tell,
  .destroy = ff_destroy,
};
