/* gp/gp.h: Gaussian-process regression over a fixed block of candidate points (the numeric encodings
 * of configurations from spaces/): Matérn 1/2, 3/2, 5/2 and squared-exponential covariances, per-
 * dimension lengthscales, signal variance and observation noise, outputs normalized (observed mean or
 * constant prior mean, observed standard deviation), hyperparameters fixed or fitted by maximizing the
 * marginal likelihood with priors that keep lengthscales away from 0.
 *
 * Cost model. The GP keeps the Cholesky factor L of K(X_obs, X_obs) + noise*I (double) and the
 * matrix V = L^-1 K(X_obs, X_cand) (float, one row of n_cand per observation, stored in panels of 32
 * candidates so that one pass streams through it). Adding one observation extends L by one row (a
 * triangular solve of length n_obs, no refactorization) and V by one row (one new kernel row plus one
 * pass over V: O(n_cand * n_obs), summed in double where the new observation is nearly predicted by
 * the earlier ones, so that the rounding of V does not compound into a drift over long runs); the
 * posterior mean and variance of every candidate are then updated by a rank-one term in O(n_cand), in
 * the same pass. Changing hyperparameters
 * refactors from scratch (LAPACK dpotrf, candidates blockwise with BLAS dtrsm).
 *
 * Distribution. The GP object holds only a block of candidates; the observations are given as points
 * (not as candidate indices), so several ranks can each hold a slice of the candidates and replicate
 * the small n_obs x n_obs factor (gp/gp_slices.h); the marginal likelihood of large evidence sets is
 * factorized with ScaLAPACK over them (gp/gp_dist.h, through mpt_gp_set_lml_backend). */
#ifndef MPT_GP_H
#define MPT_GP_H
#include <stddef.h>
#include <stdint.h>
#include "spaces/sys/error.h"

typedef enum mpt_gp_kernel {
  MPT_GP_MATERN12 = 0,
  MPT_GP_MATERN32,
  MPT_GP_MATERN52,
  MPT_GP_SE,
  MPT_GP_KERNEL_COUNT
} mpt_gp_kernel;

typedef enum mpt_gp_mean {
  MPT_GP_MEAN_OBSERVED = 0, /* prior mean = mean of the observations */
  MPT_GP_MEAN_CONSTANT,     /* prior mean = config.mean_constant */
} mpt_gp_mean;

typedef struct mpt_gp_config {
  mpt_gp_kernel kernel;
  double lengthscale;    /* initial lengthscale of every dimension (> 0) */
  double variance;       /* signal variance in normalized units (default 1) */
  double noise;          /* observation-noise variance in normalized units (>= 0; a tiny jitter is added) */
  mpt_gp_mean mean;
  double mean_constant;
  int normalize_scale;   /* 1: divide outputs by their standard deviation (default), 0: scale 1 */
  int64_t max_bytes;     /* > 0: adding an observation that needs more (mpt_gp_bytes) fails (0: no limit) */
} mpt_gp_config;

/* Fills the defaults: Matérn 3/2, lengthscale 1.5, variance 1, noise 1e-6, observed mean, scaled. */
void mpt_gp_config_default(mpt_gp_config *c);
const char *mpt_gp_kernel_name(int kernel);   /* "matern12", "matern32", "matern52", "se"; NULL if bad */
int mpt_gp_kernel_parse(const char *name);    /* -1 when unknown; accepts "rbf" for "se" */
/* k(r) for unit variance at scaled distance r >= 0 */
double mpt_gp_kernel_eval(int kernel, double r);
/* the same at squared scaled distance r2 (the value the serial factor uses: gp/gp_dist.c builds the same) */
double mpt_gp_kernel_r2(int kernel, double r2);

/* the jitter added to the noise, relative to the signal variance (serial and distributed factors alike) */
#define MPT_GP_JITTER 1e-8

typedef struct mpt_gp mpt_gp;

/* A GP over n_cand candidate points X (row-major n_cand x dim, copied). n_cand may be 0. */
int mpt_gp_create(const mpt_gp_config *cfg, int dim, int64_t n_cand, const double *X, mpt_gp **out,
                  mpt_error *err);
/* Writes candidates [first, first + n) row-major (n x dim doubles) to rows. */
typedef void (*mpt_gp_cand_fn)(void *ctx, int64_t first, int64_t n, double *rows);
/* The same GP with the candidates fetched from fill a block at a time (in ascending order, all of them
 * once or twice), so that the caller needs no n_cand x dim table: the same GP as mpt_gp_create given
 * the rows fill writes. */
int mpt_gp_create_from(const mpt_gp_config *cfg, int dim, int64_t n_cand, mpt_gp_cand_fn fill, void *ctx,
                       mpt_gp **out, mpt_error *err);
void mpt_gp_free(mpt_gp *gp);

int mpt_gp_dim(const mpt_gp *gp);
int mpt_gp_kernel_of(const mpt_gp *gp);       /* its mpt_gp_kernel */
int mpt_gp_n_obs(const mpt_gp *gp);
/* bytes held (candidates, V, factor, per-candidate state) */
int64_t mpt_gp_bytes(const mpt_gp *gp);

/* Adds one observation (x: dim values, y finite) and updates the factor and the posterior of every
 * candidate incrementally. Out of memory, or over config.max_bytes, it fails with the size it needed. */
int mpt_gp_add(mpt_gp *gp, const double *x, double y, mpt_error *err);
/* Forgets the observations after the first n (in reverse order of addition), restoring the posterior
 * exactly up to rounding: used to fantasize pending points and roll back. */
int mpt_gp_truncate(mpt_gp *gp, int n, mpt_error *err);

/* Replaces the outputs of all observations (y: n_obs values, same points, e.g. after re-transforming
 * the objective); the factor is kept: O(n_obs^2 + n_cand * n_obs). */
int mpt_gp_set_outputs(mpt_gp *gp, const double *y, mpt_error *err);

/* mpt_gp_add and mpt_gp_set_outputs in one pass over the candidates: adds point x with output
 * y_all[n_obs] and gives all n_obs + 1 observations the outputs y_all. */
int mpt_gp_add_outputs(mpt_gp *gp, const double *x, const double *y_all, mpt_error *err);

/* Adds k observations (X: k x dim, outputs y) as k mpt_gp_add calls would (with y_all, n_obs + k outputs:
 * the last one as mpt_gp_add_outputs, every output replaced), in one pass over the candidates instead of
 * k: the batch of observations an ask takes in (gp/gp_batch.c). k = 1 is mpt_gp_add itself; for k > 1
 * the sums are blocked and use FMAs, so the results equal single adds' to rounding, not bit for bit
 * (tests/test_gp.c test_add_many: means and sds within 1e-5, no less accurate against the factor). */
int mpt_gp_add_many(mpt_gp *gp, int k, const double *X, const double *y, const double *y_all, mpt_error *err);

/* Posterior mean and standard deviation (output units) of candidates [begin, end); either pointer may
 * be NULL. Reads the incrementally maintained state: O(end - begin). */
void mpt_gp_predict_block(const mpt_gp *gp, int64_t begin, int64_t end, double *mean, double *sd);
/* The same means, and the posterior variances in normalized units without the square root:
 * var[c - begin] = max(v, 0), where mpt_gp_predict_block's sd = scale * sqrt(max(v, 0)) (scale from
 * mpt_gp_normalization): for callers that can reject most candidates from the variance alone. */
void mpt_gp_predict_block_var(const mpt_gp *gp, int64_t begin, int64_t end, double *mean, double *var);
/* Posterior mean and sd at any point x (O(n_obs^2)). */
void mpt_gp_predict_point(const mpt_gp *gp, const double *x, double *mean, double *sd);
/* Posterior mean at many single points cheaply: alpha (n_obs values) with mean(x) = m0 + sum_i alpha_i
 * k(x, x_i); computing the weights is O(n_obs^2), each mean then O(n_obs * dim). */
void mpt_gp_mean_weights(const mpt_gp *gp, double *alpha, double *m0);
double mpt_gp_mean_with_weights(const mpt_gp *gp, const double *alpha, double m0, const double *x);
/* k[i - from] = variance * k(x, x_i) for observations from <= i < to: exactly the values
 * mpt_gp_mean_with_weights sums (mean = mpt_gp_mean_from_kernel(alpha, m0, k, n_obs)), so a caller can
 * keep a point's kernel values and extend them when observations arrive. */
void mpt_gp_kernel_obs_range(const mpt_gp *gp, const double *x, int from, int to, double *k);
/* k[j] = variance * k(P_j, x_i) for observation i and np points P_j = P + ids[j] * ld (dim values each):
 * bit for bit what mpt_gp_kernel_obs_range gives for P_j and observation i, so a caller can extend the
 * kept kernel values of many points by a new observation in one vectorized call */
void mpt_gp_kernel_obs_points(const mpt_gp *gp, int i, int64_t np, const double *P, size_t ld, const int64_t *ids,
                              double *k);
/* m0 + sum_i alpha_i k_i over i < n, summed exactly as mpt_gp_mean_with_weights sums (8 interleaved
 * partial sums, then combined in a fixed order: the same bits on every machine) */
double mpt_gp_mean_from_kernel(const double *alpha, double m0, const double *k, int n);
/* Sum of the posterior variances in normalized units ((sd / scale)^2 of mpt_gp_predict_block, sd clipped
 * at 0) over the candidates c with skip[c] == 0 (every candidate when skip is NULL), and their number in
 * *count (may be NULL). The GP keeps the total over all candidates from its last pass over them, so
 * this reads only skip (and the variances of the skipped candidates). */
double mpt_gp_variance_sum(const mpt_gp *gp, const uint8_t *skip, int64_t *count);
/* the output normalization in use: prior mean and scale */
void mpt_gp_normalization(const mpt_gp *gp, double *mean, double *scale);

/* Hyperparameters (normalized units). ls has dim entries. Setting them refactors from scratch. */
void mpt_gp_get_hyper(const mpt_gp *gp, double *ls, double *variance, double *noise);
int mpt_gp_set_hyper(mpt_gp *gp, const double *ls, double variance, double noise, mpt_error *err);
/* Log marginal likelihood of the normalized observations under the given hyperparameters (the GP's
 * own when ls == NULL). Returns 0 or an error (e.g. not positive definite). */
int mpt_gp_log_marginal(const mpt_gp *gp, const double *ls, double variance, double noise,
                        double *lml, mpt_error *err);

/* The log marginal likelihood computed elsewhere: fn gets the GP and the resolved hyperparameters and
 * returns 0 (lml set), < 0 (an error) or > 0 (declined: the serial path computes it). The model ranks'
 * ScaLAPACK path (gp/gp_slices.h) installs one that takes evidence sets above the crossover
 * (mpt_gp_dist_worth), so that mpt_gp_fit switches by itself. NULL: none. */
typedef int (*mpt_gp_lml_fn)(void *ctx, const mpt_gp *gp, const double *ls, double variance, double noise,
                             double *lml, mpt_error *err);
void mpt_gp_set_lml_backend(mpt_gp *gp, mpt_gp_lml_fn fn, void *ctx);

/* 1 when point x can replace a candidate (mpt_gp_replace_candidates): a GP that keeps its candidates as codes
 * of the values it was created with (gp/gp_cand.h) takes only points made of those values */
int mpt_gp_candidate_fits(const mpt_gp *gp, const double *x);
/* Candidates slots[0..m) (distinct) become the points X (m x dim, row-major), their columns of V, posterior
 * means and variances computed from the current factor in one blocked triangular solve (O(m n_obs^2)): the
 * same values, to rounding, as a GP created with those candidates and given the same observations
 * (gp/gp_replace.c; a working set of candidates, strategies/bo/bo_ws.c). 0 or an error (a slot out of range,
 * a point that does not fit: nothing changed; out of memory). */
int mpt_gp_replace_candidates(mpt_gp *gp, int64_t m, const int64_t *slots, const double *X, mpt_error *err);

/* the observations as added (n_obs rows of dim, row-major) and their outputs (raw units) */
const double *mpt_gp_obs_points(const mpt_gp *gp);
const double *mpt_gp_obs_outputs(const mpt_gp *gp);

typedef struct mpt_gp_fit_options {
  int ard;               /* 1: one lengthscale per dimension, 0: one shared lengthscale */
  int fit_variance;      /* fit the signal variance too */
  int fit_noise;         /* fit the noise too */
  int max_evals;         /* marginal-likelihood evaluations (Nelder-Mead) */
  double ls_prior_shape, ls_prior_rate; /* Gamma prior on each lengthscale (shape > 1 keeps it off 0) */
  double ls_min, ls_max; /* box on lengthscales */
  double noise_min, noise_max;
} mpt_gp_fit_options;
void mpt_gp_fit_options_default(mpt_gp_fit_options *o);
/* Maximizes log marginal likelihood + log prior over log-hyperparameters from the current ones
 * (deterministic), sets the best and refactors. Needs >= 2 observations (otherwise a no-op). */
int mpt_gp_fit(mpt_gp *gp, const mpt_gp_fit_options *o, double *best_objective, mpt_error *err);

/* Points about to be added, their rows of the factor solved ahead over the observations already in the GP, all
 * in one pass over L per 64 points (gp/gp_ahead.c) instead of one per mpt_gp_add_many of a run of them. Then
 * mpt_gp_add_many_ahead of the next points, in order, continues those rows over the observations added since:
 * the same bits as mpt_gp_add_many (a solve's entry depends only on the rows of L before it). Rows that no
 * longer hold (L refactored or truncated, other points) are dropped and the adds solve as mpt_gp_add_many. */
typedef struct mpt_gp_ahead mpt_gp_ahead;
int mpt_gp_ahead_create(mpt_gp_ahead **out, mpt_error *err);
void mpt_gp_ahead_free(mpt_gp_ahead *a);
/* the k points X (k x dim) solved over gp's observations now; 0 or an error (out of memory: a is empty) */
int mpt_gp_ahead_solve(mpt_gp_ahead *a, const mpt_gp *gp, int k, const double *X, mpt_error *err);
/* mpt_gp_add_many with the rows solved ahead in a (NULL: none) where X are a's next points */
int mpt_gp_add_many_ahead(mpt_gp *gp, mpt_gp_ahead *a, int k, const double *X, const double *y, const double *y_all,
                          mpt_error *err);

/* Keeps candidates keep[0..k) (ascending) and drops the rest: candidate keep[j] becomes candidate j, its column of
 * V, posterior mean and variance bit for bit as before (no refactorization: O(k n_obs) copies), the dropped ones'
 * memory given back; later observations and hyperparameters act on the kept ones as on a GP created with them
 * (gp/gp_keep.c; a working set that shrinks, strategies/bo/bo_ws.c). 0 or an error (keep not ascending or out of
 * range: nothing changed). */
int mpt_gp_keep_candidates(mpt_gp *gp, int64_t k, const int64_t *keep, mpt_error *err);

#endif
