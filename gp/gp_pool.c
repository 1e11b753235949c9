/* gp/gp_pool.c: a pool of a GP's candidates conditioned on extra observations (gp/gp_pool.h). The pool
 * extends the GP's factor L by its own rows (one per extra observation, packed) and keeps, per member,
 * its column of V (the GP's n_obs rows as V holds them, floats; then one row per extra observation, double) and the posterior
 * state A, B, var as the GP keeps them (gp/gp_impl.h): the same arithmetic as mpt_gp_add over P
 * candidates instead of all. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_hot.h"
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

static void normalization(const mpt_gp_pool *p, double *mean, double *scale);

int mpt_gp_pool_create(mpt_gp_pool **out, mpt_error *err) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for a candidate pool");
}

void mpt_gp_pool_free(mpt_gp_pool *p) {
  if (!p) return;
  free(p->ids); free(p->X); free(p->V0); free(p->V0d); free(p->A); free(p->B); free(p->var);
  free(p->Fv); free(p->FL); free(p->fx); free(p->fy); free(p->fwy); free(p->fw1); free(p->l);
  free(p->plan_ids); free(p->plan_L); free(p->plan_G); free(p->plan_abv);
  free(p);
}

/* *ptr grown to at least need elements of size sz (kept when big enough); 0 or -1 */
static int reserve(void **ptr, int64_t need, size_t sz) {
  void *q = realloc(*ptr, sz * (size_t)(need > 0 ? need : 1));
  if (!q) return -1;
  *ptr = q;
  return 0;
}

/* room for n members of gp (n0 observations) and no extra observation yet */
static int room_members(mpt_gp_pool *p, const mpt_gp *gp, int64_t n) {
  int64_t nv0 = n * (int64_t)gp->n;
  if (n > p->cap) {
    if (reserve((void **)&p->ids, n, sizeof(int64_t)) || reserve((void **)&p->X, n * gp->dim, sizeof(double)) ||
        reserve((void **)&p->A, n, sizeof(double)) || reserve((void **)&p->B, n, sizeof(double)) ||
        reserve((void **)&p->var, n, sizeof(double)))
      return -1;
    p->cap = n;
    p->capf = 0; /* Fv's rows are cap long: regrown at the first extra observation */
  }
  if (nv0 > p->cap_v0) {
    if (reserve((void **)&p->V0, nv0, sizeof(float))) return -1;
    p->cap_v0 = nv0;
  }
  return 0;
}

/* the pool emptied for n members of gp, no extra observation; 0 or an error */
static int load_start(mpt_gp_pool *p, const mpt_gp *gp, int64_t n, mpt_error *err) {
  if (room_members(p, gp, n)) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for a pool of %lld candidates", (long long)n);
  p->gp = gp;
  p->n0 = gp->n;
  p->dim = gp->dim;
  p->n = n;
  p->nf = 0;
  p->l_cand = -1;
  p->plan_n = p->plan_next = 0;
  return 0;
}

int mpt_gp_pool_load(mpt_gp_pool *p, const mpt_gp *gp, const int64_t *ids, const double *X, int64_t n,
                     mpt_error *err) {
  int rc = load_start(p, gp, n, err);
  if (rc) return rc;
  for (int64_t j = 0; j < n; j++) {
    int64_t c = ids[j];
    if (c < 0 || c >= gp->n_cand) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
    p->ids[j] = c;
    const float *col = gp->V + (size_t)(c / GP_VB) * (size_t)gp->cap * GP_VB + (size_t)(c % GP_VB);
    float *v0 = p->V0 + (size_t)j * (size_t)p->n0;
    for (int i = 0; i < p->n0; i++) v0[i] = col[(size_t)i * GP_VB];
    p->A[j] = gp->A[c];
    p->B[j] = gp->B[c];
    p->var[j] = gp->var[c];
  }
  memcpy(p->X, X, sizeof(double) * (size_t)n * (size_t)p->dim);
  normalization(p, &p->norm_m, &p->norm_s);
  return 0;
}

int mpt_gp_pool_load_columns(mpt_gp_pool *p, const mpt_gp *gp, const int64_t *ids, const double *X, const float *V,
                             const double *abv, int64_t n, mpt_error *err) {
  int rc = load_start(p, gp, n, err);
  if (rc) return rc;
  for (int64_t j = 0; j < n; j++) {
    p->ids[j] = ids[j];
    for (int i = 0; i < p->n0; i++) p->V0[(size_t)j * p->n0 + i] = V[(size_t)j * p->n0 + i];
    p->A[j] = abv[3 * j];
    p->B[j] = abv[3 * j + 1];
    p->var[j] = abv[3 * j + 2];
  }
  memcpy(p->X, X, sizeof(double) * (size_t)n * (size_t)p->dim);
  normalization(p, &p->norm_m, &p->norm_s);
  return 0;
}

/* room for one more extra observation; 0 or -1 */
static int room_extra(mpt_gp_pool *p) {
  int64_t nfl = (int64_t)(p->nf + 1) * p->n0 + (int64_t)(p->nf + 1) * (p->nf + 2) / 2;
  if (p->n0 + p->nf + 2 > p->cap_l) {
    if (reserve((void **)&p->l, 2 * (p->n0 + p->nf + 2), sizeof(double))) return -1;
    p->cap_l = 2 * (p->n0 + p->nf + 2);
  }
  if (nfl > p->cap_fl) {
    if (reserve((void **)&p->FL, 2 * nfl, sizeof(double))) return -1;
    p->cap_fl = 2 * nfl;
  }
  if (p->nf < p->capf) return 0;
  int nc = p->capf ? 2 * p->capf : 16;
  if (nc <= p->nf) nc = p->nf + 16;
  if (reserve((void **)&p->Fv, (int64_t)nc * p->cap, sizeof(double)) || reserve((void **)&p->fx, (int64_t)nc * p->dim, sizeof(double)) ||
      reserve((void **)&p->fy, nc, sizeof(double)) || reserve((void **)&p->fwy, nc, sizeof(double)) ||
      reserve((void **)&p->fw1, nc, sizeof(double)))
    return -1;
  p->capf = nc;
  return 0;
}

typedef double gp_v4d __attribute__((vector_size(32)));

/* sum_i a_i b_i in 4 interleaved partial sums (vectorized) */
GP_HOT static double dot(const double *restrict a, const double *restrict b, int n) {
  gp_v4d s = {0};
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    gp_v4d x, y;
    memcpy(&x, a + i, sizeof x);
    memcpy(&y, b + i, sizeof y);
    s += x * y;
  }
  double t[4];
  memcpy(t, &s, sizeof t);
  for (; i < n; i++) t[0] += a[i] * b[i];
  return (t[0] + t[1]) + (t[2] + t[3]);
}

/* dot(a widened to double, b, n): the same products and sums, half the bytes of a read */
GP_HOT static double dot_float(const float *restrict a, const double *restrict b, int n) {
  typedef float v4f __attribute__((vector_size(16)));
  gp_v4d s = {0};
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f xf;
    gp_v4d y;
    memcpy(&xf, a + i, sizeof xf);
    memcpy(&y, b + i, sizeof y);
    gp_v4d x = __builtin_convertvector(xf, gp_v4d);
    s += x * y;
  }
  double t[4];
  memcpy(t, &s, sizeof t);
  for (; i < n; i++) t[0] += (double)a[i] * b[i];
  return (t[0] + t[1]) + (t[2] + t[3]);
}

/* out[c] += sum_j F[j cap + c] lf[j], for j = 0, 1, ..., nf - 1 in that order for every c (vectorized across
 * c, tiles of members kept in cache over the rows) */
GP_HOT static void add_extra_rows(double *restrict out, const double *restrict F, int64_t cap,
                                  const double *restrict lf, int nf, int64_t n) {
  enum { TILE = 128 };
  for (int64_t c0 = 0; c0 < n; c0 += TILE) {
    int64_t c1 = n - c0 < TILE ? n : c0 + TILE;
    for (int j = 0; j < nf; j++) {
      const double *fj = F + (size_t)j * (size_t)cap, lj = lf[j];
      for (int64_t c = c0; c < c1; c++) out[c] += fj[c] * lj;
    }
  }
}

/* variance * k(a, b) with the GP's lengthscales */
static double kern(const mpt_gp *gp, const double *a, const double *b) {
  double r2 = 0;
  for (int d = 0; d < gp->dim; d++) {
    double t = (a[d] - b[d]) * gp->inv_ls[d];
    r2 += t * t;
  }
  return gp->variance * mpt_gp_kernel_eval(gp->cfg.kernel, sqrt(r2));
}

/* packed row j of the extra rows of L */
static double *fl_row(const mpt_gp_pool *p, int j) { return p->FL + (size_t)j * p->n0 + (size_t)j * (j + 1) / 2; }

/* 1 when candidate cand is the plan's next extra observation (mpt_gp_pool_plan_candidates) */
static int planned(const mpt_gp_pool *p, int64_t cand) {
  return p->plan_next < p->plan_n && p->plan_ids[p->plan_next] == cand && p->nf == p->plan_nf0 + p->plan_next;
}

/* l = L^-1 k(all observations, x) over the GP's factor and the extra rows; the GP's part is read, not solved,
 * for member j >= 0 (its column of V in the pool) or GP candidate cand >= 0 (its column of the GP's V, float);
 * returns L_nn of x */
static double solve_point(mpt_gp_pool *p, const double *x, int64_t j, int64_t cand) {
  const mpt_gp *gp = p->gp;
  int n0 = p->n0, nt = n0 + p->nf;
  double *l = p->l;
  p->l_cand = -1;
  if (j >= 0) {
    const float *v0 = p->V0 + (size_t)j * n0;
    for (int i = 0; i < n0; i++) l[i] = v0[i];
  }
  else if (cand >= 0 && planned(p, cand)) memcpy(l, p->plan_L + (size_t)p->plan_next * n0, sizeof(double) * (size_t)n0);
  else if (cand >= 0) {
    const float *col = gp->V + (size_t)(cand / GP_VB) * (size_t)gp->cap * GP_VB + (size_t)(cand % GP_VB);
    for (int i = 0; i < n0; i++) l[i] = col[(size_t)i * GP_VB];
  } else if (n0 > 0) {
    mpt_gp_kernel_obs_range(gp, x, 0, n0, l);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n0, gp->L, gp->cap, l, 1);
  }
  for (int f = 0; f < p->nf; f++) {
    const double *row = fl_row(p, f);
    double s = 0;
    if (cand >= 0) s = dot(row, l, n0 + f); /* pending evaluations: up to hundreds of extra rows */
    else for (int i = 0; i < n0 + f; i++) s += row[i] * l[i];
    l[n0 + f] = (kern(gp, x, p->fx + (size_t)f * p->dim) - s) / row[n0 + f];
  }
  double ne = mpt_gp_noise_eff(gp->noise, gp->variance), ll = 0;
  for (int i = 0; i < nt; i++) ll += l[i] * l[i];
  double d = gp->variance + ne - ll;
  return sqrt(d < ne ? ne : d);
}

/* the extra observation (x, y), x member `member` of the pool, or GP candidate `cand`, or neither (-1, -1) */
static int add_point(mpt_gp_pool *p, const double *x, int64_t member, int64_t cand, double y, mpt_error *err) {
  if (!isfinite(y)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool observation is not finite");
  if (room_extra(p)) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for %d pool observations", p->nf + 1);
  const mpt_gp *gp = p->gp;
  int n0 = p->n0, nf = p->nf;
  int solved = member < 0 && cand >= 0 && p->l_cand == cand && p->l_nf == nf; /* l from predict_candidate */
  double lnn = solved ? p->l_nn : solve_point(p, x, member, cand), *l = p->l, sy = y, s1 = 1;
  for (int i = 0; i < n0; i++) { sy -= l[i] * gp->wy[i]; s1 -= l[i] * gp->w1[i]; }
  for (int j = 0; j < nf; j++) { sy -= l[n0 + j] * p->fwy[j]; s1 -= l[n0 + j] * p->fw1[j]; }
  double wyn = sy / lnn, w1n = s1 / lnn, *vrow = p->Fv + (size_t)nf * p->cap;
  /* vrow[c] = the member's V column . l, the extra rows summed in order j = 0, 1, ... (rows of Fv read
   * contiguously, across the members) */
  if (cand >= 0 && planned(p, cand)) memcpy(vrow, p->plan_G + (size_t)(p->plan_next++) * p->n, sizeof(double) * (size_t)p->n);
  else for (int64_t c = 0; c < p->n; c++) vrow[c] = dot_float(p->V0 + (size_t)c * n0, l, n0);
  add_extra_rows(vrow, p->Fv, p->cap, l + n0, nf, p->n);
  for (int64_t c = 0; c < p->n; c++) {
    double v = (kern(gp, x, p->X + (size_t)c * p->dim) - vrow[c]) / lnn;
    vrow[c] = v;
    p->A[c] += v * wyn;
    p->B[c] += v * w1n;
    p->var[c] -= v * v;
  }
  double *row = fl_row(p, nf);
  memcpy(row, l, sizeof(double) * (size_t)(n0 + nf));
  row[n0 + nf] = lnn;
  memcpy(p->fx + (size_t)nf * p->dim, x, sizeof(double) * (size_t)p->dim);
  p->fy[nf] = y;
  p->fwy[nf] = wyn;
  p->fw1[nf] = w1n;
  p->nf = nf + 1;
  normalization(p, &p->norm_m, &p->norm_s);
  return 0;
}

int mpt_gp_pool_add(mpt_gp_pool *p, const double *x, double y, mpt_error *err) { return add_point(p, x, -1, -1, y, err); }

int mpt_gp_pool_add_member(mpt_gp_pool *p, int64_t j, double y, mpt_error *err) {
  if (j < 0 || j >= p->n) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool member %lld out of range", (long long)j);
  return add_point(p, p->X + (size_t)j * p->dim, j, -1, y, err);
}

int mpt_gp_pool_add_candidate(mpt_gp_pool *p, int64_t c, const double *x, double y, mpt_error *err) {
  if (!planned(p, c) && (c < 0 || c >= p->gp->n_cand)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
  return add_point(p, x, -1, c, y, err);
}

int mpt_gp_pool_predict_candidate(mpt_gp_pool *p, int64_t c, const double *x, double *mean, double *sd,
                                  mpt_error *err) {
  const mpt_gp *gp = p->gp;
  int n0 = p->n0, pl = planned(p, c);
  if (!pl && (c < 0 || c >= gp->n_cand)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
  if (room_extra(p)) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for %d pool observations", p->nf + 1);
  const double *abv = pl ? p->plan_abv + 3 * (size_t)p->plan_next : NULL;
  double lnn = solve_point(p, x, -1, c), *l = p->l, a = pl ? abv[0] : gp->A[c], b = pl ? abv[1] : gp->B[c],
         v = pl ? abv[2] : gp->var[c];
  for (int f = 0; f < p->nf; f++) {
    a += l[n0 + f] * p->fwy[f];
    b += l[n0 + f] * p->fw1[f];
    v -= l[n0 + f] * l[n0 + f];
  }
  p->l_cand = c;
  p->l_nf = p->nf;
  p->l_nn = lnn;
  double m = p->norm_m;
  if (mean) *mean = m + a - m * b;
  if (sd) *sd = p->norm_s * sqrt(v > 0 ? v : 0.0);
  return 0;
}

/* room for a plan of n candidates; 0 or an error */
static int plan_room(mpt_gp_pool *p, int64_t n, mpt_error *err) {
  if (reserve((void **)&p->plan_ids, n, sizeof(int64_t)) || reserve((void **)&p->plan_L, n * p->n0, sizeof(double)) ||
      reserve((void **)&p->plan_G, n * p->n, sizeof(double)) || reserve((void **)&p->plan_abv, 3 * n, sizeof(double)) ||
      reserve((void **)&p->V0d, p->n * p->n0, sizeof(double)))
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for %lld planned pool observations", (long long)n);
  return 0;
}

/* the plan of cand[0..n), whose columns (plan_L) and A, B, var (plan_abv) are filled: their products with the
 * members' columns, and the plan started */
static void plan_start(mpt_gp_pool *p, const int64_t *cand, int64_t n) {
  int n0 = p->n0;
  memcpy(p->plan_ids, cand, sizeof(int64_t) * (size_t)n);
  /* G (n x members) = plan_L (n x n0) . V0^T (V0: members x n0) */
  if (n0 > 0 && p->n > 0) {
    for (int64_t i = 0; i < p->n * n0; i++) p->V0d[i] = p->V0[i];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)p->n, n0, 1.0, p->plan_L, n0, p->V0d, n0, 0.0,
                p->plan_G, (int)p->n);
  }
  else if (p->n > 0) memset(p->plan_G, 0, sizeof(double) * (size_t)n * (size_t)p->n);
  p->plan_n = n;
  p->plan_nf0 = p->nf;
}

int mpt_gp_pool_plan_candidates(mpt_gp_pool *p, const int64_t *cand, int64_t n, mpt_error *err) {
  const mpt_gp *gp = p->gp;
  int n0 = p->n0;
  p->plan_n = p->plan_next = 0;
  if (n <= 0 || n0 == 0 || p->n == 0) return 0;
  int rc = plan_room(p, n, err);
  if (rc) return rc;
  for (int64_t q = 0; q < n; q++) {
    int64_t c = cand[q];
    if (c < 0 || c >= gp->n_cand) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
    const float *col = gp->V + (size_t)(c / GP_VB) * (size_t)gp->cap * GP_VB + (size_t)(c % GP_VB);
    double *row = p->plan_L + (size_t)q * n0;
    for (int i = 0; i < n0; i++) row[i] = col[(size_t)i * GP_VB];
    p->plan_abv[3 * q] = gp->A[c];
    p->plan_abv[3 * q + 1] = gp->B[c];
    p->plan_abv[3 * q + 2] = gp->var[c];
  }
  plan_start(p, cand, n);
  return 0;
}

int mpt_gp_pool_plan_columns(mpt_gp_pool *p, const int64_t *cand, int64_t n, const float *V, const double *abv,
                             mpt_error *err) {
  int n0 = p->n0;
  p->plan_n = p->plan_next = 0;
  if (n <= 0) return 0;
  int rc = plan_room(p, n, err);
  if (rc) return rc;
  for (int64_t q = 0; q < n * n0; q++) p->plan_L[q] = V[q];
  memcpy(p->plan_abv, abv, sizeof(double) * 3 * (size_t)n);
  plan_start(p, cand, n);
  return 0;
}

void mpt_gp_pool_fix_normalization(mpt_gp_pool *p, int fixed) {
  p->fixed_norm = fixed;
  if (p->gp) normalization(p, &p->norm_m, &p->norm_s);
}
int64_t mpt_gp_pool_size(const mpt_gp_pool *p) { return p->n; }
int64_t mpt_gp_pool_id(const mpt_gp_pool *p, int64_t j) { return p->ids[j]; }

/* mpt_gp_normalization over the GP's outputs and the extra ones (without them when fixed) */
static void normalization(const mpt_gp_pool *p, double *mean, double *scale) {
  const mpt_gp *gp = p->gp;
  if (p->fixed_norm) {
    mpt_gp_normalization(gp, mean, scale);
    return;
  }
  int n = p->n0 + p->nf;
  double m = 0, s = 1, mu = 0;
  for (int i = 0; i < p->n0; i++) mu += gp->yo[i];
  for (int j = 0; j < p->nf; j++) mu += p->fy[j];
  if (n > 0) mu /= n;
  if (gp->cfg.mean == MPT_GP_MEAN_CONSTANT) m = gp->cfg.mean_constant;
  else if (n > 0) m = mu;
  if (gp->cfg.normalize_scale && n >= 2) {
    double ss = 0;
    for (int i = 0; i < p->n0; i++) ss += (gp->yo[i] - mu) * (gp->yo[i] - mu);
    for (int j = 0; j < p->nf; j++) ss += (p->fy[j] - mu) * (p->fy[j] - mu);
    ss = sqrt(ss / n);
    if (ss > 1e-12 * (fabs(mu) + 1e-300) && ss > 0) s = ss;
  }
  if (mean) *mean = m;
  if (scale) *scale = s;
}

void mpt_gp_pool_normalization(const mpt_gp_pool *p, double *mean, double *scale) {
  if (mean) *mean = p->norm_m;
  if (scale) *scale = p->norm_s;
}

void mpt_gp_pool_predict_var(const mpt_gp_pool *p, int64_t j0, int64_t j1, double *mean, double *var) {
  double m = p->norm_m;
  for (int64_t c = j0; c < j1; c++) {
    if (mean) mean[c - j0] = m + p->A[c] - m * p->B[c];
    if (var) var[c - j0] = p->var[c] > 0 ? p->var[c] : 0.0;
  }
}
