/* gp/gp_dist.c: the distributed factorization of a GP's observation covariance (gp/gp_dist.h): the BLACS
 * grid over a communicator, the block-cyclic matrix, pdpotrf with the serial path's jitter retry, solves,
 * the log-determinant and the replicated vectors' scatter and gather. The marginal likelihood, its gradient
 * and the posterior: gp/gp_dist_lml.c. ScaLAPACK and BLACS are Fortran/C libraries without headers in
 * Debian: their prototypes are declared here (gp/gp_dist_blacs.h). */
#include "gp/gp_dist.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp.h"
#include "gp/gp_dist_blacs.h"

int mpt_gp_dist_min_obs(void) {
  const char *e = getenv("MPT_GP_DIST_MIN_OBS");
  int v = e && *e ? atoi(e) : 0;
  return v > 0 ? v : MPT_GP_DIST_MIN_OBS;
}

int mpt_gp_dist_worth(int n, int ranks) { return ranks > 1 && n >= mpt_gp_dist_min_obs(); }

/* nprow x npcol = p with nprow the largest divisor of p not above sqrt(p) */
static void grid_shape(int p, int *nprow, int *npcol) {
  int r = 1;
  for (int k = 1; k * k <= p; k++)
    if (p % k == 0) r = k;
  *nprow = r;
  *npcol = p / r;
}

int mpt_gp_dist_create(MPI_Comm comm, int n, int nb, mpt_gp_dist **out, mpt_error *err) {
  *out = NULL;
  if (n < 1) return mpt_error_set(err, MPT_ERR_VALUE, "gp_dist: %d observations (need >= 1)", n);
  mpt_gp_dist *d = calloc(1, sizeof *d);
  if (!d) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: out of memory");
  int p;
  MPI_Comm_size(comm, &p);
  d->comm = comm;
  d->n = n;
  d->nb = nb > 0 ? nb : 64;
  grid_shape(p, &d->nprow, &d->npcol);
  d->handle = Csys2blacs_handle(comm);
  d->ctxt = d->handle;
  Cblacs_gridinit(&d->ctxt, "Row", d->nprow, d->npcol);
  Cblacs_gridinfo(d->ctxt, &d->nprow, &d->npcol, &d->myrow, &d->mycol);
  int zero = 0, info = 0;
  d->mloc = numroc_(&n, &d->nb, &d->myrow, &zero, &d->nprow);
  d->nloc = numroc_(&n, &d->nb, &d->mycol, &zero, &d->npcol);
  d->lld = d->mloc > 1 ? d->mloc : 1;
  descinit_(d->desc, &n, &n, &d->nb, &d->nb, &zero, &zero, &d->ctxt, &d->lld, &info);
  size_t sz = (size_t)d->lld * (size_t)(d->nloc > 0 ? d->nloc : 1);
  d->A = malloc(sizeof(double) * sz);
  int ok = d->A != NULL && info == 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all) {
    mpt_gp_dist_free(d);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: no memory for the %d x %d covariance (or bad grid: %d)", n, n,
                         info);
  }
  *out = d;
  return 0;
}

void mpt_gp_dist_free(mpt_gp_dist *d) {
  if (!d) return;
  Cblacs_gridexit(d->ctxt);
  Cfree_blacs_system_handle(d->handle);
  free(d->A);
  free(d);
}

int mpt_gp_dist_n(const mpt_gp_dist *d) { return d->n; }
int64_t mpt_gp_dist_local_size(const mpt_gp_dist *d) { return (int64_t)d->mloc * d->nloc; }

int mpt_gp_dist_row(const mpt_gp_dist *d, int li) {
  return (li / d->nb) * d->nprow * d->nb + d->myrow * d->nb + li % d->nb;
}
int mpt_gp_dist_col(const mpt_gp_dist *d, int lj) {
  return (lj / d->nb) * d->npcol * d->nb + d->mycol * d->nb + lj % d->nb;
}

double mpt_gp_dist_dist2(const double *a, const double *b, const double *inv_ls, int dim) {
  double s = 0; /* gp/gp_factor.c's dist2: the same sums in the same order */
  for (int q = 0; q < dim; q++) {
    double t = (a[q] - b[q]) * inv_ls[q];
    s += t * t;
  }
  return s;
}

/* the local blocks of K with noise ne on the diagonal (lower triangle: pdpotrf reads no more) */
static void fill_cov(mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, double ne) {
  for (int lj = 0; lj < d->nloc; lj++) {
    int j = mpt_gp_dist_col(d, lj);
    const double *xj = X + (size_t)j * h->dim;
    double *col = d->A + (size_t)lj * d->lld;
    for (int li = 0; li < d->mloc; li++) {
      int i = mpt_gp_dist_row(d, li);
      if (i < j) { col[li] = 0.0; continue; }
      if (i == j) { col[li] = h->variance + ne; continue; }
      double r2 = mpt_gp_dist_dist2(X + (size_t)i * h->dim, xj, h->inv_ls, h->dim);
      col[li] = h->variance * mpt_gp_kernel_r2(h->kernel, r2);
    }
  }
}

int mpt_gp_dist_factor(mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, mpt_error *err) {
  double ne = h->noise + MPT_GP_JITTER * h->variance;
  int one = 1;
  d->factored = 0;
  for (int attempt = 0; attempt < 6; attempt++) {
    fill_cov(d, h, X, ne);
    int info = 0, worst = 0;
    pdpotrf_("L", &d->n, d->A, &one, &one, d->desc, &info);
    MPI_Allreduce(&info, &worst, 1, MPI_INT, MPI_MAX, d->comm);
    if (worst == 0) {
      d->factored = 1;
      d->noise_eff = ne;
      return 0;
    }
    if (worst < 0) break;
    ne = ne * 100 + 1e-10 * h->variance; /* as the serial factor_obs */
  }
  return mpt_error_set(err, MPT_ERR_VALUE, "gp_dist: covariance matrix of %d observations is not positive definite",
                       d->n);
}

double mpt_gp_dist_logdet(const mpt_gp_dist *d) {
  double s = 0, all = 0;
  for (int lj = 0; lj < d->nloc; lj++) {
    int j = mpt_gp_dist_col(d, lj);
    for (int li = 0; li < d->mloc; li++)
      if (mpt_gp_dist_row(d, li) == j) s += log(d->A[(size_t)lj * d->lld + li]);
  }
  MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, d->comm);
  return 2.0 * all;
}

/* a replicated n-vector as an n x 1 block-cyclic matrix (on the grid's first column): its descriptor and
 * local part (NULL on the other columns), or -1 out of memory (on any rank) */
static int vec_scatter(const mpt_gp_dist *d, const double *b, int *desc, double **loc) {
  int zero = 0, one = 1, info = 0;
  descinit_(desc, &d->n, &one, &d->nb, &d->nb, &zero, &zero, (int *)&d->ctxt, (int *)&d->lld, &info);
  *loc = d->mycol == 0 ? malloc(sizeof(double) * (size_t)d->lld) : NULL;
  int ok = d->mycol != 0 || *loc, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, d->comm);
  if (!all) { free(*loc); *loc = NULL; return -1; }
  for (int li = 0; *loc && li < d->mloc; li++) (*loc)[li] = b[mpt_gp_dist_row(d, li)];
  return 0;
}

/* the n x 1 matrix back into a replicated vector x (frees loc) */
static void vec_gather(const mpt_gp_dist *d, double *loc, double *x) {
  memset(x, 0, sizeof(double) * (size_t)d->n);
  for (int li = 0; loc && li < d->mloc; li++) x[mpt_gp_dist_row(d, li)] = loc[li];
  MPI_Allreduce(MPI_IN_PLACE, x, d->n, MPI_DOUBLE, MPI_SUM, d->comm);
  free(loc);
}

int mpt_gp_dist_solve(const mpt_gp_dist *d, const double *b, double *x, mpt_error *err) {
  int desc[9], one = 1, info = 0;
  double *loc;
  if (!d->factored) return mpt_error_set(err, MPT_ERR_VALUE, "gp_dist: solve before a factorization");
  if (vec_scatter(d, b, desc, &loc)) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: out of memory");
  pdpotrs_("L", &d->n, &one, d->A, &one, &one, d->desc, loc, &one, &one, desc, &info);
  vec_gather(d, loc, x);
  return info == 0 ? 0 : mpt_error_set(err, MPT_ERR_INTERNAL, "gp_dist: pdpotrs failed (info %d)", info);
}

int mpt_gp_dist_lower_solve(const mpt_gp_dist *d, const double *b, double *z, mpt_error *err) {
  int desc[9], one = 1;
  double *loc, alpha = 1.0;
  if (!d->factored) return mpt_error_set(err, MPT_ERR_VALUE, "gp_dist: solve before a factorization");
  if (vec_scatter(d, b, desc, &loc)) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: out of memory");
  pdtrsm_("L", "L", "N", "N", &d->n, &one, &alpha, d->A, &one, &one, d->desc, loc, &one, &one, desc);
  vec_gather(d, loc, z);
  return 0;
}

void mpt_gp_dist_gather_lower(const mpt_gp_dist *d, double *L) {
  size_t n = (size_t)d->n;
  memset(L, 0, sizeof(double) * n * n);
  for (int lj = 0; lj < d->nloc; lj++) {
    int j = mpt_gp_dist_col(d, lj);
    for (int li = 0; li < d->mloc; li++) {
      int i = mpt_gp_dist_row(d, li);
      if (i >= j) L[(size_t)i * n + (size_t)j] = d->A[(size_t)lj * d->lld + li];
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, L, (int)(n * n), MPI_DOUBLE, MPI_SUM, d->comm);
}
