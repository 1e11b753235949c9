/* strategies/bo/bo_transfer_loo.h: whether bo's transfer predicts this device's own observations better than bo
 * without it, by leave-one-out (strategies/bo/bo_transfer_loo.c): transfer_select=loo in
 * strategies/bo/bo_transfer.c. Private to the files of strategies/bo/. */
#ifndef MPT_BO_TRANSFER_LOO_H
#define MPT_BO_TRANSFER_LOO_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* The leave-one-out log predictive densities, summed over this device's n observations (candidate ids obs[i],
 * transformed objectives t[i]), of the GP of b->gp (its kernel, lengthscales and noise) given the outputs t
 * (*plain) and t - offset (*with: the prior mean of transfer removed), each normalized by its own mean and
 * standard deviation as the GP normalizes them, the densities in t's units. At most 256 observations, evenly
 * spaced over the told order beyond that. by_corr: instead of the densities, the correlation of the leave-one-out
 * means (offset added back) with t. 0, or an error (out of memory); with fewer than 3 observations both 0. */
int bo_transfer_loo(bo_state *b, const int64_t *obs, const double *t, const double *offset, int n, int by_corr,
                    double *plain, double *with, mpt_error *err);

#endif
