/* strategies/bo/bo_multitask.h: a two-task intrinsic coregionalization model (ICM, the two-task case of GPTune's
 * LCM) of this device ("this class") and the related sources pooled ("the others"), with one learned
 * between-task correlation (strategies/bo/bo_multitask.c). bo's transfer (strategies/bo/bo_transfer.c) uses
 * it with transfer_model=icm. Private to the files of strategies/bo/. */
#ifndef MPT_BO_MULTITASK_H
#define MPT_BO_MULTITASK_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* The task correlation rho in [0, 0.99] that maximizes the marginal likelihood of this device's n observations
 * (candidate ids obs[i], transformed objectives t[i]; the GP inputs and hyperparameters of b->gp) under
 *   k((x, s), (x', s')) = B[s, s'] k(x, x'),  B = [[1, rho], [rho, 1]],
 * given the others' values col[c] (a column over the candidates, standardized) at the m related configurations
 * others[] (treated as observed with a small noise). Conditioned on the others, this device's outputs have the
 * mean rho * col(x) and the covariance k(x, x') - rho^2 k_o(x)^T K_oo^-1 k_o(x'): where the others measured
 * nearby, only (1 - rho^2) of the variance is left; far from their data, all of it. rho is the best of a grid.
 * *sd_t gets the standard deviation of t (the prior mean in t's units is rho * sd_t * col). 0, or an error
 * (out of memory); with fewer than 3 observations or constant outputs *rho is 0. */
int bo_icm_correlation(bo_state *b, const int64_t *obs, const double *t, int n, const double *col,
                       const int64_t *others, int64_t m, double *rho, double *sd_t, mpt_error *err);

/* K[i * nb + j] = k(A_i, B_j) with unit variance: kernel (mpt_gp_kernel), inverse lengthscales inv_ls (D of them),
 * points A (na x D) and B (nb x D) row-major; shared with strategies/bo/bo_transfer_loo.c */
void bo_kernel_matrix(int kernel, const double *inv_ls, int D, const double *A, int na, const double *B, int nb,
                      double *K);

#endif
