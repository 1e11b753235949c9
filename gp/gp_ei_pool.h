/* gp/gp_ei_pool.h: the acquisition over a range of a GP's candidates, kept as a pool of the best P: expected
 * improvement (for minimization, in normalized units, with exploration margin xi) computed exactly as bo's
 * scan computes it (strategies/bo/bo_scan.c): EI itself where z = (fb - xi - mu) / sd > -6 ("tier 1"), its
 * asymptotic logarithm below ("tier 0", only ever compared with tier 0). The pool orders by tier, then key,
 * largest first, ties by the smaller id: its first item is the candidate bo's EI scan picks. Used on each
 * model rank's slice of the candidates (gp/gp_slices.h); pools of several slices merge into one. */
#ifndef MPT_GP_EI_POOL_H
#define MPT_GP_EI_POOL_H
#include <stdint.h>
#include "gp/gp.h"

typedef struct mpt_gp_pool_item {
  double key;      /* tier 1: EI; tier 0: log EI (asymptotic form) */
  double log_ei;   /* log EI as bo's feasible_fallback computes it (both tiers; -DBL_MAX for EI 0) */
  int64_t id;      /* candidate index + the caller's offset */
  int32_t tier;
  int32_t pad;
} mpt_gp_pool_item;

/* 1 when a goes before b */
int mpt_gp_pool_before(const mpt_gp_pool_item *a, const mpt_gp_pool_item *b);

/* The best (at most) P of candidates [begin, end) of gp whose skip[c - begin] is 0 (skip may be NULL), ids
 * c + id_offset, into out (P items), sorted; returns how many. fb: the best observed output, normalized
 * ((best - m) / scale with mpt_gp_normalization's m and scale). */
int mpt_gp_ei_pool(const mpt_gp *gp, int64_t begin, int64_t end, int64_t id_offset, const uint8_t *skip, double fb,
                   double xi, int P, mpt_gp_pool_item *out);
/* The same pool ordered by log EI alone (every item tier 0, key = log_ei = mpt_gp_log_ei of the candidate),
 * ties by the smaller id: the order of the pool of a batch (strategies/bo/bo_pool.c, bo_pool_pass), whose
 * members the model ranks gather from their slices. */
int mpt_gp_log_ei_pool(const mpt_gp *gp, int64_t begin, int64_t end, int64_t id_offset, const uint8_t *skip, double fb,
                       double xi, int P, mpt_gp_pool_item *out);
/* log EI of improvement u = fb - xi - mu (normalized units) at normalized posterior variance var: sd floored
 * at 1e-12, the asymptotic form below z = u / sd = -6 (the key of bo's pool of a batch) */
double mpt_gp_log_ei(double u, double var);
/* Sorts n items and keeps the first P (or n when fewer); returns how many were kept */
int mpt_gp_pool_merge(mpt_gp_pool_item *items, int n, int P);

#endif
