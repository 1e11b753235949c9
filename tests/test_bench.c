/* tests/test_bench.c: the score of `mptune bench` (jobs/bench/bench.c): E_random exact against full
 * enumeration of a small space and against Monte Carlo on a real replayed space, the score of a run
 * that finds the optimum first (1 at every k), of the worst run, the random strategy scoring near 0 on
 * average, the in-process run (budget, distinct ids, failures counted, determinism), aggregation and
 * bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench.h"
#include "spaces/sys/rng.h"
#include "strategies/strategy.h"
#include "tests/conv_space.h"

/* cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                                     \
  do {                                                                                             \
    double a_ = (a), b_ = (b);                                                                     \
    if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g (+- %g)", #a, a_, b_, (double)(eps)); \
  } while (0)

typedef struct fixture {
  mpt_problem *p;
  mpt_space *s;
  mpt_replay *a100, *a6000;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || conv_space_load(&f->p, &f->s) || conv_replay_load(f->s, "A100", &f->a100) ||
      conv_replay_load(f->s, "A6000", &f->a6000))
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mpt_replay_free(f->a100);
  mpt_replay_free(f->a6000);
  mpt_space_free(f->s);
  mpt_problem_free(f->p);
  free(f);
  return 0;
}

/* E[best of k] by enumerating every k-subset of n items (item i valid when i < nv, value y[i]) */
static double enumerate_expected(const double *y, int n, int nv, int k) {
  int idx[16];
  for (int i = 0; i < k; i++) idx[i] = i;
  double sum = 0, worst = -INFINITY;
  long count = 0;
  for (int i = 0; i < nv; i++)
    if (y[i] > worst) worst = y[i];
  for (;;) {
    double b = INFINITY;
    for (int i = 0; i < k; i++)
      if (idx[i] < nv && y[idx[i]] < b) b = y[idx[i]];
    sum += isfinite(b) ? b : worst;
    count++;
    int i = k - 1;
    while (i >= 0 && idx[i] == n - k + i) i--;
    if (i < 0) break;
    idx[i]++;
    for (int j = i + 1; j < k; j++) idx[j] = idx[j - 1] + 1;
  }
  return sum / (double)count;
}

static void test_expected_random_enumeration(void **state) {
  (void)state;
  /* 12 configurations, 7 valid (unsorted, with a tie), 5 failed */
  const double y[7] = {3.5, 1.25, 7.0, 2.0, 2.0, 9.5, 4.75};
  mpt_bench_ref ref;
  mpt_error err;
  assert_int_equal(mpt_bench_ref_init(&ref, 12, y, 7, &err), 0);
  assert_true(mpt_bench_optimum(&ref) == 1.25);
  assert_true(mpt_bench_worst(&ref) == 9.5);
  for (int k = 1; k <= 12; k++) {
    double exact = enumerate_expected(y, 12, 7, k);
    double e = mpt_bench_expected_random(&ref, k);
    assert_near(e, exact, 1e-12 * exact);
  }
  /* k = N draws everything: the optimum, and the score term is undefined there */
  assert_near(mpt_bench_expected_random(&ref, 12), 1.25, 1e-12);
  assert_true(isnan(mpt_bench_score_at(&ref, 12, 1.25)));
  /* k = 1: the mean over all N, failed ones counted as the worst valid */
  double m1 = (3.5 + 1.25 + 7.0 + 2.0 + 2.0 + 9.5 + 4.75 + 5 * 9.5) / 12;
  assert_near(mpt_bench_expected_random(&ref, 1), m1, 1e-12);
  mpt_bench_ref_free(&ref);
}

/* E_random in its lgamma form, independent of jobs/bench/bench.c's recurrence: the reference. */
static double log_choose_ref(double n, double k) {
  if (k < 0 || k > n || n < 0) return -INFINITY;
  return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

static double expected_random_lgamma(const double *sorted, int64_t N, int64_t V, int64_t k) {
  double lc = log_choose_ref((double)N, (double)k), e = 0, mass = 0;
  for (int64_t j = 1; j <= V; j++) {
    double l = log_choose_ref((double)(N - j), (double)(k - 1)) - lc;
    if (l < -745) break;
    e += sorted[j - 1] * exp(l);
    mass += exp(l);
  }
  double l0 = log_choose_ref((double)(N - V), (double)k) - lc;
  if (l0 > -745) e += sorted[V - 1] * exp(l0), mass += exp(l0);
  return e / mass;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* E_random by its recurrence: the same values as the lgamma form on spaces of a few thousand
 * configurations (where lgamma is accurate to ~1e-14), the exact value (N+1)/(k+1) for the objectives
 * 1..N all valid (E[min of k of 1..N without replacement]) on a million, where the lgamma form is off by
 * ~1e-11 (its terms differ in lgamma(~1e6) ~ 1.3e7, each rounded to ~2e-9), and the edge cases
 * N = 1 and k = N with every configuration valid */
static void test_expected_random_recurrence(void **state) {
  (void)state;
  mpt_error err;
  mpt_bench_ref ref;
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  const int64_t Ns[] = {3, 50, 4362, 5000}, Vs[] = {3, 17, 4201, 2000};
  for (int q = 0; q < 4; q++) {
    int64_t N = Ns[q], V = Vs[q];
    double *y = malloc((size_t)V * sizeof *y);
    for (int64_t i = 0; i < V; i++) y[i] = 0.5 + 10 * mpt_rng_uniform(&rng) * mpt_rng_uniform(&rng);
    assert_int_equal(mpt_bench_ref_init(&ref, N, y, V, &err), 0);
    qsort(y, (size_t)V, sizeof *y, cmp_dbl);
    for (int64_t k = 1; k <= N; k += k < 300 ? 1 : 97) {
      double ref_e = expected_random_lgamma(y, N, V, k), e = mpt_bench_expected_random(&ref, k);
      if (!(fabs(e - ref_e) <= 1e-12 * ref_e)) fail_msg("N=%lld V=%lld k=%lld: %.17g vs lgamma %.17g", (long long)N, (long long)V, (long long)k, e, ref_e);
    }
    mpt_bench_ref_free(&ref);
    free(y);
  }
  const int64_t N = 1000000;
  double *y = malloc((size_t)N * sizeof *y);
  for (int64_t i = 0; i < N; i++) y[i] = (double)(N - i); /* any order: sorted by init */
  assert_int_equal(mpt_bench_ref_init(&ref, N, y, N, &err), 0);
  const int64_t ks[] = {1, 2, 20, 220, 5000, N};
  for (int c = 0; c < 6; c++) {
    double exact = (double)(N + 1) / (double)(ks[c] + 1), e = mpt_bench_expected_random(&ref, ks[c]);
    if (!(fabs(e - exact) <= 1e-12 * exact)) fail_msg("1..N, k=%lld: %.17g, exact %.17g", (long long)ks[c], e, exact);
  }
  mpt_bench_ref_free(&ref);
  free(y);
  const double one = 2.5;
  assert_int_equal(mpt_bench_ref_init(&ref, 1, &one, 1, &err), 0);
  assert_true(mpt_bench_expected_random(&ref, 1) == 2.5);
  mpt_bench_ref_free(&ref);
}

/* Monte Carlo of random search without replacement over real spaces (A100 and A6000 have 161 and 473
 * configurations without a valid objective) */
static void test_expected_random_monte_carlo(void **state) {
  fixture *f = *state;
  const mpt_replay *reps[2] = {f->a100, f->a6000};
  for (int q = 0; q < 2; q++) {
    mpt_bench_ref ref;
    mpt_error err;
    assert_int_equal(mpt_bench_ref_from_replay(&ref, f->s, reps[q], &err), 0);
    int64_t N = mpt_space_size(f->s);
    assert_int_equal(ref.n, N);
    assert_true(ref.n_valid <= N && ref.n_valid > 0);
    assert_true(mpt_bench_optimum(&ref) == mpt_replay_optimum(reps[q]));
    int64_t *perm = malloc((size_t)N * sizeof *perm);
    for (int64_t i = 0; i < N; i++) perm[i] = i;
    const int ks[] = {1, 5, 20, 60, 220};
    const int T = 20000;
    double sum[5] = {0}, sum2[5] = {0};
    mpt_rng rng;
    mpt_rng_seed(&rng, 12345 + (uint64_t)q);
    for (int t = 0; t < T; t++) {
      double best = INFINITY;
      int c = 0;
      for (int i = 0; i < 220; i++) { /* partial Fisher-Yates: draw 220 without replacement */
        int64_t j = i + (int64_t)mpt_rng_below(&rng, (uint64_t)(N - i));
        int64_t tmp = perm[i]; perm[i] = perm[j]; perm[j] = tmp;
        double y;
        if (mpt_replay_valid(reps[q], perm[i], &y) && y < best) best = y;
        if (i + 1 == ks[c]) {
          double b = isfinite(best) ? best : mpt_bench_worst(&ref);
          sum[c] += b;
          sum2[c] += b * b;
          c++;
        }
      }
    }
    for (int c = 0; c < 5; c++) {
      double mean = sum[c] / T, var = sum2[c] / T - mean * mean;
      double se = sqrt(var / T), e = mpt_bench_expected_random(&ref, ks[c]);
      /* 5 standard errors (fixed seed: deterministic) and a small relative floor */
      if (fabs(mean - e) > 5 * se + 1e-9 * e)
        fail_msg("replay %d k=%d: Monte Carlo %.6g +- %.2g vs exact %.6g", q, ks[c], mean, se, e);
    }
    /* the tabulated values are the same numbers */
    double direct[221];
    for (int k = 1; k <= 220; k++) direct[k] = mpt_bench_expected_random(&ref, k);
    assert_int_equal(mpt_bench_ref_tabulate(&ref, 200, &err), 0);
    assert_int_equal(ref.n_expected, 200);
    for (int k = 1; k <= 220; k++) assert_true(mpt_bench_expected_random(&ref, k) == direct[k]);
    /* E_random decreases with k towards the optimum */
    for (int k = 2; k <= 220; k++)
      assert_true(mpt_bench_expected_random(&ref, k) <= mpt_bench_expected_random(&ref, k - 1) + 1e-12);
    free(perm);
    mpt_bench_ref_free(&ref);
  }
}

static void test_score_optimum_first_and_worst(void **state) {
  fixture *f = *state;
  mpt_bench_ref ref;
  mpt_error err;
  assert_int_equal(mpt_bench_ref_from_replay(&ref, f->s, f->a6000, &err), 0);
  double *best = malloc(220 * sizeof *best);
  for (int i = 0; i < 220; i++) best[i] = mpt_bench_optimum(&ref);
  for (int k = 20; k <= 220; k += 20) assert_near(mpt_bench_score_at(&ref, k, best[k - 1]), 1.0, 1e-12);
  assert_near(mpt_bench_score(&ref, best, 220, 220, 20), 1.0, 1e-12);
  /* a run that stopped after one evaluation (strategy exhausted) keeps its last best */
  assert_near(mpt_bench_score(&ref, best, 1, 220, 20), 1.0, 1e-12);
  /* never a valid observation: best = worst, every term negative */
  for (int i = 0; i < 220; i++) best[i] = INFINITY;
  double worst = mpt_bench_score(&ref, best, 220, 220, 20);
  assert_true(worst < 0);
  double manual = 0;
  for (int k = 20; k <= 220; k += 20) {
    double e = mpt_bench_expected_random(&ref, k);
    manual += (e - mpt_bench_worst(&ref)) / (e - mpt_bench_optimum(&ref)) / 11;
  }
  assert_near(worst, manual, 1e-9 * fabs(manual));
  /* best(k) equal to E_random(k) scores 0 at that k */
  assert_near(mpt_bench_score_at(&ref, 40, mpt_bench_expected_random(&ref, 40)), 0.0, 1e-12);
  /* a budget below the step: the one k is the budget */
  for (int i = 0; i < 220; i++) best[i] = mpt_bench_optimum(&ref);
  assert_near(mpt_bench_score(&ref, best, 10, 10, 20), 1.0, 1e-12);
  free(best);
  mpt_bench_ref_free(&ref);
}

/* brute_force walks the ids in order, so its trace (best, failures, asks of a batch of 7) is known
 * from the replay alone; its score is the mean of the per-k terms */
static void test_run_brute_force_trace(void **state) {
  fixture *f = *state;
  mpt_bench_ref ref;
  mpt_bench_run run;
  mpt_error err;
  assert_int_equal(mpt_bench_ref_from_replay(&ref, f->s, f->a6000, &err), 0);
  assert_int_equal(mpt_bench_run_strategy(f->s, f->a6000, "brute_force", NULL, 0, 1, 1000, 7, &run, &err), 0);
  assert_int_equal(run.n_evals, 1000);
  assert_int_equal(run.n_asks, 143); /* 142 x 7 + 6 */
  double best = INFINITY;
  int64_t failed = 0;
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(run.ids[i], i); /* brute force walks ids in order */
    double y;
    if (mpt_replay_valid(f->a6000, i, &y)) { if (y < best) best = y; }
    else failed++;
    assert_true(run.best[i] == best || (isinf(best) && isinf(run.best[i])));
  }
  assert_int_equal(run.n_failed, failed);
  assert_true(failed > 0); /* the trace covers failed evaluations */
  double s = mpt_bench_score(&ref, run.best, run.n_evals, 1000, 20), manual = 0;
  for (int k = 20; k <= 1000; k += 20) manual += mpt_bench_score_at(&ref, k, run.best[k - 1]) / 50;
  assert_near(s, manual, 1e-12);
  mpt_bench_run_free(&run);
  mpt_bench_ref_free(&ref);
}

static void test_random_scores_near_zero(void **state) {
  fixture *f = *state;
  const mpt_replay *reps[2] = {f->a100, f->a6000};
  for (int q = 0; q < 2; q++) {
    mpt_bench_ref ref;
    mpt_error err;
    assert_int_equal(mpt_bench_ref_from_replay(&ref, f->s, reps[q], &err), 0);
    const int R = 300;
    double sum = 0, sum2 = 0;
    for (int r = 0; r < R; r++) {
      mpt_bench_run run;
      assert_int_equal(mpt_bench_run_strategy(f->s, reps[q], "random", NULL, 0, 1000 + (uint64_t)r, 220, 1, &run, &err), 0);
      assert_int_equal(run.n_evals, 220);
      double s = mpt_bench_score(&ref, run.best, run.n_evals, 220, 20);
      assert_false(isnan(s));
      sum += s;
      sum2 += s * s;
      mpt_bench_run_free(&run);
    }
    double mean = sum / R, sd = sqrt((sum2 - R * mean * mean) / (R - 1));
    /* expected 0; the standard error is sd/sqrt(300) ~ 0.02-0.04: 0.15 is a generous bound (fixed seeds) */
    if (fabs(mean) > 0.15) fail_msg("random strategy: mean score %.3f (sd %.3f) over %d runs", mean, sd, R);
    mpt_bench_ref_free(&ref);
  }
}

static void test_run_properties_and_determinism(void **state) {
  fixture *f = *state;
  mpt_error err;
  const char *names[] = {"ga", "sa", "random"};
  for (int n = 0; n < 3; n++) {
    mpt_bench_run a, b;
    assert_int_equal(mpt_bench_run_strategy(f->s, f->a6000, names[n], NULL, 0, 7, 120, 4, &a, &err), 0);
    assert_int_equal(mpt_bench_run_strategy(f->s, f->a6000, names[n], NULL, 0, 7, 120, 4, &b, &err), 0);
    assert_int_equal(a.n_evals, 120);
    assert_memory_equal(a.ids, b.ids, 120 * sizeof(int64_t));
    int64_t failed = 0;
    for (int i = 0; i < 120; i++) {
      for (int j = 0; j < i; j++) assert_true(a.ids[i] != a.ids[j]);
      double y;
      if (!mpt_replay_valid(f->a6000, a.ids[i], &y)) failed++;
      if (i) assert_true(a.best[i] <= a.best[i - 1]);
    }
    assert_int_equal(a.n_failed, failed);
    assert_true(a.n_asks >= 30 && a.n_asks <= 120);
    mpt_bench_run_free(&a);
    mpt_bench_run_free(&b);
  }
}

static void test_summarize_and_quantile(void **state) {
  fixture *f = *state;
  mpt_bench_ref ref;
  mpt_error err;
  assert_int_equal(mpt_bench_ref_from_replay(&ref, f->s, f->a100, &err), 0);
  double v[5] = {5, 1, 4, 2, 3};
  assert_near(mpt_bench_quantile(v, 5, 0.5), 3, 0);
  assert_near(mpt_bench_quantile(v, 5, 0.25), 2, 0);
  assert_near(mpt_bench_quantile(v, 5, 0.125), 1.5, 1e-15);
  assert_true(isnan(mpt_bench_quantile(v, 0, 0.5)));
  mpt_bench_run runs[3];
  double scores[3];
  for (int r = 0; r < 3; r++) {
    assert_int_equal(mpt_bench_run_strategy(f->s, f->a100, "random", NULL, 0, (uint64_t)r, 60, 1, &runs[r], &err), 0);
    scores[r] = mpt_bench_score(&ref, runs[r].best, runs[r].n_evals, 60, 20);
  }
  runs[1].best[59] = mpt_bench_optimum(&ref); /* pretend run 1 found it last */
  const int64_t cps[] = {20, 60, 220};
  mpt_bench_summary s;
  assert_int_equal(mpt_bench_summarize(&ref, runs, scores, 3, 60, cps, 3, &s, &err), 0);
  assert_int_equal(s.n_runs, 3);
  assert_int_equal(s.n_checkpoints, 2); /* 220 > budget is dropped */
  assert_near(s.best_mean[0], (runs[0].best[19] + runs[1].best[19] + runs[2].best[19]) / 3, 1e-12);
  assert_near(s.score_mean, (scores[0] + scores[1] + scores[2]) / 3, 1e-12);
  assert_int_equal(s.found_optimum, 1);
  assert_near(s.failed_mean, (double)(runs[0].n_failed + runs[1].n_failed + runs[2].n_failed) / 3, 1e-12);
  assert_true(s.ask_median_s >= 0 && s.ask_median_s < 0.1);
  for (int r = 0; r < 3; r++) mpt_bench_run_free(&runs[r]);
  assert_int_equal(mpt_bench_summarize(&ref, runs, scores, 0, 60, cps, 3, &s, &err), MPT_ERR_VALUE);
  mpt_bench_ref_free(&ref);
}

static void test_bad_input(void **state) {
  fixture *f = *state;
  mpt_bench_run run;
  mpt_bench_ref ref;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_bench_run_strategy(f->s, f->a100, "random", NULL, 0, 1, 0, 1, &run, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "budget"));
  mpt_bench_run_free(&run);
  assert_int_equal(mpt_bench_run_strategy(f->s, f->a100, "random", NULL, 0, 1, 10, 0, &run, &err), MPT_ERR_VALUE);
  mpt_bench_run_free(&run);
  assert_int_equal(mpt_bench_run_strategy(f->s, f->a100, "nope", NULL, 0, 1, 10, 1, &run, &err), MPT_ERR_NAME);
  assert_non_null(strstr(err.msg, "nope"));
  mpt_bench_run_free(&run);
  const char *bad[] = {"no_such_key=1"};
  assert_true(mpt_bench_run_strategy(f->s, f->a100, "ga", bad, 1, 1, 10, 1, &run, &err) < 0);
  mpt_bench_run_free(&run);
  double y[2] = {1, NAN};
  assert_int_equal(mpt_bench_ref_init(&ref, 5, y, 0, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_bench_ref_init(&ref, 1, y, 2, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_bench_ref_init(&ref, 5, y, 2, &err), MPT_ERR_VALUE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_expected_random_enumeration),
    cmocka_unit_test(test_expected_random_recurrence),
    cmocka_unit_test(test_expected_random_monte_carlo),
    cmocka_unit_test(test_score_optimum_first_and_worst),
    cmocka_unit_test(test_run_brute_force_trace),
    cmocka_unit_test(test_random_scores_near_zero),
    cmocka_unit_test(test_run_properties_and_determinism),
    cmocka_unit_test(test_summarize_and_quantile),
    cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
