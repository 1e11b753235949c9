/* jobs/bench/bench_transfer.h: bench runs with transfer between devices (jobs/bench/bench_transfer.c): a run
 * told other devices' brute-forced files as related observations before its first ask (`mptune bench
 * --prior-from-others`), and a joint campaign of several devices in lockstep, each one's strategy told the
 * others' observations as they arrive (`mptune bench --transfer online`). The spaces must be the same space
 * (config ids mean the same configurations). */
#ifndef MPT_BENCH_TRANSFER_H
#define MPT_BENCH_TRANSFER_H
#include "jobs/bench/bench.h"

/* Tells s every record of priors[0..n) (source i for priors[i]) with mpt_strategy_tell_related: failures
 * too, records without an objective are skipped by the strategy. 0 or MPT_ERR_NOMEM. */
int mpt_bench_tell_priors(mpt_strategy *s, const mpt_replay *const *priors, const int *sources, int n, mpt_error *err);

/* mpt_bench_run_strategy on replay with priors[0..n_priors) told before the first ask (source sources[i]) */
int mpt_bench_run_with_priors(const mpt_space *space, const mpt_replay *replay, const mpt_replay *const *priors,
                              const int *sources, int n_priors, const char *strategy, const char *const *opts,
                              int n_opts, uint64_t seed, int64_t budget, int batch, mpt_bench_run *out,
                              mpt_error *err);

/* A joint campaign over n devices (replays[d], the same space): one strategy per device, all created with
 * seed (as n independent runs would be), advancing in lockstep: in each round every device asks and is told
 * its own observations, then every device is told the others' new observations as related ones (source:
 * the other device's index). out[d] as mpt_bench_run_strategy's (each owned by the caller, also on error). */
int mpt_bench_run_joint(const mpt_space *space, const mpt_replay *const *replays, int n, const char *strategy,
                        const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch,
                        mpt_bench_run *out, mpt_error *err);

#endif
