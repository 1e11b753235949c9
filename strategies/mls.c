/* strategies/mls.c: `mls`, multi-start local search as Kernel Tuner's greedy mls (the baseline of the
 * constraint-aware paper): from a random unseen valid configuration, try the valid neighbours
 * (Hamming by default) in random order and move to the first that improves (with a batched ask: the
 * best improving one of the batch); when no neighbour improves, restart from a random unseen
 * configuration. Neighbours already evaluated are free. */
#include <math.h>
#include <stdlib.h>
#include "strategies/evo_common.h"
#include "strategies/evo_transfer.h"

typedef struct mls_state {
  evo e;
  int64_t cur;
  int kind;
  int64_t *list;           /* untried neighbours of cur, shuffled */
  int64_t n_list, pos, cap_list;
  int64_t *prop;
  int n_prop, cap_prop;
} mls_state;

static const mpt_option_spec mls_options[] = {
  {"neighbor", MPT_OPT_STRING, "Hamming", "neighbourhood", "Hamming|adjacent|strictly-adjacent", 1, 0},
  {"max_batch", MPT_OPT_INT, "8", "most neighbours proposed at once in a batched ask", NULL, 1, 100000},
  EVO_TRANSFER_OPTION,
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int load_neighbours(mls_state *g) {
  int rc = evo_shuffled_neighbors(&g->e, g->cur, (mpt_neighbor_kind)g->kind, &g->list, &g->cap_list, &g->n_list);
  if (rc == 0) g->pos = 0;
  return rc;
}

static int mls_step(mpt_strategy *s, evo *e) {
  mls_state *g = s->data;
  if (g->cur >= 0) {
    int64_t best = evo_first_improvement(e, g->cur, g->prop, g->n_prop);
    g->n_prop = 0;
    if (best >= 0) {
      g->cur = best;
      int rc = load_neighbours(g);
      if (rc < 0) return rc;
    }
  }
  if (g->cur < 0 || g->pos >= g->n_list || e->free_gens >= EVO_STALL_LIMIT) { /* (re)start */
    int64_t id = evo_transfer_start(e);
    if (id < 0) return 0;
    g->cur = id;
    e->free_gens = 0;
    int rc = load_neighbours(g);
    if (rc < 0) return rc;
    return evo_submit(e, &id, 1);
  }
  int m = e->want < 1 ? 1 : e->want;
  if (m > g->cap_prop) m = g->cap_prop;
  evo_gen_begin(e);
  while (g->n_prop < m && g->pos < g->n_list) {
    g->prop[g->n_prop++] = g->list[g->pos];
    if (evo_gen_add(e, g->list[g->pos++])) return MPT_ERR_NOMEM;
  }
  evo_gen_end(e);
  return 0;
}

static void mls_destroy(mpt_strategy *s) {
  mls_state *g = s->data;
  if (g) {
    free(g->list);
    free(g->prop);
  }
  evo_state_free(s);
}

static int mls_create(mpt_strategy *s, mpt_error *err) {
  int rc = evo_state_new(s, sizeof(mls_state), "mls", mls_step, err);
  if (rc) return rc;
  mls_state *g = s->data;
  g->cur = -1;
  g->kind = evo_read_neighbor(s);
  g->cap_prop = (int)mpt_strategy_opt_int(s, "max_batch");
  g->prop = malloc((size_t)g->cap_prop * sizeof *g->prop);
  if (!g->prop) { mls_destroy(s); return mpt_error_set(err, MPT_ERR_NOMEM, "mls: out of memory"); }
  return 0;
}

const mpt_strategy_type mpt_strategy_mls =
  EVO_STRATEGY_TYPE("mls",
                    "multi-start greedy local search (Kernel Tuner's baseline)",
                    mls_options, mls_create, mls_destroy);
