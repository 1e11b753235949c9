/* gp/gp_slices_batch.c: the pool of a batch on the sliced GP (gp/gp_slices.h): one pass over every slice keeps
 * its best candidates by log EI (the order of strategies/bo/bo_pool.c's pool), merged on rank 0; then rank 0
 * gathers the merged pool's members from the slices that hold them: each one's column of V (n_obs floats)
 * and its posterior state A, B, var, so that rank 0 conditions the pool on a batch's fantasies alone
 * (gp/gp_pool.h, mpt_gp_pool_load_columns) instead of every slice's V once per pick. The same gather for any
 * candidates rank 0 names (the evaluations pending from earlier asks, mpt_gp_pool_plan_columns). */
#include <stdlib.h>
#include <string.h>
#include "gp/gp_impl.h"
#include "gp/gp_slices_impl.h"

int mpt_gp_slices_batch_pool(mpt_gp_slices *sl, const uint8_t *skip_a, const uint8_t *skip_b, double fb, double xi,
                             int P, mpt_gp_pool_item *pool, int *n_pool, mpt_error *err) {
  int64_t h[SL_HDR] = {SL_POOL, P, 1}, n_free;
  double d[2] = {fb, xi};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_pool(sl, h, skip_a, skip_b, d, pool, n_pool, &n_free, err);
  mpt_gp_slices_step_end(sl);
  return rc;
}

int mpt_gp_slices_columns(mpt_gp_slices *sl, const mpt_gp_pool_item *pool, int n, float *V, double *abv,
                          mpt_error *err) {
  int64_t h[SL_HDR] = {SL_COLUMNS};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_columns(sl, pool, n, V, abv, err);
  mpt_gp_slices_step_end(sl);
  return rc;
}

int mpt_gp_slices_cand_columns(mpt_gp_slices *sl, const int64_t *ids, int n, float *V, double *abv, mpt_error *err) {
  int64_t h[SL_HDR] = {SL_CAND_COLUMNS, n};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_cand_columns(sl, h, ids, V, abv, err);
  mpt_gp_slices_step_end(sl);
  return rc;
}

/* the slice's candidate c: its column of V into v (n_obs floats), A, B, var into abv */
static void member_column(const mpt_gp *gp, int64_t c, float *v, double *abv) {
  const float *col = gp->V + (size_t)(c / GP_VB) * (size_t)gp->cap * GP_VB + (size_t)(c % GP_VB);
  for (int i = 0; i < gp->n; i++) v[i] = col[(size_t)i * GP_VB];
  abv[0] = gp->A[c];
  abv[1] = gp->B[c];
  abv[2] = gp->var[c];
}

/* the rank whose slice holds global id c (sl->size when none) */
static int holder(const mpt_gp_slices *sl, int64_t c) {
  int r = 0;
  while (r < sl->size && c >= sl->first[r + 1]) r++;
  return r < sl->size && c >= sl->first[r] ? r : sl->size;
}

/* rank 0: how many of the n ids each rank holds (counts: size), 0 or -1 when one is outside every slice */
static int members_per_rank(const mpt_gp_slices *sl, const int64_t *ids, int n, int *counts) {
  memset(counts, 0, sizeof(int) * (size_t)sl->size);
  for (int j = 0; j < n; j++) {
    int r = holder(sl, ids[j]);
    if (r == sl->size) return -1;
    counts[r]++;
  }
  return 0;
}

/* rank 0: the gathered records (rank by rank, each rank's in want's order) into want's order; 0 or -1 when a
 * rank sent other candidates than want names */
static int unpack(const mpt_gp_slices *sl, const int64_t *want, int n, int n0, const int *counts, const int64_t *ids,
                  const float *vg, const double *ag, float *V, double *abv) {
  int *next = malloc(sizeof(int) * (size_t)sl->size), rc = next ? 0 : -1;
  for (int r = 0, at = 0; next && r < sl->size; at += counts[r++]) next[r] = at;
  for (int j = 0; rc == 0 && j < n; j++) {
    int q = next[holder(sl, want[j])]++;
    if (ids[q] != want[j]) rc = -1;
    memcpy(V + (size_t)j * n0, vg + (size_t)q * n0, sizeof(float) * (size_t)n0);
    memcpy(abv + 3 * (size_t)j, ag + 3 * (size_t)q, sizeof(double) * 3);
  }
  free(next);
  return rc;
}

/* displacements of counts (size values) times unit */
static void displace(int size, const int *counts, int unit, int *cnt, int *displs) {
  for (int r = 0, at = 0; r < size; at += counts[r++] * unit) {
    cnt[r] = counts[r] * unit;
    displs[r] = at;
  }
}

/* every rank: the columns of its k candidates mine (global ids) gathered to rank 0 into want's order (rank 0:
 * want[0..n), counts: 7 x size ints, the first size how many of want each rank holds); 0 or an error */
static int gather_columns(mpt_gp_slices *sl, const int64_t *want, int n, int *counts, const int64_t *mine, int k,
                          float *V, double *abv, mpt_error *err) {
  int size = sl->size, n0 = mpt_gp_n_obs(sl->gp);
  float *v = malloc(sizeof(float) * (size_t)(k > 0 ? k : 1) * (size_t)(n0 > 0 ? n0 : 1));
  double *a = malloc(sizeof(double) * 3 * (size_t)(k > 0 ? k : 1));
  int rc = mine && v && a ? 0 : MPT_ERR_NOMEM;
  mpt_gp_slices_work_on(sl);
  for (int i = 0; rc == 0 && i < k; i++) member_column(sl->gp, mine[i] - sl->first[sl->rank], v + (size_t)i * n0, a + 3 * (size_t)i);
  mpt_gp_slices_work_off(sl);
  int64_t *ids_g = NULL;
  float *v_g = NULL;
  double *a_g = NULL;
  if (sl->rank == 0) {
    ids_g = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    v_g = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)(n0 > 0 ? n0 : 1));
    a_g = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
    if (!ids_g || !v_g || !a_g) rc = MPT_ERR_NOMEM;
  }
  if ((rc = mpt_gp_slices_status(sl, rc, "gathering candidates' columns (out of memory)", err)) == 0) {
    int *g[6] = {NULL}; /* rank 0: counts and displacements of the three gathers */
    for (int q = 0; counts && q < 6; q++) g[q] = counts + (q + 1) * size;
    if (counts) {
      displace(size, counts, 1, g[0], g[1]);
      displace(size, counts, n0, g[2], g[3]);
      displace(size, counts, 3, g[4], g[5]);
    }
    MPI_Gatherv(mine, k, MPI_INT64_T, ids_g, g[0], g[1], MPI_INT64_T, 0, sl->comm);
    MPI_Gatherv(v, k * n0, MPI_FLOAT, v_g, g[2], g[3], MPI_FLOAT, 0, sl->comm);
    MPI_Gatherv(a, 3 * k, MPI_DOUBLE, a_g, g[4], g[5], MPI_DOUBLE, 0, sl->comm);
    mpt_gp_slices_work_on(sl);
    if (sl->rank == 0 && unpack(sl, want, n, n0, counts, ids_g, v_g, a_g, V, abv) != 0)
      rc = mpt_error_set(err, MPT_ERR_INTERNAL, "gp_slices: the slices sent other candidates than rank 0 named");
    mpt_gp_slices_work_off(sl);
  }
  free(v); free(a); free(ids_g); free(v_g); free(a_g);
  return rc;
}

int mpt_gp_slices_do_columns(mpt_gp_slices *sl, const mpt_gp_pool_item *pool, int n, float *V, double *abv,
                              mpt_error *err) {
  int k = 0, ok = 1;
  int *counts = sl->rank == 0 ? malloc(sizeof(int) * 7 * (size_t)sl->size) : NULL;
  int64_t *want = sl->rank == 0 ? malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1)) : NULL;
  mpt_gp_slices_work_on(sl);
  for (int j = 0; want && j < n; j++) want[j] = pool[j].id;
  if (sl->rank == 0) ok = counts && want && members_per_rank(sl, want, n, counts) == 0;
  mpt_gp_slices_work_off(sl);
  MPI_Bcast(&ok, 1, MPI_INT, 0, sl->comm);
  if (!ok) { free(counts); free(want); return mpt_error_set(err, MPT_ERR_INTERNAL, "gp_slices: a pool member outside the slices"); }
  MPI_Scatter(counts, 1, MPI_INT, &k, 1, MPI_INT, 0, sl->comm);
  /* a slice's members are the first k of its own pool of the last pool command (the merge keeps prefixes) */
  int64_t *mine = malloc(sizeof(int64_t) * (size_t)(k > 0 ? k : 1));
  for (int i = 0; mine && i < k && k <= sl->n_last; i++) mine[i] = sl->last[i].id;
  int rc = gather_columns(sl, want, n, counts, k <= sl->n_last ? mine : NULL, k, V, abv, err);
  free(counts); free(want); free(mine);
  return rc;
}

int mpt_gp_slices_do_cand_columns(mpt_gp_slices *sl, const int64_t *h, const int64_t *ids, float *V, double *abv,
                                  mpt_error *err) {
  int n = (int)h[1], k = 0, ok = 1, all_ok = 0;
  int64_t *all = sl->rank == 0 ? (int64_t *)ids : malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int *counts = sl->rank == 0 ? malloc(sizeof(int) * 7 * (size_t)sl->size) : NULL;
  mpt_gp_slices_work_on(sl);
  ok = sl->rank == 0 ? counts && members_per_rank(sl, ids, n, counts) == 0 : all != NULL;
  mpt_gp_slices_work_off(sl);
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, sl->comm);
  if (!all_ok) {
    if (sl->rank != 0) free(all);
    free(counts);
    return ok ? mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory on a model rank")
              : mpt_error_set(err, MPT_ERR_VALUE, "gp_slices: a candidate outside the slices (or out of memory)");
  }
  MPI_Bcast(all, n, MPI_INT64_T, 0, sl->comm);
  /* this slice's candidates among them, in rank 0's order */
  int64_t *mine = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  mpt_gp_slices_work_on(sl);
  for (int j = 0; mine && j < n; j++)
    if (holder(sl, all[j]) == sl->rank) mine[k++] = all[j];
  mpt_gp_slices_work_off(sl);
  int rc = gather_columns(sl, ids, n, counts, mine, k, V, abv, err);
  if (sl->rank != 0) free(all);
  free(counts); free(mine);
  return rc;
}
