/* tests/bo_run.h: the fixture and driver of tests/test_bo.c and tests/test_bo_batch.c: the convolution problem,
 * its space and the A6000's brute-forced records (replayed) loaded once per group, the observation of an id (or a
 * forced failure), a run of asks and tells in rounds, the first design of a fresh run, and the check that a resumed
 * run continues like the uninterrupted one. Header-only (static functions and the group's state, one copy per test
 * program): include it after cmocka.h. */
#ifndef MPT_TESTS_BO_RUN_H
#define MPT_TESTS_BO_RUN_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "evaluators/replay/replay.h"
#include "spaces/space.h"
#include "strategies/strategy.h"
#include "tests/bo_replay.h"

static mpt_problem *prob;
static mpt_space *space;
static mpt_replay *rep;
static int64_t N;

static inline int setup(void **state) {
  (void)state;
  const char *dir = getenv("MPT_SHARED_DATA");
  if (!dir) dir = "../shared/data";
  char path[4096];
  mpt_error err;
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", dir);
  if (mpt_problem_load(path, &prob, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  if (mpt_space_build(prob, &space, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  snprintf(path, sizeof path, "%s/brute-forced/convolution_A6000_T4.json.gz", dir);
  if (mpt_replay_load(path, space, &rep, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  N = mpt_space_size(space);
  return 0;
}

static inline int teardown(void **state) {
  (void)state;
  mpt_replay_free(rep);
  mpt_space_free(space);
  mpt_problem_free(prob);
  return 0;
}

static int64_t fail_unless_mod; /* > 0: every configuration whose id is not a multiple of it fails */

static inline mpt_obs observe(int64_t id) {
  if (fail_unless_mod > 0 && id % fail_unless_mod != 0) return bo_replay_failure(id);
  return bo_replay_observe(rep, id);
}

/* runs `total` evaluations in rounds of ask(batch); ids/obs out; returns evaluations made */
static inline int64_t run(const char *const *opts, int n_opts, uint64_t seed, int64_t budget, int batch, int64_t total,
                          int64_t *ids, mpt_obs *obs) {
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, opts, n_opts, seed, budget, &s, &err), 0);
  int64_t done = 0;
  while (done < total) {
    int want = (int)(total - done < batch ? total - done : batch);
    int got = mpt_strategy_ask(s, want, ids + done);
    assert_true(got > 0 && got <= want);
    for (int i = 0; i < got; i++) obs[done + i] = observe(ids[done + i]);
    mpt_strategy_tell(s, obs + done, got);
    done += got;
  }
  mpt_strategy_destroy(s);
  return done;
}

/* the first ask(10) of a fresh run with one option: its initial design, checked valid and distinct */
static inline void first_design(const char *const *opt, uint64_t seed, int64_t ids[10]) {
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, opt, 1, seed, 220, &s, &err), 0);
  assert_int_equal(mpt_strategy_ask(s, 10, ids), 10);
  bo_check_valid_distinct(space, ids, 10);
  mpt_strategy_destroy(s);
}

/* resume: a new instance told the first 60 observations (warm start) continues like the original */
static inline void check_resume(const char *const *opts, int n_opts) {
  int64_t ids[100], ids2[40];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 100);
  run(opts, n_opts, 7, 220, 1, 100, ids, obs);
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, opts, n_opts, 7, 220, &s, &err), 0);
  for (int i = 0; i < 60; i += 7) mpt_strategy_tell(s, obs + i, 60 - i < 7 ? 60 - i : 7); /* in blocks, as mptune's warm start reads a log */
  for (int i = 0; i < 40; i++) {
    assert_int_equal(mpt_strategy_ask(s, 1, &ids2[i]), 1);
    mpt_obs o = observe(ids2[i]);
    mpt_strategy_tell(s, &o, 1);
  }
  assert_memory_equal(ids + 60, ids2, sizeof ids2);
  mpt_strategy_destroy(s);
  /* resume in the middle of the initial sample as well */
  assert_int_equal(mpt_strategy_create("bo", space, opts, n_opts, 7, 220, &s, &err), 0);
  mpt_strategy_tell(s, obs, 10);
  for (int i = 0; i < 30; i++) {
    assert_int_equal(mpt_strategy_ask(s, 1, &ids2[i]), 1);
    mpt_obs o = observe(ids2[i]);
    mpt_strategy_tell(s, &o, 1);
  }
  assert_memory_equal(ids + 10, ids2, 30 * sizeof(int64_t));
  mpt_strategy_destroy(s);
  free(obs);
}

#endif
