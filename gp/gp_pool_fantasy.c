/* gp/gp_pool_fantasy.c: the pool's extra observations (a batch's fantasies, pending evaluations) and its
 * predictions at the GP's candidates (gp/gp_pool.h): each extra observation's row of L and of V over the members,
 * the members' A, B, var updated as mpt_gp_add updates the GP's (gp/gp_pool_impl.h). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "gp/gp_hot.h"
#include "gp/gp_pool_impl.h"

/* room for one more extra observation; 0 or -1 */
static int room_extra(mpt_gp_pool *p) {
  int64_t nfl = (int64_t)(p->nf + 1) * p->n0 + (int64_t)(p->nf + 1) * (p->nf + 2) / 2;
  int64_t need_l = (int64_t)p->n0 + 2 * (int64_t)p->nf + 3; /* l: n0 + nf + 1, then solve_point's nf + 1 sums */
  if (need_l > p->cap_l) {
    if (gp_pool_reserve((void **)&p->l, 2 * need_l, sizeof(double))) return -1;
    p->cap_l = 2 * need_l;
  }
  if (nfl > p->cap_fl) {
    if (gp_pool_reserve((void **)&p->FL, 2 * nfl, sizeof(double))) return -1;
    p->cap_fl = 2 * nfl;
  }
  if (p->nf < p->capf) return 0;
  int nc = p->capf ? 2 * p->capf : 16;
  if (nc <= p->nf) nc = p->nf + 16;
  if (gp_pool_reserve((void **)&p->Fv, (int64_t)nc * p->cap, sizeof(double)) ||
      gp_pool_reserve((void **)&p->fx, (int64_t)nc * p->dim, sizeof(double)) ||
      gp_pool_reserve((void **)&p->fy, nc, sizeof(double)) ||
      gp_pool_reserve((void **)&p->fwy, nc, sizeof(double)) ||
      gp_pool_reserve((void **)&p->fw1, nc, sizeof(double)))
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

/* out[c] = dot(a + c * n widened to double, b, n) for the c < m (<= 8) members a, a + n, ...: each member's
 * sums in dot's order (4 interleaved partial sums, mul then add; a's floats are half the bytes of doubles),
 * the members side by side so that their chains of vector adds overlap in the pipeline (one member's sums
 * wait on each add's latency) and b is read once for all of them */
GP_HOT static void dot_float_many(const float *restrict a, const double *restrict b, int n, int m,
                                  double *restrict out) {
  typedef float v4f __attribute__((vector_size(16)));
  gp_v4d s[8];
  for (int c = 0; c < m; c++) s[c] = (gp_v4d){0};
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    gp_v4d y;
    memcpy(&y, b + i, sizeof y);
    for (int c = 0; c < m; c++) {
      v4f xf;
      memcpy(&xf, a + (size_t)c * (size_t)n + i, sizeof xf);
      s[c] += __builtin_convertvector(xf, gp_v4d) * y;
    }
  }
  for (int c = 0; c < m; c++) {
    double t[4];
    memcpy(t, &s[c], sizeof t);
    for (int k = i; k < n; k++) t[0] += (double)a[(size_t)c * (size_t)n + k] * b[k];
    out[c] = (t[0] + t[1]) + (t[2] + t[3]);
  }
}

/* vrow[c] = the product of member c's column of V with l (n0 values) for every member, eight at a time */
static void members_dot(const mpt_gp_pool *p, const double *l, double *vrow) {
  int64_t c = 0;
  for (; c + 8 <= p->n; c += 8) dot_float_many(p->V0 + (size_t)c * (size_t)p->n0, l, p->n0, 8, vrow + c);
  if (c < p->n) dot_float_many(p->V0 + (size_t)c * (size_t)p->n0, l, p->n0, (int)(p->n - c), vrow + c);
}

/* s[f] = sum over i < n of rows[f][i] l[i], each a plain sum in order i = 0, 1, ... (mul then add: the sums of
 * solve_point's loop over the GP's part), for f < m (<= 8) rows side by side: the same bits, the chains of
 * adds overlapping */
static void row_sums(const double *const *rows, int m, const double *l, int n, double *s) {
  double t[8] = {0};
  for (int i = 0; i < n; i++) {
    double li = l[i];
    for (int f = 0; f < m; f++) t[f] += rows[f][i] * li;
  }
  for (int f = 0; f < m; f++) s[f] = t[f];
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
  else if (cand >= 0 && gp_pool_planned(p, cand)) memcpy(l, p->plan_L + (size_t)p->plan_next * n0, sizeof(double) * (size_t)n0);
  else if (cand >= 0) {
    const float *col = gp_pool_gp_column(gp, cand);
    for (int i = 0; i < n0; i++) l[i] = col[(size_t)i * GP_VB];
  } else if (n0 > 0) {
    mpt_gp_kernel_obs_range(gp, x, 0, n0, l);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n0, gp->L, gp->cap, l, 1);
  }
  /* the extra rows' sums over the GP's part first, eight rows at a time (cand < 0), then each row continued
   * over the extra entries before it, in order: the sums s += row[i] * l[i] over i < n0 + f as one loop makes them */
  double *sg = p->l + n0 + p->nf + 1; /* room_extra keeps room for them after l */
  for (int f0 = 0; cand < 0 && f0 < p->nf; f0 += 8) {
    const double *rows[8];
    int m = p->nf - f0 < 8 ? p->nf - f0 : 8;
    for (int f = 0; f < m; f++) rows[f] = fl_row(p, f0 + f);
    row_sums(rows, m, l, n0, sg + f0);
  }
  for (int f = 0; f < p->nf; f++) {
    const double *row = fl_row(p, f);
    double s = 0;
    if (cand >= 0) s = dot(row, l, n0 + f); /* pending evaluations: up to hundreds of extra rows */
    else {
      s = sg[f];
      for (int i = n0; i < n0 + f; i++) s += row[i] * l[i];
    }
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
  if (cand >= 0 && gp_pool_planned(p, cand)) memcpy(vrow, p->plan_G + (size_t)(p->plan_next++) * p->n, sizeof(double) * (size_t)p->n);
  else members_dot(p, l, vrow);
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
  gp_pool_compute_normalization(p, &p->norm_m, &p->norm_s);
  return 0;
}

int mpt_gp_pool_add(mpt_gp_pool *p, const double *x, double y, mpt_error *err) { return add_point(p, x, -1, -1, y, err); }

int mpt_gp_pool_add_member(mpt_gp_pool *p, int64_t j, double y, mpt_error *err) {
  if (j < 0 || j >= p->n) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool member %lld out of range", (long long)j);
  return add_point(p, p->X + (size_t)j * p->dim, j, -1, y, err);
}

int mpt_gp_pool_add_candidate(mpt_gp_pool *p, int64_t c, const double *x, double y, mpt_error *err) {
  if (!gp_pool_planned(p, c) && (c < 0 || c >= p->gp->n_cand)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
  return add_point(p, x, -1, c, y, err);
}

int mpt_gp_pool_predict_candidate(mpt_gp_pool *p, int64_t c, const double *x, double *mean, double *sd,
                                  mpt_error *err) {
  const mpt_gp *gp = p->gp;
  int n0 = p->n0, pl = gp_pool_planned(p, c);
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
