/* tests/fuzz/fuzz_replay.c: fuzz harness of the replay readers (evaluators/replay/):
 * the input, as the bytes of a T4 results file or a Kernel Tuner cache (plain or gzip), is written to a file
 * in a temporary directory of its own and loaded against the convolution space of the shared data
 * ($MPT_SHARED_DATA/t1/convolution_milo.json, else the build's shared data folder). A file loaded is read
 * back for every config id: a record is a known status with an objective that is finite exactly when it
 * is a valid measurement, an id without one is a failed evaluation. A broken invariant aborts (a finding);
 * everything allocated is freed and the directory removed at exit. Nothing is written outside it. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/replay/replay.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "tests/fuzz/fuzz.h"

#ifndef MPT_FUZZ_SHARED_DATA
#define MPT_FUZZ_SHARED_DATA "../shared/data"
#endif

static mpt_problem *problem;
static mpt_space *space;
static char tmpdir[4096];
static char input_path[4200];

static void cleanup(void) {
  unlink(input_path);
  if (tmpdir[0]) rmdir(tmpdir);
  mpt_space_free(space);
  mpt_problem_free(problem);
}

static void load_space(void) {
  const char *dir = getenv("MPT_SHARED_DATA");
  char path[4200];
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", dir && *dir ? dir : MPT_FUZZ_SHARED_DATA);
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_problem_load(path, &problem, &err) || mpt_space_build(problem, &space, &err))
    fuzz_setup_failed("fuzz_replay", err.msg);
}

static void make_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/mpt_fuzz_replay_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmpdir)) {
    tmpdir[0] = '\0';
    fuzz_setup_failed("fuzz_replay", "cannot make a temporary directory");
  }
  snprintf(input_path, sizeof input_path, "%s/input.json", tmpdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  atexit(cleanup);
  load_space();
  make_tmpdir();
  return 0;
}

static int write_input(const uint8_t *data, size_t size) {
  FILE *f = fopen(input_path, "wb");
  if (!f) return -1;
  size_t put = size ? fwrite(data, 1, size, f) : 0;
  int rc = fclose(f);
  return put == size && rc == 0 ? 0 : -1;
}

/* a config id without a record replays as a failed evaluation */
static void check_missing(const mpt_replay *r, int64_t id) {
  mpt_obs obs;
  double objective = NAN;
  if (mpt_replay_valid(r, id, &objective)) fuzz_finding("a config id without a record is a valid measurement");
  mpt_replay_obs(r, id, &obs);
  if (obs.status == MPT_STATUS_OK) fuzz_finding("a config id without a record replays as measured");
}

static void check_record(const mpt_replay *r, int64_t id, const mpt_obs *o) {
  if (o->status < 0 || o->status >= MPT_STATUS_COUNT) fuzz_finding("a record with an unknown status");
  if (o->n_times < 0 || o->n_times > MPT_OBS_MAX_TIMES) fuzz_finding("a record with a wrong number of times");
  if (!memchr(o->reason, '\0', sizeof o->reason)) fuzz_finding("a record's reason is not terminated");
  double objective = NAN;
  int valid = mpt_replay_valid(r, id, &objective);
  if (valid != mpt_obs_valid(o)) fuzz_finding("mpt_replay_valid and the record disagree");
  if (valid && (!isfinite(objective) || objective != o->objective))
    fuzz_finding("a valid record without its objective");
}

static void check_records(const mpt_replay *r) {
  int64_t with_record = 0, missing = -1;
  for (int64_t id = 0; id < mpt_space_size(space); id++) {
    mpt_obs buf;
    const mpt_obs *o = mpt_replay_get(r, id, &buf);
    if (o) {
      with_record++;
      check_record(r, id, o);
    } else if (missing < 0) {
      missing = id;
    }
  }
  if (missing >= 0) check_missing(r, missing);
  if (with_record != mpt_replay_count(r)) fuzz_finding("mpt_replay_count is not the number of records");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (write_input(data, size) < 0) fuzz_setup_failed("fuzz_replay", strerror(errno));
  mpt_replay *r = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_replay_load(input_path, space, &r, &err) == 0) {
    check_records(r);
    (void)mpt_replay_optimum(r);
    (void)mpt_replay_unmatched(r);
    (void)mpt_replay_device_name(r);
    char msg[512];
    mpt_replay_coverage(r, "they count as failed evaluations", msg, sizeof msg);
    mpt_replay_free(r);
  } else if (err.code == 0 || !err.msg[0]) {
    fuzz_finding("mpt_replay_load failed without a message");
  }
  unlink(input_path);
  return 0;
}
