/* gp/gp_pool.c: a pool of a GP's candidates conditioned on extra observations (gp/gp_pool.h), its members:
 * creation, loading from the GP or from columns held elsewhere, the normalization and the members' posterior
 * (the state and the files of the pool: gp/gp_pool_impl.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_pool_impl.h"

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

int gp_pool_reserve(void **ptr, int64_t need, size_t sz) {
  void *q = realloc(*ptr, sz * (size_t)(need > 0 ? need : 1));
  if (!q) return -1;
  *ptr = q;
  return 0;
}

/* room for n members of gp (n0 observations) and no extra observation yet */
static int room_members(mpt_gp_pool *p, const mpt_gp *gp, int64_t n) {
  int64_t nv0 = n * (int64_t)gp->n;
  if (n > p->cap) {
    if (gp_pool_reserve((void **)&p->ids, n, sizeof(int64_t)) ||
        gp_pool_reserve((void **)&p->X, n * gp->dim, sizeof(double)) ||
        gp_pool_reserve((void **)&p->A, n, sizeof(double)) ||
        gp_pool_reserve((void **)&p->B, n, sizeof(double)) ||
        gp_pool_reserve((void **)&p->var, n, sizeof(double)))
      return -1;
    p->cap = n;
    p->capf = 0; /* Fv's rows are cap long: regrown at the first extra observation */
  }
  if (nv0 > p->cap_v0) {
    if (gp_pool_reserve((void **)&p->V0, nv0, sizeof(float))) return -1;
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

/* a member: its candidate, its place in the pool */
typedef struct { int64_t c, j; } gp_member;

static int cmp_member(const void *x, const void *y) {
  const gp_member *a = x, *b = y;
  return a->c < b->c ? -1 : a->c > b->c ? 1 : 0;
}

/* the members' columns of the GP's V into V0, the members of one panel of V together: each row of the panel
 * (two cache lines) is read once for all of them instead of once per member (a column is one float per row) */
static void gather_columns(mpt_gp_pool *p, const mpt_gp *gp, gp_member *m, int64_t n) {
  qsort(m, (size_t)n, sizeof *m, cmp_member);
  int n0 = p->n0;
  for (int64_t g0 = 0, g1; g0 < n; g0 = g1) {
    int64_t q = m[g0].c / GP_VB;
    for (g1 = g0 + 1; g1 < n && m[g1].c / GP_VB == q; g1++) {}
    const float *panel = gp->V + (size_t)q * (size_t)gp->cap * GP_VB;
    for (int i = 0; i < n0; i++) {
      const float *row = panel + (size_t)i * GP_VB;
      for (int64_t g = g0; g < g1; g++) p->V0[(size_t)m[g].j * (size_t)n0 + i] = row[m[g].c % GP_VB];
    }
  }
}

int mpt_gp_pool_load(mpt_gp_pool *p, const mpt_gp *gp, const int64_t *ids, const double *X, int64_t n,
                     mpt_error *err) {
  int rc = load_start(p, gp, n, err);
  if (rc) return rc;
  gp_member *m = malloc(sizeof *m * (size_t)(n > 0 ? n : 1));
  if (!m) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for a pool of %lld candidates", (long long)n);
  for (int64_t j = 0; j < n; j++) {
    int64_t c = ids[j];
    if (c < 0 || c >= gp->n_cand) {
      free(m);
      return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
    }
    p->ids[j] = c;
    m[j] = (gp_member){c, j};
    p->A[j] = gp->A[c];
    p->B[j] = gp->B[c];
    p->var[j] = gp->var[c];
  }
  gather_columns(p, gp, m, n);
  free(m);
  memcpy(p->X, X, sizeof(double) * (size_t)n * (size_t)p->dim);
  gp_pool_compute_normalization(p, &p->norm_m, &p->norm_s);
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
  gp_pool_compute_normalization(p, &p->norm_m, &p->norm_s);
  return 0;
}

void mpt_gp_pool_fix_normalization(mpt_gp_pool *p, int fixed) {
  p->fixed_norm = fixed;
  if (p->gp) gp_pool_compute_normalization(p, &p->norm_m, &p->norm_s);
}
int64_t mpt_gp_pool_size(const mpt_gp_pool *p) { return p->n; }
int64_t mpt_gp_pool_id(const mpt_gp_pool *p, int64_t j) { return p->ids[j]; }

void gp_pool_compute_normalization(const mpt_gp_pool *p, double *mean, double *scale) {
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
