/* strategies/bo/bo_pool.h: the pool of a batch (strategies/bo/bo_pool.c): one full pass over a range of
 * candidates keeps the best P by expected improvement; the fantasies of a batch's picks then condition
 * only the pool (gp/gp_pool.h) and the batch's later picks come from it. The contract of bo_pool_pass,
 * which a sliced posterior runs on each model rank's slice, is in strategies/bo/README.md. */
#ifndef MPT_BO_POOL_H
#define MPT_BO_POOL_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* what the pass needs besides the GP: nothing else is read */
typedef struct bo_pass_args {
  double m, sc;          /* the GP's output normalization (mpt_gp_normalization) */
  double fb;             /* the incumbent in normalized units: (best output - m) / sc */
  double xi;             /* exploration margin (EI of improvement beyond fb - xi) */
  const uint8_t *skip_a, *skip_b; /* by global id: candidates left out where either is non-zero (either may be NULL) */
  const double *prior;   /* by global id: prior_scale * prior[id] is added to the GP's mean (the transfer prior
                            mean, strategies/bo/bo_transfer.h); NULL: none */
  double prior_scale;
  const int64_t *slot_id; /* the global id of candidate c is slot_id[c] (bo's working set: the configuration in
                             slot c), first_id + c when NULL */
} bo_pass_args;

/* The top P of the GP's candidates [begin, end) (candidate c has global id first_id + c) by log EI into
 * top, best first (ties by the smaller id); returns how many (<= P). */
int64_t bo_pool_pass(const mpt_gp *gp, int64_t begin, int64_t end, int64_t first_id, const bo_pass_args *a,
                     int64_t P, bo_ranked *top);
/* The best P of two lists in bo_pool_pass's order (the reduction of slices' pools), into out (not
 * overlapping them); returns how many. */
int64_t bo_pool_merge(const bo_ranked *x, int64_t nx, const bo_ranked *y, int64_t ny, int64_t P, bo_ranked *out);
/* bo's pool for the rest of this ask: the pass over every candidate (the GP's slots), then the pool loaded from
 * b->gp (b->pool, b->pool_ids: the members' slots); 0 or an error */
int bo_pool_build(bo_state *b, const uint8_t *seen, double xi, int64_t P, mpt_error *err);
/* The pending evaluations b->pend[from, to) (asked in earlier asks, not told) as fantasies on b->pool, in
 * order, each valued as bo's fantasies of the GP are (batch=quantile: the pool's posterior mean given the
 * earlier ones + batch_quantile sd; believer: the mean; liar: worst, the transfer prior mean's offset
 * removed): each costs O(pool (n_obs + fantasies)) instead of a pass over every candidate. 0 or an error. */
int bo_pool_add_pending(bo_state *b, int64_t from, int64_t to, double worst, mpt_error *err);

#endif
