/* tests/bo_replay.h: what the tests of bo on the convolution space with replayed brute-forced records share
 * (tests/test_bo.c, test_bo_pending.c, test_bo_ws.c, test_bo_feas_cache.c): the group's setup, a device's
 * records loaded beside the fixture (tests/conv_fixture.h), the replayed observation of an id (a failure where
 * there is no record), the check that asked ids are valid and distinct, and the driver of asks and tells with
 * synchronous rounds or asynchronous workers. Header-only (static inline functions, cmocka's assertions):
 * include it after cmocka.h. */
#ifndef MPT_TESTS_BO_REPLAY_H
#define MPT_TESTS_BO_REPLAY_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "evaluators/replay/replay.h"
#include "spaces/space.h"
#include "spaces/sys/obs.h"
#include "strategies/strategy.h"
#include "tests/conv_fixture.h"

/* brute-forced/convolution_<device>_T4.json.gz of the fixture's shared data into *rep; 0, or -1 with the
 * error printed */
static inline int bo_replay_load(const fixture *f, const char *device, mpt_replay **rep) {
  char path[2048];
  mpt_error err;
  snprintf(path, sizeof path, "%s/brute-forced/convolution_%s_T4.json.gz", f->dir, device);
  if (mpt_replay_load(path, f->s, rep, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  return 0;
}

/* the group's fixture (conv_fixture_setup with tag, *space its space) and the A6000's records in *rep; 0, or
 * non-zero with the error printed */
static inline int bo_replay_setup(void **state, const char *tag, mpt_space **space, mpt_replay **rep) {
  int rc = conv_fixture_setup(state, tag);
  if (rc) return rc;
  fixture *f = *state;
  *space = f->s;
  return bo_replay_load(f, "A6000", rep);
}

/* a failed evaluation of id (a runtime error) */
static inline mpt_obs bo_replay_failure(int64_t id) {
  mpt_obs o;
  mpt_obs_init(&o, id);
  o.status = MPT_STATUS_RUNTIME_ERROR;
  return o;
}

/* the observation of id replayed from rep, or a failure where rep has no record of it */
static inline mpt_obs bo_replay_observe(const mpt_replay *rep, int64_t id) {
  mpt_obs o;
  if (!mpt_replay_get(rep, id, &o)) o = bo_replay_failure(id);
  o.id = id;
  return o;
}

/* ids[0..n) are configurations of space, none twice */
static inline void bo_check_valid_distinct(const mpt_space *space, const int64_t *ids, int64_t n) {
  int64_t size = mpt_space_size(space);
  uint8_t *seen = calloc((size_t)size, 1);
  for (int64_t i = 0; i < n; i++) {
    assert_true(ids[i] >= 0 && ids[i] < size);
    assert_false(seen[ids[i]]);
    seen[ids[i]] = 1;
  }
  free(seen);
}

/* what bo_replay_drive tells and whom it lets look: the hooks may be NULL */
typedef struct bo_drive {
  const mpt_replay *rep;                             /* the observations told (bo_replay_observe) */
  void (*asked)(void *ctx, const mpt_strategy *s);   /* after each ask */
  void (*telling)(void *ctx, const mpt_obs *o);      /* before each tell */
  void *ctx;
} bo_drive;

/* `total` evaluations on s, ids out in ask order: with workers > 1 that many in flight (each ask fills the idle
 * workers, then the oldest in flight is told, first in, first out, so every ask after the first finds
 * workers - 1 evaluations pending); with workers 1 rounds of ask(batch) told whole (synchronous). Returns how
 * many were asked. */
static inline int64_t bo_replay_drive(mpt_strategy *s, const bo_drive *d, int workers, int batch, int64_t total,
                                      int64_t *ids) {
  int64_t asked = 0, told = 0;
  while (told < total) {
    int want = workers > 1 ? (int)(workers - (asked - told)) : batch;
    if (want > total - asked) want = (int)(total - asked);
    if (want > 0) {
      int got = mpt_strategy_ask(s, want, ids + asked);
      assert_true(got > 0 && got <= want);
      if (d->asked) d->asked(d->ctx, s);
      asked += got;
    }
    int n_tell = workers > 1 ? 1 : (int)(asked - told);
    for (int i = 0; i < n_tell; i++) {
      mpt_obs o = bo_replay_observe(d->rep, ids[told + i]);
      if (d->telling) d->telling(d->ctx, &o);
      mpt_strategy_tell(s, &o, 1);
    }
    told += n_tell;
  }
  return asked;
}

#endif
