/* strategies/bo/bo_transfer.c: bo's transfer from related observations (other device classes, --prior files).
 *
 * Summary. Related observations go into a strategies/related.h store (one log-time per configuration and
 * source); each configuration's summary is the mean over the sources that measured it of its standardized
 * log-time. Configurations no source measured get the posterior mean of a GP (the candidates' GP inputs) over at
 * most transfer_sample related configurations: the best quarter by summary and the rest evenly spaced over the
 * summary's order, so an ask stays fast with tens of thousands of related records (a brute-forced prior of
 * another GPU covers every configuration and needs no GP). Those that failed on every source that measured
 * them get the worst summary. The summary is standardized over the candidates: pz.
 *
 * Use. The GP models the transformed objective minus a prior mean beta * pz (its outputs are the residuals, the
 * scans add the prior mean back: bo_transfer_shift), beta fitted at every ask by least squares of the GP's
 * transformed objectives on pz, shrunk towards transfer_weight with the weight transfer_shrink and kept in
 * [0, 4]: where the related devices mislead, beta falls and bo is bo again. The first ask's initial sample
 * begins with the transfer_init best related configurations. In a run the summary is refreshed when the
 * related observations have grown by a quarter since the last refresh (online transfer: the other classes'
 * observations arrive at every round). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_transfer.h"
#include "strategies/related.h"

typedef struct bo_transfer {
  int on, n_seed, sample, seeded;
  double weight0, shrink;
  mpt_related *rel;
  int64_t version;       /* of rel that pz is of (-1: none) */
  int64_t count_at;      /* related count at the last refresh */
  int dirty;             /* pz changed since the GP's outputs were offset */
  double *pz;
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
  x->version = -1;
  b->xfer_beta = x->weight0;
  return 0;
}

void bo_transfer_free(bo_state *b) {
  bo_transfer *x = b->xfer;
  if (!x) return;
  mpt_related_free(x->rel);
  free(x->pz);
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

/* pz from the related store; 0 or an error */
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
  if (rc) return rc;
  standardize(x->pz, b->N);
  b->xfer_pz = x->pz;
  x->version = mpt_related_version(x->rel);
  x->count_at = mpt_related_count(x->rel);
  x->dirty = 1;
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
  if (rc == 0 && !x->seeded && b->init_pos == 0) seed_initial(b, x);
  x->seeded = 1;
  return rc;
}

/* beta: least squares of the GP's transformed objectives t on pz, shrunk towards weight0, in [0, 4] */
static double fit_beta(bo_state *b, const bo_transfer *x) {
  int n = mpt_gp_n_obs(b->gp), k = 0;
  double st = 0, sp = 0, stp = 0, spp = 0;
  for (int64_t i = 0; i < b->n_processed && k < n; i++) {
    if (!b->obs_ok[i]) continue;
    double t = b->post && n >= 2 ? b->ty[k] : bo_transform(b, b->obs_y[i]), p = x->pz[b->obs_id[i]];
    st += t; sp += p; stp += t * p; spp += p * p;
    k++;
  }
  double sxy = k ? stp - st * sp / k : 0, sxx = k ? spp - sp * sp / k : 0;
  double beta = (sxy + x->shrink * x->weight0) / (sxx + x->shrink + 1e-12);
  return beta < 0 ? 0 : beta > 4 ? 4 : beta;
}

int bo_transfer_after(bo_state *b, mpt_error *err) {
  bo_transfer *x = b->xfer;
  if (!x || !b->xfer_pz || !b->gp) return 0;
  double beta = fit_beta(b, x);
  if (!x->dirty && fabs(beta - b->xfer_beta) < 1e-3) return 0;
  b->xfer_beta = beta;
  x->dirty = 0;
  return bo_model_reoffset(b, err);
}

void bo_transfer_shift(const bo_state *b, int64_t b0, int64_t b1, double *mean) {
  if (!b->xfer_pz) return;
  for (int64_t c = b0; c < b1; c++) mean[c - b0] += b->xfer_beta * b->xfer_pz[c];
}

const double *bo_transfer_residuals(const bo_state *b, const double *t, int n, int64_t upto, double *out) {
  if (!b->xfer_pz) return t;
  int k = 0;
  for (int64_t i = 0; i < upto && k < n; i++)
    if (b->obs_ok[i]) { out[k] = t[k] - bo_transfer_offset(b, b->obs_id[i]); k++; }
  return out;
}
