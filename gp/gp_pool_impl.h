/* gp/gp_pool_impl.h: the state of a candidate pool (struct mpt_gp_pool, gp/gp_pool.h) and the helpers its files
 * share (private to gp/gp_pool*.c): gp_pool.c its members and loading, the normalization and the members'
 * posterior; gp_pool_fantasy.c the extra observations (the fantasies) and the predictions at candidates;
 * gp_pool_plan.c the plan of candidates to be added next, their products with the members' columns in one dgemm.
 * The pool extends the GP's factor L by its own rows (one per extra observation, packed) and keeps, per member,
 * its column of V (the GP's n_obs rows as V holds them, floats; then one row per extra observation, double) and
 * the posterior state A, B, var as the GP keeps them (gp/gp_impl.h): the same arithmetic as mpt_gp_add over P
 * candidates instead of all. */
#ifndef MPT_GP_POOL_IMPL_H
#define MPT_GP_POOL_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include "gp/gp_impl.h"
#include "gp/gp_pool.h"

struct mpt_gp_pool {
  const mpt_gp *gp;
  int n0, dim;           /* the GP's observations, inputs per point */
  int64_t n, cap;        /* members */
  int64_t *ids;
  double *X;             /* cap x dim: members' points */
  float *V0;             /* cap x n0: members' columns of the GP's V (member-major, V's floats: the products
                          * with them stream half the bytes, the same sums as in double) */
  double *V0d;           /* scratch: V0 in double for the plan's matrix product */
  double *A, *B, *var;   /* cap each */
  int nf, capf;          /* extra observations */
  double *Fv;            /* capf x cap: row j = extra observation j's row of V over the members */
  double *FL;            /* packed rows of L for the extra observations: row j has n0 + j + 1 values */
  double *fx, *fy, *fwy, *fw1; /* capf x dim points, outputs, entries of L^-1 y and L^-1 1 */
  double *l;             /* scratch: n0 + capf */
  int64_t cap_fl, cap_v0, cap_l;
  int64_t *plan_ids, plan_n, plan_next; /* mpt_gp_pool_plan_candidates, _plan_columns: the candidates, the next */
  int plan_nf0;          /* extra observations before the plan's first */
  double *plan_L, *plan_G; /* plan_n x n0: their columns of V; plan_n x n: those times the members' columns */
  double *plan_abv;      /* plan_n x 3: their A, B, var (the GP's, or given with their columns) */
  int64_t l_cand;        /* the GP candidate whose solve l holds (-1: none), with l_nf extra observations */
  int l_nf;
  double l_nn;           /* and its L_nn */
  int fixed_norm;        /* 1: the normalization leaves the extra outputs out */
  double norm_m, norm_s; /* the normalization in use (refreshed by load, add and fix_normalization) */
};

/* *ptr grown to at least need elements of size sz (kept when big enough); 0 or -1 */
int gp_pool_reserve(void **ptr, int64_t need, size_t sz);
/* mpt_gp_normalization over the GP's outputs and the extra ones (without them when fixed) */
void gp_pool_compute_normalization(const mpt_gp_pool *p, double *mean, double *scale);

/* 1 when candidate cand is the plan's next extra observation (mpt_gp_pool_plan_candidates) */
static inline int gp_pool_planned(const mpt_gp_pool *p, int64_t cand) {
  return p->plan_next < p->plan_n && p->plan_ids[p->plan_next] == cand && p->nf == p->plan_nf0 + p->plan_next;
}

/* the GP's candidate c's column of V: its row i at [i * GP_VB] */
static inline const float *gp_pool_gp_column(const mpt_gp *gp, int64_t c) {
  return gp->V + (size_t)(c / GP_VB) * (size_t)gp->cap * GP_VB + (size_t)(c % GP_VB);
}

#endif
