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
#include "strategies/evo_transfer.h"

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
  EVO_AWARE_OPTIONS,
  EVO_FRESH_OPTION,
  EVO_TRANSFER_OPTION,
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int ff_step(mpt_strategy *s, evo *e) {
  ff_state *g = s->data;
  int dims = e->dims;
  if (!g->started || e->free_gens >= EVO_STALL_LIMIT) {
    int rc = evo_unit_population(e, g->aware, g->P, g->pid, g->x);
    if (rc < 0) return rc;
    g->started = 1;
  } else {
    for (int i = 0; i < g->P; i++) g->f[i] = evo_fitness(e, g->pid[i]);
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
      g->pid[i] = evo_place_unit(e, xi, g->aware);
    }
  }
  return evo_submit(e, g->pid, g->P);
}

static void ff_destroy(mpt_strategy *s) {
  ff_state *g = s->data;
  if (g) {
    free(g->x); free(g->f); free(g->pid);
  }
  evo_state_free(s);
}

static int ff_create(mpt_strategy *s, mpt_error *err) {
  int rc = evo_state_new(s, sizeof(ff_state), "firefly", ff_step, err);
  if (rc) return rc;
  ff_state *g = s->data;
  g->P = (int)mpt_strategy_opt_int(s, "popsize");
  g->B0 = mpt_strategy_opt_double(s, "B0");
  g->gamma = mpt_strategy_opt_double(s, "gamma");
  g->alpha = mpt_strategy_opt_double(s, "alpha");
  g->aware = evo_read_aware(&g->e);
  evo_read_fresh(&g->e, g->aware);
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

const mpt_strategy_type mpt_strategy_firefly =
  EVO_STRATEGY_TYPE("firefly",
                    "constraint-aware firefly algorithm (Willemsen et al.)",
                    ff_options, ff_create, ff_destroy);
