/* strategies/bo/bo_fantasy.c: the fantasies of `bo`'s batched asks: the value a pending evaluation stands in
 * with (the pessimistic quantile, the posterior mean or the constant liar's worst output), taken into the GP
 * (a pass over every candidate) or into the pool of a batch (strategies/bo/bo_pool.c, gp/gp_pool.h). Called by
 * the ask, strategies/bo/bo_ask.c; the state is strategies/bo/bo_state.h. */
#include <math.h>
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_internal.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_transfer.h"
#include "gp/gp_pool.h"

/* the constant liar's fantasy: the worst output the GP holds (transformed as the GP sees it) */
double bo_fantasy_worst(const bo_state *b) {
  int base = mpt_gp_n_obs(b->gp);
  double worst = -INFINITY;
  if (b->post && b->ty && base >= 2) {
    for (int i = 0; i < base; i++) if (b->ty[i] > worst) worst = b->ty[i];
  } else {
    for (int64_t i = 0; i < b->n_processed; i++)
      if (b->obs_ok[i]) {
        double t = bo_transform(b, b->obs_y[i]);
        if (t > worst) worst = t;
      }
  }
  return worst;
}

/* the pending evaluations from *from on (earlier asks, and this ask's picks) enter the GP as fantasies:
 * the pessimistic quantile (batch=quantile), the posterior mean (believer) or worst (liar); 0 or an error */
int bo_add_fantasies(bo_state *b, int64_t *from, double worst, mpt_error *err) {
  int rc = 0;
  for (; *from < b->n_pend && rc == 0; (*from)++) {
    const double *x = bo_point(b, b->pend[*from].id);
    int64_t c = bo_id_slot(b, b->pend[*from].id);
    double mu, sdq;
    if (!b->dist && c >= 0) mpt_gp_predict_block(b->gp, c, c + 1, &mu, &sdq);
    else if (!b->dist) mpt_gp_predict_point(b->gp, x, &mu, &sdq); /* outside the working set */
    else if ((rc = bo_dist_predict(b, b->pend[*from].id, &mu, &sdq, err)) != 0) break; /* model ranks */
    if (b->batch_quantile != 0) mu += b->batch_quantile * sdq; /* batch=quantile */
    rc = mpt_gp_add(b->gp, x, b->batch_liar ? worst - bo_transfer_offset(b, b->pend[*from].id) : mu, err);
    if (rc) mpt_error_prefix(err, "bo: cannot extend the GP to %d observations (pending evaluations as fantasies)",
                             mpt_gp_n_obs(b->gp) + 1);
  }
  return rc;
}

/* the fantasy output of a pick (posterior at candidate id: the pool's when it is a member of the pool
 * in use, else the GP's): the pessimistic quantile (batch=quantile), the mean (believer) or worst (liar) */
static int fantasy_value(bo_state *b, int64_t id, double worst, int64_t *member, double *y, mpt_error *err) {
  double mu = 0, sdq = 0;
  int rc = 0;
  int64_t j = -1, c = b->dist ? id : bo_id_slot(b, id); /* the pool's members are the GP's slots */
  for (int64_t q = 0; b->in_pool && c >= 0 && q < mpt_gp_pool_size(b->pool) && j < 0; q++)
    if (mpt_gp_pool_id(b->pool, q) == c) j = q;
  if (member) *member = j;
  if (b->batch_liar) { *y = worst; return 0; }
  if (j >= 0) {
    double m, sc, var;
    mpt_gp_pool_predict_var(b->pool, j, j + 1, &mu, &var);
    mpt_gp_pool_normalization(b->pool, &m, &sc);
    sdq = sc * sqrt(var);
  } else if (!b->dist && c >= 0) {
    mpt_gp_predict_block(b->gp, c, c + 1, &mu, &sdq);
  } else if (!b->dist) {
    mpt_gp_predict_point(b->gp, bo_point(b, id), &mu, &sdq); /* outside the working set */
  } else {
    rc = bo_dist_predict(b, id, &mu, &sdq, err); /* model ranks */
  }
  *y = b->batch_quantile != 0 ? mu + b->batch_quantile * sdq : mu;
  return rc;
}

/* the fantasy of pick id into the pool: at a member's column when it is one (the picks after the first) */
int bo_fantasy_on_pool(bo_state *b, int64_t id, double worst, mpt_error *err) {
  int64_t j;
  double y;
  int rc = fantasy_value(b, id, worst, &j, &y, err);
  if (rc) return rc;
  return j >= 0 ? mpt_gp_pool_add_member(b->pool, j, y, err) : mpt_gp_pool_add(b->pool, bo_point(b, id), y, err);
}
