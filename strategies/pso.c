/* strategies/pso.c: `pso`, the constraint-aware particle swarm optimization of Willemsen et al.:
 * particles live in [0,1] per parameter (value index scaled), start at valid configurations chosen by
 * LHS with zero velocity, move by v = w v + c1 r1 (pbest - x) + c2 r2 (gbest - x), are rounded to the
 * nearest value indices and, when that configuration is invalid, repaired to a valid neighbour
 * (strictly-adjacent, adjacent, Hamming, index-distance); the particle then sits on the repaired
 * configuration. constraint_aware=0 is the penalty variant: random Cartesian start, no repair, an
 * invalid position gets a penalty fitness without evaluation (a wasted iteration). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/evo_common.h"
#include "strategies/evo_transfer.h"

typedef struct pso_state {
  evo e;
  int P, aware, started;
  double w, c1, c2;
  double *x, *v, *pb;      /* P x dims positions, velocities, personal bests (unit space) */
  double *pbf;             /* personal best fitness */
  int64_t *pid;            /* current id per particle (-1 invalid) */
  double *gb;              /* global best position */
  double gbf;
} pso_state;

static const mpt_option_spec pso_options[] = {
  {"popsize", MPT_OPT_INT, "30", "number of particles", NULL, 1, 10000},
  {"w", MPT_OPT_DOUBLE, "0.5", "inertia weight", NULL, 0, 10},
  {"c1", MPT_OPT_DOUBLE, "3.0", "cognitive coefficient (pull to the particle's best)", NULL, 0, 10},
  {"c2", MPT_OPT_DOUBLE, "0.5", "social coefficient (pull to the swarm's best)", NULL, 0, 10},
  EVO_AWARE_OPTIONS,
  EVO_FRESH_OPTION,
  EVO_TRANSFER_OPTION,
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* (re)starts the swarm at zero velocity with unknown bests (evo_unit_population) */
static int pso_init(pso_state *g) {
  int rc = evo_unit_population(&g->e, g->aware, g->P, g->pid, g->x);
  if (rc != 0) return rc < 0 ? rc : 0; /* 1: nothing untried, the swarm goes on */
  memset(g->v, 0, (size_t)g->P * (size_t)g->e.dims * sizeof(double));
  for (int i = 0; i < g->P; i++) g->pbf[i] = INFINITY;
  g->gbf = INFINITY;
  return 0;
}

static int pso_step(mpt_strategy *s, evo *e) {
  pso_state *g = s->data;
  int dims = e->dims;
  if (!g->started || e->free_gens >= EVO_STALL_LIMIT) {
    int rc = pso_init(g);
    if (rc < 0) return rc;
    g->started = 1;
  } else {
    for (int i = 0; i < g->P; i++) { /* personal and global bests */
      double f = evo_fitness(e, g->pid[i]);
      if (f < g->pbf[i]) {
        g->pbf[i] = f;
        memcpy(g->pb + (size_t)i * dims, g->x + (size_t)i * dims, (size_t)dims * sizeof(double));
      }
      if (f < g->gbf) {
        g->gbf = f;
        memcpy(g->gb, g->x + (size_t)i * dims, (size_t)dims * sizeof(double));
      }
    }
    for (int i = 0; i < g->P; i++) {
      double *x = g->x + (size_t)i * dims, *v = g->v + (size_t)i * dims, *pb = g->pb + (size_t)i * dims;
      for (int d = 0; d < dims; d++) {
        double r1 = mpt_rng_uniform(&s->rng), r2 = mpt_rng_uniform(&s->rng);
        v[d] = g->w * v[d] + g->c1 * r1 * (pb[d] - x[d]) + g->c2 * r2 * (g->gb[d] - x[d]);
        x[d] += v[d];
        if (x[d] < 0) x[d] = 0;
        if (x[d] > 1) x[d] = 1;
      }
      g->pid[i] = evo_place_unit(e, x, g->aware);
    }
  }
  return evo_submit(e, g->pid, g->P);
}

static void pso_destroy(mpt_strategy *s) {
  pso_state *g = s->data;
  if (g) {
    free(g->x); free(g->v); free(g->pb); free(g->pbf); free(g->pid); free(g->gb);
  }
  evo_state_free(s);
}

static int pso_create(mpt_strategy *s, mpt_error *err) {
  int rc = evo_state_new(s, sizeof(pso_state), "pso", pso_step, err);
  if (rc) return rc;
  pso_state *g = s->data;
  g->P = (int)mpt_strategy_opt_int(s, "popsize");
  g->w = mpt_strategy_opt_double(s, "w");
  g->c1 = mpt_strategy_opt_double(s, "c1");
  g->c2 = mpt_strategy_opt_double(s, "c2");
  g->aware = evo_read_aware(&g->e);
  evo_read_fresh(&g->e, g->aware);
  size_t dims = (size_t)(g->e.dims > 0 ? g->e.dims : 1), pd = (size_t)g->P * dims;
  g->x = malloc(pd * sizeof(double));
  g->v = malloc(pd * sizeof(double));
  g->pb = calloc(pd, sizeof(double));
  g->pbf = malloc((size_t)g->P * sizeof(double));
  g->pid = malloc((size_t)g->P * sizeof(int64_t));
  g->gb = calloc(dims, sizeof(double));
  if (!g->x || !g->v || !g->pb || !g->pbf || !g->pid || !g->gb) {
    pso_destroy(s);
    return mpt_error_set(err, MPT_ERR_NOMEM, "pso: out of memory");
  }
  return 0;
}

const mpt_strategy_type mpt_strategy_pso =
  EVO_STRATEGY_TYPE("pso",
                    "constraint-aware particle swarm optimization (Willemsen et al.)",
                    pso_options, pso_create, pso_destroy);
