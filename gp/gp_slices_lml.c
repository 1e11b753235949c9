/* gp/gp_slices_lml.c: the sliced GP's commands over the observations (gp/gp_slices.h): the log marginal
 * likelihood with ScaLAPACK over every model rank (gp/gp_dist.h) above the crossover, and each rank's memory. */
#include <stdlib.h>
#include <sys/resource.h>
#include "gp/gp_dist.h"
#include "gp/gp_slices_impl.h"

int mpt_gp_slices_lml(void *ctx, const mpt_gp *gp, const double *ls, double variance, double noise, double *lml,
                      mpt_error *err) {
  mpt_gp_slices *sl = ctx;
  int n = mpt_gp_n_obs(gp), dim = sl->dim;
  if (!mpt_gp_dist_worth(n, sl->size)) return 1; /* the serial path */
  int rc = mpt_gp_slices_sync(sl, gp, err);
  if (rc) return rc;
  double *hyp = malloc(sizeof(double) * (size_t)(dim + 2));
  if (!hyp) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory");
  for (int q = 0; q < dim; q++) hyp[q] = ls[q];
  hyp[dim] = variance;
  hyp[dim + 1] = noise;
  int64_t h[SL_HDR] = {SL_LML, n};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  rc = mpt_gp_slices_do_lml(sl, h, hyp, lml, err);
  mpt_gp_slices_step_end(sl);
  free(hyp);
  return rc;
}

/* every rank: the lml of its slice GP's observations (replicated) under hyp, on the distributed factor */
static int dist_lml(mpt_gp_slices *sl, const double *hyp, double *lml, mpt_error *err) {
  int n = mpt_gp_n_obs(sl->gp), dim = sl->dim;
  double *inv_ls = malloc(sizeof(double) * (size_t)dim), *z = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  int ok = inv_ls && z, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, sl->comm);
  mpt_gp_dist *d = NULL;
  int rc = all ? mpt_gp_dist_create(sl->comm, n, 64, &d, err) : mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory");
  if (rc == 0) {
    double m, s;
    const double *y = mpt_gp_obs_outputs(sl->gp);
    mpt_gp_normalization(sl->gp, &m, &s);
    for (int i = 0; i < n; i++) z[i] = (y[i] - m) / s;
    for (int q = 0; q < dim; q++) inv_ls[q] = 1.0 / hyp[q];
    mpt_gp_dist_hyper hh = {mpt_gp_kernel_of(sl->gp), dim, inv_ls, hyp[dim], hyp[dim + 1]};
    rc = mpt_gp_dist_lml(d, &hh, mpt_gp_obs_points(sl->gp), z, lml, NULL, err);
    mpt_gp_dist_free(d);
  }
  free(inv_ls);
  free(z);
  return rc;
}

int mpt_gp_slices_do_lml(mpt_gp_slices *sl, const int64_t *h, const double *hyp, double *lml, mpt_error *err) {
  double *buf = sl->rank == 0 ? NULL : malloc(sizeof(double) * (size_t)(sl->dim + 2));
  if (sl->rank != 0) hyp = buf;
  MPI_Bcast((void *)hyp, hyp ? sl->dim + 2 : 0, MPI_DOUBLE, 0, sl->comm);
  (void)h;
  /* a factorization that fails (not positive definite) fails on every rank alike: its own error, not a
   * model rank's */
  mpt_gp_slices_work_on(sl); /* ScaLAPACK's own messages count as compute */
  int rc = hyp ? dist_lml(sl, hyp, lml, err) : MPT_ERR_NOMEM;
  mpt_gp_slices_work_off(sl);
  free(buf);
  if (rc == MPT_ERR_VALUE) return rc;
  return mpt_gp_slices_status(sl, rc, "the distributed log marginal likelihood", err);
}

int mpt_gp_slices_memory(mpt_gp_slices *sl, int64_t *bytes, int64_t *rss, mpt_error *err) {
  int64_t h[SL_HDR] = {SL_MEMORY};
  mpt_gp_slices_step_begin(sl);
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  int rc = mpt_gp_slices_do_memory(sl, bytes, rss, err);
  mpt_gp_slices_step_end(sl);
  return rc;
}

int mpt_gp_slices_do_memory(mpt_gp_slices *sl, int64_t *bytes, int64_t *rss, mpt_error *err) {
  (void)err;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  int64_t b = mpt_gp_bytes(sl->gp), r = (int64_t)ru.ru_maxrss;
  MPI_Gather(&b, 1, MPI_INT64_T, bytes, 1, MPI_INT64_T, 0, sl->comm);
  MPI_Gather(&r, 1, MPI_INT64_T, rss, 1, MPI_INT64_T, 0, sl->comm);
  return 0;
}
