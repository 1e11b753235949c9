/* tests/conv_space.h: for test fixtures, the convolution_milo problem of the shared data
 * ($MPT_SHARED_DATA/t1/convolution_milo.json) loaded with its space built, and a GPU's brute-forced file of it
 * (brute-forced/convolution_<GPU>_T4.json.gz) replayed over that space; -1, the reason on stderr, when one cannot
 * be. */
#ifndef MPT_TESTS_CONV_SPACE_H
#define MPT_TESTS_CONV_SPACE_H
#include <stdio.h>
#include <stdlib.h>
#include "evaluators/replay/replay.h"
#include "spaces/space.h"
#include "spaces/t1.h"

static inline int conv_space_load(mpt_problem **p, mpt_space **s) {
  const char *dir = getenv("MPT_SHARED_DATA");
  if (!dir) return -1;
  char path[1200];
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", dir);
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_problem_load(path, p, &err) || mpt_space_build(*p, s, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  return 0;
}

static inline int conv_replay_load(const mpt_space *s, const char *gpu, mpt_replay **r) {
  const char *dir = getenv("MPT_SHARED_DATA");
  if (!dir) return -1;
  char path[1200];
  snprintf(path, sizeof path, "%s/brute-forced/convolution_%s_T4.json.gz", dir, gpu);
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_replay_load(path, s, r, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  return 0;
}

#endif
