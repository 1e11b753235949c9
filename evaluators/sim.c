/* evaluators/sim.c: the `sim` evaluator: replays a brute-forced space (evaluators/replay/replay.c) instead of
 * compiling and running. With --simulate-delay F each evaluation sleeps (nanosleep, no busy wait) for
 * F times the recorded compile + benchmark time, so scheduling and scaling can be measured without GPUs.
 * A configuration the file has no record of ends the run (resumable): a log or T4 export must not claim a
 * failure that was never measured; with --simulate-missing skip it is an observation of status missing
 * instead (no measurement: logged as such, not counted, not exported); bench, which logs nothing, counts it
 * as failed. A file that does not cover the space is said once at open. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "evaluators/evaluator.h"
#include "evaluators/replay/replay.h"

static int sim_open(mpt_evaluator *ev, mpt_error *err) {
  const char *path = ev->settings.simulate_path;
  if (!path || !*path)
    return mpt_error_set(err, MPT_ERR_VALUE, "the sim evaluator needs a replay file (--simulate FILE)");
  if (ev->settings.simulate_delay < 0 || !isfinite(ev->settings.simulate_delay))
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-delay must be a finite number >= 0 (got %g)",
                         ev->settings.simulate_delay);
  mpt_replay *r;
  int rc = mpt_replay_load(path, ev->space, &r, err);
  if (rc < 0) return rc;
  ev->data = r;
  /* said once, by the first worker (rank 1, or the one rank) */
  char msg[1024];
  if (ev->settings.rank <= 1 && mpt_replay_in_progress(r)[0])
    fprintf(stderr, "mptune: warning: %s\n", mpt_replay_in_progress(r));
  const char *note = ev->settings.simulate_skip_missing
                         ? "--simulate-missing skip: a run that proposes one logs it as missing and goes on"
                         : "a run that proposes one stops there, resumable with a file that has it";
  if (ev->settings.rank <= 1 && mpt_replay_coverage(r, note, msg, sizeof msg))
    fprintf(stderr, "mptune: warning: --simulate %s: %s\n", path, msg);
  ev->device.index = ev->settings.local_rank;
  snprintf(ev->device.vendor, sizeof ev->device.vendor, "replay");
  snprintf(ev->device.name, sizeof ev->device.name, "%s", mpt_replay_device_name(r));
  snprintf(ev->device.arch, sizeof ev->device.arch, "replay");
  ev->device.memory_gib = 0;
  return 0;
}

/* sleeps ms milliseconds in slices of at most 50 ms, asking the evaluation's watch between them as a real
 * evaluation's wait does; 1 when it said stop (the sleep cut short), else 0 */
static int sleep_ms(const mpt_watch *watch, double ms) {
  while (ms > 0) {
    if (mpt_watch_call(watch, NULL, -1)) return 1;
    double slice = ms < 50 ? ms : 50;
    struct timespec req, rem;
    req.tv_sec = 0;
    req.tv_nsec = (long)(slice * 1e6);
    while (nanosleep(&req, &rem) != 0 && errno == EINTR) req = rem;
    ms -= slice;
  }
  return 0;
}

static int sim_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err) {
  const mpt_replay *r = ev->data;
  const mpt_obs *rec = mpt_replay_get(r, id, out);
  if (!rec && ev->settings.simulate_skip_missing) {
    mpt_obs_init(out, id);
    out->status = MPT_STATUS_MISSING;
    snprintf(out->reason, sizeof out->reason, "not in the replayed file %s (skipped)", ev->settings.simulate_path);
    return 0;
  }
  if (!rec) {
    char cfg[1024];
    mpt_space_format(ev->space, id, cfg, sizeof cfg);
    return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s has no record of configuration %s (id %lld)",
                         ev->settings.simulate_path, cfg, (long long)id);
  }
  out->id = id;
  if (ev->settings.simulate_delay > 0 &&
      sleep_ms(&ev->watch, ev->settings.simulate_delay * ((isfinite(rec->compile_ms) ? rec->compile_ms : 0) +
                                                          (isfinite(rec->benchmark_ms) ? rec->benchmark_ms : 0)))) {
    mpt_obs_init(out, id);
    out->status = MPT_STATUS_CANCELLED;
    snprintf(out->reason, sizeof out->reason, "cancelled during the simulated delay: the run is stopping");
  }
  return 0;
}

static void sim_close(mpt_evaluator *ev) {
  mpt_replay_free(ev->data);
  ev->data = NULL;
}

const mpt_evaluator_type mpt_evaluator_sim = {
  .name = "sim",
  .summary = "replays a brute-forced space (T4 or Kernel Tuner cache file, --simulate FILE)",
  .open = sim_open,
  .evaluate = sim_evaluate,
  .close = sim_close,
};
