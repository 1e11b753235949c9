/* gp/gp_slices_ops.c: the sliced GP's commands on the candidates (gp/gp_slices.h): the sync of the slices with
 * rank 0's GP, the pool of the best candidates by EI, one candidate's posterior, the sum of the posterior
 * variances; each as rank 0's call (the header broadcast) and every rank's part. */
#include <stdlib.h>
#include <string.h>
#include "gp/gp_slices_impl.h"

static int64_t slice_n(const mpt_gp_slices *sl) { return sl->first[sl->rank + 1] - sl->first[sl->rank]; }

void mpt_gp_slices_scatter_skip(mpt_gp_slices *sl, const uint8_t *a, const uint8_t *b) {
  int *counts = NULL, *displs = NULL;
  if (sl->rank == 0) {
    counts = malloc(sizeof(int) * (size_t)sl->size);
    displs = malloc(sizeof(int) * (size_t)sl->size);
    for (int r = 0; counts && displs && r < sl->size; r++) {
      counts[r] = (int)(sl->first[r + 1] - sl->first[r]);
      displs[r] = (int)sl->first[r];
    }
    mpt_gp_slices_work_on(sl);
    for (int64_t c = 0; c < sl->n_cand; c++) sl->skip_all[c] = (a && a[c]) || (b && b[c]);
    mpt_gp_slices_work_off(sl);
  }
  int ok = sl->rank != 0 || (counts && displs);
  if (ok) MPI_Scatterv(sl->skip_all, counts, displs, MPI_UINT8_T, sl->skip, (int)slice_n(sl), MPI_UINT8_T, 0, sl->comm);
  free(counts);
  free(displs);
}

/* the mirror's copy of n points and outputs, and the hyperparameters (rank 0); 0 or -1 out of memory */
static int mirror_keep(mpt_gp_slices *sl, int n, const double *X, const double *y, const double *hyp) {
  if (n > sl->cap_s) {
    int cap = n * 2;
    double *Xs = realloc(sl->Xs, sizeof(double) * (size_t)cap * (size_t)sl->dim);
    if (Xs) sl->Xs = Xs;
    double *ys = realloc(sl->ys, sizeof(double) * (size_t)cap);
    if (ys) sl->ys = ys;
    if (!Xs || !ys) return -1;
    sl->cap_s = cap;
  }
  if (n > 0) {
    memcpy(sl->Xs, X, sizeof(double) * (size_t)n * (size_t)sl->dim);
    memcpy(sl->ys, y, sizeof(double) * (size_t)n);
  }
  memcpy(sl->hyp, hyp, sizeof(double) * (size_t)(sl->dim + 2));
  sl->n_s = n;
  return 0;
}

int mpt_gp_slices_sync(mpt_gp_slices *sl, const mpt_gp *gp, mpt_error *err) {
  int n = mpt_gp_n_obs(gp), dim = sl->dim, p = 0;
  const double *X = mpt_gp_obs_points(gp), *y = mpt_gp_obs_outputs(gp);
  double *hyp = malloc(sizeof(double) * (size_t)(dim + 2));
  if (!hyp) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory");
  mpt_gp_get_hyper(gp, hyp, &hyp[dim], &hyp[dim + 1]);
  while (p < n && p < sl->n_s && memcmp(X + (size_t)p * dim, sl->Xs + (size_t)p * dim, sizeof(double) * dim) == 0) p++;
  int outs = p > 0 && memcmp(y, sl->ys, sizeof(double) * (size_t)p) != 0;
  int hc = memcmp(hyp, sl->hyp, sizeof(double) * (size_t)(dim + 2)) != 0;
  int rc = 0;
  if (p < n || p < sl->n_s || outs || hc) {
    int64_t h[SL_HDR] = {SL_SYNC, p, n - p, outs, hc, n};
    mpt_gp_slices_step_begin(sl);
    MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
    rc = mpt_gp_slices_do_sync(sl, h, X ? X + (size_t)p * dim : NULL, y, hyp, err);
    mpt_gp_slices_step_end(sl);
    if (rc == 0 && mirror_keep(sl, n, X, y, hyp) != 0) rc = mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory");
    if (rc) sl->n_s = 0; /* the next sync starts over */
  }
  free(hyp);
  return rc;
}

/* the GP ops that replay the sync on a slice: truncate to p, add nn points (in one pass over the slice's V,
 * mpt_gp_add_many: nn single adds to rounding, the same sums as rank 0's, the last with every output replaced when outs), the outputs,
 * the hyperparameters */
static int replay_sync(mpt_gp *gp, int dim, int p, int nn, int outs, int hc, const double *Xn, const double *y,
                       const double *hyp, mpt_error *err) {
  int rc = p < mpt_gp_n_obs(gp) ? mpt_gp_truncate(gp, p, err) : 0;
  if (rc == 0 && nn > 0) rc = mpt_gp_add_many(gp, nn, Xn, y + p, outs ? y : NULL, err);
  if (rc == 0 && outs && nn == 0) rc = mpt_gp_set_outputs(gp, y, err);
  if (rc == 0 && hc) rc = mpt_gp_set_hyper(gp, hyp, hyp[dim], hyp[dim + 1], err);
  return rc;
}

int mpt_gp_slices_do_sync(mpt_gp_slices *sl, const int64_t *h, const double *Xn, const double *y, const double *hyp,
                          mpt_error *err) {
  int p = (int)h[1], nn = (int)h[2], outs = (int)h[3], hc = (int)h[4], n = (int)h[5], dim = sl->dim;
  double *buf = NULL;
  if (sl->rank != 0) { /* a server's copies of what rank 0 sends */
    buf = malloc(sizeof(double) * ((size_t)nn * dim + (size_t)n + (size_t)dim + 2));
    if (!buf) return mpt_gp_slices_status(sl, mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory"), "sync", err);
    Xn = buf;
    y = buf + (size_t)nn * dim;
    hyp = y + n;
  }
  MPI_Bcast((void *)Xn, nn * dim, MPI_DOUBLE, 0, sl->comm);
  MPI_Bcast((void *)y, n, MPI_DOUBLE, 0, sl->comm);
  MPI_Bcast((void *)hyp, dim + 2, MPI_DOUBLE, 0, sl->comm);
  mpt_gp_slices_work_on(sl);
  int rc = replay_sync(sl->gp, dim, p, nn, outs, hc, Xn, y, hyp, err);
  mpt_gp_slices_work_off(sl);
  free(buf);
  return mpt_gp_slices_status(sl, rc, "taking in the observations", err);
}

int mpt_gp_slices_pool(mpt_gp_slices *sl, const uint8_t *skip_a, const uint8_t *skip_b, double fb, double xi,
                       int P, mpt_gp_pool_item *pool, int *n_pool, int64_t *n_free, mpt_error *err) {
  int64_t h[SL_HDR] = {SL_POOL, P, 0};
  double d[2] = {fb, xi};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_pool(sl, h, skip_a, skip_b, d, pool, n_pool, n_free, err);
  mpt_gp_slices_step_end(sl);
  return rc;
}

/* rank 0: every rank's n items (bytes) gathered into all (size * P items), merged into pool; how many kept */
static int gather_pool(mpt_gp_slices *sl, const mpt_gp_pool_item *mine, int n, int P, mpt_gp_pool_item *all,
                       mpt_gp_pool_item *pool) {
  int bytes = n * (int)sizeof *mine, *counts = NULL, *displs = NULL, total = 0;
  if (sl->rank == 0) {
    counts = malloc(sizeof(int) * (size_t)sl->size);
    displs = malloc(sizeof(int) * (size_t)sl->size);
  }
  MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, sl->comm);
  for (int r = 0; sl->rank == 0 && r < sl->size; r++) {
    displs[r] = total;
    total += counts[r];
  }
  MPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, sl->comm);
  int kept = 0;
  if (sl->rank == 0) {
    mpt_gp_slices_work_on(sl);
    kept = mpt_gp_pool_merge(all, total / (int)sizeof *mine, P);
    memcpy(pool, all, sizeof *pool * (size_t)kept);
    mpt_gp_slices_work_off(sl);
  }
  free(counts);
  free(displs);
  return kept;
}

int mpt_gp_slices_do_pool(mpt_gp_slices *sl, const int64_t *h, const uint8_t *a, const uint8_t *b, const double *fbxi,
                          mpt_gp_pool_item *pool, int *n_pool, int64_t *n_free, mpt_error *err) {
  double d[2] = {0, 0};
  if (fbxi) memcpy(d, fbxi, sizeof d);
  MPI_Bcast(d, 2, MPI_DOUBLE, 0, sl->comm);
  mpt_gp_slices_scatter_skip(sl, a, b);
  int P = (int)h[1];
  int64_t ns = slice_n(sl), nf = 0;
  if (P > sl->cap_last) { /* kept: mpt_gp_slices_columns sends the columns of its first items */
    mpt_gp_pool_item *t = realloc(sl->last, sizeof *t * (size_t)P);
    if (t) { sl->last = t; sl->cap_last = P; }
  }
  sl->n_last = 0;
  mpt_gp_pool_item *mine = sl->last, *all = sl->rank == 0 ? malloc(sizeof *all * (size_t)(P > 0 ? P : 1) * (size_t)sl->size) : NULL;
  int ok = (P <= 0 || sl->cap_last >= P) && (sl->rank != 0 || all), rc = ok ? 0 : MPT_ERR_NOMEM;
  if ((rc = mpt_gp_slices_status(sl, rc, "the candidates' pool (out of memory)", err)) != 0) { free(all); return rc; }
  mpt_gp_slices_work_on(sl);
  int n = h[2] ? mpt_gp_log_ei_pool(sl->gp, 0, ns, sl->first[sl->rank], sl->skip, d[0], d[1], P, mine)
               : mpt_gp_ei_pool(sl->gp, 0, ns, sl->first[sl->rank], sl->skip, d[0], d[1], P, mine);
  sl->n_last = n;
  for (int64_t c = 0; c < ns; c++) nf += !sl->skip[c];
  mpt_gp_slices_work_off(sl);
  MPI_Reduce(&nf, n_free, 1, MPI_INT64_T, MPI_SUM, 0, sl->comm);
  *n_pool = gather_pool(sl, mine, n, P, all, pool);
  free(all);
  return 0;
}

int mpt_gp_slices_predict(mpt_gp_slices *sl, int64_t c, double *mean, double *sd, mpt_error *err) {
  int64_t h[SL_HDR] = {SL_PREDICT, c};
  double ms[2];
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_predict(sl, h, ms, err);
  mpt_gp_slices_step_end(sl);
  *mean = ms[0];
  *sd = ms[1];
  return rc;
}

int mpt_gp_slices_do_predict(mpt_gp_slices *sl, const int64_t *h, double *ms, mpt_error *err) {
  (void)err;
  double mine[2] = {0, 0};
  int64_t c = h[1] - sl->first[sl->rank];
  mpt_gp_slices_work_on(sl);
  if (c >= 0 && c < slice_n(sl)) mpt_gp_predict_block(sl->gp, c, c + 1, &mine[0], &mine[1]);
  mpt_gp_slices_work_off(sl);
  MPI_Reduce(mine, ms, 2, MPI_DOUBLE, MPI_SUM, 0, sl->comm);
  return 0;
}

int mpt_gp_slices_variance_sum(mpt_gp_slices *sl, const uint8_t *skip_a, const uint8_t *skip_b, double *sum,
                               int64_t *count, mpt_error *err) {
  int64_t h[SL_HDR] = {SL_VARSUM};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_varsum(sl, skip_a, skip_b, sum, count, err);
  mpt_gp_slices_step_end(sl);
  return rc;
}

int mpt_gp_slices_do_varsum(mpt_gp_slices *sl, const uint8_t *a, const uint8_t *b, double *sum, int64_t *count,
                            mpt_error *err) {
  (void)err;
  mpt_gp_slices_scatter_skip(sl, a, b);
  int64_t cnt = 0;
  mpt_gp_slices_work_on(sl);
  double s = mpt_gp_variance_sum(sl->gp, sl->skip, &cnt);
  mpt_gp_slices_work_off(sl);
  MPI_Reduce(&s, sum, 1, MPI_DOUBLE, MPI_SUM, 0, sl->comm);
  MPI_Reduce(&cnt, count, 1, MPI_INT64_T, MPI_SUM, 0, sl->comm);
  return 0;
}
