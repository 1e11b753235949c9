/* gp/gp_ei_pool.c: the pool of the best P candidates of a range by expected improvement (gp/gp_ei_pool.h): one pass
 * over the range in blocks (posterior from the GP's maintained state), a heap of P whose root is the worst
 * kept, sorted at the end. The EI arithmetic is bo's scan's, operation for operation (the same bits); the
 * order by log EI alone is the one of the pool of a batch (mpt_gp_log_ei, strategies/bo/bo_pool.c). */
#include "gp/gp_ei_pool.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>

#define POOL_BLOCK 4096

int mpt_gp_pool_before(const mpt_gp_pool_item *a, const mpt_gp_pool_item *b) {
  if (a->tier != b->tier) return a->tier > b->tier;
  if (a->key != b->key) return a->key > b->key;
  return a->id < b->id;
}

static double norm_cdf(double z) { return 0.5 * erfc(-z / M_SQRT2); }
static double log_norm_pdf(double z) { return -0.5 * z * z - 0.9189385332046727; }

/* the item of a candidate with normalized mean mu and variance var, output scale sc (bo's scan and
 * feasible_fallback: sd as each of them rounds it) */
static mpt_gp_pool_item ei_item(double mu, double var, double sc, double fb, double xi, int64_t id) {
  mpt_gp_pool_item it = {0, 0, id, 0, 0};
  double sd = sc * sqrt(var) / sc, sf = sqrt(var > 0 ? var : 0.0);
  if (sd < 1e-12) sd = 1e-12;
  if (sf < 1e-12) sf = 1e-12;
  double z = (fb - xi - mu) / sd, zf = (fb - xi - mu) / sf;
  if (z > -6) {
    it.tier = 1;
    it.key = sd * (z * norm_cdf(z) + exp(log_norm_pdf(z)));
  } else {
    it.key = log(sd / (z * z)) - 0.5 * z * z - 0.9189385332046727;
  }
  it.log_ei = zf > -6 ? log(sf * (zf * norm_cdf(zf) + exp(log_norm_pdf(zf)))) : log(sf / (zf * zf)) + log_norm_pdf(zf);
  if (!(it.log_ei > -INFINITY)) it.log_ei = -DBL_MAX;
  return it;
}

/* heap of n items, the root the one that goes last: sift item i down */
static void sift_down(mpt_gp_pool_item *h, int n, int i) {
  for (;;) {
    int w = i, l = 2 * i + 1, r = l + 1;
    if (l < n && mpt_gp_pool_before(&h[w], &h[l])) w = l;
    if (r < n && mpt_gp_pool_before(&h[w], &h[r])) w = r;
    if (w == i) return;
    mpt_gp_pool_item t = h[i];
    h[i] = h[w];
    h[w] = t;
    i = w;
  }
}

static void sift_up(mpt_gp_pool_item *h, int i) {
  while (i > 0 && mpt_gp_pool_before(&h[(i - 1) / 2], &h[i])) {
    mpt_gp_pool_item t = h[i];
    h[i] = h[(i - 1) / 2];
    h[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static int cmp_items(const void *a, const void *b) {
  const mpt_gp_pool_item *x = a, *y = b;
  return mpt_gp_pool_before(x, y) ? -1 : mpt_gp_pool_before(y, x) ? 1 : 0;
}

double mpt_gp_log_ei(double u, double var) {
  double sd = sqrt(var);
  if (sd < 1e-12) sd = 1e-12;
  double z = u / sd;
  if (z > -6) return log(sd * (z * 0.5 * erfc(-z / M_SQRT2) + exp(-0.5 * z * z - 0.9189385332046727)));
  return log(sd / (z * z)) - 0.5 * z * z - 0.9189385332046727;
}

int mpt_gp_pool_merge(mpt_gp_pool_item *items, int n, int P) {
  qsort(items, (size_t)n, sizeof *items, cmp_items);
  return n < P ? n : P;
}

/* the pass of mpt_gp_ei_pool (by_log 0) and mpt_gp_log_ei_pool (1) */
static int pool_pass(const mpt_gp *gp, int64_t begin, int64_t end, int64_t id_offset, const uint8_t *skip, double fb,
                     double xi, int P, int by_log, mpt_gp_pool_item *out) {
  double m, sc, mean[POOL_BLOCK], var[POOL_BLOCK];
  mpt_gp_normalization(gp, &m, &sc);
  int n = 0;
  for (int64_t b0 = begin; b0 < end && P > 0; b0 += POOL_BLOCK) {
    int64_t b1 = b0 + POOL_BLOCK < end ? b0 + POOL_BLOCK : end;
    mpt_gp_predict_block_var(gp, b0, b1, mean, var);
    for (int64_t c = b0; c < b1; c++) {
      if (skip && skip[c - begin]) continue;
      mpt_gp_pool_item it = {0, 0, c + id_offset, 0, 0};
      if (by_log) it.key = it.log_ei = mpt_gp_log_ei(fb - xi - (mean[c - b0] - m) / sc, var[c - b0]);
      else it = ei_item((mean[c - b0] - m) / sc, var[c - b0], sc, fb, xi, c + id_offset);
      if (n < P) {
        out[n] = it;
        sift_up(out, n++);
      } else if (mpt_gp_pool_before(&it, &out[0])) {
        out[0] = it;
        sift_down(out, n, 0);
      }
    }
  }
  return mpt_gp_pool_merge(out, n, P);
}

int mpt_gp_ei_pool(const mpt_gp *gp, int64_t begin, int64_t end, int64_t id_offset, const uint8_t *skip, double fb,
                   double xi, int P, mpt_gp_pool_item *out) {
  return pool_pass(gp, begin, end, id_offset, skip, fb, xi, P, 0, out);
}

int mpt_gp_log_ei_pool(const mpt_gp *gp, int64_t begin, int64_t end, int64_t id_offset, const uint8_t *skip, double fb,
                       double xi, int P, mpt_gp_pool_item *out) {
  return pool_pass(gp, begin, end, id_offset, skip, fb, xi, P, 1, out);
}
