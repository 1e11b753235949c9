/* strategies/bo/bo_pick.c: one model-based pick of `bo`: a local or global scan (strategies/bo/bo_scan.c; with
 * model ranks the pool pass on their slices), the largest-variance picks while stalled, and the acquisition
 * function that proposes (the single ones, the `multi` and `advanced-multi` portfolios). Called by the ask,
 * strategies/bo/bo_ask.c; the state is strategies/bo/bo_state.h. */
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_internal.h"
#include "strategies/bo/bo_local.h"

/* chooses the acquisition function of this pick and returns its candidate */
static int64_t choose(bo_state *b, const pick *pk, int *af_out) {
  int af;
  switch (b->acq) {
  case ACQ_POI: af = AF_POI; break;
  case ACQ_LCB: af = AF_LCB; break;
  case ACQ_LCBS: af = AF_LCBS; break;
  case ACQ_MULTI: {
    /* round robin over the active functions; one that keeps proposing what another already proposes
     * is skipped after skip_threshold duplicates (the counter decays on a fresh proposal) */
    int n_act = 0;
    for (int a = 0; a < AF_LCBS; a++) n_act += b->active[a];
    af = -1;
    for (int t = 0; t < AF_LCBS && af < 0; t++) {
      int a = (b->rr + t) % AF_LCBS;
      if (b->active[a]) af = a;
    }
    b->rr = (af + 1) % AF_LCBS;
    int dup = 0;
    for (int a = 0; a < AF_LCBS; a++)
      if (a != af && b->active[a] && pk->id[a] == pk->id[af]) dup = 1;
    if (dup) b->dup_count[af]++;
    else b->dup_count[af] = (int)(b->dup_count[af] * b->disc_multi);
    if (b->dup_count[af] >= b->skip_threshold && n_act > 1) b->active[af] = 0;
    break;
  }
  case ACQ_ADVANCED: {
    /* the function with the best discounted record of improvements; one whose record falls below the
     * required improvement sits out skip_threshold picks; ties and the first picks go round robin */
    af = -1;
    double best = -1;
    for (int t = 0; t < AF_LCBS; t++) {
      int a = (b->rr + t) % AF_LCBS;
      if (b->dup_count[a] > 0) { b->dup_count[a]--; continue; }
      if (b->score[a] > best) { best = b->score[a]; af = a; }
    }
    if (af < 0) af = AF_EI;
    b->rr = (b->rr + 1) % AF_LCBS;
    if (b->iter >= 3 * AF_LCBS && b->score[af] < b->req_improvement) {
      b->dup_count[af] = b->skip_threshold;
      b->score[af] = b->req_improvement; /* comes back with a clean slate */
    }
    break;
  }
  default: af = AF_EI;
  }
  *af_out = af;
  int64_t id = pk->id[af];
  if (id < 0) id = pk->id_any;
  return id;
}

/* One model-based pick (the k-th of this ask): a local or global scan, then the acquisition function
 * that proposes (*af); *id is -1 when nothing is left. 0 or an error */
int bo_pick_one(bo_state *b, mpt_strategy *s, double xi, double kappa_s, int stalled, int k, int *af,
                int64_t *id) {
  pick pk;
  int local = 0;
  if (b->dist && !b->in_pool) { /* model ranks: the pool pass on their slices (acquisition=ei, no local picks) */
    *af = AF_EI;
    return bo_dist_pick(b, s, xi, bo_prepare_feasibility(b), id);
  }
  if (b->local_every > 0 && b->iter % b->local_every == b->local_every - 1 && b->inc_idx &&
      (!b->local_stalled || stalled)) {
    local = bo_mark_local(b, s);
    if (local < 0) return mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "bo: out of memory for a local candidate set");
  }
  int var_pick = stalled && b->stall_variance && (b->n_obs + k) % 2 == 0;
  bo_scan(b, s, xi, kappa_s, local, var_pick, &pk);
  for (int64_t q = 0; q < b->n_nb; q++) b->nbmark[b->nblist[q]] = 0;
  b->n_nb = 0;
  /* neighbourhood exhausted, or none of it likely feasible: a global pick instead */
  if (local && (pk.id_any < 0 || (b->fgp && pk.id[AF_EI] < 0))) bo_scan(b, s, xi, kappa_s, 0, var_pick, &pk);
  *id = choose(b, &pk, af);
  if (var_pick && pk.id_var >= 0) *id = pk.id_var;
  return 0;
}
