/* strategies/bo/bo_transfer.c: bo's transfer from related observations (other device classes, --prior files).
 *
 * Summary. Related observations go into a strategies/related.h store (one log-time per configuration and
 * source, each source standardized). A configuration's summary is the mean over the sources that measured it;
 * configurations no source measured get the posterior mean of a GP (the candidates' GP inputs) over at most
 * transfer_sample related configurations: the best quarter by summary and the rest evenly spaced over the
 * summary's order, so an ask stays fast with tens of thousands of related records (a brute-forced prior of
 * another GPU covers every configuration and needs no GP). Those that failed on every source that measured
 * them get the worst summary. Each source is one column over the candidates, the summary where it has no
 * measurement, standardized over the candidates (zs).
 *
 * Use. The GP models the transformed objective minus a prior mean sum_k w_k zs_k (its outputs are the
 * residuals, the scans add the prior mean back: bo_transfer_shift). w is refitted at every ask by a ridge
 * regression of the GP's transformed objectives on the columns at the observed configurations, shrunk
 * towards equal weights summing to transfer_weight, each times the share of the space its source measured
 * (a brute-forced prior: about 1; another class's few observations so far: little), with strength
 * transfer_shrink: a source that disagrees
 * with this device loses its weight, one that agrees gains it. While the search is stalled the prior mean is
 * off (transfer_stall); transfer_every > 1 leaves it off in the other asks. The first ask's initial sample
 * begins with the transfer_init best related configurations. In a run the summary is refreshed when the
 * related observations have grown by a quarter since the last refresh (online transfer: the other classes'
 * observations arrive at every round).
 *
 * transfer_model=icm: the weighted columns, pooled and standardized, are the other task of a two-task ICM
 * (strategies/bo/bo_multitask.c); its correlation rho, fitted by marginal likelihood, scales the prior mean
 * (rho * sd of this device's outputs * pooled) instead of the ridge's own scale. transfer_model=auto (the
 * default): the ICM while every source measured at least half of the space (brute-forced --prior files), the
 * ridge's scale otherwise (the other classes of a run, online); docs/PERFORMANCE.md has the figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_multitask.h"
#include "strategies/bo/bo_transfer.h"
#include "strategies/bo/bo_transfer_loo.h"
#include "strategies/related.h"

typedef struct bo_transfer {
  int on, n_seed, sample, seeded, off_stalled, every, by_evidence, by_loo, icm;
  int loo_n, loo_on;     /* transfer_select=loo: this device's observations at the last check, and its verdict */
  double weight0, shrink;
  int icm_n;             /* transfer_model=icm: this device's observations at the last fit of rho (0: none yet) */
  double rho, sd_t;      /* the fitted task correlation, the sd of this device's outputs then */
  mpt_related *rel;
  int64_t version;       /* of rel that zs is of (-1: none) */
  int64_t count_at;      /* related count at the last refresh */
  int n_src;             /* columns of zs */
  double min_cover;      /* the least share of the space a source measured validly (transfer_model=auto) */
  double *zs;            /* n_src x N: each source's standardized log-time, imputed by the summary where it has none */
  double w[MPT_RELATED_MAX_SOURCES]; /* the fitted weights of the columns */
  double w0[MPT_RELATED_MAX_SOURCES]; /* what they are shrunk towards: transfer_weight / S times the coverage */
  double *pz;            /* N: the prior mean, sum over k of w[k] zs[k] */
} bo_transfer;

int bo_transfer_create(bo_state *b, mpt_strategy *s) {
  bo_transfer *x = calloc(1, sizeof *x);
  if (!x) return MPT_ERR_NOMEM;
  b->xfer = x;
  x->on = mpt_strategy_opt_bool(s, "transfer");
  x->n_seed = (int)mpt_strategy_opt_int(s, "transfer_init");
  x->weight0 = mpt_strategy_opt_double(s, "transfer_weight");
  x->shrink = mpt_strategy_opt_double(s, "transfer_shrink");
  x->sample = (int)mpt_strategy_opt_int(s, "transfer_sample");
  x->off_stalled = mpt_strategy_opt_bool(s, "transfer_stall");
  x->every = (int)mpt_strategy_opt_int(s, "transfer_every");
  x->by_evidence = strcmp(mpt_strategy_opt_str(s, "transfer_select"), "evidence") == 0;
  x->by_loo = strcmp(mpt_strategy_opt_str(s, "transfer_select"), "loo") == 0 ? 1
             : strcmp(mpt_strategy_opt_str(s, "transfer_select"), "loo-corr") == 0 ? 2 : 0;
  x->loo_on = 1;
  const char *model = mpt_strategy_opt_str(s, "transfer_model");
  x->icm = strcmp(model, "icm") == 0 ? 1 : strcmp(model, "auto") == 0 ? 2 : 0;
  x->version = -1;
  b->xfer_beta = x->weight0;
  return 0;
}

void bo_transfer_free(bo_state *b) {
  bo_transfer *x = b->xfer;
  if (!x) return;
  mpt_related_free(x->rel);
  free(x->pz);
  free(x->zs);
  free(x);
  b->xfer = NULL;
  b->xfer_pz = NULL;
}

void bo_transfer_tell(bo_state *b, int source, const mpt_obs *obs, int n) {
  bo_transfer *x = b->xfer;
  if (!x || !x->on) return;
  if (!x->rel && !(x->rel = mpt_related_new(b->N, 1))) return; /* out of memory: not learnt from */
  mpt_related_add(x->rel, source, obs, n);
}

/* the related configurations the summary GP holds: the best quarter of order, the rest evenly spaced */
static int64_t summary_sample(const int64_t *order, int64_t n, int64_t k, int64_t *out) {
  if (n <= k) { memcpy(out, order, (size_t)n * sizeof *out); return n; }
  int64_t top = k / 4, m = 0;
  for (int64_t i = 0; i < top; i++) out[m++] = order[i];
  for (int64_t j = 0; j < k - top; j++) out[m++] = order[top + (j * (n - top)) / (k - top)];
  return m;
}

/* pz of the configurations no source measured (v NAN, not failed): the posterior mean of a GP over a sample
 * of the measured ones; 0 or an error */
static int predict_unmeasured(bo_state *b, bo_transfer *x, const double *z, const int64_t *order, int64_t n_order,
                              mpt_error *err) {
  int64_t *pick = malloc((size_t)x->sample * sizeof *pick);
  if (!pick) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the transfer summary");
  int64_t m = summary_sample(order, n_order, x->sample, pick);
  mpt_gp_config c = b->gcfg;
  c.mean = MPT_GP_MEAN_OBSERVED;
  c.noise = 0.01;
  c.max_bytes = 0;
  mpt_gp *gp = NULL;
  int rc = mpt_gp_create_from(&c, b->D, b->N, bo_encode_rows, b, &gp, err);
  for (int64_t i = 0; rc == 0 && i < m; i++) rc = mpt_gp_add(gp, bo_point(b, pick[i]), z[pick[i]], err);
  for (int64_t c0 = 0; rc == 0 && c0 < b->N; c0 += BO_BLOCK) {
    int64_t c1 = c0 + BO_BLOCK < b->N ? c0 + BO_BLOCK : b->N;
    mpt_gp_predict_block(gp, c0, c1, b->mbuf, NULL);
    for (int64_t c2 = c0; c2 < c1; c2++)
      if (x->pz[c2] != x->pz[c2]) x->pz[c2] = b->mbuf[c2 - c0];
  }
  if (rc) mpt_error_prefix(err, "bo: transfer summary");
  mpt_gp_free(gp);
  free(pick);
  return rc;
}

/* pz standardized over the candidates (0 everywhere when it is constant) */
static void standardize(double *v, int64_t n) {
  double sum = 0, sum2 = 0;
  for (int64_t i = 0; i < n; i++) sum += v[i];
  double mean = n ? sum / (double)n : 0;
  for (int64_t i = 0; i < n; i++) sum2 += (v[i] - mean) * (v[i] - mean);
  double sd = n > 1 ? sqrt(sum2 / (double)(n - 1)) : 0;
  for (int64_t i = 0; i < n; i++) v[i] = sd > 1e-12 ? (v[i] - mean) / sd : 0;
}

/* zs: per source its standardized log-times, the summary (x->pz) where it has none, each column standardized over
 * the candidates; 0 or an error */
static int source_columns(bo_state *b, bo_transfer *x, mpt_error *err) {
  int S = mpt_related_sources(x->rel);
  double *zs = realloc(x->zs, (size_t)S * (size_t)(b->N > 0 ? b->N : 1) * sizeof *zs);
  if (!zs) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the transfer summary");
  x->zs = zs;
  x->n_src = S;
  x->min_cover = 1;
  for (int k = 0; k < S; k++) {
    double *col = zs + (size_t)k * (size_t)b->N;
    mpt_related_source_z(x->rel, k, col);
    double cover = mpt_related_source_coverage(x->rel, k);
    x->w0[k] = x->weight0 / S * cover;
    if (cover < x->min_cover) x->min_cover = cover;
    for (int64_t c = 0; c < b->N; c++)
      if (col[c] != col[c]) col[c] = x->pz[c];
    standardize(col, b->N);
  }
  return 0;
}

/* the summary (x->pz, then the columns zs) from the related store; 0 or an error */
static int refresh_summary(bo_state *b, bo_transfer *x, mpt_error *err) {
  const uint8_t *failed = NULL;
  const double *z = mpt_related_mean_z(x->rel, &failed);
  int64_t n_order = 0;
  const int64_t *order = mpt_related_order(x->rel, &n_order);
  if (!x->pz) x->pz = malloc((size_t)(b->N > 0 ? b->N : 1) * sizeof *x->pz);
  if (!z || !order || !x->pz) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the transfer summary");
  if (n_order < 2) return 0; /* nothing to learn from yet */
  double worst = z[order[n_order - 1]];
  int64_t unmeasured = 0;
  for (int64_t c = 0; c < b->N; c++) {
    x->pz[c] = z[c] == z[c] ? z[c] : failed[c] ? worst : NAN;
    unmeasured += x->pz[c] != x->pz[c];
  }
  int rc = unmeasured ? predict_unmeasured(b, x, z, order, n_order, err) : 0;
  if (rc == 0) rc = source_columns(b, x, err);
  if (rc) return rc;
  b->xfer_pz = x->pz;
  x->version = mpt_related_version(x->rel);
  x->count_at = mpt_related_count(x->rel);
  return 0;
}

/* the first transfer_init initial samples: the best related configurations (each moved to the front when the
 * sample has it already) */
static void seed_initial(bo_state *b, bo_transfer *x) {
  int64_t n_order = 0;
  const int64_t *order = mpt_related_order(x->rel, &n_order);
  int64_t m = x->n_seed < b->n_init_ids ? x->n_seed : b->n_init_ids;
  for (int64_t k = 0; order && k < m && k < n_order; k++) {
    int64_t id = order[k], at = -1;
    for (int64_t j = k; j < b->n_init_ids && at < 0; j++)
      if (b->init_ids[j] == id) at = j;
    if (at >= 0) { b->init_ids[at] = b->init_ids[k]; }
    b->init_ids[k] = id;
  }
}

int bo_transfer_before(bo_state *b, mpt_strategy *s, mpt_error *err) {
  (void)s;
  bo_transfer *x = b->xfer;
  if (!x || !x->on || !x->rel || mpt_related_count(x->rel) < 2) return 0;
  int64_t cnt = mpt_related_count(x->rel);
  int stale = x->version < 0 || (mpt_related_version(x->rel) != x->version && 4 * cnt >= 5 * x->count_at);
  int rc = stale ? refresh_summary(b, x, err) : 0;
  if (b->dist) b->xfer_pz = NULL; /* the model ranks' pool pass has no prior mean: with them, transfer seeds only */
  if (rc == 0 && !x->seeded && b->init_pos == 0) seed_initial(b, x);
  x->seeded = 1;
  return rc;
}

/* solves the S x S system A w = y (A symmetric positive definite, overwritten) by Cholesky; 0, or -1 when singular */
static int solve_spd(double *A, double *y, int S) {
  for (int j = 0; j < S; j++) {
    for (int k = 0; k < j; k++) A[j * S + j] -= A[j * S + k] * A[j * S + k];
    if (A[j * S + j] <= 1e-12) return -1;
    A[j * S + j] = sqrt(A[j * S + j]);
    for (int i = j + 1; i < S; i++) {
      for (int k = 0; k < j; k++) A[i * S + j] -= A[i * S + k] * A[j * S + k];
      A[i * S + j] /= A[j * S + j];
    }
  }
  for (int i = 0; i < S; i++) { for (int k = 0; k < i; k++) y[i] -= A[i * S + k] * y[k]; y[i] /= A[i * S + i]; }
  for (int i = S - 1; i >= 0; i--) { for (int k = i + 1; k < S; k++) y[i] -= A[k * S + i] * y[k]; y[i] /= A[i * S + i]; }
  return 0;
}

/* this device's observations in the GP: their candidate ids and transformed objectives (as the GP takes them before
 * the prior mean is removed), at most mpt_gp_n_obs(b->gp); returns how many */
static int target_outputs(const bo_state *b, int64_t *ids, double *t) {
  int n = mpt_gp_n_obs(b->gp), k = 0;
  for (int64_t i = 0; i < b->n_processed && k < n; i++) {
    if (!b->obs_ok[i]) continue;
    t[k] = b->post && n >= 2 ? b->ty[k] : bo_transform(b, b->obs_y[i]);
    ids[k++] = b->obs_id[i];
  }
  return k;
}

/* the weights w: ridge regression of the GP's transformed objectives on the centred columns zs at the observed
 * configurations, shrunk towards transfer_weight / S each (the mean of the sources) with weight transfer_shrink */
static void fit_weights(bo_state *b, bo_transfer *x) {
  enum { MS = MPT_RELATED_MAX_SOURCES };
  int S = x->n_src, n = mpt_gp_n_obs(b->gp), k = 0;
  double A[MS * MS] = {0}, y[MS] = {0}, mz[MS] = {0}, mt = 0;
  const size_t N = (size_t)b->N;
  for (int pass = 0; pass < 2; pass++) {
    k = 0;
    for (int64_t i = 0; i < b->n_processed && k < n; i++) {
      if (!b->obs_ok[i]) continue;
      double t = b->post && n >= 2 ? b->ty[k] : bo_transform(b, b->obs_y[i]);
      size_t id = (size_t)b->obs_id[i];
      k++;
      if (pass == 0) { mt += t; for (int a = 0; a < S; a++) mz[a] += x->zs[a * N + id]; continue; }
      for (int a = 0; a < S; a++) {
        double za = x->zs[a * N + id] - mz[a];
        y[a] += za * (t - mt);
        for (int c = 0; c <= a; c++) A[a * S + c] += za * (x->zs[c * N + id] - mz[c]);
      }
    }
    if (pass == 0 && k) { mt /= k; for (int a = 0; a < S; a++) mz[a] /= k; }
  }
  for (int a = 0; a < S; a++) {
    for (int c = 0; c < a; c++) A[c * S + a] = A[a * S + c];
    A[a * S + a] += x->shrink + 1e-9;
    y[a] += x->shrink * x->w0[a];
  }
  if (solve_spd(A, y, S) == 0) memcpy(x->w, y, sizeof(double) * (size_t)S);
  else memcpy(x->w, x->w0, sizeof(double) * (size_t)S);
}

/* pz = sum over k of w[k] zs[k] */
static void prior_mean(bo_state *b, bo_transfer *x) {
  const size_t N = (size_t)b->N;
  for (size_t c = 0; c < N; c++) {
    double v = 0;
    for (int a = 0; a < x->n_src; a++) v += x->w[a] * x->zs[a * N + c];
    x->pz[c] = v;
  }
}

/* transfer_model=icm: the weighted columns pooled (pz standardized over the candidates) are the other task of a
 * two-task ICM (strategies/bo/bo_multitask.h) whose correlation rho is refitted when this device's observations
 * have grown by an eighth; the prior mean becomes rho * sd(t) * pooled. 0 or an error */
static int icm_prior_mean(bo_state *b, bo_transfer *x, mpt_error *err) {
  int n = mpt_gp_n_obs(b->gp), rc = 0;
  standardize(x->pz, b->N);
  if (n >= 3 && (x->icm_n == 0 || 8 * (n - x->icm_n) >= x->icm_n)) {
    int64_t n_order = 0;
    const int64_t *order = mpt_related_order(x->rel, &n_order);
    int64_t *ids = malloc(((size_t)n + (size_t)x->sample) * sizeof *ids);
    double *t = malloc((size_t)n * sizeof *t);
    if (!ids || !t || !order) rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the two-task model");
    if (rc == 0) {
      int k = target_outputs(b, ids, t);
      int64_t m = summary_sample(order, n_order, x->sample, ids + k);
      rc = bo_icm_correlation(b, ids, t, k, x->pz, ids + k, m, &x->rho, &x->sd_t, err);
      x->icm_n = n;
    }
    free(ids);
    free(t);
  }
  for (int64_t c = 0; c < b->N; c++) x->pz[c] *= x->rho * x->sd_t;
  return rc;
}

/* transfer_select=loo: the prior mean stays on while it predicts this device's observations, each left out, at
 * least as well as the GP without it (strategies/bo/bo_transfer_loo.h); checked again when the observations have
 * grown by a sixteenth. 0 or an error */
static int loo_select(bo_state *b, bo_transfer *x, mpt_error *err) {
  int n = mpt_gp_n_obs(b->gp), rc = 0;
  if (n >= 5 && (x->loo_n == 0 || 16 * (n - x->loo_n) >= x->loo_n)) {
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    double *t = malloc((size_t)n * 2 * sizeof *t), plain = 0, with = 0;
    if (!ids || !t) rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the leave-one-out check");
    if (rc == 0) {
      int k = target_outputs(b, ids, t);
      for (int i = 0; i < k; i++) t[n + i] = x->pz[ids[i]];
      rc = bo_transfer_loo(b, ids, t, t + n, k, x->by_loo == 2, &plain, &with, err);
      x->loo_on = with >= plain;
      x->loo_n = n;
    }
    free(ids);
    free(t);
  }
  if (!x->loo_on) b->xfer_beta = 0.0;
  return rc;
}

/* the log marginal likelihood of the GP's observations with the prior mean times beta, in the transformed
 * objective's units (the GP normalizes its outputs by their sd: n log sd back) */
static int evidence(bo_state *b, double beta, double *out, mpt_error *err) {
  b->xfer_beta = beta;
  int rc = bo_model_reoffset(b, err);
  double lml = 0, m, sc;
  if (rc == 0) rc = mpt_gp_log_marginal(b->gp, NULL, 0, 0, &lml, err);
  mpt_gp_normalization(b->gp, &m, &sc);
  *out = lml - mpt_gp_n_obs(b->gp) * log(sc > 0 ? sc : 1);
  return rc;
}

int bo_transfer_after(bo_state *b, mpt_error *err) {
  bo_transfer *x = b->xfer;
  if (!x || !b->xfer_pz || !b->gp) return 0;
  int rc0, off = (x->off_stalled && bo_model_stalled(b)) || (b->n_obs + b->n_pend) % x->every != 0;
  b->xfer_beta = off ? 0.0 : 1.0;
  if (!off) {
    fit_weights(b, x);
    prior_mean(b, x);
  }
  int icm = x->icm == 1 || (x->icm == 2 && x->min_cover >= 0.5);
  if (!off && icm && (rc0 = icm_prior_mean(b, x, err)) != 0) return rc0;
  if (!off && x->by_loo && (rc0 = loo_select(b, x, err)) != 0) return rc0;
  if (off || !x->by_evidence || mpt_gp_n_obs(b->gp) < 3) return bo_model_reoffset(b, err);
  double with = 0, without = 0; /* the prior mean stays when the observations are likelier with it */
  int rc = evidence(b, 0.0, &without, err);
  if (rc == 0) rc = evidence(b, 1.0, &with, err);
  if (rc == 0 && with < without) rc = evidence(b, 0.0, &without, err);
  return rc;
}

void bo_transfer_shift(const bo_state *b, int64_t b0, int64_t b1, double *mean) {
  if (!b->xfer_pz) return;
  for (int64_t c = b0; c < b1; c++) mean[c - b0] += b->xfer_beta * b->xfer_pz[bo_slot_id(b, c)];
}

const double *bo_transfer_residuals(const bo_state *b, const double *t, int n, int64_t upto, double *out) {
  if (!b->xfer_pz) return t;
  int k = 0;
  for (int64_t i = 0; i < upto && k < n; i++)
    if (b->obs_ok[i]) { out[k] = t[k] - bo_transfer_offset(b, b->obs_id[i]); k++; }
  return out;
}
