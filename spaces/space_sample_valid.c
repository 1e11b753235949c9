/* spaces/space_sample_valid.c: Latin-hypercube samples that follow the value shares of the VALID
 * configurations (mpt_space_sample_lhs_valid, mpt_space_sample_lhs_conditional), where
 * space_sample.c's index-range LHS gives every value the same share, a value the constraints mostly
 * exclude as often as a free one. Used by bo's initial design (docs/PERFORMANCE.md, "bo: initial
 * design with the valid marginals"). mpt_space_sample_pairs refines an lhs_valid design towards more
 * covered value pairs (bo's sampling=pairs, pairs-strata, pairs-swap; section "bo: pairwise-coverage
 * initial designs"). The nearest-configuration searches and value counts are in space_nearest.c. */
#include "spaces/space_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  mpt_nearest *nb = NULL;
  int64_t m = 0;
  if (!off || !cnt || !perm || !u || !tgt || !used) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  /* cumulative counts: cnt[off + v] = valid configurations with value index <= v */
  mpt_space__value_counts(sp, params, np, off, cnt);
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
  /* each point the nearest unused configuration: one pass over the valid set for all of them */
  if (mpt_space__nearest_batch(sp, params, np, tgt, A, n, &nb)) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  for (int64_t j = 0; j < n; j++) {
    int64_t pick = mpt_space__nearest_pick(nb, j, used, rng);
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
out:
  mpt_space__nearest_free(nb);
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
  /* the configurations bucketed by the value of the first parameter (increasing ids within a bucket), so
   * each point narrows from its bucket, not from all N: the same sets in the same order as filtering all */
  int64_t *byv = malloc(sizeof(int64_t) * (size_t)(N > 0 ? N : 1)), *off = calloc((size_t)maxv + 1, sizeof(int64_t));
  double *u = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)A);
  int *tgt = malloc(sizeof(int) * (size_t)A);
  uint8_t *used = calloc((size_t)(N > 0 ? N : 1), 1);
  int64_t m = 0;
  if (!cnt || !perm || !set || !byv || !off || !u || !tgt || !used) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  if (np > 0) {
    int nv0 = mpt_space_n_values(sp, params[0]);
    for (int64_t c = 0; c < N; c++) off[mpt_space_value_index(sp, c, params[0]) + 1]++;
    for (int v = 0; v < nv0; v++) off[v + 1] += off[v];
    for (int v = 0; v < nv0; v++) cnt[v] = off[v]; /* next free slot of each bucket */
    for (int64_t c = 0; c < N; c++) byv[cnt[mpt_space_value_index(sp, c, params[0])]++] = c;
  }
  for (int d = 0; d < np; d++) strata(rng, n, perm, u + d, (size_t)A);
  for (int64_t j = 0; j < n && N > 0; j++) {
    /* narrow the valid set parameter by parameter to the value at this point's conditional quantile */
    int64_t ns = N;
    for (int d = 0; d < np; d++) {
      int nv = mpt_space_n_values(sp, params[d]);
      double target = u[(size_t)j * A + d] * (double)ns;
      int v = 0;
      if (d == 0) {
        for (int64_t cum = off[1] - off[0]; v < nv - 1 && (double)cum <= target; ++v, cum += off[v + 1] - off[v]) {}
        ns = off[v + 1] - off[v];
        memcpy(set, byv + off[v], sizeof(int64_t) * (size_t)ns);
      } else {
        memset(cnt, 0, sizeof(int64_t) * (size_t)nv);
        for (int64_t q = 0; q < ns; q++) cnt[mpt_space_value_index(sp, set[q], params[d])]++;
        for (int64_t cum = cnt[0]; v < nv - 1 && (double)cum <= target; cum += cnt[++v]) {}
        int64_t w = 0;
        for (int64_t q = 0; q < ns; q++)
          if (mpt_space_value_index(sp, set[q], params[d]) == v) set[w++] = set[q];
        ns = w;
      }
      tgt[d] = v;
    }
    /* no parameter to narrow by: any configuration */
    int64_t pick = np == 0 ? (int64_t)mpt_rng_below(rng, (uint64_t)N) : ns > 0 ? set[mpt_rng_below(rng, (uint64_t)ns)] : -1;
    if (pick < 0 || used[pick]) pick = mpt_space__nearest_unused(sp, params, np, tgt, used, rng); /* taken already */
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
out:
  free(cnt);
  free(perm);
  free(set);
  free(byv);
  free(off);
  free(u);
  free(tgt);
  free(used);
  return m;
}

/* Pairwise coverage (mpt_space_sample_pairs): the weight of each cell (value a of p, value b of q) is
 * its count among the valid configurations raised to `power`, normalized so each parameter pair sums
 * to 1; the design's score is the summed weight of the cells it covers. */
typedef struct pair_tab {
  int np, P;        /* parameters, parameter pairs */
  int *nv;          /* values per parameter */
  int64_t *poff;    /* first cell of each pair (cells are 64-bit: two parameters of 65536 values each) */
  double *w;        /* cell weights */
  int *cov;         /* design points covering each cell */
} pair_tab;

static void pair_cells(const pair_tab *t, const int *v, int64_t *cell) {
  for (int p = 0, k = 0; p < t->np; p++)
    for (int q = p + 1; q < t->np; q++, k++) cell[k] = t->poff[k] + (int64_t)v[p] * t->nv[q] + v[q];
}

/* the most cells the pair table may have (12 bytes each: 768 MiB); a larger one is not built and the
 * design stays the LHS with the valid marginals it starts from */
#define PAIR_CELLS_MAX ((int64_t)1 << 26)

static void row_values(const mpt_space *sp, const int *params, int np, int64_t c, int *v) {
  for (int d = 0; d < np; d++) v[d] = mpt_space_value_index(sp, c, params[d]);
}

/* out-of-band count of one value: below floor(share n) or above ceil(share n) */
static int band_dev(int cnt, int lo, int hi) { return cnt > hi ? cnt - hi : cnt < lo ? lo - cnt : 0; }

int64_t mpt_space_sample_pairs(const mpt_space *sp, const int *params, int np, mpt_rng *rng, int64_t n,
                               double power, int keep_strata, int64_t max_candidates, int64_t *ids) {
  int64_t m = mpt_space_sample_lhs_valid(sp, params, np, rng, n, ids);
  if (m < 2 || np < 2) return m;
  int64_t N = mpt_space_size(sp);
  pair_tab t = {.np = np, .P = np * (np - 1) / 2};
  int64_t tot = 0;
  int vtot = 0;
  t.nv = malloc(sizeof(int) * (size_t)np);
  t.poff = malloc(sizeof(int64_t) * (size_t)t.P);
  int *voff = malloc(sizeof(int) * (size_t)np);
  if (!t.nv || !t.poff || !voff) goto nomem;
  for (int d = 0; d < np; d++) {
    t.nv[d] = mpt_space_n_values(sp, params[d]);
    voff[d] = vtot;
    vtot += t.nv[d];
  }
  for (int p = 0, k = 0; p < np; p++)
    for (int q = p + 1; q < np; q++, k++) {
      t.poff[k] = tot;
      tot += (int64_t)t.nv[p] * t.nv[q];
    }
  if (tot > PAIR_CELLS_MAX) {
    free(t.nv); free(t.poff); free(voff);
    return m;
  }
  t.w = calloc((size_t)tot, sizeof(double));
  t.cov = calloc((size_t)tot, sizeof(int));
  int64_t nc = max_candidates > 0 && max_candidates < N ? max_candidates : N;
  int *vals = malloc(sizeof(int) * (size_t)np * (size_t)(m + 1));
  int64_t *cells = malloc(sizeof(int64_t) * (size_t)t.P * (size_t)m);
  int64_t *ccell = malloc(sizeof(int64_t) * (size_t)t.P);
  int *vcnt = calloc((size_t)vtot, sizeof(int));
  int *lo = malloc(sizeof(int) * (size_t)vtot), *hi = malloc(sizeof(int) * (size_t)vtot);
  int64_t *cand = malloc(sizeof(int64_t) * (size_t)nc);
  double *vsh = calloc((size_t)vtot, sizeof(double)), *psum = calloc((size_t)t.P, sizeof(double));
  uint8_t *used = calloc((size_t)N, 1);
  if (!t.w || !t.cov || !vals || !cells || !ccell || !vcnt || !lo || !hi || !cand || !vsh || !psum || !used) {
    m = MPT_ERR_NOMEM;
    goto done;
  }
  /* cell counts among the valid configurations, then weights count^power normalized per pair */
  int *cv = vals + (size_t)np * (size_t)m;
  for (int64_t c = 0; c < N; c++) {
    row_values(sp, params, np, c, cv);
    pair_cells(&t, cv, ccell);
    for (int k = 0; k < t.P; k++) t.w[ccell[k]] += 1.0;
    for (int d = 0; d < np; d++) vsh[voff[d] + cv[d]] += 1.0; /* valid count of each value */
  }
  for (int p = 0, k = 0; p < np; p++)
    for (int q = p + 1; q < np; q++, k++) {
      int64_t nk = (int64_t)t.nv[p] * t.nv[q];
      for (int64_t i = 0; i < nk; i++) {
        double *w = &t.w[t.poff[k] + i];
        *w = *w > 0 ? pow(*w, power) : 0.0;
        psum[k] += *w;
      }
      for (int64_t i = 0; i < nk; i++)
        if (psum[k] > 0) t.w[t.poff[k] + i] /= psum[k];
    }
  for (int i = 0; i < vtot; i++) {
    int64_t cm = (int64_t)vsh[i] * m;
    lo[i] = (int)(cm / N);
    hi[i] = (int)((cm + N - 1) / N);
  }
  for (int64_t j = 0; j < m; j++) {
    used[ids[j]] = 1;
    row_values(sp, params, np, ids[j], vals + (size_t)j * np);
    pair_cells(&t, vals + (size_t)j * np, cells + (size_t)j * t.P);
    for (int k = 0; k < t.P; k++) t.cov[cells[(size_t)j * t.P + k]]++;
    for (int d = 0; d < np; d++) vcnt[voff[d] + vals[(size_t)j * np + d]]++;
  }
  if (keep_strata == 2) {
    /* exchanges of one or two parameters' values between two design points, when both results are
     * valid and new and the covered weight rises: every value's count stays lhs_valid's */
    int dims = mpt_space_dims(sp), *ca = malloc(sizeof(int) * (size_t)dims), *cb = malloc(sizeof(int) * (size_t)dims);
    int *na = malloc(sizeof(int) * (size_t)np * 2);
    int64_t *nca = malloc(sizeof(int64_t) * (size_t)t.P * 2);
    if (!ca || !cb || !na || !nca) {
      free(ca); free(cb); free(na); free(nca);
      m = MPT_ERR_NOMEM;
      goto done;
    }
    int *nb = na + np;
    int64_t *ncb = nca + t.P;
    for (int sweep = 0; sweep < 8; sweep++) {
      int improved = 0;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = i + 1; j < m; j++)
          for (int d = 0; d < np; d++)
            for (int e = d; e < np; e++) {
              int *va = vals + (size_t)i * np, *vb = vals + (size_t)j * np;
              if (va[d] == vb[d] && (e == d || va[e] == vb[e])) continue;
              memcpy(na, va, sizeof(int) * (size_t)np);
              memcpy(nb, vb, sizeof(int) * (size_t)np);
              na[d] = vb[d]; nb[d] = va[d];
              na[e] = vb[e]; nb[e] = va[e];
              mpt_space_config(sp, ids[i], ca);
              mpt_space_config(sp, ids[j], cb);
              ca[params[d]] = na[d]; cb[params[d]] = nb[d];
              ca[params[e]] = na[e]; cb[params[e]] = nb[e];
              int64_t ia = mpt_space_lookup(sp, ca), ib = mpt_space_lookup(sp, cb);
              if (ia < 0 || ib < 0 || ia == ids[j] || used[ia] || used[ib]) continue;
              pair_cells(&t, na, nca);
              pair_cells(&t, nb, ncb);
              int64_t *ci = cells + (size_t)i * t.P, *cj = cells + (size_t)j * t.P;
              double g = 0;
              for (int k = 0; k < t.P; k++) {
                if (--t.cov[ci[k]] == 0) g -= t.w[ci[k]];
                if (--t.cov[cj[k]] == 0) g -= t.w[cj[k]];
                if (t.cov[nca[k]]++ == 0) g += t.w[nca[k]];
                if (t.cov[ncb[k]]++ == 0) g += t.w[ncb[k]];
              }
              if (g > 1e-12) {
                memcpy(ci, nca, sizeof(int64_t) * (size_t)t.P);
                memcpy(cj, ncb, sizeof(int64_t) * (size_t)t.P);
                memcpy(va, na, sizeof(int) * (size_t)np);
                memcpy(vb, nb, sizeof(int) * (size_t)np);
                used[ids[i]] = used[ids[j]] = 0;
                used[ia] = used[ib] = 1;
                ids[i] = ia;
                ids[j] = ib;
                improved = 1;
              } else {
                for (int k = 0; k < t.P; k++) {
                  t.cov[nca[k]]--; t.cov[ncb[k]]--;
                  t.cov[ci[k]]++; t.cov[cj[k]]++;
                }
              }
            }
      if (!improved) break;
    }
    free(ca); free(cb); free(na); free(nca);
    goto done;
  }
  /* first-improvement sweeps over the candidates: each replaces the design point whose exchange for it
   * raises the covered weight most (strictly; under keep_strata only exchanges that move no value's
   * count further outside its band [floor(f m), ceil(f m)]) */
  for (int sweep = 0; sweep < 8; sweep++) {
    if (nc == N)
      for (int64_t c = 0; c < N; c++) cand[c] = c;
    else
      for (int64_t c = 0; c < nc; c++) cand[c] = (int64_t)mpt_rng_below(rng, (uint64_t)N);
    mpt_rng_shuffle(rng, cand, nc);
    int improved = 0;
    for (int64_t ci = 0; ci < nc; ci++) {
      int64_t c = cand[ci];
      if (used[c]) continue;
      row_values(sp, params, np, c, cv);
      pair_cells(&t, cv, ccell);
      int64_t bj = -1;
      double best = 1e-12;
      for (int64_t j = 0; j < m; j++) {
        const int64_t *jc = cells + (size_t)j * t.P;
        const int *jv = vals + (size_t)j * np;
        if (keep_strata) {
          int dd = 0;
          for (int d = 0; d < np; d++) {
            if (jv[d] == cv[d]) continue;
            int a = voff[d] + jv[d], b = voff[d] + cv[d];
            dd += band_dev(vcnt[a] - 1, lo[a], hi[a]) - band_dev(vcnt[a], lo[a], hi[a]);
            dd += band_dev(vcnt[b] + 1, lo[b], hi[b]) - band_dev(vcnt[b], lo[b], hi[b]);
          }
          if (dd > 0) continue;
        }
        double g = 0;
        for (int k = 0; k < t.P; k++) {
          if (jc[k] == ccell[k]) continue;
          if (t.cov[ccell[k]] == 0) g += t.w[ccell[k]];
          if (t.cov[jc[k]] == 1) g -= t.w[jc[k]];
        }
        if (g > best) {
          best = g;
          bj = j;
        }
      }
      if (bj < 0) continue;
      int64_t *jc = cells + (size_t)bj * t.P;
      int *jv = vals + (size_t)bj * np;
      for (int k = 0; k < t.P; k++) {
        t.cov[jc[k]]--;
        t.cov[ccell[k]]++;
        jc[k] = ccell[k];
      }
      for (int d = 0; d < np; d++) {
        vcnt[voff[d] + jv[d]]--;
        vcnt[voff[d] + cv[d]]++;
        jv[d] = cv[d];
      }
      used[ids[bj]] = 0;
      used[c] = 1;
      ids[bj] = c;
      improved = 1;
    }
    if (!improved) break;
  }
done:
  free(t.w); free(t.cov); free(vals); free(cells); free(ccell); free(vcnt); free(lo); free(hi); free(cand);
  free(vsh); free(psum); free(used);
  free(t.nv); free(t.poff); free(voff);
  return m;
nomem:
  free(t.nv); free(t.poff); free(voff);
  return MPT_ERR_NOMEM;
}
