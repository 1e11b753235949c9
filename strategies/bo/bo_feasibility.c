/* strategies/bo/bo_feasibility.c: the probability of feasibility of bo's candidates (strategies/bo/bo.c): the
 * mean of the feasibility GP (1 ok / 0 failed labels) from kernel values cached per candidate and extended
 * as failures and successes arrive, so that the candidates asked for again and again cost one dot product;
 * and the order in which the scan asks for it (contenders by EI, largest first, until EI alone cannot win),
 * with the heap that orders them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_feasibility.h"

/* Feasibility mean of candidate c. The candidates whose p is asked for are mostly the same from one
 * ask to the next (high EI, under the threshold), so their kernel values to the feasibility model's
 * observations are kept (FEAS_SLOTS candidates, with their inputs; the least recently used slot is reused) and
 * only extended by the observations added since: the mean is then one dot product, the same sum as
 * mpt_gp_mean_with_weights (mpt_gp_mean_from_kernel). FEAS_SLOTS exceeds the contenders of an ask from a pool of pending evaluations
 * (2 per pending one: about 514 with 256 workers, each asked again at the next ask): with fewer slots than
 * that, every slot is reused before it is asked for again and every p costs a row of kernel values.
 * Rows grow by half (FEAS_SLOTS x FEAS_CACHE_MAX_OBS doubles at most: 128 MiB). */
#define FEAS_SLOTS 2048
#define FEAS_CACHE_MAX_OBS 8192

/* Kept with the slots, after fs_id's FEAS_SLOTS ids: their last uses (a count of the asks for p that hit or
 * filled them; 0: never used), the count itself, and the falpha_n their mean was last computed with (0: none);
 * after fs_x's FEAS_SLOTS x D inputs: that mean. Within one model (the picks of an ask, the scans' rounds of
 * contenders) a candidate's p is asked for again and again: it is then read, not summed again. */
static int64_t *slot_used(bo_state *b) { return b->fs_id + FEAS_SLOTS; }
static int64_t *slot_mean_n(bo_state *b) { return b->fs_id + 2 * FEAS_SLOTS + 1; }
static double *slot_mean(bo_state *b) { return b->fs_x + (size_t)FEAS_SLOTS * (size_t)b->D; }

/* the slot for a candidate not cached: the least recently used one (a pass over the slots, far less than the
 * row of kernel values it is for) */
static int slot_to_reuse(bo_state *b) {
  const int64_t *used = slot_used(b);
  int sl = 0;
  for (int i = 1; i < FEAS_SLOTS; i++)
    if (used[i] < used[sl]) sl = i;
  return sl;
}

static double feas_mean(bo_state *b, int64_t c) {
  int n = mpt_gp_n_obs(b->fgp);
  if (n > FEAS_CACHE_MAX_OBS) return mpt_gp_mean_with_weights(b->fgp, b->falpha, b->fm0, bo_point(b, c));
  if (!b->fslot) {
    b->fslot = malloc(sizeof(int32_t) * (size_t)b->N);
    b->fs_id = calloc(3 * FEAS_SLOTS + 1, sizeof(int64_t)); /* the ids, slot_used, slot_mean_n */
    b->fs_n = calloc(FEAS_SLOTS, sizeof(int));
    b->fs_x = malloc(sizeof(double) * FEAS_SLOTS * (size_t)(b->D + 1)); /* the inputs, slot_mean */
    if (!b->fslot || !b->fs_id || !b->fs_n || !b->fs_x) { /* out of memory: no cache (destroy frees them once) */
      free(b->fslot); free(b->fs_id); free(b->fs_n); free(b->fs_x);
      b->fslot = NULL;
      b->fs_id = NULL;
      b->fs_n = NULL;
      b->fs_x = NULL;
      return mpt_gp_mean_with_weights(b->fgp, b->falpha, b->fm0, bo_point(b, c));
    }
    for (int64_t i = 0; i < b->N; i++) b->fslot[i] = -1;
    for (int i = 0; i < FEAS_SLOTS; i++) b->fs_id[i] = -1;
  }
  if (n > b->fs_stride) { /* wider rows: copy the cached values over */
    int ns = b->fs_stride ? b->fs_stride + b->fs_stride / 2 : 256;
    if (ns < n) ns = n;
    ns = (ns + 63) / 64 * 64;
    if (ns > FEAS_CACHE_MAX_OBS) ns = FEAS_CACHE_MAX_OBS;
    double *nk = malloc(sizeof(double) * (size_t)FEAS_SLOTS * (size_t)ns);
    if (!nk) return mpt_gp_mean_with_weights(b->fgp, b->falpha, b->fm0, bo_point(b, c));
    for (int i = 0; i < FEAS_SLOTS && b->fs_k; i++)
      memcpy(nk + (size_t)i * ns, b->fs_k + (size_t)i * b->fs_stride, sizeof(double) * (size_t)b->fs_n[i]);
    free(b->fs_k);
    b->fs_k = nk;
    b->fs_stride = ns;
  }
  int sl = b->fslot[c];
  if (sl < 0) { /* a new slot: its candidate's inputs are kept with its kernel values */
    sl = slot_to_reuse(b);
    if (b->fs_id[sl] >= 0) b->fslot[b->fs_id[sl]] = -1;
    b->fs_id[sl] = c;
    b->fs_n[sl] = 0;
    slot_mean_n(b)[sl] = 0;
    b->fslot[c] = sl;
    bo_encode(b, c, b->fs_x + (size_t)sl * (size_t)b->D);
  }
  slot_used(b)[sl] = ++slot_used(b)[FEAS_SLOTS];
  if (slot_mean_n(b)[sl] == b->falpha_n && b->fs_n[sl] == n) return slot_mean(b)[sl];
  const double *x = b->fs_x + (size_t)sl * (size_t)b->D;
  double *k = b->fs_k + (size_t)sl * b->fs_stride;
  if (b->fs_n[sl] < n) {
    mpt_gp_kernel_obs_range(b->fgp, x, b->fs_n[sl], n, k + b->fs_n[sl]);
    b->fs_n[sl] = n;
  }
  slot_mean_n(b)[sl] = b->falpha_n;
  return slot_mean(b)[sl] = mpt_gp_mean_from_kernel(b->falpha, b->fm0, k, n);
}

/* The feasibility observations added since the last scan enter the cached candidates' kernel values
 * all at once (one vectorized call per observation over the slots' kept inputs, the same values as
 * feas_mean's own extension): slots up to 4 observations behind; staler ones are extended when asked for. */
void bo_feas_extend(bo_state *b) {
  int n = mpt_gp_n_obs(b->fgp);
  if (!b->fs_k || !b->fs_id || n > b->fs_stride) return;
  int64_t sls[FEAS_SLOTS];
  double kv[FEAS_SLOTS];
  for (int j = n - 4 > 0 ? n - 4 : 0; j < n; j++) {
    int cnt = 0;
    for (int sl = 0; sl < FEAS_SLOTS; sl++)
      if (b->fs_id[sl] >= 0 && b->fs_n[sl] == j) sls[cnt++] = sl;
    mpt_gp_kernel_obs_points(b->fgp, j, cnt, b->fs_x, (size_t)b->D, sls, kv);
    for (int q = 0; q < cnt; q++) {
      b->fs_k[(size_t)sls[q] * b->fs_stride + j] = kv[q];
      b->fs_n[sls[q]] = j + 1;
    }
  }
}

/* probability of feasibility of candidate c (feasibility GP mean, clipped to [1e-12, 1]) */
double bo_feas_p(bo_state *b, int64_t c) {
  double p = feas_mean(b, c);
  return p > 1 ? 1 : p < 1e-12 ? 1e-12 : p;
}


/* a above b in the heap: larger key, or the same key and a smaller id */
static inline int ranked_above(const bo_ranked *a, const bo_ranked *b) {
  return a->key > b->key || (a->key == b->key && a->id < b->id);
}

static void ranked_sift_down(bo_ranked *h, int64_t n, int64_t i) {
  bo_ranked x = h[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && ranked_above(&h[c + 1], &h[c])) c++;
    if (!ranked_above(&h[c], &x)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

void bo_ranked_heapify(bo_ranked *h, int64_t n) {
  for (int64_t i = n / 2 - 1; i >= 0; i--) ranked_sift_down(h, n, i);
}

bo_ranked bo_ranked_pop(bo_ranked *h, int64_t *n) {
  bo_ranked top = h[0];
  h[0] = h[--*n];
  if (*n > 1) ranked_sift_down(h, *n, 0);
  return top;
}

void bo_feas_resolve(bo_state *b, int q, int log_domain, double *best, int64_t *best_id) {
  bo_ranked *h = b->fq[q];
  int64_t n = b->n_fq[q];
  bo_ranked_heapify(h, n);
  while (n > 0 && h[0].key >= *best) {
    bo_ranked c = bo_ranked_pop(h, &n);
    double p = bo_feas_p(b, c.id);
    if (p < b->feas_threshold) continue;
    double v = log_domain ? c.key + log(p) : c.key * p;
    if (v > *best || (v == *best && c.id < *best_id)) {
      *best = v;
      *best_id = c.id;
    }
  }
  b->n_fq[q] = 0;
}
