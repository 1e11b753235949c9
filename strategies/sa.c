/* strategies/sa.c: `sa`, simulated annealing as in Kernel Tuner (the baseline of the constraint-aware
 * paper): from a random valid start, propose a random valid Hamming neighbour (adjacent or
 * strictly-adjacent with `neighbor=`), accept a better one always and a worse one with probability
 * exp(-((new - old) / old) / T) (relative cost difference, as Kernel Tuner); T falls geometrically from
 * T to T_min over the budget (alpha = (T_min/T)^(1/budget), or `alpha` when no budget is known), then
 * re-heats. Neighbours already evaluated are free moves. A batched ask proposes several distinct
 * neighbours of the current state; they are accepted or rejected in order once all are known.
 * A walk that proposes nothing new for a while restarts from a random unseen configuration. */
#include <math.h>
#include <stdlib.h>
#include "strategies/evo_common.h"
#include "strategies/evo_transfer.h"

typedef struct sa_state {
  evo e;
  int64_t cur;
  double T, T0, Tmin, alpha;
  int kind;
  int64_t *prop;
  int n_prop, cap_prop;
} sa_state;

static const mpt_option_spec sa_options[] = {
  {"T", MPT_OPT_DOUBLE, "1.0", "start temperature", NULL, 1e-9, 1e9},
  {"T_min", MPT_OPT_DOUBLE, "0.001", "end temperature", NULL, 1e-12, 1e9},
  {"alpha", MPT_OPT_DOUBLE, "0.995", "cooling factor per step when the budget is unknown", NULL, 1e-6, 1},
  {"neighbor", MPT_OPT_STRING, "Hamming", "neighbourhood", "Hamming|adjacent|strictly-adjacent", 1, 0},
  {"max_batch", MPT_OPT_INT, "8", "most neighbours proposed at once in a batched ask", NULL, 1, 100000},
  EVO_TRANSFER_OPTION,
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int sa_step(mpt_strategy *s, evo *e) {
  sa_state *g = s->data;
  if (g->cur >= 0 && e->free_gens < EVO_STALL_LIMIT) {
    for (int i = 0; i < g->n_prop; i++) { /* Metropolis in proposal order */
      double fo = evo_fitness(e, g->cur), fn = evo_fitness(e, g->prop[i]);
      int accept = fn < fo;
      if (!accept && fn < EVO_PENALTY && fo > 0) {
        double p = exp(-((fn - fo) / fo) / g->T);
        accept = mpt_rng_uniform(&s->rng) < p;
      }
      if (accept) g->cur = g->prop[i];
      g->T *= g->alpha;
      if (g->T < g->Tmin) g->T = g->T0;
    }
  } else { /* (re)start */
    int64_t id = evo_transfer_start(e);
    if (id < 0) return 0;
    g->cur = id;
    g->n_prop = 0;
    e->free_gens = 0;
    return evo_submit(e, &id, 1);
  }
  int *idx = e->idx_tmp;
  mpt_space_config(e->sp, g->cur, idx);
  int64_t c = evo_neighbors(e, idx, (mpt_neighbor_kind)g->kind);
  if (c < 0) return (int)c;
  int m = e->want < 1 ? 1 : e->want;
  if (m > g->cap_prop) m = g->cap_prop;
  if (m > c) m = (int)c;
  g->n_prop = 0;
  /* m distinct random neighbours (partial Fisher-Yates on the scratch list) */
  for (int i = 0; i < m; i++) {
    int64_t j = i + (int64_t)mpt_rng_below(&s->rng, (uint64_t)(c - i));
    int64_t t = e->nb[i]; e->nb[i] = e->nb[j]; e->nb[j] = t;
    g->prop[g->n_prop++] = e->nb[i];
  }
  if (g->n_prop == 0) e->free_gens = EVO_STALL_LIMIT; /* no neighbours: restart next time */
  return evo_submit(e, g->prop, g->n_prop);
}

static void sa_destroy(mpt_strategy *s) {
  sa_state *g = s->data;
  if (g) free(g->prop);
  evo_state_free(s);
}

static int sa_create(mpt_strategy *s, mpt_error *err) {
  int rc = evo_state_new(s, sizeof(sa_state), "sa", sa_step, err);
  if (rc) return rc;
  sa_state *g = s->data;
  g->cur = -1;
  g->T0 = g->T = mpt_strategy_opt_double(s, "T");
  g->Tmin = mpt_strategy_opt_double(s, "T_min");
  if (g->Tmin >= g->T0) {
    double tmin = g->Tmin, t0 = g->T0;
    sa_destroy(s);
    return mpt_error_set(err, MPT_ERR_VALUE, "strategy 'sa': T_min (%g) must be below T (%g): set T above it or T_min below it",
                         tmin, t0);
  }
  g->alpha = s->budget > 0 ? pow(g->Tmin / g->T0, 1.0 / (double)s->budget) : mpt_strategy_opt_double(s, "alpha");
  g->kind = evo_read_neighbor(s);
  g->cap_prop = (int)mpt_strategy_opt_int(s, "max_batch");
  g->prop = malloc((size_t)g->cap_prop * sizeof *g->prop);
  if (!g->prop) { sa_destroy(s); return mpt_error_set(err, MPT_ERR_NOMEM, "sa: out of memory"); }
  return 0;
}

const mpt_strategy_type mpt_strategy_sa =
  EVO_STRATEGY_TYPE("sa",
                    "simulated annealing (Kernel Tuner's baseline)",
                    sa_options, sa_create, sa_destroy);
