/* tests/test_bo_batch.c: what the `bo` strategy asks for on a real brute-forced space (convolution on the
 * A6000, replayed): batched asks of distinct candidates (batch=quantile: resume at a round boundary too), the
 * initial designs (sampling=lhs-valid follows the valid marginals, random_samples, pairwise coverage),
 * binary_weight; batch 1 against picks recorded before the pool of batches, the pool against fantasies over every
 * candidate, and the contract of bo_pool_pass (top P by log EI; slices merged = the whole). Its runs (determinism,
 * resume, failures, errors) are in tests/test_bo.c; the fixture and driver both use in tests/bo_run.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/replay/replay.h"
#include "spaces/space.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_pool.h"
#include "gp/gp.h"
#include "spaces/sys/rng.h"
#include "tests/bo_run.h"

/* ask(16): 16 distinct unseen candidates per round, every option set */
static void test_batch(void **state) {
  (void)state;
  const char *variants[][3] = {
      {"acquisition=ei", "batch=believer", NULL},
      {"acquisition=multi", "batch=liar", NULL},
      {"acquisition=advanced-multi", "kernel=matern52", NULL},
      {"acquisition=lcb-srinivas", "encoding=log2", NULL},
      {"acquisition=poi", "fit_hyperparameters=1", "refit_interval=20"},
      {"acquisition=lcb", "feasibility=off", "exploration=none"},
      {"local_kind=cross", "local_every=1", NULL},
      {"local_kind=hamming+elite", "local_top=3", NULL},
      {"local_kind=box", "local_radius=2", NULL},
      {"encoding=onehot", "feasibility_threshold=0.5", NULL},
      {"encoding=index+onehot", "onehot_weight=1.5", NULL},
      {"batch=quantile", "batch_quantile=1.5", NULL},
  };
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    int n_opts = variants[v][2] ? 3 : 2;
    int64_t ids[128];
    mpt_obs *obs = malloc(sizeof(mpt_obs) * 128);
    assert_int_equal(run(variants[v], n_opts, 3, 128, 16, 128, ids, obs), 128);
    bo_check_valid_distinct(space, ids, 128);
    free(obs);
  }
}

/* batch=quantile (fantasies at mean + q sd): rounds of ask(16) resume exactly at a round boundary
 * (10 initial, then rounds of 16: 58 told), its batches differ from the believer's, and q = 0 is the
 * believer */
static void test_batch_quantile(void **state) {
  (void)state;
  const char *q[] = {"batch=quantile", "batch_quantile=0.5"};
  const char *q0[] = {"batch=quantile", "batch_quantile=0"};
  const char *believer[] = {"batch=believer"};
  int64_t ids[106], ids2[48], bel[106], zero[106], dflt[106];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 106), *o2 = malloc(sizeof(mpt_obs) * 106);
  assert_int_equal(run(q, 2, 5, 220, 16, 106, ids, obs), 106);
  bo_check_valid_distinct(space, ids, 106);
  assert_int_equal(run(NULL, 0, 5, 220, 16, 106, dflt, o2), 106);
  assert_memory_equal(ids, dflt, sizeof ids); /* the default is batch=quantile, batch_quantile=0.5 */
  assert_int_equal(run(believer, 1, 5, 220, 16, 106, bel, o2), 106);
  assert_memory_equal(ids, bel, 11 * sizeof(int64_t)); /* initial sample and the first model pick ... */
  assert_memory_not_equal(ids, bel, sizeof ids);       /* ... the rest of the batches differ */
  assert_int_equal(run(q0, 2, 5, 220, 16, 106, zero, o2), 106);
  assert_memory_equal(zero, bel, sizeof zero);
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, q, 2, 5, 220, &s, &err), 0);
  mpt_strategy_tell(s, obs, 58);
  for (int r = 0; r < 3; r++) {
    assert_int_equal(mpt_strategy_ask(s, 16, ids2 + 16 * r), 16);
    for (int i = 0; i < 16; i++) o2[i] = observe(ids2[16 * r + i]);
    mpt_strategy_tell(s, o2, 16);
  }
  assert_memory_equal(ids + 58, ids2, sizeof ids2);
  mpt_strategy_destroy(s);
  free(obs);
  free(o2);
}

/* initial designs: sampling=lhs-valid (strata by the valid marginals, nearest valid points),
 * sampling=lhs-conditional (LHS of the uniform distribution over valid configurations) and
 * random_samples (part of the design uniform random): deterministic, valid and distinct ids, resume
 * exact (at 60 and at 10 observations); over 20 designs lhs-conditional follows the valid marginals
 * and lhs-valid is closer to them than the index-range maximin LHS (which gives every value the same
 * share); random_samples keeps the first initial_samples - random_samples points of the design and
 * replaces the rest */
static void test_initial_designs(void **state) {
  (void)state;
  const char *lv[] = {"sampling=lhs-valid"}, *lc[] = {"sampling=lhs-conditional"}, *mx[] = {"sampling=maximin"},
             *rs[] = {"random_samples=4"};
  int64_t a[60], b[60], d[60];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 60);
  assert_int_equal(run(mx, 1, 11, 220, 1, 60, d, obs), 60);
  for (int v = 0; v < 2; v++) {
    assert_int_equal(run(v ? lc : lv, 1, 11, 220, 1, 60, a, obs), 60);
    assert_int_equal(run(v ? lc : lv, 1, 11, 220, 1, 60, b, obs), 60);
    assert_memory_equal(a, b, sizeof a);
    bo_check_valid_distinct(space, a, 60);
    assert_memory_not_equal(a, d, 10 * sizeof(int64_t));
    check_resume(v ? lc : lv, 1);
  }
  assert_int_equal(run(NULL, 0, 11, 220, 1, 60, d, obs), 60);
  assert_int_equal(run(rs, 1, 11, 220, 1, 60, b, obs), 60);
  bo_check_valid_distinct(space, b, 60);
  assert_memory_equal(b, d, 6 * sizeof(int64_t));                    /* the design's first part is kept */
  for (int i = 6; i < 10; i++)
    for (int j = 0; j < 10; j++) assert_true(b[i] != d[j] || i == j); /* the rest is new */
  assert_memory_not_equal(b + 6, d + 6, 4 * sizeof(int64_t));
  check_resume(rs, 1);
  /* marginals: the largest difference between a value's share over 20 designs of 10 points and its
   * share among the valid configurations, every value of every parameter */
  int dims = mpt_space_dims(space), tot = 0;
  int *off = malloc(sizeof(int) * (size_t)dims), *cfg = malloc(sizeof(int) * (size_t)dims);
  for (int p = 0; p < dims; p++) { off[p] = tot; tot += mpt_space_n_values(space, p); }
  double *share = calloc((size_t)tot * 4, sizeof(double)), worst[3] = {0, 0, 0};
  for (int64_t c = 0; c < N; c++) {
    mpt_space_config(space, c, cfg);
    for (int p = 0; p < dims; p++) share[off[p] + cfg[p]] += 1.0 / (double)N;
  }
  const char *const *kind[3] = {lv, lc, mx};
  for (int v = 0; v < 3; v++) {
    double *got = share + (size_t)tot * (v + 1);
    for (int seed = 1; seed <= 20; seed++) {
      int64_t ids[10];
      first_design(kind[v], (uint64_t)seed, ids);
      for (int i = 0; i < 10; i++) {
        mpt_space_config(space, ids[i], cfg);
        for (int p = 0; p < dims; p++) got[off[p] + cfg[p]] += 1.0 / 200.0;
      }
    }
    for (int i = 0; i < tot; i++)
      if (fabs(got[i] - share[i]) > worst[v]) worst[v] = fabs(got[i] - share[i]);
  }
  printf("largest difference of a value's share from the valid marginal: lhs-valid %.3f, lhs-conditional %.3f, maximin %.3f\n",
         worst[0], worst[1], worst[2]);
  assert_true(worst[1] < 0.06);
  assert_true(worst[0] < worst[2] && worst[1] < worst[2]);
  free(off); free(cfg); free(share); free(obs);
}

/* pairwise-coverage designs (sampling=pairs / pairs-strata / pairs-swap, pair_weight, pair_candidates):
 * deterministic, valid and distinct ids, resume exact, a design other than lhs-valid's (it starts from
 * it and exchanges points), each option changes it; over 20 designs, pairs-strata covers more value
 * pairs than lhs-valid (every occurring pair of two parameters weighing the same, as pair_weight=0) */
static double design_pairs(const int64_t *ids, int n) {
  int dims = mpt_space_dims(space);
  double tot = 0;
  for (int p = 0; p < dims; p++)
    for (int q = p + 1; q < dims; q++) {
      int na = mpt_space_n_values(space, p), nb = mpt_space_n_values(space, q), occ = 0, cov = 0;
      if (na < 2 || nb < 2) continue;
      uint8_t *o = calloc((size_t)(na * nb), 1), *c = calloc((size_t)(na * nb), 1);
      for (int64_t i = 0; i < N; i++) o[mpt_space_value_index(space, i, p) * nb + mpt_space_value_index(space, i, q)] = 1;
      for (int i = 0; i < n; i++) c[mpt_space_value_index(space, ids[i], p) * nb + mpt_space_value_index(space, ids[i], q)] = 1;
      for (int i = 0; i < na * nb; i++) { occ += o[i]; cov += o[i] && c[i]; }
      tot += occ ? (double)cov / occ : 0;
      free(o);
      free(c);
    }
  return tot;
}

static void test_pair_designs(void **state) {
  (void)state;
  const char *pa[] = {"sampling=pairs"}, *ps[] = {"sampling=pairs-strata"}, *lv[] = {"sampling=lhs-valid"},
             *pw[] = {"sampling=pairs", "pair_weight=0"}, *pc[] = {"sampling=pairs", "pair_candidates=40"}, *sw[] = {"sampling=pairs-swap"};
  const char *const *kinds[5] = {pa, ps, pw, pc, sw};
  int nk[5] = {1, 1, 2, 2, 1};
  int64_t a[60], b[60], d[60];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 60);
  assert_int_equal(run(lv, 1, 11, 220, 1, 60, d, obs), 60);
  int64_t first[5][10];
  for (int v = 0; v < 5; v++) {
    assert_int_equal(run(kinds[v], nk[v], 11, 220, 1, 60, a, obs), 60);
    assert_int_equal(run(kinds[v], nk[v], 11, 220, 1, 60, b, obs), 60);
    assert_memory_equal(a, b, sizeof a);
    bo_check_valid_distinct(space, a, 60);
    assert_memory_not_equal(a, d, 10 * sizeof(int64_t));
    memcpy(first[v], a, sizeof first[v]);
    check_resume(kinds[v], nk[v]);
  }
  for (int v = 1; v < 5; v++) assert_memory_not_equal(first[0], first[v], sizeof first[0]);
  double cov[2] = {0, 0};
  const char *const *cmp[2] = {lv, ps};
  for (int v = 0; v < 2; v++)
    for (int seed = 1; seed <= 20; seed++) {
      int64_t ids[10];
      first_design(cmp[v], (uint64_t)seed, ids);
      cov[v] += design_pairs(ids, 10) / 20;
    }
  printf("value pairs covered by 10 points (mean of 20 seeds): lhs-valid %.2f, pairs-strata %.2f\n", cov[0], cov[1]);
  assert_true(cov[1] > cov[0]);
  free(obs);
}

/* binary_weight scales the index code of two-valued parameters in encoding=index+onehot only: the
 * default (0.6) and 1.0 share the initial design and then pick differently; with encoding=index it has
 * no effect; resume stays exact; negative values are rejected */
static void test_binary_weight(void **state) {
  (void)state;
  const char *one[] = {"binary_weight=1.0"}, *low[] = {"binary_weight=0.3"};
  const char *ix[] = {"encoding=index"}, *ixw[] = {"encoding=index", "binary_weight=0.3"}, *bad[] = {"binary_weight=-1"};
  int64_t a[60], b[60];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 60);
  assert_int_equal(run(NULL, 0, 5, 220, 1, 60, a, obs), 60);
  assert_int_equal(run(one, 1, 5, 220, 1, 60, b, obs), 60);
  assert_memory_equal(a, b, 10 * sizeof(int64_t));
  assert_memory_not_equal(a + 10, b + 10, 50 * sizeof(int64_t));
  assert_int_equal(run(ix, 1, 5, 220, 1, 60, a, obs), 60);
  assert_int_equal(run(ixw, 2, 5, 220, 1, 60, b, obs), 60);
  assert_memory_equal(a, b, sizeof a);
  check_resume(low, 1);
  mpt_strategy *s;
  mpt_error err;
  assert_true(mpt_strategy_create("bo", space, bad, 1, 1, 100, &s, &err) < 0);
  assert_true(strstr(err.msg, "binary_weight") != NULL);
  free(obs);
}

/* batch 1 unchanged by the pool of batches (and by taking observations in by runs): seed 7's first 80
 * picks, recorded from the build before them (54f43ef) */
static void test_batch1_recorded(void **state) {
  (void)state;
  static const int64_t recorded[80] = {3293,2510,1845,42,3251,3705,2083,1080,1006,2634,1853,3292,3220,4212,3246,3218,1958,3574,2278,2118,2246,2374,2432,358,2287,2286,2274,2279,2580,3735,2433,2431,2441,2473,4145,2713,2440,535,3522,2409,3416,2951,2437,1967,1935,2127,1959,2589,3677,1966,3646,1965,4335,1888,312,1738,2191,2835,1968,609,122,584,1977,1862,1830,3497,1638,1894,1828,1863,1198,1574,138,186,3892,570,220,158,510,670};
  int64_t ids[80];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 80);
  assert_int_equal(run(NULL, 0, 7, 220, 1, 80, ids, obs), 80);
  assert_memory_equal(ids, recorded, sizeof ids);
  free(obs);
}

/* the pool of a batch: a pool of every candidate conditioned as the GP is (batch_normalization=fantasies)
 * picks what fantasies over every candidate pick (batch_pool=0) for three model rounds (later, rounding
 * tells near-ties apart differently: the pool sums in double, the GP's V is float); the default pool's
 * rounds are distinct, valid and unseen, deterministic, and differ from both */
static void test_batch_pool(void **state) {
  (void)state;
  const char *full[] = {"batch_pool=0"};
  const char *all[] = {"batch_pool=100000", "batch_normalization=fantasies"};
  int64_t a[106], b[106], c[106], d[106];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 106);
  assert_int_equal(run(full, 1, 7, 220, 16, 106, a, obs), 106);
  assert_int_equal(run(all, 2, 7, 220, 16, 106, b, obs), 106);
  assert_memory_equal(a, b, 58 * sizeof(int64_t));
  assert_int_equal(run(NULL, 0, 7, 220, 16, 106, c, obs), 106);
  bo_check_valid_distinct(space, c, 106);
  assert_int_equal(run(NULL, 0, 7, 220, 16, 106, d, obs), 106);
  assert_memory_equal(c, d, sizeof c);
  assert_memory_equal(a, c, 11 * sizeof(int64_t)); /* the initial sample and each round's first pick ... */
  assert_memory_not_equal(a, c, sizeof c);          /* ... then the pool's */
  free(obs);
}

/* the contract of bo_pool_pass (strategies/bo/README.md): the top P by log EI, best first, ties by id, the
 * skipped candidates left out; the pools of two slices merged are the pool of the whole */
static void test_pool_pass(void **state) {
  (void)state;
  enum { NC = 3000, DIM = 3, NO = 40, P = 50 };
  double *X = malloc(sizeof(double) * NC * DIM), Xo[NO * DIM], y[NO];
  mpt_rng r;
  mpt_rng_seed(&r, 3);
  for (int i = 0; i < NC * DIM; i++) X[i] = (double)mpt_rng_below(&r, 9) / 8.0;
  for (int i = 0; i < NO; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NC) * DIM, sizeof(double) * DIM);
    y[i] = sin(5.0 * Xo[i * DIM]) + Xo[i * DIM + 1];
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  mpt_gp *whole, *lo, *hi;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &whole, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, 1000, X, &lo, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC - 1000, X + 1000 * DIM, &hi, &err), 0);
  assert_int_equal(mpt_gp_add_many(whole, NO, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(lo, NO, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(hi, NO, Xo, y, NULL, &err), 0);
  uint8_t *skip = calloc(NC, 1);
  for (int c = 0; c < NC; c += 7) skip[c] = 1;
  bo_pass_args a = {.xi = 0.1, .skip_a = skip};
  mpt_gp_normalization(whole, &a.m, &a.sc);
  double best = INFINITY;
  for (int i = 0; i < NO; i++) best = y[i] < best ? y[i] : best;
  a.fb = (best - a.m) / a.sc;
  bo_ranked top[P], tl[P], th[P], merged[P];
  assert_int_equal(bo_pool_pass(whole, 0, NC, 0, &a, P, top), P);
  /* brute force: every free candidate's log EI, the P best */
  double mean[NC], sd[NC], worst_in = INFINITY, best_out = -INFINITY;
  mpt_gp_predict_block(whole, 0, NC, mean, sd);
  uint8_t *in = calloc(NC, 1);
  for (int j = 0; j < P; j++) {
    assert_false(skip[top[j].id]);
    assert_false(in[top[j].id]);
    in[top[j].id] = 1;
    if (j > 0) assert_true(top[j].key < top[j - 1].key || (top[j].key == top[j - 1].key && top[j].id > top[j - 1].id));
    double s = sd[top[j].id] / a.sc, u = a.fb - a.xi - (mean[top[j].id] - a.m) / a.sc, z = u / s;
    double ei = s * (z * 0.5 * erfc(-z / sqrt(2.0)) + exp(-0.5 * z * z) / sqrt(2 * M_PI));
    assert_true(fabs(log(ei) - top[j].key) < 1e-6 * (1 + fabs(log(ei))));
    worst_in = top[j].key < worst_in ? top[j].key : worst_in;
  }
  for (int c = 0; c < NC; c++) {
    if (skip[c] || in[c]) continue;
    double s = sd[c] / a.sc, u = a.fb - a.xi - (mean[c] - a.m) / a.sc, z = u / s;
    double ei = s * (z * 0.5 * erfc(-z / sqrt(2.0)) + exp(-0.5 * z * z) / sqrt(2 * M_PI));
    if (ei > 0 && log(ei) > best_out) best_out = log(ei);
  }
  assert_true(best_out <= worst_in + 1e-9);
  int64_t nl = bo_pool_pass(lo, 0, 1000, 0, &a, P, tl), nh = bo_pool_pass(hi, 0, NC - 1000, 1000, &a, P, th);
  assert_int_equal(bo_pool_merge(tl, nl, th, nh, P, merged), P);
  for (int j = 0; j < P; j++) {
    assert_int_equal(merged[j].id, top[j].id);
    assert_true(fabs(merged[j].key - top[j].key) < 1e-9);
  }
  free(skip); free(in); free(X);
  mpt_gp_free(whole); mpt_gp_free(lo); mpt_gp_free(hi);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch),
      cmocka_unit_test(test_batch_quantile),
      cmocka_unit_test(test_batch1_recorded),
      cmocka_unit_test(test_batch_pool),
      cmocka_unit_test(test_pool_pass),
      cmocka_unit_test(test_initial_designs),
      cmocka_unit_test(test_pair_designs),
      cmocka_unit_test(test_binary_weight),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
