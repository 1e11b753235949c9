/* jobs/bench/bench_transfer.c: bench runs told related observations: other devices' brute-forced files before
 * the first ask, or the other devices' observations of a joint campaign as they arrive
 * (jobs/bench/bench_transfer.h). */
#include <stdlib.h>
#include "jobs/bench/bench_transfer.h"

#define PRIOR_CHUNK 256

int mpt_bench_tell_priors(mpt_strategy *s, const mpt_replay *const *priors, const int *sources, int n, mpt_error *err) {
  mpt_obs *buf = malloc(PRIOR_CHUNK * sizeof *buf);
  if (!buf) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory for the priors");
  int64_t size = mpt_space_size(s->space);
  for (int p = 0; p < n; p++) {
    int k = 0;
    for (int64_t id = 0; id < size; id++) {
      if (!mpt_replay_get(priors[p], id, &buf[k])) continue;
      buf[k].id = id;
      if (++k == PRIOR_CHUNK) { mpt_strategy_tell_related(s, sources[p], buf, k); k = 0; }
    }
    if (k) mpt_strategy_tell_related(s, sources[p], buf, k);
  }
  free(buf);
  return 0;
}

/* the priors of mpt_bench_run_with_priors, told through mpt_bench_run_primed */
typedef struct priors_ctx {
  const mpt_replay *const *priors;
  const int *sources;
  int n;
} priors_ctx;

static int tell_priors(mpt_strategy *s, void *ctx, mpt_error *err) {
  const priors_ctx *p = ctx;
  return mpt_bench_tell_priors(s, p->priors, p->sources, p->n, err);
}

int mpt_bench_run_with_priors(const mpt_space *space, const mpt_replay *replay, const mpt_replay *const *priors,
                              const int *sources, int n_priors, const char *strategy, const char *const *opts,
                              int n_opts, uint64_t seed, int64_t budget, int batch, mpt_bench_run *out,
                              mpt_error *err) {
  priors_ctx p = {priors, sources, n_priors};
  return mpt_bench_run_primed(space, replay, strategy, opts, n_opts, seed, budget, batch, tell_priors, &p, out, err);
}

/* every device's new observations of this round (obs + d * batch, got[d] of them) to every other device */
static void share_round(mpt_strategy **s, int n, const mpt_obs *obs, const int *got, int batch) {
  for (int d = 0; d < n; d++)
    for (int e = 0; e < n; e++)
      if (e != d && got[e] > 0) mpt_strategy_tell_related(s[d], e, obs + (size_t)e * batch, got[e]);
}

int mpt_bench_run_joint(const mpt_space *space, const mpt_replay *const *replays, int n, const char *strategy,
                        const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch,
                        mpt_bench_run *out, mpt_error *err) {
  int rc = 0;
  for (int d = 0; d < n; d++) {
    int r = mpt_bench_run_begin(&out[d], budget, batch, err);
    if (r && !rc) rc = r;
  }
  mpt_strategy **s = calloc((size_t)n, sizeof *s);
  int64_t *ids = malloc((size_t)batch * sizeof *ids);
  mpt_obs *obs = malloc((size_t)n * (size_t)batch * sizeof *obs);
  int *got = calloc((size_t)n, sizeof *got);
  if (!rc && (!s || !ids || !obs || !got)) rc = mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  for (int d = 0; !rc && d < n; d++) rc = mpt_strategy_create(strategy, space, opts, n_opts, seed, budget, &s[d], err);
  for (int any = 1; !rc && any;) {
    any = 0;
    for (int d = 0; !rc && d < n; d++) {
      rc = mpt_bench_run_round(s[d], replays[d], &out[d], budget, batch, ids, obs + (size_t)d * batch, &got[d], err);
      any |= got[d] > 0;
    }
    if (!rc) share_round(s, n, obs, got, batch);
  }
  for (int d = 0; !rc && d < n; d++) mpt_bench_run_end(&out[d], budget);
  for (int d = 0; s && d < n; d++) mpt_strategy_destroy(s[d]);
  free(s);
  free(ids);
  free(obs);
  free(got);
  return rc;
}
