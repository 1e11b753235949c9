/* jobs/bench/bench.c: the score of `mptune bench`: the exact expected best of random search without
 * replacement, the score of one run, the in-process ask/tell run on a replayed space, and the
 * aggregation over repeats (definitions in jobs/bench/bench.h). */
#include "jobs/bench/bench.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "strategies/strategy.h"
#include "spaces/sys/clock.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int mpt_bench_ref_init(mpt_bench_ref *ref, int64_t n, const double *valid, int64_t n_valid, mpt_error *err) {
  memset(ref, 0, sizeof *ref);
  if (n_valid < 1) return mpt_error_set(err, MPT_ERR_VALUE, "bench: no valid objective in the space");
  if (n_valid > n)
    return mpt_error_set(err, MPT_ERR_VALUE, "bench: %lld valid objectives but only %lld configurations",
                         (long long)n_valid, (long long)n);
  for (int64_t i = 0; i < n_valid; i++)
    if (!isfinite(valid[i])) return mpt_error_set(err, MPT_ERR_VALUE, "bench: valid objective %lld is not finite", (long long)i);
  ref->sorted = malloc((size_t)n_valid * sizeof *ref->sorted);
  if (!ref->sorted) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  memcpy(ref->sorted, valid, (size_t)n_valid * sizeof *valid);
  qsort(ref->sorted, (size_t)n_valid, sizeof *ref->sorted, cmp_double);
  ref->n = n;
  ref->n_valid = n_valid;
  return 0;
}

int mpt_bench_ref_from_replay(mpt_bench_ref *ref, const mpt_space *space, const mpt_replay *replay,
                              mpt_error *err) {
  memset(ref, 0, sizeof *ref);
  int64_t n = mpt_space_size(space), v = 0;
  double *y = malloc((size_t)(n > 0 ? n : 1) * sizeof *y);
  if (!y) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  for (int64_t id = 0; id < n; id++) {
    if (mpt_replay_valid(replay, id, &y[v])) v++;
  }
  int rc = v ? mpt_bench_ref_init(ref, n, y, v, err)
             : mpt_error_set(err, MPT_ERR_VALUE, "no configuration of the space has a valid objective in the replay file");
  free(y);
  return rc;
}

void mpt_bench_ref_free(mpt_bench_ref *ref) {
  if (!ref) return;
  free(ref->sorted);
  free(ref->expected);
  memset(ref, 0, sizeof *ref);
}

double mpt_bench_optimum(const mpt_bench_ref *ref) { return ref->sorted[0]; }
double mpt_bench_worst(const mpt_bench_ref *ref) { return ref->sorted[ref->n_valid - 1]; }

/* E_random(k) by the probabilities P(k, j) = C(N-j, k-1) / C(N, k) that the j-th smallest is the best of k
 * draws, each from the one before: P(k, 1) = k / N, P(k, j+1) = P(k, j) (N-j-k+1) / (N-j); the last one
 * continued, P(k, V+1) (N-V) / k, is C(N-V, k) / C(N, k), no valid draw. O(V) multiplications, in long
 * double (the running product's rounding stays ~1e-19 per step, under 1e-13 over 10^6 steps); P(k, j)
 * decreases with j, so the loop stops once it is too small to change the sum. */
static double expected_random(const mpt_bench_ref *ref, int64_t k) {
  int64_t N = ref->n, V = ref->n_valid;
  long double p = (long double)k / (long double)N, e = 0, mass = 0;
  int64_t j = 1;
  for (; j <= V && p > 0; j++) {
    e += (long double)ref->sorted[j - 1] * p;
    mass += p;
    if (p < 1e-40L * mass) { p = 0; break; } /* the rest of the terms: below 1e-40 * N of the sum */
    p = j < N ? p * ((long double)(N - j - k + 1) / (long double)(N - j)) : 0; /* j = N: none left */
  }
  if (j > V && p > 0) { /* no valid draw: P(k, V+1) (N-V) / k */
    long double p0 = p * (long double)(N - V) / (long double)k;
    e += (long double)ref->sorted[V - 1] * p0;
    mass += p0;
  }
  /* mass is 1 up to rounding (hockey-stick identity); dividing removes the rounding from e */
  return mass > 0 ? (double)(e / mass) : ref->sorted[V - 1];
}

double mpt_bench_expected_random(const mpt_bench_ref *ref, int64_t k) {
  if (k < 1) k = 1;
  if (k > ref->n) k = ref->n;
  if (k <= ref->n_expected) return ref->expected[k - 1];
  return expected_random(ref, k);
}

int mpt_bench_ref_tabulate(mpt_bench_ref *ref, int64_t kmax, mpt_error *err) {
  if (kmax > ref->n) kmax = ref->n;
  if (kmax <= ref->n_expected) return 0;
  double *t = realloc(ref->expected, (size_t)kmax * sizeof *t);
  if (!t) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  for (int64_t k = ref->n_expected + 1; k <= kmax; k++) t[k - 1] = expected_random(ref, k);
  ref->expected = t;
  ref->n_expected = kmax;
  return 0;
}

double mpt_bench_score_at(const mpt_bench_ref *ref, int64_t k, double best_k) {
  double opt = mpt_bench_optimum(ref), e = mpt_bench_expected_random(ref, k);
  double b = isfinite(best_k) ? best_k : mpt_bench_worst(ref);
  double den = e - opt;
  if (!(den > 1e-12 * (fabs(opt) > 1e-300 ? fabs(opt) : 1.0))) return NAN;
  return (e - b) / den;
}

double mpt_bench_score(const mpt_bench_ref *ref, const double *best, int64_t n, int64_t budget, int64_t step) {
  if (step < 1 || budget < 1) return NAN;
  double sum = 0;
  int terms = 0;
  int64_t k = budget < step ? budget : step;
  for (; k <= budget; k += step) {
    double b = n <= 0 ? INFINITY : best[(k <= n ? k : n) - 1];
    double t = mpt_bench_score_at(ref, k, b);
    if (isnan(t)) continue;
    sum += t;
    terms++;
  }
  return terms ? sum / terms : NAN;
}

void mpt_bench_run_free(mpt_bench_run *run) {
  if (!run) return;
  free(run->best);
  free(run->ids);
  free(run->ask_s);
  memset(run, 0, sizeof *run);
}

int mpt_bench_run_begin(mpt_bench_run *out, int64_t budget, int batch, mpt_error *err) {
  memset(out, 0, sizeof *out);
  if (budget < 1) return mpt_error_set(err, MPT_ERR_VALUE, "bench: budget must be >= 1 (got %lld)", (long long)budget);
  if (batch < 1) return mpt_error_set(err, MPT_ERR_VALUE, "bench: batch must be >= 1 (got %d)", batch);
  out->best = malloc((size_t)budget * sizeof *out->best);
  out->ids = malloc((size_t)budget * sizeof *out->ids);
  out->ask_s = malloc((size_t)budget * sizeof *out->ask_s); /* every ask returns >= 1 id, or ends the run */
  if (!out->best || !out->ids || !out->ask_s) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  return 0;
}

int mpt_bench_run_round(mpt_strategy *s, const mpt_replay *replay, mpt_bench_run *out, int64_t budget, int batch,
                        int64_t *ids, mpt_obs *obs, int *got_out, mpt_error *err) {
  *got_out = 0;
  if (out->n_evals >= budget) return 0;
  int64_t left = budget - out->n_evals;
  int want = left < batch ? (int)left : batch;
  double best = out->n_evals ? out->best[out->n_evals - 1] : INFINITY;
  double t0 = mpt_clock_mono_s();
  int got = mpt_strategy_ask(s, want, ids);
  double t1 = mpt_clock_mono_s();
  if (got < 0)
    return mpt_error_set(err, got, "bench: strategy '%s' failed to ask (seed %llu, after %lld evaluations): %s",
                         s->type->name, (unsigned long long)s->seed, (long long)out->n_evals, mpt_strategy_ask_error(s));
  if (got == 0) return 0;
  if (out->n_asks < budget) out->ask_s[out->n_asks++] = t1 - t0;
  out->strategy_s += t1 - t0;
  if (got > want) got = want;
  for (int i = 0; i < got; i++) {
    mpt_replay_obs(replay, ids[i], &obs[i]);
    if (mpt_obs_valid(&obs[i])) {
      if (obs[i].objective < best) best = obs[i].objective;
    } else {
      out->n_failed++;
    }
    out->ids[out->n_evals] = ids[i];
    out->best[out->n_evals++] = best;
  }
  t0 = mpt_clock_mono_s();
  mpt_strategy_tell(s, obs, got);
  out->strategy_s += mpt_clock_mono_s() - t0;
  *got_out = got;
  return 0;
}

void mpt_bench_run_end(mpt_bench_run *out, int64_t budget) {
  double best = out->n_evals ? out->best[out->n_evals - 1] : INFINITY;
  for (int64_t i = out->n_evals; i < budget; i++) {
    out->best[i] = best;
    out->ids[i] = -1;
  }
}

int mpt_bench_run_strategy(const mpt_space *space, const mpt_replay *replay, const char *strategy,
                           const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch,
                           mpt_bench_run *out, mpt_error *err) {
  return mpt_bench_run_primed(space, replay, strategy, opts, n_opts, seed, budget, batch, NULL, NULL, out, err);
}

int mpt_bench_run_primed(const mpt_space *space, const mpt_replay *replay, const char *strategy,
                         const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch,
                         mpt_bench_prime_fn prime, void *ctx, mpt_bench_run *out, mpt_error *err) {
  int rc = mpt_bench_run_begin(out, budget, batch, err);
  if (rc) return rc;
  int64_t *ids = malloc((size_t)batch * sizeof *ids);
  mpt_obs *obs = malloc((size_t)batch * sizeof *obs);
  mpt_strategy *s = NULL;
  if (!ids || !obs) rc = mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  if (!rc) rc = mpt_strategy_create(strategy, space, opts, n_opts, seed, budget, &s, err);
  if (!rc && prime) rc = prime(s, ctx, err);
  for (int got = 1; !rc && got > 0;) rc = mpt_bench_run_round(s, replay, out, budget, batch, ids, obs, &got, err);
  if (!rc) mpt_bench_run_end(out, budget);
  mpt_strategy_destroy(s);
  free(ids);
  free(obs);
  return rc;
}

double mpt_bench_quantile(double *v, int64_t n, double q) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  if (q <= 0) return v[0];
  if (q >= 1) return v[n - 1];
  double pos = q * (double)(n - 1);
  int64_t lo = (int64_t)floor(pos);
  double f = pos - (double)lo;
  return lo + 1 < n ? v[lo] + f * (v[lo + 1] - v[lo]) : v[lo];
}

int mpt_bench_summarize(const mpt_bench_ref *ref, const mpt_bench_run *runs, const double *scores, int n_runs,
                        int64_t budget, const int64_t *checkpoints, int n_checkpoints, mpt_bench_summary *out,
                        mpt_error *err) {
  memset(out, 0, sizeof *out);
  out->n_runs = n_runs;
  if (n_runs < 1) return mpt_error_set(err, MPT_ERR_VALUE, "bench: no runs to summarize");
  double sum = 0, sum2 = 0;
  int n_scores = 0;
  for (int r = 0; r < n_runs; r++)
    if (!isnan(scores[r])) { sum += scores[r]; n_scores++; }
  out->score_mean = n_scores ? sum / n_scores : NAN;
  for (int r = 0; r < n_runs; r++)
    if (!isnan(scores[r])) sum2 += (scores[r] - out->score_mean) * (scores[r] - out->score_mean);
  out->score_sd = n_scores > 1 ? sqrt(sum2 / (n_scores - 1)) : n_scores ? 0 : NAN;
  for (int c = 0; c < n_checkpoints && out->n_checkpoints < MPT_BENCH_MAX_CHECKPOINTS; c++) {
    int64_t k = checkpoints[c];
    if (k < 1 || k > budget) continue;
    double m = 0;
    for (int r = 0; r < n_runs; r++) {
      double b = runs[r].best[k - 1];
      m += isfinite(b) ? b : mpt_bench_worst(ref);
    }
    out->checkpoint[out->n_checkpoints] = k;
    out->best_mean[out->n_checkpoints++] = m / n_runs;
  }
  int64_t n_asks = 0;
  for (int r = 0; r < n_runs; r++) {
    if (runs[r].best[budget - 1] <= mpt_bench_optimum(ref)) out->found_optimum++;
    n_asks += runs[r].n_asks;
    out->failed_mean += (double)runs[r].n_failed / n_runs;
    out->strategy_mean_s += runs[r].strategy_s / n_runs;
  }
  double *t = malloc((size_t)(n_asks > 0 ? n_asks : 1) * sizeof *t);
  if (!t) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  int64_t m = 0;
  for (int r = 0; r < n_runs; r++)
    for (int a = 0; a < runs[r].n_asks; a++) t[m++] = runs[r].ask_s[a];
  out->ask_median_s = mpt_bench_quantile(t, m, 0.5);
  free(t);
  return 0;
}
