/* tests/test_space.c: the valid set (spaces/space*.c) on the shared T1 files and on inline problems:
 * Cartesian and valid counts, id <-> configuration round trips, lookup of arbitrary configurations
 * against a direct constraint check, the four neighbourhoods against brute-force definitions over all
 * valid ids, random/LHS/maximin sampling, encodings, empty spaces and run-time errors in constraints. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "spaces/space.h"
#include "tests/asan.h"

typedef struct loaded {
  mpt_problem *p;
  mpt_space *s;
} loaded;

static loaded g_hot; /* paper_hotspot.json, built once for the whole group (the costliest build) */

static loaded load_file_fresh(const char *file);
static loaded load_file(const char *file) {
  if (strcmp(file, "paper_hotspot.json") == 0) {
    if (!g_hot.s) g_hot = load_file_fresh(file);
    return g_hot;
  }
  return load_file_fresh(file);
}

static loaded load_file_fresh(const char *file) {
  const char *dir = getenv("MPT_SHARED_DATA");
  assert_non_null(dir);
  char path[1024];
  snprintf(path, sizeof path, "%s/t1/%s", dir, file);
  loaded l = {0};
  mpt_error err = {0};
  int rc = mpt_problem_load(path, &l.p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  rc = mpt_space_build(l.p, &l.s, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  return l;
}

static loaded load_text(const char *text) {
  loaded l = {0};
  mpt_error err = {0};
  int rc = mpt_problem_parse(text, "inline.json", &l.p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  rc = mpt_space_build(l.p, &l.s, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  return l;
}

static void unload(loaded *l) {
  if (l->s == g_hot.s) return;
  mpt_space_free(l->s);
  mpt_problem_free(l->p);
}

/* a problem with free parameters (f, g), a string, a float, a single-parameter constraint */
static const char *MIXED =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(1, 7))\", \"Default\": 2},"
    "{\"Name\": \"f\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4]\", \"Default\": 1},"
    "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4, 5]\", \"Default\": 1},"
    "{\"Name\": \"c\", \"Type\": \"float\", \"Values\": \"[0.5, 1.0, 2.0]\", \"Default\": 1.0},"
    "{\"Name\": \"g\", \"Type\": \"bool\", \"Values\": \"[False, True]\", \"Default\": true},"
    "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": \"['x', 'y', 'z']\", \"Default\": \"x\"}"
    "], \"Conditions\": ["
    "{\"Expression\": \"a * b <= 12\"}, {\"Expression\": \"a % 2 == 0 or s != 'y'\"},"
    "{\"Expression\": \"c * a < 7\"}, {\"Expression\": \"b != 3\"}, {\"Expression\": \"f != 2\"}]}}";

static int brute_valid(const mpt_problem *p, const int *idx) {
  /* direct Python-semantics reading of MIXED's constraints (a check independent of mpt_expr) */
  (void)p;
  int a = idx[0] + 1, f = idx[1] + 1, b = idx[2] + 1, g = idx[4], s = idx[5];
  double c = idx[3] == 0 ? 0.5 : idx[3] == 1 ? 1.0 : 2.0;
  (void)g;
  return a * b <= 12 && (a % 2 == 0 || s != 1) && c * a < 7 && b != 3 && f != 2;
}

static void test_counts(void **state) {
  (void)state;
  static const struct { const char *file; double cart; int64_t valid; } T[] = {
      {"convolution_milo.json", 10240, 4362},        {"dedispersion_milo.json", 22272, 11130},
      {"gemm_milo.json", 663552, 116928},            {"hotspot_milo.json", 4440000, 82984},
      {"paper_dedispersion.json", 22272, 11130},     {"paper_gemm.json", 663552, 116928},
      {"paper_hotspot.json", 22200000, 349853},      {"paper_prl_2x2.json", 36864, 1200},
      {"paper_prl_4x4.json", 9437184, 10800},        {"paper_prl_8x8.json", 2415919104.0, 48720},
  };
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    loaded l = load_file(T[i].file);
    mpt_space_stats st;
    mpt_space_stats_get(l.s, &st);
    if (st.valid != T[i].valid) fprintf(stderr, "%s: valid %lld\n", T[i].file, (long long)st.valid);
    assert_true(st.cartesian == T[i].cart);
    assert_int_equal(st.valid, T[i].valid);
    assert_int_equal(mpt_space_size(l.s), T[i].valid);
    assert_true(st.bytes > 0);
    assert_int_equal(st.eval_errors, 0);
    assert_null(mpt_space_eval_warning(l.s));
    /* round trip and validity of every id (strided for the largest) */
    int d = mpt_space_dims(l.s);
    int idx[64];
    int64_t step = T[i].valid > 150000 ? 7 : 1;
    for (int64_t id = 0; id < T[i].valid; id += step) {
      mpt_space_config(l.s, id, idx);
      assert_int_equal(mpt_space_lookup(l.s, idx), id);
      if (id % 97 == 0) assert_int_equal(mpt_space_check(l.s, idx), 1);
      for (int p = 0; p < d; p++) assert_int_equal(mpt_space_value_index(l.s, id, p), idx[p]);
    }
    unload(&l);
  }
}

static void test_lookup_any(void **state) {
  (void)state;
  const char *files[] = {"paper_gemm.json", "paper_hotspot.json", "paper_prl_4x4.json", "convolution_milo.json"};
  mpt_rng rng;
  mpt_rng_seed(&rng, 42);
  for (size_t f = 0; f < 4; f++) {
    loaded l = load_file(files[f]);
    int d = mpt_space_dims(l.s), idx[64], back[64];
    int64_t hits = 0;
    for (int t = 0; t < 20000; t++) {
      for (int p = 0; p < d; p++) idx[p] = (int)mpt_rng_below(&rng, (uint64_t)mpt_space_n_values(l.s, p));
      int64_t id = mpt_space_lookup(l.s, idx);
      assert_int_equal(id >= 0, mpt_space_check(l.s, idx));
      if (id >= 0) {
        hits++;
        mpt_space_config(l.s, id, back);
        assert_memory_equal(back, idx, sizeof(int) * (size_t)d);
      }
    }
    (void)hits;
    idx[0] = -1;
    assert_int_equal(mpt_space_lookup(l.s, idx), -1);
    idx[0] = mpt_space_n_values(l.s, 0);
    assert_int_equal(mpt_space_lookup(l.s, idx), -1);
    unload(&l);
  }
}

static void test_mixed_free_params(void **state) {
  (void)state;
  loaded l = load_text(MIXED);
  int idx[6], back[6];
  int64_t expect = 0;
  /* full Cartesian check against the independent reading of the constraints */
  for (int a = 0; a < 6; a++)
    for (int f = 0; f < 4; f++)
      for (int b = 0; b < 5; b++)
        for (int c = 0; c < 3; c++)
          for (int g = 0; g < 2; g++)
            for (int s = 0; s < 3; s++) {
              int v[6] = {a, f, b, c, g, s};
              int ok = brute_valid(l.p, v);
              expect += ok;
              int64_t id = mpt_space_lookup(l.s, v);
              assert_int_equal(id >= 0, ok);
              assert_int_equal(mpt_space_check(l.s, v), ok);
              if (id >= 0) {
                mpt_space_config(l.s, id, back);
                assert_memory_equal(back, v, sizeof v);
              }
            }
  assert_int_equal(mpt_space_size(l.s), expect);
  /* default a=2,f=1,b=1,c=1.0,g=True,s='x' is valid */
  int64_t def = mpt_space_default_id(l.s);
  assert_true(def >= 0);
  mpt_space_config(l.s, def, idx);
  int want[6] = {1, 0, 0, 1, 1, 0};
  assert_memory_equal(idx, want, sizeof want);
  char buf[256];
  int n = mpt_space_format(l.s, def, buf, sizeof buf);
  assert_int_equal(n, (int)strlen(buf));
  assert_string_equal(buf, "a=2,f=1,b=1,c=1.0,g=True,s=x");
  char small[6];
  assert_int_equal(mpt_space_format(l.s, def, small, sizeof small), n); /* the length it needs */
  assert_string_equal(small, "a=2,f");
  unload(&l);
}

/* ---- neighbours against brute force ---- */

static int64_t brute_neighbors(const mpt_space *s, const int *all, int64_t n, int d, const int *c,
                               mpt_neighbor_kind kind, int64_t *out) {
  int64_t m = 0;
  int lo[64], hi[64];
  if (kind == MPT_NB_ADJACENT) {
    for (int p = 0; p < d; p++) {
      lo[p] = -1;
      hi[p] = -1;
      for (int64_t i = 0; i < n; i++) {
        int v = all[i * d + p];
        if (v < c[p] && v > lo[p]) lo[p] = v;
        if (v > c[p] && (hi[p] < 0 || v < hi[p])) hi[p] = v;
      }
    }
  }
  int64_t best = INT64_MAX;
  if (kind == MPT_NB_INDEX_DISTANCE) {
    for (int64_t i = 0; i < n; i++) {
      int64_t t = 0;
      for (int p = 0; p < d; p++) t += labs((long)(all[i * d + p] - c[p]));
      if (t > 0 && t < best) best = t;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    const int *x = all + i * d;
    int diff = 0, ok = 1;
    int64_t t = 0;
    for (int p = 0; p < d; p++) {
      int dd = x[p] - c[p];
      diff += dd != 0;
      t += labs((long)dd);
      if (kind == MPT_NB_STRICTLY_ADJACENT && (dd > 1 || dd < -1)) ok = 0;
      if (kind == MPT_NB_ADJACENT && dd != 0 && x[p] != lo[p] && x[p] != hi[p]) ok = 0;
    }
    if (kind == MPT_NB_HAMMING) ok = diff == 1;
    if (kind == MPT_NB_INDEX_DISTANCE) ok = t == best;
    if (diff == 0) ok = 0;
    if (ok) out[m++] = i;
  }
  (void)s;
  return m;
}

static void check_neighbors(loaded *l, int centres) {
  mpt_space *s = l->s;
  int d = mpt_space_dims(s);
  int64_t n = mpt_space_size(s);
  int *all = malloc(sizeof(int) * (size_t)(n * d));
  int64_t *want = malloc(sizeof(int64_t) * (size_t)n), *got = malloc(sizeof(int64_t) * (size_t)n);
  assert_non_null(all);
  for (int64_t i = 0; i < n; i++) mpt_space_config(s, i, all + i * d);
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  for (int t = 0; t < centres; t++) {
    int c[64];
    if (t % 2 == 0) mpt_space_config(s, (int64_t)mpt_rng_below(&rng, (uint64_t)n), c);
    else
      for (int p = 0; p < d; p++) c[p] = (int)mpt_rng_below(&rng, (uint64_t)mpt_space_n_values(s, p));
    for (int k = 0; k < 4; k++) {
      int64_t m = brute_neighbors(s, all, n, d, c, (mpt_neighbor_kind)k, want);
      int64_t g = mpt_space_neighbors(s, c, (mpt_neighbor_kind)k, got, n);
      if (g != m) fprintf(stderr, "%s centre %d: got %lld want %lld\n", mpt_neighbor_kind_name(k), t, (long long)g,
                          (long long)m);
      assert_int_equal(g, m);
      assert_memory_equal(got, want, sizeof(int64_t) * (size_t)m);
      if (k == MPT_NB_INDEX_DISTANCE && n > 1) assert_true(m > 0);
      if (m > 2) { /* a short buffer still gets the count and the first ids */
        int64_t few[2] = {-5, -5};
        assert_int_equal(mpt_space_neighbors(s, c, (mpt_neighbor_kind)k, few, 2), m);
        assert_int_equal(few[0], want[0]);
        assert_int_equal(few[1], want[1]);
      }
    }
  }
  int bad[64] = {0};
  bad[0] = -1;
  assert_true(mpt_space_neighbors(s, bad, MPT_NB_HAMMING, got, n) < 0);
  free(all);
  free(want);
  free(got);
}

static void test_neighbors(void **state) {
  (void)state;
  static const struct { const char *file; int centres; } T[] = {
      {"paper_prl_2x2.json", 60}, {"convolution_milo.json", 40}, {"dedispersion_milo.json", 30},
      {"paper_gemm.json", 5},     {"paper_prl_4x4.json", 10},    {"paper_hotspot.json", 2},
  };
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    loaded l = load_file(T[i].file);
    check_neighbors(&l, T[i].centres);
    unload(&l);
  }
  loaded l = load_text(MIXED);
  check_neighbors(&l, 80);
  unload(&l);
  assert_int_equal(mpt_neighbor_kind_parse("Hamming"), MPT_NB_HAMMING);
  assert_int_equal(mpt_neighbor_kind_parse("strictly-adjacent"), MPT_NB_STRICTLY_ADJACENT);
  assert_int_equal(mpt_neighbor_kind_parse("adjacent"), MPT_NB_ADJACENT);
  assert_int_equal(mpt_neighbor_kind_parse("index-distance"), MPT_NB_INDEX_DISTANCE);
  assert_int_equal(mpt_neighbor_kind_parse("nope"), -1);
  assert_string_equal(mpt_neighbor_kind_name(MPT_NB_ADJACENT), "adjacent");
}

/* ---- sampling ---- */

static void check_distinct_valid(const mpt_space *s, const int64_t *ids, int64_t n) {
  int64_t size = mpt_space_size(s);
  uint8_t *seen = calloc((size_t)size, 1);
  for (int64_t i = 0; i < n; i++) {
    assert_true(ids[i] >= 0 && ids[i] < size);
    assert_int_equal(seen[ids[i]], 0);
    seen[ids[i]] = 1;
  }
  free(seen);
}

static void test_sampling(void **state) {
  (void)state;
  loaded l = load_file("paper_gemm.json");
  mpt_space *s = l.s;
  int64_t size = mpt_space_size(s);
  mpt_rng rng;
  int64_t ids[200], ids2[200];
  mpt_rng_seed(&rng, 1);
  assert_int_equal(mpt_space_sample_random(s, &rng, 200, ids), 200);
  check_distinct_valid(s, ids, 200);
  mpt_rng_seed(&rng, 1);
  assert_int_equal(mpt_space_sample_random(s, &rng, 200, ids2), 200);
  assert_memory_equal(ids, ids2, sizeof ids);
  assert_true(mpt_space_sample_random(s, &rng, size + 1, ids) < 0);
  /* LHS and maximin: distinct valid ids; maximin's first try is the LHS of the same seed */
  mpt_rng_seed(&rng, 5);
  int64_t n = mpt_space_sample_lhs(s, &rng, 40, ids);
  assert_int_equal(n, 40);
  check_distinct_valid(s, ids, n);
  int d = mpt_space_dims(s);
  double x[40 * 32];
  double d1 = INFINITY;
  for (int i = 0; i < 40; i++) mpt_space_encode(s, ids[i], MPT_ENC_INDEX, x + i * d);
  for (int i = 0; i < 40; i++)
    for (int j = i + 1; j < 40; j++) {
      double t = 0;
      for (int k = 0; k < d; k++) t += (x[i * d + k] - x[j * d + k]) * (x[i * d + k] - x[j * d + k]);
      if (t < d1) d1 = t;
    }
  mpt_rng_seed(&rng, 5);
  assert_int_equal(mpt_space_sample_maximin(s, &rng, 40, 8, ids2), 40);
  check_distinct_valid(s, ids2, 40);
  double d2 = INFINITY;
  for (int i = 0; i < 40; i++) mpt_space_encode(s, ids2[i], MPT_ENC_INDEX, x + i * d);
  for (int i = 0; i < 40; i++)
    for (int j = i + 1; j < 40; j++) {
      double t = 0;
      for (int k = 0; k < d; k++) t += (x[i * d + k] - x[j * d + k]) * (x[i * d + k] - x[j * d + k]);
      if (t < d2) d2 = t;
    }
  assert_true(d2 >= d1);
  unload(&l);

  /* the whole space of a small problem */
  l = load_file("paper_prl_2x2.json");
  int64_t all[1200];
  mpt_rng_seed(&rng, 3);
  assert_int_equal(mpt_space_sample_random(l.s, &rng, 1200, all), 1200);
  check_distinct_valid(l.s, all, 1200);
  assert_int_equal(mpt_space_sample_lhs(l.s, &rng, 1300, all), 1200); /* capped at the size */
  check_distinct_valid(l.s, all, 1200);
  unload(&l);
}

/* mean over parameters with 2+ values: strata (of n) covered by the sample / strata holding a value that
 * occurs in the valid set; a value counts for its first still uncovered stratum */
static void possible_strata(const mpt_space *s, int n, int *possible) {
  int d = mpt_space_dims(s);
  for (int p = 0; p < d; p++) {
    int V = mpt_space_n_values(s, p);
    uint8_t *pres = calloc((size_t)V, 1);
    for (int64_t id = 0; id < mpt_space_size(s); id++) pres[mpt_space_value_index(s, id, p)] = 1;
    possible[p] = 0;
    for (int t = 0; t < n; t++) {
      int lo = (int)((int64_t)t * V / n), hi = (int)((int64_t)(t + 1) * V / n - 1), ok = 0;
      if (hi < lo) hi = lo;
      for (int x = lo; x <= hi; x++) ok |= pres[x];
      possible[p] += ok;
    }
    free(pres);
  }
}

static double strata_coverage(const mpt_space *s, const int64_t *ids, int n, const int *possible) {
  int d = mpt_space_dims(s), cnt = 0;
  double tot = 0;
  for (int p = 0; p < d; p++) {
    int V = mpt_space_n_values(s, p);
    if (V < 2) continue;
    uint8_t *u = calloc((size_t)n, 1);
    int c = 0;
    for (int i = 0; i < n; i++) {
      int v = mpt_space_value_index(s, ids[i], p);
      for (int t = 0; t < n; t++) {
        int lo = (int)((int64_t)t * V / n), hi = (int)((int64_t)(t + 1) * V / n - 1);
        if (hi < lo) hi = lo;
        if (v >= lo && v <= hi && !u[t]) { u[t] = 1; c++; break; }
      }
    }
    tot += (double)c / possible[p];
    cnt++;
    free(u);
  }
  return tot / cnt;
}

static void test_lhs_strata(void **state) {
  (void)state;
  /* unconstrained: every stratum of every parameter is used exactly once */
  loaded l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                       "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(20))\"},"
                       "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
                       "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"list(range(37))\"}]}}");
  mpt_rng rng;
  mpt_rng_seed(&rng, 11);
  int64_t ids[10];
  assert_int_equal(mpt_space_sample_lhs(l.s, &rng, 10, ids), 10);
  int nv[3] = {20, 10, 37};
  for (int p = 0; p < 3; p++) {
    int used[10] = {0};
    for (int i = 0; i < 10; i++) {
      int v = mpt_space_value_index(l.s, ids[i], p);
      int st = -1;
      for (int k = 0; k < 10; k++)
        if (v >= k * nv[p] / 10 && v < (k + 1) * nv[p] / 10) st = k;
      assert_true(st >= 0);
      used[st]++;
    }
    for (int k = 0; k < 10; k++) assert_int_equal(used[k], 1);
  }
  unload(&l);
  /* constrained spaces: the share of the strata that hold a value present in the valid set which the
   * sample covers, for LHS against uniform random samples of the same size (10 seeds each) */
  const char *files[] = {"paper_hotspot.json", "paper_prl_8x8.json", "convolution_milo.json"};
  for (int f = 0; f < 3; f++) {
    l = load_file(files[f]);
    int64_t h[12];
    int possible[32];
    possible_strata(l.s, 12, possible);
    double c_lhs = 0, c_rand = 0;
    for (int seed = 0; seed < 10; seed++) {
      mpt_rng_seed(&rng, (uint64_t)seed);
      assert_int_equal(mpt_space_sample_lhs(l.s, &rng, 12, h), 12);
      check_distinct_valid(l.s, h, 12);
      c_lhs += strata_coverage(l.s, h, 12, possible);
      assert_int_equal(mpt_space_sample_random(l.s, &rng, 12, h), 12);
      c_rand += strata_coverage(l.s, h, 12, possible);
    }
    c_lhs /= 10;
    c_rand /= 10;
    if (c_lhs < 0.8 || c_lhs < c_rand + 0.1) fprintf(stderr, "%s: LHS coverage %.3f, random %.3f\n", files[f], c_lhs, c_rand);
    assert_true(c_lhs >= 0.8);
    assert_true(c_lhs >= c_rand + 0.1);
    unload(&l);
  }
}

/* the pairs design over two parameters of 65536 values each (4.3e9 cells, of which 100 valid: their product
 * overflowed an int and the table was written out of bounds): the LHS design it starts from, valid */
static void test_pairs_huge_table(void **state) {
  (void)state;
  loaded l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                       "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(65536))\"},"
                       "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(65536))\"}],"
                       "\"Conditions\": [{\"Expression\": \"a < 10\"}, {\"Expression\": \"b < 10\"}]}}");
  assert_int_equal(mpt_space_size(l.s), 100);
  int params[2] = {0, 1};
  int64_t ids[8];
  for (int strata = 0; strata <= 2; strata++) {
    mpt_rng rng;
    mpt_rng_seed(&rng, 3);
    assert_int_equal(mpt_space_sample_pairs(l.s, params, 2, &rng, 8, 1.0, strata, 0, ids), 8);
    check_distinct_valid(l.s, ids, 8);
  }
  unload(&l);
}

/* mpt_space_format: a value longer than 255 characters whole, and the length a configuration needs */
static void test_format_long_values(void **state) {
  (void)state;
  char text[2048], longv[400];
  memset(longv, 'v', 300);
  longv[300] = '\0';
  snprintf(text, sizeof text,
           "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"s\", \"Type\": \"string\", \"Values\": "
           "\"['%s', 'w']\"}, {\"Name\": \"n\", \"Type\": \"int\", \"Values\": \"[7]\"}]}}", longv);
  loaded l = load_text(text);
  char want[400], buf[400];
  snprintf(want, sizeof want, "s=%s,n=7", longv);
  int64_t id = -1;
  for (int64_t i = 0; i < mpt_space_size(l.s); i++) {
    mpt_space_format(l.s, i, buf, (int)sizeof buf);
    if (buf[3] == 'v') id = i;
  }
  assert_true(id >= 0);
  assert_int_equal(mpt_space_format(l.s, id, NULL, 0), (int)strlen(want));
  assert_int_equal(mpt_space_format(l.s, id, buf, (int)sizeof buf), (int)strlen(want));
  assert_string_equal(buf, want);
  unload(&l);
}

/* LHS with the valid marginals: a constraint leaves a >= 2 only with b == 0 (a < 2: 20 of the 28 valid
 * configurations, 10 of 14 points); both designs follow that share, the index-range LHS (2 of 10 values)
 * gives fewer even after its repairs to valid configurations */
static void test_lhs_valid_marginals(void **state) {
  (void)state;
  loaded l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                       "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
                       "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(10))\"}],"
                       "\"Conditions\": [{\"Expression\": \"a < 2 or b == 0\"}]}}");
  assert_int_equal(mpt_space_size(l.s), 28);
  int params[2] = {0, 1};
  mpt_rng rng;
  int64_t ids[40], ids2[40];
  double low[3] = {0, 0, 0};
  for (int seed = 1; seed <= 20; seed++)
    for (int kind = 0; kind < 3; kind++) {
      mpt_rng_seed(&rng, (uint64_t)seed);
      int64_t n = kind == 0   ? mpt_space_sample_lhs_valid(l.s, params, 2, &rng, 14, ids)
                  : kind == 1 ? mpt_space_sample_lhs_conditional(l.s, params, 2, &rng, 14, ids)
                              : mpt_space_sample_lhs(l.s, &rng, 14, ids);
      assert_int_equal(n, 14);
      check_distinct_valid(l.s, ids, 14);
      for (int i = 0; i < 14; i++) low[kind] += mpt_space_value_index(l.s, ids[i], 0) < 2 ? 1.0 / 20 : 0;
      if (kind < 2) { /* deterministic for a seed */
        mpt_rng_seed(&rng, (uint64_t)seed);
        if (kind == 0) mpt_space_sample_lhs_valid(l.s, params, 2, &rng, 14, ids2);
        else mpt_space_sample_lhs_conditional(l.s, params, 2, &rng, 14, ids2);
        assert_memory_equal(ids, ids2, 14 * sizeof(int64_t));
      }
    }
  printf("points with a < 2 (of 14, mean of 20 seeds): lhs-valid %.2f, lhs-conditional %.2f, lhs %.2f\n", low[0], low[1], low[2]);
  /* expected 10 of 14 (a's strata below the quantile 20/28 are exactly 10) */
  assert_true(low[0] >= 9.5 && low[0] <= 11.5);
  assert_true(low[1] >= 9.0 && low[1] <= 11.0);
  assert_true(low[2] < low[1] - 1.0); /* the index-range LHS (8.35 with its repairs) */
  /* more points than configurations: every valid configuration once */
  mpt_rng_seed(&rng, 3);
  assert_int_equal(mpt_space_sample_lhs_valid(l.s, params, 2, &rng, 40, ids), 28);
  check_distinct_valid(l.s, ids, 28);
  assert_int_equal(mpt_space_sample_lhs_conditional(l.s, params, 2, &rng, 40, ids), 28);
  check_distinct_valid(l.s, ids, 28);
  unload(&l);
  /* an empty space gives no points */
  l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}],"
                "\"Conditions\": [{\"Expression\": \"a > 5\"}]}}");
  assert_int_equal(mpt_space_sample_lhs_valid(l.s, params, 1, &rng, 3, ids), 0);
  assert_int_equal(mpt_space_sample_lhs_conditional(l.s, params, 1, &rng, 3, ids), 0);
  unload(&l);
}

/* covered weight of value pairs, every occurring pair of a parameter pair alike (power 0), computed
 * here independently of the sampler: sum over parameter pairs of covered / occurring cells */
static double pair_coverage(const mpt_space *s, const int64_t *ids, int64_t n) {
  int np = mpt_space_dims(s);
  double tot = 0;
  for (int p = 0; p < np; p++)
    for (int q = p + 1; q < np; q++) {
      int na = mpt_space_n_values(s, p), nb = mpt_space_n_values(s, q), occ = 0, cov = 0;
      for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++) {
          int o = 0, c = 0;
          for (int64_t i = 0; i < mpt_space_size(s) && !o; i++)
            o = mpt_space_value_index(s, i, p) == a && mpt_space_value_index(s, i, q) == b;
          for (int64_t i = 0; i < n && !c; i++)
            c = mpt_space_value_index(s, ids[i], p) == a && mpt_space_value_index(s, ids[i], q) == b;
          occ += o;
          cov += o && c;
        }
      tot += occ ? (double)cov / occ : 0;
    }
  return tot;
}

/* pairwise-coverage designs: more value pairs covered than the lhs_valid design they start from (same
 * seed), deterministic, valid and distinct (also with a candidate subset), keep_strata 1 keeps each
 * value's count within [floor(f n), ceil(f n)] where lhs_valid starts there, keep_strata 2 (exchanges
 * between design points) keeps lhs_valid's counts exactly, capped at the size, and an empty space
 * gives no points */
static void test_pairs_coverage(void **state) {
  (void)state;
  loaded l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                       "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[0, 1]\"},"
                       "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[0, 1]\"},"
                       "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"[0, 1]\"},"
                       "{\"Name\": \"d\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\"},"
                       "{\"Name\": \"e\", \"Type\": \"int\", \"Values\": \"list(range(6))\"}],"
                       "\"Conditions\": [{\"Expression\": \"a == 0 or d < 2\"}]}}");
  int64_t N = mpt_space_size(l.s);
  assert_int_equal(N, 2 * 2 * 2 * 3 * 6 - 2 * 2 * 6);
  int params[5] = {0, 1, 2, 3, 4};
  mpt_rng rng;
  int64_t lv[8], pa[8], pb[8];
  double sum_lv = 0, sum_pa = 0, sum_ps = 0, sum_sw = 0;
  int band_ok = 0, band_tries = 0;
  for (int seed = 1; seed <= 20; seed++) {
    mpt_rng_seed(&rng, (uint64_t)seed);
    assert_int_equal(mpt_space_sample_lhs_valid(l.s, params, 5, &rng, 8, lv), 8);
    for (int strata = 0; strata < 2; strata++) {
      mpt_rng_seed(&rng, (uint64_t)seed);
      assert_int_equal(mpt_space_sample_pairs(l.s, params, 5, &rng, 8, 0.0, strata, 0, pa), 8);
      check_distinct_valid(l.s, pa, 8);
      mpt_rng_seed(&rng, (uint64_t)seed);
      mpt_space_sample_pairs(l.s, params, 5, &rng, 8, 0.0, strata, 0, pb);
      assert_memory_equal(pa, pb, sizeof pa); /* deterministic for a seed */
      double c = pair_coverage(l.s, pa, 8);
      assert_true(c >= pair_coverage(l.s, lv, 8) - 1e-9); /* only improving exchanges */
      if (strata) {
        sum_ps += c;
        /* every value's count inside its band when lhs_valid's was */
        int in_lv = 1, in_pa = 1;
        for (int p = 0; p < 5; p++)
          for (int v = 0; v < mpt_space_n_values(l.s, p); v++) {
            int64_t share = 0;
            int clv = 0, cpa = 0;
            for (int64_t i = 0; i < N; i++) share += mpt_space_value_index(l.s, i, p) == v;
            for (int i = 0; i < 8; i++) {
              clv += mpt_space_value_index(l.s, lv[i], p) == v;
              cpa += mpt_space_value_index(l.s, pa[i], p) == v;
            }
            int flo = (int)(share * 8 / N), fhi = (int)((share * 8 + N - 1) / N);
            in_lv &= clv >= flo && clv <= fhi;
            in_pa &= cpa >= flo && cpa <= fhi;
          }
        band_tries += in_lv;
        band_ok += in_lv && in_pa;
      } else {
        sum_pa += c;
      }
    }
    sum_lv += pair_coverage(l.s, lv, 8);
    /* exchanges between design points: each value's count exactly lhs_valid's, deterministic */
    mpt_rng_seed(&rng, (uint64_t)seed);
    assert_int_equal(mpt_space_sample_pairs(l.s, params, 5, &rng, 8, 1.0, 2, 0, pa), 8);
    check_distinct_valid(l.s, pa, 8);
    mpt_rng_seed(&rng, (uint64_t)seed);
    mpt_space_sample_pairs(l.s, params, 5, &rng, 8, 1.0, 2, 0, pb);
    assert_memory_equal(pa, pb, sizeof pa);
    sum_sw += pair_coverage(l.s, pa, 8);
    assert_true(pair_coverage(l.s, pa, 8) >= pair_coverage(l.s, lv, 8) - 1e-9);
    for (int p = 0; p < 5; p++)
      for (int v = 0; v < mpt_space_n_values(l.s, p); v++) {
        int clv = 0, cpa = 0;
        for (int i = 0; i < 8; i++) {
          clv += mpt_space_value_index(l.s, lv[i], p) == v;
          cpa += mpt_space_value_index(l.s, pa[i], p) == v;
        }
        assert_int_equal(clv, cpa);
      }
    /* a candidate subset per sweep: still valid, distinct, deterministic, no worse than lhs_valid */
    mpt_rng_seed(&rng, (uint64_t)seed);
    assert_int_equal(mpt_space_sample_pairs(l.s, params, 5, &rng, 8, 1.0, 0, 10, pa), 8);
    check_distinct_valid(l.s, pa, 8);
    mpt_rng_seed(&rng, (uint64_t)seed);
    mpt_space_sample_pairs(l.s, params, 5, &rng, 8, 1.0, 0, 10, pb);
    assert_memory_equal(pa, pb, sizeof pa);
  }
  printf("value pairs covered (of 10 parameter pairs, mean of 20 seeds): lhs-valid %.2f, pairs %.2f, "
         "pairs-strata %.2f, pairs-swap %.2f; strata kept %d of %d\n", sum_lv / 20, sum_pa / 20, sum_ps / 20,
         sum_sw / 20, band_ok, band_tries);
  assert_true(sum_pa > sum_lv + 0.5);
  assert_true(sum_ps > sum_lv + 0.2);
  assert_true(sum_sw > sum_lv + 0.2);
  assert_int_equal(band_ok, band_tries);
  assert_true(band_tries > 0);
  /* more points than configurations: every valid configuration once */
  int64_t all[150];
  mpt_rng_seed(&rng, 3);
  assert_int_equal(mpt_space_sample_pairs(l.s, params, 5, &rng, 150, 1.0, 1, 0, all), N);
  check_distinct_valid(l.s, all, N);
  assert_int_equal(mpt_space_sample_pairs(l.s, params, 5, &rng, 150, 1.0, 2, 0, all), N);
  check_distinct_valid(l.s, all, N);
  unload(&l);
  l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"},"
                "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}],"
                "\"Conditions\": [{\"Expression\": \"a > 5\"}]}}");
  assert_int_equal(mpt_space_sample_pairs(l.s, params, 2, &rng, 3, 1.0, 0, 0, all), 0);
  assert_int_equal(mpt_space_sample_pairs(l.s, params, 2, &rng, 3, 1.0, 2, 0, all), 0);
  unload(&l);
}

static void test_encoding(void **state) {
  (void)state;
  loaded l = load_file("paper_hotspot.json");
  int d = mpt_space_dims(l.s);
  int idx[16];
  int64_t id = mpt_space_default_id(l.s);
  assert_true(id >= 0);
  mpt_space_config(l.s, id, idx);
  double x[16];
  int by = mpt_problem_param_index(l.p, "block_size_y"), bx = mpt_problem_param_index(l.p, "block_size_x");
  int gw = mpt_problem_param_index(l.p, "grid_width");
  for (int v = 0; v < 6; v++) {
    idx[by] = v;
    mpt_space_encode_idx(l.s, idx, MPT_ENC_INDEX, x);
    assert_true(fabs(x[by] - v / 5.0) < 1e-12);
    assert_true(x[gw] == 0.0);
    mpt_space_encode_idx(l.s, idx, MPT_ENC_LOG2, x); /* 1,2,4,..,32: log2 is the index */
    assert_true(fabs(x[by] - v / 5.0) < 1e-12);
    mpt_space_encode_idx(l.s, idx, MPT_ENC_VALUE, x);
    assert_true(fabs(x[by] - ((1 << v) - 1) / 31.0) < 1e-12);
  }
  idx[bx] = 5; /* 32 of 1..1024 */
  mpt_space_encode_idx(l.s, idx, MPT_ENC_VALUE, x);
  assert_true(fabs(x[bx] - 31.0 / 1023.0) < 1e-12);
  mpt_space_encode_idx(l.s, idx, MPT_ENC_LOG2, x);
  assert_true(fabs(x[bx] - 0.5) < 1e-12);
  for (int64_t i = 0; i < mpt_space_size(l.s); i += 9999) {
    mpt_space_encode(l.s, i, MPT_ENC_VALUE, x);
    for (int p = 0; p < d; p++) assert_true(x[p] >= 0.0 && x[p] <= 1.0);
  }
  unload(&l);
  /* sh_power 0/1 and blocks_per_sm 0..4 include 0: LOG2 falls back to VALUE */
  l = load_file("paper_hotspot.json");
  int bp = mpt_problem_param_index(l.p, "blocks_per_sm");
  mpt_space_config(l.s, mpt_space_default_id(l.s), idx);
  idx[bp] = 3;
  double y[16];
  mpt_space_encode_idx(l.s, idx, MPT_ENC_LOG2, x);
  mpt_space_encode_idx(l.s, idx, MPT_ENC_VALUE, y);
  assert_true(fabs(x[bp] - 0.75) < 1e-12 && x[bp] == y[bp]);
  unload(&l);
}

static void test_empty_and_runtime_errors(void **state) {
  (void)state;
  loaded l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                       "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 3]\"},"
                       "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[4, 5]\"}],"
                       "\"Conditions\": [{\"Expression\": \"a > b\"}]}}");
  assert_int_equal(mpt_space_size(l.s), 0);
  int c[2] = {0, 0};
  int64_t ids[4];
  assert_int_equal(mpt_space_lookup(l.s, c), -1);
  for (int k = 0; k < 4; k++) assert_int_equal(mpt_space_neighbors(l.s, c, (mpt_neighbor_kind)k, ids, 4), 0);
  mpt_rng rng;
  mpt_rng_seed(&rng, 1);
  assert_int_equal(mpt_space_sample_lhs(l.s, &rng, 3, ids), 0);
  assert_int_equal(mpt_space_default_id(l.s), -1);
  unload(&l);
  /* a ZeroDivisionError makes those configurations invalid and is reported once */
  l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[0, 1, 2, 3, 4, 5, 6]\"},"
                "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[0, 1, 2, 3]\"},"
                "{\"Name\": \"z\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\"}],"
                "\"Conditions\": [{\"Expression\": \"a % b == 0\"}, {\"Expression\": \"10 // z > 2\"},"
                "{\"Expression\": \"1 == 1\"}]}}");
  /* b in {1,2,3} with b | a: a=0..6 -> b=1: 7, b=2: 4 (0,2,4,6), b=3: 3 (0,3,6) = 14; z in {1, 2} */
  assert_int_equal(mpt_space_size(l.s), 28);
  assert_non_null(mpt_space_eval_warning(l.s));
  assert_non_null(strstr(mpt_space_eval_warning(l.s), "ZeroDivisionError"));
  mpt_space_stats st;
  mpt_space_stats_get(l.s, &st);
  assert_true(st.eval_errors > 0);
  int v[3] = {2, 0, 1};
  assert_int_equal(mpt_space_check(l.s, v), 0);
  unload(&l);
  /* the warning names the condition's field and its place in the file, and shows the whole condition
   * with a caret under the operation that failed, also when the failing part comes after an `and` (the
   * builder checks the parts of a condition separately) */
  l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                "{\"Name\": \"z\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\"}],"
                "\"Conditions\": [{\"Expression\": \"z < 9\"}, {\"Expression\": \"z >= 0 and 10 // z > 2\"}]}}");
  assert_int_equal(mpt_space_size(l.s), 2);
  const char *w = mpt_space_eval_warning(l.s);
  assert_non_null(w);
  const char *want = ": ConfigurationSpace.Conditions[1].Expression: ZeroDivisionError: integer division or modulo by "
                     "zero (at z=0); configurations where it fails are not valid (reported once)\n"
                     "    z >= 0 and 10 // z > 2\n"
                     "                  ^";
  if (!strstr(w, want)) fail_msg("warning:\n%s\nlacks\n%s", w, want);
  const char *colon = strstr(w, want); /* FILE:1:COL before it: COL the byte of '//' in the text, 1-based */
  const char *c2 = colon;
  while (c2 > w && c2[-1] != ':') c2--;
  int fcol = atoi(c2);
  assert_true(fcol > 0);
  assert_memory_equal(l.p->text + fcol - 1, "// z > 2", 8);
  unload(&l);
}

static void test_and_split(void **state) {
  (void)state;
  /* top-level `and` conditions are split internally; `or`/`if`/strings must keep the meaning intact */
  loaded l = load_text("{\"ConfigurationSpace\": {\"TuningParameters\": ["
                       "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(6))\"},"
                       "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(6))\"},"
                       "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"list(range(4))\"}],"
                       "\"Conditions\": [{\"Expression\": \"a > 1 and b > 1 or a == 0\"},"
                       "{\"Expression\": \"not a == 5 and b != 4 and c != 3\"},"
                       "{\"Expression\": \"(a if b else 1) and b < 5 and 'x and y' != 'or'\"},"
                       "{\"Expression\": \"c + 1 if a and b else c < 2\"},"
                       "{\"Expression\": \"a + b + c < 12 and (a < 4 or c > 0) and 10 // (a + c) > 1\"}]}}");
  int64_t want = 0;
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 6; b++)
      for (int c = 0; c < 4; c++) {
        int ok = ((a > 1 && b > 1) || a == 0) && (!(a == 5) && b != 4 && c != 3) && ((b ? a : 1) && b < 5) &&
                 ((a && b) ? c + 1 : c < 2) && (a + b + c < 12 && (a < 4 || c > 0) && a + c != 0 && 10 / (a + c) > 1);
        want += ok;
        int v[3] = {a, b, c};
        assert_int_equal(mpt_space_lookup(l.s, v) >= 0, ok);
      }
  assert_int_equal(mpt_space_size(l.s), want);
  assert_non_null(mpt_space_eval_warning(l.s)); /* 10 // 0 at a = c = 0 */
  unload(&l);
}

static void test_wide_rows(void **state) {
  (void)state;
  /* 10 x 200 values = 80 bits: two words per row; 8 x 256 values = 64 bits exactly, plus an empty field */
  for (int variant = 0; variant < 2; variant++) {
    int n_big = variant ? 8 : 10, nv = variant ? 256 : 200;
    char text[8192];
    int len = snprintf(text, sizeof text, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "{\"Name\": \"k\", \"Type\": \"int\", \"Values\": \"[7]\"}");
    for (int i = 0; i < n_big; i++)
      len += snprintf(text + len, sizeof text - (size_t)len,
                      ", {\"Name\": \"p%d\", \"Type\": \"int\", \"Values\": \"list(range(%d))\"}", i, nv);
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "], \"Conditions\": [{\"Expression\": \"k + p0 >= 9\"}");
    for (int i = 0; i + 1 < n_big; i++) {
      if (i == n_big / 2)
        len += snprintf(text + len, sizeof text - (size_t)len, ", {\"Expression\": \"p%d %% 7 == p%d %% 7\"}", i,
                        i + 1);
      else
        len += snprintf(text + len, sizeof text - (size_t)len, ", {\"Expression\": \"p%d == p%d\"}", i, i + 1);
    }
    snprintf(text + len, sizeof text - (size_t)len, "]}}");
    loaded l = load_text(text);
    /* p0 >= 2; p0..p(h) equal, p(h+1) same residue mod 7, rest equal */
    int64_t want = 0;
    for (int a = 2; a < nv; a++)
      for (int b = 0; b < nv; b++) want += a % 7 == b % 7;
    assert_int_equal(mpt_space_size(l.s), want);
    int d = mpt_space_dims(l.s), idx[16];
    for (int64_t id = 0; id < want; id += 13) {
      mpt_space_config(l.s, id, idx);
      assert_int_equal(mpt_space_lookup(l.s, idx), id);
      assert_int_equal(mpt_space_check(l.s, idx), 1);
    }
    mpt_rng rng;
    mpt_rng_seed(&rng, 9);
    for (int t = 0; t < 2000; t++) {
      for (int p = 0; p < d; p++) idx[p] = (int)mpt_rng_below(&rng, (uint64_t)mpt_space_n_values(l.s, p));
      if (t % 2) { /* near-valid: copy a valid one and perturb one parameter */
        mpt_space_config(l.s, (int64_t)mpt_rng_below(&rng, (uint64_t)want), idx);
        int p = 1 + (int)mpt_rng_below(&rng, (uint64_t)(d - 1));
        idx[p] = (int)mpt_rng_below(&rng, (uint64_t)nv);
      }
      assert_int_equal(mpt_space_lookup(l.s, idx) >= 0, mpt_space_check(l.s, idx));
    }
    check_neighbors(&l, 16);
    unload(&l);
  }
}

static void test_many_params(void **state) {
  (void)state;
  /* 30 parameters, 8 conditions over the first 10: ~1e12 valid configurations, 20 parameters free */
  char text[16384];
  int len = snprintf(text, sizeof text, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  mpt_rng g;
  mpt_rng_seed(&g, 5);
  for (int i = 0; i < 30; i++)
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "%s{\"Name\": \"x%d\", \"Type\": \"int\", \"Values\": \"list(range(%d))\"}", i ? ", " : "", i,
                    2 + (int)mpt_rng_below(&g, 3));
  len += snprintf(text + len, sizeof text - (size_t)len, "], \"Conditions\": [");
  for (int k = 0; k < 8; k++) /* x0..x9 constrained, x10..x29 free */
    len += snprintf(text + len, sizeof text - (size_t)len, "%s{\"Expression\": \"x%d + x%d < 3 or x%d == 0\"}",
                    k ? ", " : "", k, k + 1, k + 2);
  snprintf(text + len, sizeof text - (size_t)len, "]}}");
  loaded l = load_text(text);
  int64_t size = mpt_space_size(l.s);
  assert_true(size > 1000000000LL);
  int idx[30], c[30];
  mpt_rng rng;
  mpt_rng_seed(&rng, 8);
  for (int t = 0; t < 5000; t++) {
    int64_t id = (int64_t)mpt_rng_below(&rng, (uint64_t)size);
    mpt_space_config(l.s, id, idx);
    assert_int_equal(mpt_space_lookup(l.s, idx), id);
    assert_int_equal(mpt_space_check(l.s, idx), 1);
    for (int p = 0; p < 30; p++) idx[p] = (int)mpt_rng_below(&rng, (uint64_t)mpt_space_n_values(l.s, p));
    assert_int_equal(mpt_space_lookup(l.s, idx) >= 0, mpt_space_check(l.s, idx));
  }
  /* neighbourhoods with millions of members: exact counts, the first ids, each one by definition */
  int64_t ids[64];
  for (int t = 0; t < 20; t++) {
    mpt_space_config(l.s, (int64_t)mpt_rng_below(&rng, (uint64_t)size), c);
    for (int k = 0; k < 4; k++) {
      int64_t m = mpt_space_neighbors(l.s, c, (mpt_neighbor_kind)k, ids, 64);
      assert_true(m > 0);
      for (int64_t i = 0; i < m && i < 64; i++) {
        if (i) assert_true(ids[i] > ids[i - 1]);
        mpt_space_config(l.s, ids[i], idx);
        int diff = 0, far = 0, dist = 0;
        for (int p = 0; p < 30; p++) {
          int dd = abs(idx[p] - c[p]);
          diff += dd != 0;
          far += dd > 1;
          dist += dd;
        }
        assert_true(diff > 0);
        if (k == MPT_NB_STRICTLY_ADJACENT) assert_int_equal(far, 0);
        if (k == MPT_NB_HAMMING) assert_int_equal(diff, 1);
        if (k == MPT_NB_INDEX_DISTANCE) assert_int_equal(dist, 1);
      }
      if (k == MPT_NB_STRICTLY_ADJACENT) assert_true(m > 1000000);
    }
  }
  int64_t lhs[40];
  assert_int_equal(mpt_space_sample_lhs(l.s, &rng, 40, lhs), 40);
  for (int i = 0; i < 40; i++)
    for (int j = 0; j < i; j++) assert_true(lhs[i] != lhs[j]);
  unload(&l);
}

/* 8 parameters of 8 values in a chain of always-true conditions, the last one also tied to the first by a
 * rare one (p0 * 100 + p7 == 7): an enumeration of about 4.4 million steps (every node down to the last
 * level is walked) that keeps 8^6 rows */
static const char *WATCHED =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"p0\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p1\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p2\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p3\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p4\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p5\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p6\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"p7\", \"Type\": \"int\", \"Values\": \"list(range(8))\"}"
    "], \"Conditions\": ["
    "{\"Expression\": \"p0 + p1 >= 0\"}, {\"Expression\": \"p1 + p2 >= 0\"}, {\"Expression\": \"p2 + p3 >= 0\"},"
    "{\"Expression\": \"p3 + p4 >= 0\"}, {\"Expression\": \"p4 + p5 >= 0\"}, {\"Expression\": \"p5 + p6 >= 0\"},"
    "{\"Expression\": \"p6 + p7 >= 0\"}, {\"Expression\": \"p0 * 100 + p7 == 7\"}]}}";

typedef struct watch_log {
  int calls, stop_at; /* stop_at: the call that asks to stop (0: none) */
  double done[64];
  int doing_ok;       /* every call said what the work is at */
} watch_log;

static int log_watch(void *ctx, const char *doing, double done) {
  watch_log *w = ctx;
  if (w->calls < 64) w->done[w->calls] = done;
  w->calls++;
  if (!doing || strcmp(doing, "building the search space") != 0) w->doing_ok = 0;
  return w->stop_at && w->calls >= w->stop_at;
}

/* mpt_space_build_watched: the watch is called every 2^20 steps with the share walked (in [0, 1], never
 * going back); the space is the one mpt_space_build builds */
static void test_build_watched(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_parse(WATCHED, "inline.json", &p, &err), 0);
  watch_log w = {.doing_ok = 1};
  mpt_watch watch = {log_watch, &w};
  mpt_space *s = NULL, *plain = NULL;
  int rc = mpt_space_build_watched(p, &watch, &s, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_space_size(s), 262144);
  assert_true(w.calls >= 3 && w.calls <= 64); /* about 4.4e6 steps: 4 calls */
  assert_true(w.doing_ok);
  for (int i = 0; i < w.calls; i++) {
    assert_true(w.done[i] >= 0 && w.done[i] <= 1);
    if (i) assert_true(w.done[i] >= w.done[i - 1]);
  }
  assert_true(w.done[w.calls - 1] > 0.5);
  assert_int_equal(mpt_space_build(p, &plain, &err), 0);
  assert_int_equal(mpt_space_size(plain), mpt_space_size(s));
  int a[8], b[8];
  for (int64_t id = 0; id < mpt_space_size(s); id += 997) {
    mpt_space_config(s, id, a);
    mpt_space_config(plain, id, b);
    assert_memory_equal(a, b, sizeof a);
  }
  mpt_space_free(plain);
  mpt_space_free(s);
  /* a watch without a function watches nothing */
  mpt_watch none = {NULL, NULL};
  assert_int_equal(mpt_space_build_watched(p, &none, &s, &err), 0);
  assert_int_equal(mpt_space_size(s), 262144);
  mpt_space_free(s);
  mpt_problem_free(p);
}

/* a nonzero return of the watch stops the build: MPT_ERR_STATE, no space, the message names the file */
static void test_build_watched_stops(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_parse(WATCHED, "inline.json", &p, &err), 0);
  watch_log w = {.stop_at = 2, .doing_ok = 1};
  mpt_watch watch = {log_watch, &w};
  mpt_space *s = (mpt_space *)&w; /* set to NULL by the failed build */
  assert_int_equal(mpt_space_build_watched(p, &watch, &s, &err), MPT_ERR_STATE);
  assert_null(s);
  assert_int_equal(w.calls, 2);
  assert_string_equal(err.msg, "inline.json: building the search space was stopped");
  mpt_problem_free(p);
}

/* MPT_T1_MAX_PARAMS parameters of three values, each one's condition leaving two (p != 3), in pairs
 * p(2i) <= p(2i+1) (every other pair also read through an 'and', which the builder splits): 3^5000 valid
 * configurations, refused as too large to enumerate. Refused in seconds: the enumeration order compared
 * every unplaced parameter with every condition at each of its 10,000 steps (hours), the one-parameter
 * conditions were matched against every parameter, and rows of 313 words were allowed 2^26 of them (168 GB:
 * out of memory first), now 2^27 / 313 (1 GiB). In a child killed after 120 s, with 4 GiB of address
 * space (not under AddressSanitizer, which reserves terabytes: there MPT_SPACE_MAX_ROWS keeps it small). */
static void test_thousands_of_params(void **state) {
  (void)state;
  int n = MPT_T1_MAX_PARAMS;
  size_t cap = 160 * (size_t)n, len = 0;
  char *t = malloc(cap);
  assert_non_null(t);
  len += (size_t)snprintf(t, cap, "{\"ConfigurationSpace\": {\"TuningParameters\": [\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(t + len, cap - len, "{\"Name\": \"p%d\", \"Type\": \"int\", \"Values\": [1, 2, 3]}%s\n", i,
                            i + 1 < n ? "," : "");
  len += (size_t)snprintf(t + len, cap - len, "], \"Conditions\": [\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(t + len, cap - len, "\"p%d != 3\",\n", i);
  for (int i = 0; i < n; i += 2) {
    const char *sep = i + 2 < n ? "," : "";
    if (i % 4)
      len += (size_t)snprintf(t + len, cap - len, "\"p%d <= p%d and p%d > 0\"%s\n", i, i + 1, i, sep);
    else
      len += (size_t)snprintf(t + len, cap - len, "\"p%d <= p%d\"%s\n", i, i + 1, sep);
  }
  snprintf(t + len, cap - len, "]}}");
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    alarm(120);
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    as.rlim_cur = (rlim_t)4 << 30;
    if (as.rlim_max != RLIM_INFINITY && as.rlim_max < as.rlim_cur) as.rlim_cur = as.rlim_max;
    if (ASAN) setenv("MPT_SPACE_MAX_ROWS", "100000", 1);
    else if (setrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    mpt_problem *p = NULL;
    mpt_space *s = NULL;
    mpt_error err = {0};
    int rc = mpt_problem_parse(t, "many.json", &p, &err);
    if (rc == 0) rc = mpt_space_build(p, &s, &err);
    char out[2100];
    int m = snprintf(out, sizeof out, "%d %s", rc, rc ? err.msg : "built");
    if (write(fd[1], out, (size_t)m) != m) _exit(4);
    _exit(0);
  }
  close(fd[1]);
  char got[2200] = "";
  size_t have = 0;
  ssize_t r;
  while (have < sizeof got - 1 && (r = read(fd[0], got + have, sizeof got - 1 - have)) > 0) have += (size_t)r;
  close(fd[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  free(t);
  if (!WIFEXITED(status)) fprintf(stderr, "the child was killed by signal %d (SIGALRM: over 120 s)\n", WTERMSIG(status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  long long rows = ASAN ? 100000 : ((long long)1 << 27) / ((2 * n + 63) / 64); /* two bits a parameter */
  char want[200];
  snprintf(want, sizeof want, "%d many.json: more than %lld valid combinations of the constrained parameters; the "
           "space is too large to enumerate", MPT_ERR_VALUE, rows);
  if (!strstr(got, want)) fprintf(stderr, "got:  %s\nwant: %s\n", got, want);
  assert_non_null(strstr(got, want));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_long_values),
      cmocka_unit_test(test_pairs_huge_table),
      cmocka_unit_test(test_counts),      cmocka_unit_test(test_lookup_any),
      cmocka_unit_test(test_mixed_free_params), cmocka_unit_test(test_neighbors),
      cmocka_unit_test(test_sampling),    cmocka_unit_test(test_lhs_strata),
      cmocka_unit_test(test_lhs_valid_marginals), cmocka_unit_test(test_pairs_coverage),
      cmocka_unit_test(test_encoding),    cmocka_unit_test(test_empty_and_runtime_errors),
      cmocka_unit_test(test_and_split),   cmocka_unit_test(test_wide_rows),
      cmocka_unit_test(test_many_params), cmocka_unit_test(test_thousands_of_params), cmocka_unit_test(test_build_watched),
      cmocka_unit_test(test_build_watched_stops),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  mpt_space_free(g_hot.s);
  mpt_problem_free(g_hot.p);
  return rc;
}
