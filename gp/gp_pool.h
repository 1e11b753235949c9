/* gp/gp_pool.h: a pool of a GP's candidates whose posterior can be conditioned on extra observations
 * without touching the GP: the fantasies of a batch (gp/gp_pool.c, gp_pool_fantasy.c, gp_pool_plan.c). Loading
 * copies the pool's posterior state and its rows of V (P x n_obs); each added observation then costs
 * O(P n_obs + n_obs^2) instead of a pass over every candidate (mpt_gp_add: O(n_cand n_obs)). The pool reads the
 * GP's factor, which must not change while the pool is in use. */
#ifndef MPT_GP_POOL_H
#define MPT_GP_POOL_H
#include <stdint.h>
#include "gp/gp.h"

typedef struct mpt_gp_pool mpt_gp_pool;

int mpt_gp_pool_create(mpt_gp_pool **out, mpt_error *err);
void mpt_gp_pool_free(mpt_gp_pool *p);
/* The pool becomes candidates ids[0..n) of gp (X: their points, n x dim, as gp was given them), with
 * gp's posterior and no extra observation. 0 or an error (out of memory, a bad id). */
int mpt_gp_pool_load(mpt_gp_pool *p, const mpt_gp *gp, const int64_t *ids, const double *X, int64_t n,
                     mpt_error *err);
/* The same from members held elsewhere (the model ranks' slices of the candidates, gp/gp_slices.h): gp holds
 * the observations (the same factor and outputs as the GP of the slices), ids[j] names member j (any id),
 * V its column of V (n x n_obs floats, member-major), abv its A, B and var (n x 3) as the slice's GP keeps
 * them: the pool that mpt_gp_pool_load gives from a GP over the members. 0 or an error (out of memory). */
int mpt_gp_pool_load_columns(mpt_gp_pool *p, const mpt_gp *gp, const int64_t *ids, const double *X, const float *V,
                             const double *abv, int64_t n, mpt_error *err);
/* Conditions the pool's candidates on one more observation (point x, output y) as mpt_gp_add conditions
 * the GP's (the same posterior up to rounding: the pool's sums are in double). 0 or an error. */
int mpt_gp_pool_add(mpt_gp_pool *p, const double *x, double y, mpt_error *err);
/* fixed = 1: the output normalization (prior mean, scale) stays the GP's, extra outputs left out, so
 * that extra observations change the posterior only through the kernel (0, the default: as the GP
 * given them would normalize) */
void mpt_gp_pool_fix_normalization(mpt_gp_pool *p, int fixed);
/* mpt_gp_pool_add at member j's point, whose column of V stands for the solve with the GP's factor
 * (O(P n_obs) instead of O(P n_obs + n_obs^2); V's float rounding instead of a double solve) */
int mpt_gp_pool_add_member(mpt_gp_pool *p, int64_t j, double y, mpt_error *err);
/* The posterior (mean, sd in output units, as mpt_gp_predict_block) at the GP's candidate c (x: its point, as
 * the GP was given it), a member or not, given the extra observations, with the pool's normalization: the
 * GP's part read from c's column of V, the extras' in O(n_extra (n_obs + n_extra)). 0 or an error. */
int mpt_gp_pool_predict_candidate(mpt_gp_pool *p, int64_t c, const double *x, double *mean, double *sd,
                                  mpt_error *err);
/* mpt_gp_pool_add at the GP's candidate c (x: its point): c's column of V stands for the solve with the GP's
 * factor (as for a member); right after mpt_gp_pool_predict_candidate of c, its solve is reused. The fantasies
 * of a batch's pending evaluations, which are candidates but not members. 0 or an error. */
int mpt_gp_pool_add_candidate(mpt_gp_pool *p, int64_t c, const double *x, double y, mpt_error *err);
/* Plans the next n extra observations as the GP's candidates cand[0..n), to be added in this order by
 * mpt_gp_pool_add_candidate (as the first observations after this call): their columns of V times the
 * members' in one matrix product (cblas_dgemm) instead of a dot product per member at each add. An add that
 * leaves the plan's order (another point, another candidate) computes its own, and the plan ends at the next
 * load. 0 or an error. */
int mpt_gp_pool_plan_candidates(mpt_gp_pool *p, const int64_t *cand, int64_t n, mpt_error *err);
/* The same plan from columns held elsewhere (the model ranks' slices, gp/gp_slices.h): V their columns of V (n x
 * n_obs floats, candidate-major), abv their A, B, var (n x 3), as mpt_gp_pool_load_columns takes a member's; the
 * ids need not be the GP's candidates (rank 0's GP holds none), but only the plan's order then reaches them. */
int mpt_gp_pool_plan_columns(mpt_gp_pool *p, const int64_t *cand, int64_t n, const float *V, const double *abv,
                             mpt_error *err);
int64_t mpt_gp_pool_size(const mpt_gp_pool *p);
/* the GP's candidate index of pool member j */
int64_t mpt_gp_pool_id(const mpt_gp_pool *p, int64_t j);
/* as mpt_gp_predict_block_var / mpt_gp_normalization for pool members [j0, j1), extra observations included */
void mpt_gp_pool_predict_var(const mpt_gp_pool *p, int64_t j0, int64_t j1, double *mean, double *var);
void mpt_gp_pool_normalization(const mpt_gp_pool *p, double *mean, double *scale);

#endif
