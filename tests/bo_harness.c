/* tests/bo_harness.c: in-process scoring harness for strategies on brute-forced spaces (used to tune
 * `bo`): loads a T1 problem and replay files, runs ask/tell loops (rounds of ask(batch)) for R seeds and
 * prints the score of each space.
 *
 *   bo_harness PROBLEM.json REPLAY.json.gz [REPLAY...] [--strategy S] [--repeats R] [--batch B]
 *              [--budget N] [--seed0 S] [--option key=value]...
 * Environment: BO_HARNESS_VERBOSE (score per seed), BO_HARNESS_CURVE (score per k), BO_HARNESS_TRACE
 * (every evaluation: k, objective, best so far, configuration).
 *
 * Score of one run = mean over k = 20, 40, ..., budget of the terms of jobs/bench/bench.h
 * (mpt_bench_score_at: (E_random(k) - best(k)) / (E_random(k) - optimum), E_random exact), the same
 * definition as `mptune bench`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench.h"
#include "spaces/space.h"
#include "strategies/strategy.h"
#include "spaces/sys/clock.h"

int main(int argc, char **argv) {
  const char *problem = NULL, *strategy = "bo";
  const char *replays[16];
  int n_replays = 0, repeats = 10, batch = 1;
  int64_t budget = 220;
  uint64_t seed0 = 1;
  const char *opts[64];
  int n_opts = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc) strategy = argv[++i];
    else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) batch = atoi(argv[++i]);
    else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) budget = atoll(argv[++i]);
    else if (strcmp(argv[i], "--seed0") == 0 && i + 1 < argc) seed0 = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--option") == 0 && i + 1 < argc && n_opts < 64) opts[n_opts++] = argv[++i];
    else if (!problem) problem = argv[i];
    else if (n_replays < 16) replays[n_replays++] = argv[i];
  }
  if (!problem || n_replays == 0 || batch < 1 || budget < 20) {
    fprintf(stderr, "usage: bo_harness PROBLEM.json REPLAY... [--strategy S] [--repeats R] [--batch B] [--budget N] [--option k=v]\n");
    return 2;
  }
  mpt_error err;
  mpt_problem *p;
  mpt_space *sp;
  if (mpt_problem_load(problem, &p, &err) || mpt_space_build(p, &sp, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  double total = 0;
  for (int r = 0; r < n_replays; r++) {
    mpt_replay *rep;
    if (mpt_replay_load(replays[r], sp, &rep, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    mpt_bench_ref ref;
    int nk = (int)(budget / 20);
    if (mpt_bench_ref_from_replay(&ref, sp, rep, &err) || mpt_bench_ref_tabulate(&ref, budget, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    double sum = 0, sum2 = 0, fails = 0, t_strat = 0;
    double *curve = calloc((size_t)nk, sizeof(double));
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)batch);
    mpt_obs *obs = malloc(sizeof(mpt_obs) * (size_t)batch);
    for (int rep_i = 0; rep_i < repeats; rep_i++) {
      mpt_strategy *s;
      if (mpt_strategy_create(strategy, sp, opts, n_opts, seed0 + (uint64_t)rep_i, budget, &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
      }
      double best = INFINITY, score = 0;
      int64_t done = 0;
      int q = 0;
      int nfail = 0;
      while (done < budget) {
        int want = (int)(budget - done < batch ? budget - done : batch);
        double t0 = mpt_clock_mono_s();
        int got = mpt_strategy_ask(s, want, ids);
        t_strat += mpt_clock_mono_s() - t0;
        if (got <= 0) break;
        for (int i = 0; i < got; i++) {
          if (!mpt_replay_get(rep, ids[i], &obs[i])) { mpt_obs_init(&obs[i], ids[i]); obs[i].status = MPT_STATUS_RUNTIME_ERROR; }
          obs[i].id = ids[i];
          if (mpt_obs_valid(&obs[i])) { if (obs[i].objective < best) best = obs[i].objective; }
          else nfail++;
          if (getenv("BO_HARNESS_TRACE")) { /* one line per evaluation: k, objective, best, configuration */
            char cfg[512];
            mpt_space_format(sp, ids[i], cfg, sizeof cfg);
            printf("    %4lld %10.4f %10.4f %s\n", (long long)done + 1,
                   mpt_obs_valid(&obs[i]) ? obs[i].objective : NAN, best, cfg);
          }
          done++;
          if (done % 20 == 0 && q < nk) {
            double term = mpt_bench_score_at(&ref, done, best);
            score += term;
            if (getenv("BO_HARNESS_CURVE")) curve[q] += term / repeats;
            q++;
          }
        }
        t0 = mpt_clock_mono_s();
        mpt_strategy_tell(s, obs, got);
        t_strat += mpt_clock_mono_s() - t0;
      }
      mpt_strategy_destroy(s);
      score /= nk;
      sum += score;
      sum2 += score * score;
      fails += nfail;
      if (getenv("BO_HARNESS_VERBOSE")) printf("  seed %d score %.3f fails %d\n", rep_i, score, nfail);
    }
    double mean = sum / repeats, sd = repeats > 1 ? sqrt((sum2 - repeats * mean * mean) / (repeats - 1)) : 0;
    const char *base = strrchr(replays[r], '/');
    printf("%-40s score %.3f (sd %.3f, se %.3f) failed %.1f%% of evals, %.1f ms strategy time/run\n",
           base ? base + 1 : replays[r], mean, sd, sd / sqrt(repeats), 100.0 * fails / (repeats * (double)budget),
           1e3 * t_strat / repeats);
    fflush(stdout);
    total += mean;
    if (getenv("BO_HARNESS_CURVE")) {
      printf("  score at k=20,40,...:");
      for (int q2 = 0; q2 < nk; q2++) printf(" %.2f", curve[q2]);
      printf("\n");
    }
    free(curve);
    free(ids); free(obs);
    mpt_bench_ref_free(&ref);
    mpt_replay_free(rep);
  }
  if (n_replays > 1) printf("mean over %d spaces: %.3f\n", n_replays, total / n_replays);
  mpt_space_free(sp);
  mpt_problem_free(p);
  return 0;
}
