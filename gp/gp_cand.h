/* gp/gp_cand.h: the candidates of a GP (private to gp/gp*.c): stored once at creation, then read by every
 * new observation's kernel row as squared scaled distances to a point. */
#ifndef MPT_GP_CAND_H
#define MPT_GP_CAND_H
#include <stddef.h>
#include <stdint.h>
#include "gp/gp.h"

typedef struct mpt_gp_cands {
  int64_t n;            /* candidates */
  int dim;
  double *X;            /* candidates by dimension: X[d * n + c] (contiguous per dimension), or NULL: */
  uint8_t *Xc;          /* when every dimension has <= 256 distinct values: codes by group (below) */
  double *Xv;           /* dim x 256: the distinct values of each dimension */
  int *nv;              /* dim: number of distinct values */
  int ng;               /* groups of dimensions: a group is a dimension and the later ones that are
                         * functions of it (the one-hot columns of an index-encoded parameter) */
  int *gfirst;          /* ng + 1: the dimensions of group g are gdim[gfirst[g] .. gfirst[g+1]) */
  int *gdim;            /* dim: the dimensions by group, ascending within a group (its first founds it) */
  uint8_t *gtup;        /* dim x 256: for member m of gdim and a code k of its group, the member's own
                         * code (into Xv) of the candidates with group code k; Xc[g * n + c] is
                         * candidate c's group code (the code of the group's first dimension) */
} mpt_gp_cands;

/* Keeps n candidates (fetched from fill blockwise, row-major): as one-byte codes when every dimension
 * has at most 256 distinct values and n > 256, else as doubles by dimension. 0, or -1 when out of memory
 * (cs is then empty: mpt_gp_cands_free is safe). */
int mpt_gp_cands_store(mpt_gp_cands *cs, int64_t n, int dim, mpt_gp_cand_fn fill, void *ctx);
void mpt_gp_cands_free(mpt_gp_cands *cs);
/* bytes held */
int64_t mpt_gp_cands_bytes(const mpt_gp_cands *cs);
/* r2[j] = sum_d ((x_d - X_{b+j,d}) inv_ls_d)^2 for j < n: dimensions summed in ascending order (a group
 * of coded dimensions sums its terms first: the same values up to rounding) */
void mpt_gp_cands_dist2(const mpt_gp_cands *cs, const double *x, const double *inv_ls, int64_t b, int64_t n,
                        double *r2);
/* 1 when point x can be stored (mpt_gp_cands_set): always with doubles; with codes when each group's first
 * dimension's value is in its table and the group's other dimensions take the values its code determines */
int mpt_gp_cands_fits(const mpt_gp_cands *cs, const double *x);
/* Candidate c becomes point x (dim values); 0, or -1 when x does not fit (nothing changed) */
int mpt_gp_cands_set(mpt_gp_cands *cs, int64_t c, const double *x);
/* r2[j] = the same for n points stored by dimension (X[d * ld + j]), vectorized across points */
void mpt_gp_dist2_row(int64_t n, int dim, const double *restrict x, const double *restrict X, size_t ld,
                      const double *restrict inv_ls, double *restrict r2);
#endif
