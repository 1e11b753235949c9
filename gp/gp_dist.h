/* gp/gp_dist.h: the covariance of a GP's observations factorized with ScaLAPACK over a communicator (the
 * model ranks): K = variance * k(X, X) + (noise + jitter) I, block-cyclic on a BLACS process grid over every
 * rank of the communicator, pdpotrf; solves (pdpotrs, pdtrsm), the log-determinant, the log marginal
 * likelihood and its gradient with respect to the log-hyperparameters (K^-1 by pdpotri), and the posterior
 * mean and variance at given points. The same covariance, jitter and retry as the serial path (gp/gp_factor.c):
 * the two agree to rounding.
 *
 * Every function is collective over the communicator; the points X (n x dim, row-major), y and the outputs
 * are replicated on every rank (n values, small), the n x n matrix is distributed: each rank holds about
 * n^2 / P doubles. Below MPT_GP_DIST_MIN_OBS observations the serial LAPACK path is faster on the ranks
 * measured (docs/PERFORMANCE.md, "Distributed GP"): mpt_gp_dist_worth says which to take. */
#ifndef MPT_GP_DIST_H
#define MPT_GP_DIST_H
#include <mpi.h>
#include <stdint.h>
#include "spaces/sys/error.h"

/* The crossover measured on the idle 2-core dev VM (2 ranks: pdpotrf against serial dpotrf, docs/PERFORMANCE.md):
 * below it the serial path. Machine-dependent: the environment variable MPT_GP_DIST_MIN_OBS=N replaces it. */
#define MPT_GP_DIST_MIN_OBS 2000
/* the crossover in use (MPT_GP_DIST_MIN_OBS, or the environment's) */
int mpt_gp_dist_min_obs(void);

typedef struct mpt_gp_dist mpt_gp_dist;

typedef struct mpt_gp_dist_hyper {
  int kernel;            /* mpt_gp_kernel */
  int dim;
  const double *inv_ls;  /* dim: 1 / lengthscale */
  double variance, noise;
} mpt_gp_dist_hyper;

/* 1 when n observations on a communicator of `ranks` ranks should take the distributed path */
int mpt_gp_dist_worth(int n, int ranks);

/* A grid over every rank of comm for n x n matrices in blocks of nb (0: 64). Collective. */
int mpt_gp_dist_create(MPI_Comm comm, int n, int nb, mpt_gp_dist **out, mpt_error *err);
void mpt_gp_dist_free(mpt_gp_dist *d);   /* collective */
int mpt_gp_dist_n(const mpt_gp_dist *d);
/* doubles of the matrix this rank holds */
int64_t mpt_gp_dist_local_size(const mpt_gp_dist *d);

/* K(X, X) built and factorized (lower Cholesky); adds jitter as the serial path does when K is not
 * positive definite. 0 or an error (the same on every rank). */
int mpt_gp_dist_factor(mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, mpt_error *err);
/* log det K from the factor */
double mpt_gp_dist_logdet(const mpt_gp_dist *d);
/* x = K^-1 b (pdpotrs), b and x replicated (n values; may alias) */
int mpt_gp_dist_solve(const mpt_gp_dist *d, const double *b, double *x, mpt_error *err);
/* z = L^-1 b (pdtrsm), replicated */
int mpt_gp_dist_lower_solve(const mpt_gp_dist *d, const double *b, double *z, mpt_error *err);
/* the factor's lower triangle into L (n x n row-major, upper part zero) on every rank: for tests */
void mpt_gp_dist_gather_lower(const mpt_gp_dist *d, double *L);

/* Factorizes with h and returns the log marginal likelihood of y (normalized outputs, n values) and, when
 * grad is not NULL, its gradient: grad[0..dim) w.r.t. log lengthscale d, grad[dim] w.r.t. log variance,
 * grad[dim + 1] w.r.t. log noise (0.5 tr((a a^T - K^-1) dK/dtheta), a = K^-1 y). */
int mpt_gp_dist_lml(mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, const double *y, double *lml,
                    double *grad, mpt_error *err);

/* Posterior at nc points C (nc x dim, replicated) after mpt_gp_dist_factor with the same h: mean[c] = m0 +
 * k(C_c, X) alpha (alpha = K^-1 (y - m0), given) and var[c] = variance - |L^-1 k(X, C_c)|^2 (clipped at 0),
 * replicated; the n x nc cross-covariance is distributed too. */
int mpt_gp_dist_posterior(const mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, const double *alpha,
                          double m0, int nc, const double *C, double *mean, double *var, mpt_error *err);

#endif
