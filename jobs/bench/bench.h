/* jobs/bench/bench.h: the official score of `mptune bench` (one strategy run on a replayed brute-forced
 * space, compared with random search), the in-process ask/tell run that produces it, and the
 * aggregation over repeats. Any scoring harness should call these functions rather than re-deriving
 * the score.
 *
 * Score of one run (after Kernel Tuner's methodology):
 *     score = mean over k in {step, 2 step, ..., <= budget} of (E_random(k) - best(k)) / (E_random(k) - optimum)
 * best(k): the best valid objective among the run's first k evaluations; when none of them is valid,
 * the worst valid objective y_V of the space. E_random(k): the exact expected best(k) of random search
 * without replacement over the same N configurations, of which V have a valid objective
 * y_1 <= ... <= y_V (failed, invalid and unrecorded configurations count as draws and are never best):
 *     E_random(k) = sum_j y_j C(N-j, k-1) / C(N, k)  +  y_V C(N-V, k) / C(N, k)
 * (the j-th smallest is the best drawn when y_1..y_{j-1} are excluded, y_j drawn and the other k-1
 * drawn from the N-j remaining; the last term is "no valid draw", scored as y_V exactly as a run is).
 * P(k, j) = C(N-j, k-1) / C(N, k) by a recurrence in j, O(V) multiplications per k (jobs/bench/bench.c).
 * 1 = optimum found at once, 0 = as good as random search on average, < 0 = worse. A k where E_random(k)
 * equals the optimum (random search certain to have found it: k close to N) has no defined term and is
 * left out of the mean. With budget < step the one k is the budget. */
#ifndef MPT_BENCH_H
#define MPT_BENCH_H
#include <stdint.h>
#include "evaluators/replay/replay.h"
#include "spaces/sys/error.h"
#include "spaces/space.h"
#include "strategies/strategy.h"

/* The random-search reference of one replayed space. */
typedef struct mpt_bench_ref {
  int64_t n;        /* N: configurations random search draws from (the space's valid set) */
  int64_t n_valid;  /* V: those with a valid objective, V >= 1 */
  double *sorted;   /* the V valid objectives, ascending */
  double *expected; /* E_random(k) for k = 1..n_expected (mpt_bench_ref_tabulate), else NULL */
  int64_t n_expected;
} mpt_bench_ref;

/* From n configurations and the valid objectives among them (any order, n_valid >= 1, n_valid <= n,
 * all finite). Copies the values. */
int mpt_bench_ref_init(mpt_bench_ref *ref, int64_t n, const double *valid, int64_t n_valid, mpt_error *err);
/* From a replayed space: N = mpt_space_size, valid = records with mpt_obs_valid. Error when no record
 * of the file is valid. */
int mpt_bench_ref_from_replay(mpt_bench_ref *ref, const mpt_space *space, const mpt_replay *replay,
                              mpt_error *err);
void mpt_bench_ref_free(mpt_bench_ref *ref);
double mpt_bench_optimum(const mpt_bench_ref *ref);  /* y_1 */
double mpt_bench_worst(const mpt_bench_ref *ref);    /* y_V */
/* E_random(k), exact, for 1 <= k <= N (k > N is treated as N); O(V) multiplications unless tabulated. */
double mpt_bench_expected_random(const mpt_bench_ref *ref, int64_t k);
/* Tabulates E_random(1..kmax) so that later calls are lookups (scoring thousands of runs). */
int mpt_bench_ref_tabulate(mpt_bench_ref *ref, int64_t kmax, mpt_error *err);

/* The term of one k: (E_random(k) - b) / (E_random(k) - optimum), b = best(k) (INFINITY or NAN = no
 * valid observation yet = y_V). NAN when E_random(k) equals the optimum. */
double mpt_bench_score_at(const mpt_bench_ref *ref, int64_t k, double best_k);
/* Score of one run. best[i] = best valid objective among the first i+1 evaluations (INFINITY: none
 * yet), n entries (n may be < budget when the strategy ran out of candidates: later k use best[n-1]).
 * step > 0 (20 in `mptune bench`). NAN when no k has a defined term. */
double mpt_bench_score(const mpt_bench_ref *ref, const double *best, int64_t n, int64_t budget, int64_t step);

/* One run of a strategy on a replayed space, in process: rounds of ask(batch) and tell of all
 * answers, each asked id "evaluated" by looking it up with mpt_replay_get (an id without a record is
 * a failed evaluation: status runtime_error, reason "no record in the replay file"). Invalid and failed
 * observations are told with their status; they count as evaluations and are never best. */
typedef struct mpt_bench_run {
  int64_t n_evals;     /* evaluations made: budget, or fewer when ask returned 0 */
  int64_t n_failed;    /* evaluations without a valid objective */
  double *best;        /* budget entries: best valid objective after i+1 evaluations (INFINITY: none);
                          entries past n_evals repeat the last one */
  int64_t *ids;        /* budget entries: the evaluated ids in order (-1 past n_evals) */
  int n_asks;
  double *ask_s;       /* n_asks entries: seconds of each ask call */
  double strategy_s;   /* seconds spent in ask and tell together */
} mpt_bench_run;

/* strategy: registered name; opts: n_opts "key=value"; seed as given to mpt_strategy_create; budget >= 1;
 * batch >= 1. out is zeroed first and owned by the caller (mpt_bench_run_free) also on error. */
int mpt_bench_run_strategy(const mpt_space *space, const mpt_replay *replay, const char *strategy,
                           const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch,
                           mpt_bench_run *out, mpt_error *err);
/* What a run tells its strategy once it is created, before the first ask (0, or an error that ends the run). */
typedef int (*mpt_bench_prime_fn)(mpt_strategy *s, void *ctx, mpt_error *err);
/* mpt_bench_run_strategy with prime (may be NULL) called on the new strategy before its first ask */
int mpt_bench_run_primed(const mpt_space *space, const mpt_replay *replay, const char *strategy,
                         const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch,
                         mpt_bench_prime_fn prime, void *ctx, mpt_bench_run *out, mpt_error *err);
void mpt_bench_run_free(mpt_bench_run *run);
/* The steps of mpt_bench_run_strategy, for runs that tell the strategy more between rounds (related
 * observations: jobs/bench/bench_transfer.h). begin: out zeroed and allocated for budget evaluations (owned by
 * the caller: mpt_bench_run_free, also on error). round: one ask of up to batch ids (ids, obs: batch entries),
 * each looked up in replay, recorded in out and told to s; *got: how many (0: the run is over). end: the
 * entries past n_evals filled. 0 or an error. */
int mpt_bench_run_begin(mpt_bench_run *out, int64_t budget, int batch, mpt_error *err);
int mpt_bench_run_round(mpt_strategy *s, const mpt_replay *replay, mpt_bench_run *out, int64_t budget, int batch,
                        int64_t *ids, mpt_obs *obs, int *got, mpt_error *err);
void mpt_bench_run_end(mpt_bench_run *out, int64_t budget);

/* Aggregation over the repeats of one (strategy, space). */
#define MPT_BENCH_MAX_CHECKPOINTS 8
typedef struct mpt_bench_summary {
  int n_runs;
  double score_mean, score_sd;          /* over runs (sample sd; 0 for one run) */
  int n_checkpoints;
  int64_t checkpoint[MPT_BENCH_MAX_CHECKPOINTS];
  double best_mean[MPT_BENCH_MAX_CHECKPOINTS]; /* mean best(k) (no valid yet = y_V) */
  int found_optimum;                    /* runs whose best after the budget is the optimum */
  double failed_mean;                   /* mean evaluations per run without a valid objective */
  double ask_median_s;                  /* median over every ask call of every run */
  double strategy_mean_s;               /* mean ask+tell seconds per run */
} mpt_bench_summary;

/* scores[i] = mpt_bench_score of runs[i] (computed by the caller, so it can be reported per run).
 * checkpoints: evaluation counts for best_mean (those > budget are dropped). */
int mpt_bench_summarize(const mpt_bench_ref *ref, const mpt_bench_run *runs, const double *scores, int n_runs,
                        int64_t budget, const int64_t *checkpoints, int n_checkpoints, mpt_bench_summary *out,
                        mpt_error *err);

/* q-quantile (0..1, linear interpolation between order statistics) of n values; sorts v in place.
 * NAN for n == 0. */
double mpt_bench_quantile(double *v, int64_t n, double q);

#endif
