/* tests/evo_harness.c: a small scoring harness for the strategies (until/besides `mptune bench`): runs
 * strategies on replayed brute-forced spaces (evaluators/replay/replay.h) with ask(batch)/tell and prints the
 * score of `mptune bench` (mean over k = 20, 40, ..., budget of (E_random(k) - best(k)) /
 * (E_random(k) - optimum), E_random exact for random search without replacement; a run with no valid
 * observation among its first k uses the worst valid objective, and E_random does the same).
 *
 *   evo_harness PROBLEM.json --strategy ga[:popsize=30,constraint_aware=0] [--strategy ...]
 *               --space DATA.json.gz [--space ...] [--repeats 35] [--budget 220] [--seed 1] [--batch 1]
 * Seeds: seed + repeat index. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "evaluators/replay/replay.h"
#include "strategies/strategy.h"

#define MAXS 64

static double lchoose(double n, double k) {
  if (k < 0 || k > n) return -INFINITY;
  return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* E_random(k) for k = 1..budget */
static void expected_random(const mpt_space *sp, const mpt_replay *rp, int budget, double *er, double *opt) {
  int64_t N = mpt_space_size(sp), V = 0;
  double *y = malloc((size_t)N * sizeof *y);
  for (int64_t id = 0; id < N; id++) {
    if (mpt_replay_valid(rp, id, &y[V])) V++;
  }
  qsort(y, (size_t)V, sizeof *y, cmpd);
  *opt = y[0];
  for (int k = 1; k <= budget; k++) {
    double lc = lchoose((double)N, k), e = 0;
    for (int64_t j = 1; j <= V; j++) {
      double l = lchoose((double)(N - j), k - 1) - lc;
      if (l < -700) continue;
      e += y[j - 1] * exp(l);
    }
    double l0 = lchoose((double)(N - V), k) - lc;
    if (l0 > -700) e += y[V - 1] * exp(l0);
    er[k] = e;
  }
  er[0] = y[V - 1];
  free(y);
}

int main(int argc, char **argv) {
  const char *problem = NULL, *spaces[MAXS], *strats[MAXS];
  int n_spaces = 0, n_strats = 0, repeats = 35, budget = 220, batch = 1;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--space") && i + 1 < argc && n_spaces < MAXS) spaces[n_spaces++] = argv[++i];
    else if (!strcmp(argv[i], "--strategy") && i + 1 < argc && n_strats < MAXS) strats[n_strats++] = argv[++i];
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else if (argv[i][0] != '-' && !problem) problem = argv[i];
    else { fprintf(stderr, "evo_harness: unknown argument '%s'\n", argv[i]); return 2; }
  }
  if (!problem || !n_spaces || !n_strats || repeats < 1 || budget < 20 || batch < 1) {
    fprintf(stderr, "usage: evo_harness PROBLEM.json --space F [--space F..] --strategy S[:k=v,..] [..] "
                    "[--repeats R] [--budget B] [--seed S] [--batch N]\n");
    return 2;
  }
  mpt_error err;
  mpt_error_clear(&err);
  mpt_problem *p;
  mpt_space *sp;
  if (mpt_problem_load(problem, &p, &err) || mpt_space_build(p, &sp, &err)) {
    fprintf(stderr, "evo_harness: %s\n", err.msg);
    return 1;
  }
  double *er = malloc((size_t)(budget + 1) * sizeof *er);
  double *score = calloc((size_t)n_strats * n_spaces, sizeof *score);
  double *ask_s = calloc((size_t)n_strats, sizeof *ask_s);
  long *asks = calloc((size_t)n_strats, sizeof *asks);
  int64_t *ids = malloc((size_t)batch * sizeof *ids);
  mpt_obs *obs = malloc((size_t)batch * sizeof *obs);
  for (int sp_i = 0; sp_i < n_spaces; sp_i++) {
    mpt_replay *rp;
    if (mpt_replay_load(spaces[sp_i], sp, &rp, &err)) { fprintf(stderr, "evo_harness: %s\n", err.msg); return 1; }
    double opt;
    expected_random(sp, rp, budget, er, &opt);
    for (int st = 0; st < n_strats; st++) {
      char name[256], *opts[32];
      int n_opts = 0;
      snprintf(name, sizeof name, "%s", strats[st]);
      char *colon = strchr(name, ':');
      if (colon) {
        *colon = '\0';
        for (char *tok = strtok(colon + 1, ","); tok && n_opts < 32; tok = strtok(NULL, ",")) opts[n_opts++] = tok;
      }
      double sum = 0;
      for (int r = 0; r < repeats; r++) {
        mpt_strategy *s;
        if (mpt_strategy_create(name, sp, (const char *const *)opts, n_opts, seed + (uint64_t)r, budget, &s, &err)) {
          fprintf(stderr, "evo_harness: %s\n", err.msg);
          return 1;
        }
        double best = INFINITY, run = 0;
        int used = 0;
        while (used < budget) {
          int want = batch < budget - used ? batch : budget - used;
          struct timespec t0, t1;
          clock_gettime(CLOCK_MONOTONIC, &t0);
          int got = mpt_strategy_ask(s, want, ids);
          clock_gettime(CLOCK_MONOTONIC, &t1);
          ask_s[st] += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
          asks[st]++;
          if (got <= 0) break;
          for (int i = 0; i < got; i++) {
            if (!mpt_replay_get(rp, ids[i], &obs[i])) { mpt_obs_init(&obs[i], ids[i]); obs[i].status = MPT_STATUS_CRASH; }
            obs[i].id = ids[i];
            used++;
            if (mpt_obs_valid(&obs[i]) && obs[i].objective < best) best = obs[i].objective;
            if (used % 20 == 0) {
              double b = isfinite(best) ? best : er[0];
              run += (er[used] - b) / (er[used] - opt);
              if (getenv("EVO_HARNESS_K")) fprintf(stderr, "k %s %d %.4f\n", strats[st], used, (er[used] - b) / (er[used] - opt));
            }
          }
          mpt_strategy_tell(s, obs, got);
        }
        mpt_strategy_destroy(s);
        if (getenv("EVO_HARNESS_RUNS")) fprintf(stderr, "run %s %s %d %.4f\n", spaces[sp_i], strats[st], r, run / (budget / 20));
        sum += run / (budget / 20);
      }
      score[st * n_spaces + sp_i] = sum / repeats;
    }
    mpt_replay_free(rp);
  }
  printf("| space |");
  for (int st = 0; st < n_strats; st++) printf(" %s |", strats[st]);
  printf("\n|---|");
  for (int st = 0; st < n_strats; st++) printf("---|");
  printf("\n");
  for (int sp_i = 0; sp_i < n_spaces; sp_i++) {
    const char *b = strrchr(spaces[sp_i], '/');
    printf("| %s |", b ? b + 1 : spaces[sp_i]);
    for (int st = 0; st < n_strats; st++) printf(" %.3f |", score[st * n_spaces + sp_i]);
    printf("\n");
  }
  printf("| mean |");
  for (int st = 0; st < n_strats; st++) {
    double m = 0;
    for (int sp_i = 0; sp_i < n_spaces; sp_i++) m += score[st * n_spaces + sp_i];
    printf(" %.3f |", m / n_spaces);
  }
  printf("\n| ask ms |");
  for (int st = 0; st < n_strats; st++) printf(" %.3f |", asks[st] ? 1e3 * ask_s[st] / asks[st] : 0.0);
  printf("\n");
  free(er); free(score); free(ask_s); free(asks); free(ids); free(obs);
  mpt_space_free(sp);
  mpt_problem_free(p);
  return 0;
}
