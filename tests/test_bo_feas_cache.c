/* tests/test_bo_feas_cache.c: the cache of bo's feasibility probabilities (strategies/bo/bo_feasibility.c): on the
 * convolution space (replayed A6000, every fifth configuration made to fail) the probabilities of more candidates
 * than a pool of 255 pending evaluations asks for (1,024: twice the 512 slots the cache once had) are all kept
 * between two sweeps, and every cached or kept probability is bit for bit the feasibility GP's mean computed from
 * scratch, before and after the model grows past the cache's first row length (256 observations). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "evaluators/replay/replay.h"
#include "gp/gp.h"
#include "spaces/space.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_feasibility.h"
#include "strategies/bo/bo_state.h"
#include "tests/bo_replay.h"
#include "tests/conv_fixture.h"

static mpt_space *space;
static mpt_replay *rep;

static int setup(void **state) { return bo_replay_setup(state, "bo_feas_cache", &space, &rep); }

static int teardown(void **state) {
  mpt_replay_free(rep);
  return conv_fixture_teardown(state);
}

/* the replayed observation of id, or a failure (every fifth id, and those without a record) */
static mpt_obs observe(int64_t id) { return id % 5 == 0 ? bo_replay_failure(id) : bo_replay_observe(rep, id); }

/* asks of 10 told whole until `total` evaluations */
static void run_to(mpt_strategy *s, int64_t *ids, int64_t *asked, int64_t total) {
  while (*asked < total) {
    int got = mpt_strategy_ask(s, 10, ids + *asked);
    assert_true(got > 0);
    for (int i = 0; i < got; i++) {
      mpt_obs o = observe(ids[*asked + i]);
      mpt_strategy_tell(s, &o, 1);
    }
    *asked += got;
  }
  int64_t one; /* one more ask: the scan brings the feasibility weights up to date with every tell */
  assert_int_equal(mpt_strategy_ask(s, 1, &one), 1);
}

/* p of candidates 0..n-1 from the cache, each against the GP's mean from scratch (clipped as bo_feas_p clips) */
static void sweep(bo_state *b, int64_t n, double *p) {
  for (int64_t c = 0; c < n; c++) {
    p[c] = bo_feas_p(b, c);
    double m = mpt_gp_mean_with_weights(b->fgp, b->falpha, b->fm0, bo_point(b, c));
    m = m > 1 ? 1 : m < 1e-12 ? 1e-12 : m;
    assert_true(p[c] == m);
  }
}

static void test_cache_keeps_contenders(void **state) {
  (void)state;
  enum { NC = 1024 };
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, NULL, 0, 3, 400, &s, &err), 0);
  bo_state *b = s->data;
  int64_t ids[420], asked = 0;
  double *p1 = malloc(sizeof(double) * NC), *p2 = malloc(sizeof(double) * NC);
  run_to(s, ids, &asked, 150);
  assert_non_null(b->fgp);
  assert_true(mpt_gp_n_obs(b->fgp) < 256);
  sweep(b, NC, p1);
  int64_t kept = 0;
  for (int64_t c = 0; c < NC; c++) kept += b->fslot[c] >= 0;
  printf("%lld of %d candidates' kernel values kept after one sweep at %d feasibility observations\n",
         (long long)kept, NC, mpt_gp_n_obs(b->fgp));
  assert_int_equal(kept, NC);
  sweep(b, NC, p2); /* from the cache alone: the same values */
  for (int64_t c = 0; c < NC; c++) assert_true(p1[c] == p2[c]);
  run_to(s, ids, &asked, 300); /* past the first row length: the rows widened, the cached values extended */
  assert_true(mpt_gp_n_obs(b->fgp) > 256);
  sweep(b, NC, p2);
  int64_t changed = 0;
  for (int64_t c = 0; c < NC; c++) changed += p1[c] != p2[c];
  assert_true(changed > NC / 2); /* the model did learn more */
  mpt_strategy_destroy(s);
  free(p1);
  free(p2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_keeps_contenders),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
