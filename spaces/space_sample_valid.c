/* spaces/space_sample_valid.c: Latin-hypercube samples that follow the value shares of the VALID
 * configurations (mpt_space_sample_lhs_valid, mpt_space_sample_lhs_conditional), where
 * space_sample.c's index-range LHS gives every value the same share, a value the constraints mostly
 * exclude as often as a free one. Used by bo's initial design (docs/PERFORMANCE.md, "bo: initial
 * design with the valid marginals"). */
#include "spaces/space.h"

#include <stdlib.h>
#include <string.h>

/* The unused configuration matching most of the target value indices tgt[d] of params[d] (ties: least
 * total index distance, then uniformly at random); -1 when every configuration is used. */
static int64_t nearest_unused(const mpt_space *sp, const int *params, int np, const int *tgt,
                              const uint8_t *used, mpt_rng *rng) {
  int64_t pick = -1, ties = 0, N = mpt_space_size(sp);
  int bm = -1, bdist = 0;
  for (int64_t c = 0; c < N; c++) {
    if (used[c]) continue;
    int match = 0, dist = 0;
    for (int d = 0; d < np; d++) {
      int df = mpt_space_value_index(sp, c, params[d]) - tgt[d];
      match += df == 0;
      dist += df < 0 ? -df : df;
    }
    if (match > bm || (match == bm && dist < bdist)) {
      bm = match;
      bdist = dist;
      pick = c;
      ties = 1;
    } else if (match == bm && dist == bdist && mpt_rng_below(rng, (uint64_t)++ties) == 0) {
      pick = c;
    }
  }
  return pick;
}

/* n stratum positions in [0, 1) for one parameter: a random permutation of the strata, uniform within */
static void strata(mpt_rng *rng, int64_t n, int64_t *perm, double *u, size_t stride) {
  for (int64_t j = 0; j < n; j++) perm[j] = j;
  mpt_rng_shuffle(rng, perm, n);
  for (int64_t j = 0; j < n; j++) u[(size_t)j * stride] = ((double)perm[j] + mpt_rng_uniform(rng)) / (double)n;
}

int64_t mpt_space_sample_lhs_valid(const mpt_space *sp, const int *params, int np, mpt_rng *rng, int64_t n,
                                   int64_t *ids) {
  int64_t N = mpt_space_size(sp);
  int A = np > 0 ? np : 1, tot = 0;
  int *off = malloc(sizeof(int) * (size_t)A);
  for (int d = 0; d < np && off; d++) {
    off[d] = tot;
    tot += mpt_space_n_values(sp, params[d]);
  }
  int64_t *cnt = calloc((size_t)(tot > 0 ? tot : 1), sizeof(int64_t));
  int64_t *perm = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  double *u = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  int *tgt = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1) * (size_t)A);
  uint8_t *used = calloc((size_t)(N > 0 ? N : 1), 1);
  int64_t m = 0;
  if (!off || !cnt || !perm || !u || !tgt || !used) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  /* cumulative counts: cnt[off + v] = valid configurations with value index <= v */
  for (int64_t c = 0; c < N; c++)
    for (int d = 0; d < np; d++) cnt[off[d] + mpt_space_value_index(sp, c, params[d])]++;
  for (int d = 0; d < np; d++) {
    int nv = mpt_space_n_values(sp, params[d]);
    for (int v = 1; v < nv; v++) cnt[off[d] + v] += cnt[off[d] + v - 1];
    strata(rng, n, perm, u, 1);
    for (int64_t j = 0; j < n; j++) {
      double q = u[j] * (double)N; /* the quantile's position among the valid configurations */
      int v = 0;
      while (v < nv - 1 && (double)cnt[off[d] + v] <= q) v++;
      tgt[(size_t)j * A + d] = v;
    }
  }
  for (int64_t j = 0; j < n; j++) {
    int64_t pick = nearest_unused(sp, params, np, tgt + (size_t)j * A, used, rng);
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
out:
  free(off);
  free(cnt);
  free(perm);
  free(u);
  free(tgt);
  free(used);
  return m;
}

int64_t mpt_space_sample_lhs_conditional(const mpt_space *sp, const int *params, int np, mpt_rng *rng,
                                         int64_t n, int64_t *ids) {
  int64_t N = mpt_space_size(sp);
  int A = np > 0 ? np : 1, maxv = 1;
  for (int d = 0; d < np; d++)
    if (mpt_space_n_values(sp, params[d]) > maxv) maxv = mpt_space_n_values(sp, params[d]);
  int64_t *cnt = malloc(sizeof(int64_t) * (size_t)maxv), *perm = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int64_t *set = malloc(sizeof(int64_t) * (size_t)(N > 0 ? N : 1));
  double *u = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)A);
  int *tgt = malloc(sizeof(int) * (size_t)A);
  uint8_t *used = calloc((size_t)(N > 0 ? N : 1), 1);
  int64_t m = 0;
  if (!cnt || !perm || !set || !u || !tgt || !used) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  for (int d = 0; d < np; d++) strata(rng, n, perm, u + d, (size_t)A);
  for (int64_t j = 0; j < n && N > 0; j++) {
    /* narrow the valid set parameter by parameter to the value at this point's conditional quantile */
    int64_t ns = N;
    for (int64_t c = 0; c < ns; c++) set[c] = c;
    for (int d = 0; d < np; d++) {
      int nv = mpt_space_n_values(sp, params[d]);
      memset(cnt, 0, sizeof(int64_t) * (size_t)nv);
      for (int64_t q = 0; q < ns; q++) cnt[mpt_space_value_index(sp, set[q], params[d])]++;
      double target = u[(size_t)j * A + d] * (double)ns;
      int v = 0;
      for (int64_t cum = cnt[0]; v < nv - 1 && (double)cum <= target; cum += cnt[++v]) {}
      tgt[d] = v;
      int64_t w = 0;
      for (int64_t q = 0; q < ns; q++)
        if (mpt_space_value_index(sp, set[q], params[d]) == v) set[w++] = set[q];
      ns = w;
    }
    int64_t pick = ns > 0 ? set[mpt_rng_below(rng, (uint64_t)ns)] : -1;
    if (pick < 0 || used[pick]) pick = nearest_unused(sp, params, np, tgt, used, rng); /* taken already */
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
out:
  free(cnt);
  free(perm);
  free(set);
  free(u);
  free(tgt);
  free(used);
  return m;
}
