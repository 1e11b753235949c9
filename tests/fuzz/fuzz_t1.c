/* tests/fuzz/fuzz_t1.c: fuzz harness of the T1 reader and the search space (spaces/t1.c, spaces/space*.c).
 * The input, as the text of a problem file, is read by mpt_problem_parse; a problem read builds its space,
 * bounded so that one input cannot run for minutes (MPT_SPACE_MAX_ROWS and a watcher that stops the
 * enumeration after a few million steps or two seconds). A space built is queried: id <-> configuration
 * round trips, the constraints hold for each id, neighbours are valid ids in ascending order, a random
 * sample is of distinct ids. A broken invariant aborts (a finding); everything allocated is freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/space.h"
#include "spaces/sys/clock.h"
#include "spaces/t1.h"
#include "tests/fuzz/fuzz.h"

enum { MAX_WATCH_CALLS = 8 }; /* the watcher runs every 2^20 steps: about 8 million steps at most */
static const double MAX_BUILD_SECONDS = 2.0;

/* one build's watch: how often it was called and since when the build runs */
typedef struct build_watch {
  int calls;
  double t0;
} build_watch;

static int stop_long_builds(void *ctx, const char *doing, double done) {
  (void)doing;
  (void)done;
  build_watch *w = ctx;
  return ++w->calls >= MAX_WATCH_CALLS || mpt_clock_mono_s() - w->t0 > MAX_BUILD_SECONDS;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("MPT_SPACE_MAX_ROWS", "1000000", 0); /* the largest shared T1 space has 349,853 valid configurations */
  return 0;
}

static void check_id(const mpt_space *s, int64_t id, int *idx) {
  mpt_space_config(s, id, idx);
  if (mpt_space_lookup(s, idx) != id) fuzz_finding("mpt_space_lookup(mpt_space_config(id)) is not id");
  if (mpt_space_check(s, idx) != 1) fuzz_finding("a valid configuration fails its constraints");
  char small[64];
  int need = mpt_space_format(s, id, small, (int)sizeof small);
  if (need < 0) fuzz_finding("mpt_space_format failed");
}

static void check_neighbors(const mpt_space *s, const int *idx) {
  int64_t *ids = NULL, cap = 0;
  for (int kind = MPT_NB_STRICTLY_ADJACENT; kind <= MPT_NB_INDEX_DISTANCE; kind++) {
    int64_t n = mpt_space_neighbors_grow(s, idx, (mpt_neighbor_kind)kind, &ids, &cap);
    for (int64_t k = 0; k < n; k++) {
      if (ids[k] < 0 || ids[k] >= mpt_space_size(s)) fuzz_finding("a neighbour outside the valid set");
      if (k > 0 && ids[k] <= ids[k - 1]) fuzz_finding("neighbours not in ascending order");
    }
  }
  free(ids);
}

static void check_sample(const mpt_space *s) {
  int64_t n = mpt_space_size(s) < 8 ? mpt_space_size(s) : 8;
  int64_t ids[8];
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  int64_t got = mpt_space_sample_random(s, &rng, n, ids);
  if (got != n) fuzz_finding("mpt_space_sample_random gave fewer ids than asked for");
  for (int64_t i = 0; i < got; i++)
    for (int64_t j = 0; j < i; j++)
      if (ids[i] == ids[j]) fuzz_finding("mpt_space_sample_random repeated an id");
}

static void query_space(const mpt_space *s) {
  mpt_space_stats st;
  mpt_space_stats_get(s, &st);
  if (st.valid != mpt_space_size(s)) fuzz_finding("the statistics and the size disagree");
  (void)mpt_space_eval_warning(s);
  int64_t size = mpt_space_size(s);
  int64_t dflt = mpt_space_default_id(s);
  if (dflt < -1 || dflt >= size) fuzz_finding("a default id outside the valid set");
  int *idx = malloc(sizeof(int) * (size_t)(mpt_space_dims(s) > 0 ? mpt_space_dims(s) : 1));
  if (!idx) return;
  int64_t probe[] = {0, 1, size / 2, size - 1, dflt};
  for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++)
    if (probe[k] >= 0 && probe[k] < size) check_id(s, probe[k], idx);
  if (size > 0) {
    mpt_space_config(s, 0, idx);
    check_neighbors(s, idx);
  }
  free(idx);
  check_sample(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  mpt_problem *p = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_problem_parse(text, "fuzz.json", &p, &err) == 0) {
    mpt_space *s = NULL;
    build_watch bw = {0, mpt_clock_mono_s()};
    const mpt_watch watch = {stop_long_builds, &bw};
    if (mpt_space_build_watched(p, &watch, &s, &err) == 0) {
      query_space(s);
      mpt_space_free(s);
    }
    mpt_problem_free(p);
  }
  free(text);
  return 0;
}
