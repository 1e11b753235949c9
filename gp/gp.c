/* gp/gp.c: the GP's configuration, life and memory (gp/gp.h): defaults, kernel names, creation over the
 * candidates, the accessors, the bytes held and the growth of the room for observations (V's panels moved up
 * in place, the old pages given back). The rest of the serial GP: gp/gp_kernel.c (covariances),
 * gp/gp_add_row.c and gp/gp_add.c (adding observations), gp/gp_predict.c (predictions), gp/gp_factor.c (the
 * factor from scratch, the log marginal likelihood). */
#include "gp/gp.h"
#include "gp/gp_cand.h"
#include "gp/gp_impl.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void mpt_gp_config_default(mpt_gp_config *c) {
  memset(c, 0, sizeof *c);
  c->kernel = MPT_GP_MATERN32;
  c->lengthscale = 1.5;
  c->variance = 1.0;
  c->noise = 1e-6;
  c->mean = MPT_GP_MEAN_OBSERVED;
  c->mean_constant = 0.0;
  c->normalize_scale = 1;
}

static const char *const kernel_names[] = {"matern12", "matern32", "matern52", "se"};

const char *mpt_gp_kernel_name(int k) {
  return (k >= 0 && k < MPT_GP_KERNEL_COUNT) ? kernel_names[k] : NULL;
}

int mpt_gp_kernel_parse(const char *name) {
  if (!name) return -1;
  for (int k = 0; k < MPT_GP_KERNEL_COUNT; k++)
    if (strcmp(name, kernel_names[k]) == 0) return k;
  if (strcmp(name, "rbf") == 0 || strcmp(name, "squared_exponential") == 0) return MPT_GP_SE;
  return -1;
}

/* var_sum from var: the panels' sums in order */
double gp_var_total(const mpt_gp *gp) {
  double s = 0;
  for (int64_t b = 0; b < gp->n_cand; b += GP_VB)
    s += gp_panel_var_sum(gp->var + b, gp->n_cand - b < GP_VB ? gp->n_cand - b : GP_VB);
  return s;
}

/* mpt_gp_create's rows: copied from the caller's table */
typedef struct rows_table {
  const double *X;
  int dim;
} rows_table;

static void rows_from_table(void *ctx, int64_t first, int64_t n, double *rows) {
  const rows_table *t = ctx;
  memcpy(rows, t->X + (size_t)first * (size_t)t->dim, sizeof(double) * (size_t)n * (size_t)t->dim);
}

int mpt_gp_create(const mpt_gp_config *cfg, int dim, int64_t n_cand, const double *X, mpt_gp **out,
                  mpt_error *err) {
  rows_table t = {X, dim};
  return mpt_gp_create_from(cfg, dim, n_cand, rows_from_table, &t, out, err);
}

int mpt_gp_create_from(const mpt_gp_config *cfg, int dim, int64_t n_cand, mpt_gp_cand_fn fill, void *ctx,
                       mpt_gp **out, mpt_error *err) {
  *out = NULL;
  if (dim < 1) return mpt_error_set(err, MPT_ERR_VALUE, "gp: dimension must be >= 1 (got %d)", dim);
  if (n_cand < 0) return mpt_error_set(err, MPT_ERR_VALUE, "gp: negative number of candidates");
  if (!(cfg->lengthscale > 0) || !(cfg->variance > 0) || !(cfg->noise >= 0) ||
      cfg->kernel < 0 || cfg->kernel >= MPT_GP_KERNEL_COUNT)
    return mpt_error_set(err, MPT_ERR_VALUE,
                         "gp: bad configuration (lengthscale %g, variance %g, noise %g, kernel %d)",
                         cfg->lengthscale, cfg->variance, cfg->noise, (int)cfg->kernel);
  mpt_gp *gp = calloc(1, sizeof *gp);
  if (!gp) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory");
  gp->cfg = *cfg;
  gp->dim = dim;
  gp->n_cand = n_cand;
  gp->variance = cfg->variance;
  gp->noise = cfg->noise;
  gp->ls = malloc(sizeof(double) * (size_t)dim);
  gp->inv_ls = malloc(sizeof(double) * (size_t)dim);
  gp->n_pad = (n_cand + GP_VB - 1) / GP_VB * GP_VB;
  size_t np1 = (size_t)(gp->n_pad > 0 ? gp->n_pad : 1);
  gp->A = calloc(np1, sizeof(double));
  gp->B = calloc(np1, sizeof(double));
  gp->var = malloc(sizeof(double) * np1);
  gp->kbuf = malloc(sizeof(double) * GP_BLOCK);
  if (!gp->ls || !gp->inv_ls || !gp->A || !gp->B || !gp->var || !gp->kbuf || mpt_gp_cands_store(&gp->cs, n_cand, dim, fill, ctx)) {
    mpt_gp_free(gp);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for %lld candidates", (long long)n_cand);
  }
  for (int d = 0; d < dim; d++) {
    gp->ls[d] = cfg->lengthscale;
    gp->inv_ls[d] = 1.0 / cfg->lengthscale;
  }
  for (int64_t c = 0; c < gp->n_pad; c++) gp->var[c] = gp->variance;
  gp->var_sum = gp_var_total(gp);
  *out = gp;
  return 0;
}

void mpt_gp_free(mpt_gp *gp) {
  if (!gp) return;
  mpt_gp_cands_free(&gp->cs);
  free(gp->ls); free(gp->inv_ls); free(gp->Xo); free(gp->XoT); free(gp->yo); free(gp->L);
  free(gp->wy); free(gp->w1); free(gp->V); free(gp->A); free(gp->B); free(gp->var);
  free(gp->kbuf); free(gp->tmpd); free(gp->lf); free(gp->wf);
  free(gp);
}

int mpt_gp_dim(const mpt_gp *gp) { return gp->dim; }
int mpt_gp_kernel_of(const mpt_gp *gp) { return (int)gp->cfg.kernel; }
int mpt_gp_n_obs(const mpt_gp *gp) { return gp->n; }

/* bytes held with room for cap observations */
static int64_t bytes_at(const mpt_gp *gp, int64_t cap) {
  int64_t np = gp->n_pad, d = gp->dim;
  return (int64_t)sizeof *gp + mpt_gp_cands_bytes(&gp->cs) +
         np * 3 * 8 + cap * np * 4 + cap * cap * 8 +
         cap * (d + 5) * 8 + cap * 4 + GP_BLOCK * 8;
}

int64_t mpt_gp_bytes(const mpt_gp *gp) { return bytes_at(gp, gp->cap); }

/* gives the whole pages inside [p, p + bytes) back to the system (they read as zeros when touched again):
 * a panel's rows once moved up by gp_grow, so that a growth does not keep the old V resident beside the new
 * (paper_hotspot: peak RSS 2.1 -> 1.4 GB over 1024 observations, docs/PERFORMANCE.md) */
static void release(void *p, size_t bytes) {
  uintptr_t a = (uintptr_t)p, e = a + bytes, pg = 4096;
  a = (a + pg - 1) / pg * pg;
  e = e / pg * pg;
  if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

int gp_grow(mpt_gp *gp, mpt_error *err) {
  int ncap = gp->cap ? gp->cap * 2 : 64;
  double need_mb = (double)bytes_at(gp, ncap) / 1048576.0;
  if (gp->cfg.max_bytes > 0 && bytes_at(gp, ncap) > gp->cfg.max_bytes)
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: room for %d observations needs %.1f MB, over the limit of %.1f MB",
                         ncap, need_mb, (double)gp->cfg.max_bytes / 1048576.0);
  double *Xo = realloc(gp->Xo, sizeof(double) * (size_t)ncap * (size_t)gp->dim);
  if (Xo) gp->Xo = Xo;
  double *yo = realloc(gp->yo, sizeof(double) * (size_t)ncap);
  if (yo) gp->yo = yo;
  double *wy = realloc(gp->wy, sizeof(double) * (size_t)ncap);
  if (wy) gp->wy = wy;
  double *w1 = realloc(gp->w1, sizeof(double) * (size_t)ncap);
  if (w1) gp->w1 = w1;
  double *td = realloc(gp->tmpd, sizeof(double) * (size_t)ncap);
  if (td) gp->tmpd = td;
  float *lf = realloc(gp->lf, sizeof(float) * (size_t)ncap);
  if (lf) gp->lf = lf;
  float *wf = realloc(gp->wf, sizeof(float) * (size_t)ncap);
  if (wf) gp->wf = wf;
  /* V: every panel gets ncap rows (in place: the panels move up below) */
  float *V = gp->n_pad > 0 ? realloc(gp->V, sizeof(float) * (size_t)ncap * (size_t)gp->n_pad) : gp->V;
  if (V) gp->V = V;
  double *L = calloc((size_t)ncap * (size_t)ncap, sizeof(double));
  double *XoT = malloc(sizeof(double) * (size_t)ncap * (size_t)gp->dim);
  if (!Xo || !yo || !wy || !w1 || !td || !lf || !wf || (gp->n_pad > 0 && !V) || !L || !XoT) {
    free(L);
    free(XoT);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory: room for %d observations needs %.1f MB", ncap,
                         need_mb);
  }
  for (int d = 0; d < gp->dim; d++)
    if (gp->n > 0) memcpy(XoT + (size_t)d * ncap, gp->XoT + (size_t)d * gp->cap, sizeof(double) * (size_t)gp->n);
  free(gp->XoT);
  gp->XoT = XoT;
  for (int64_t q = gp->n_pad / GP_VB - 1; q >= 1 && gp->n > 0; q--) { /* the last first: no overlap */
    memmove(gp->V + (size_t)q * ncap * GP_VB, gp->V + (size_t)q * gp->cap * GP_VB, sizeof(float) * GP_VB * (size_t)gp->n);
    int64_t gap = (int64_t)q * (ncap - gp->cap); /* the moved rows start this many rows above the old ones */
    release(gp->V + (size_t)q * gp->cap * GP_VB, sizeof(float) * GP_VB * (size_t)(gap < gp->n ? gap : gp->n));
  }
  for (int i = 0; i < gp->n; i++) memcpy(L + (size_t)i * ncap, gp->L + (size_t)i * gp->cap, sizeof(double) * (size_t)(i + 1));
  free(gp->L);
  gp->L = L;
  gp->cap = ncap;
  return 0;
}

int gp_reserve(mpt_gp *gp, int n, mpt_error *err) {
  while (gp->cap < n) {
    int rc = gp_grow(gp, err);
    if (rc) return rc;
  }
  return 0;
}

void mpt_gp_get_hyper(const mpt_gp *gp, double *ls, double *variance, double *noise) {
  if (ls) memcpy(ls, gp->ls, sizeof(double) * (size_t)gp->dim);
  if (variance) *variance = gp->variance;
  if (noise) *noise = gp->noise;
}

const double *mpt_gp_obs_points(const mpt_gp *gp) { return gp->Xo; }
const double *mpt_gp_obs_outputs(const mpt_gp *gp) { return gp->yo; }
