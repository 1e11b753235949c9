/* strategies/bo/bo_dist_hook.h: where bo's scan, pools, fantasies and exploration margin go to the model ranks when
 * the strategy has them (strategies/bo/bo_dist.c; b->dist set). Private to the files of strategies/bo/. */
#ifndef MPT_BO_DIST_HOOK_H
#define MPT_BO_DIST_HOOK_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"
/* the pick of an EI scan (pool pass on the slices; with the feasibility model when use_feas) into *id
 * (-1: nothing left); 0 or an error */
int bo_dist_pick(bo_state *b, mpt_strategy *s, double xi, int use_feas, int64_t *id);
/* the pool of a batch on the slices (bo_pool_build's, strategies/bo/bo_pool.h: the best P free candidates by
 * log EI, b->pool loaded with their columns of V gathered from the model ranks); 0 or an error */
int bo_dist_pool_build(bo_state *b, const uint8_t *seen, double xi, int64_t P, mpt_error *err);
/* the pending evaluations ids[0..n) planned on b->pool (mpt_gp_pool_plan_candidates' plan, their columns of V
 * gathered from the slices that hold them); 0 or an error */
int bo_dist_plan_pending(bo_state *b, const int64_t *ids, int64_t n, mpt_error *err);
/* candidate c's posterior (mpt_gp_predict_block's) */
int bo_dist_predict(bo_state *b, int64_t c, double *mean, double *sd, mpt_error *err);
/* mpt_gp_variance_sum over the free candidates (s->seen) */
int bo_dist_variance_sum(bo_state *b, mpt_strategy *s, double *sum, int64_t *count, mpt_error *err);
/* a new b->gp (no candidates) takes the model ranks' marginal likelihood */
void bo_dist_adopt(bo_state *b);
#endif
