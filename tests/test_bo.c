/* tests/test_bo.c: the `bo` strategy on a real brute-forced space (convolution on the A6000, 11% failed
 * configurations, replayed), its runs: determinism for a fixed seed, only valid and never repeated ids, the whole
 * budget used, resume (warm start by tell) continuing exactly like the uninterrupted run, the first ask of a
 * resume stopping when told to, asynchronous callers before the model has data, bad options rejected, the
 * feasibility model wasting fewer evaluations on failures than random search and than BO without it, and an
 * ask that fails because the GP cannot grow saying why (mpt_strategy_ask_error). What bo asks for (batches,
 * pools, initial designs) is in tests/test_bo_batch.c; the fixture and driver both use in tests/bo_run.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/replay/replay.h"
#include "spaces/space.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_pool.h"
#include "gp/gp.h"
#include "spaces/sys/rng.h"
#include "tests/bo_run.h"

static void test_determinism_budget_validity(void **state) {
  (void)state;
  int64_t a[220], b[220], c[220];
  mpt_obs *oa = malloc(sizeof(mpt_obs) * 220), *ob = malloc(sizeof(mpt_obs) * 220);
  assert_int_equal(run(NULL, 0, 42, 220, 1, 220, a, oa), 220);
  assert_int_equal(run(NULL, 0, 42, 220, 1, 220, b, ob), 220);
  assert_memory_equal(a, b, sizeof a);
  bo_check_valid_distinct(space, a, 220);
  assert_int_equal(run(NULL, 0, 43, 220, 1, 220, c, ob), 220);
  assert_memory_not_equal(a, c, sizeof a); /* another seed, another initial sample */
  /* sanity check only: the best of 220 is in the top 1% of the valid configurations (random search
   * manages that in ~89% of runs; the score against random search is measured by tests/bo_harness) */
  double best = INFINITY;
  for (int i = 0; i < 220; i++)
    if (mpt_obs_valid(&oa[i]) && oa[i].objective < best) best = oa[i].objective;
  int64_t better = 0, valid = 0;
  for (int64_t id = 0; id < N; id++) {
    mpt_obs o = observe(id);
    if (!mpt_obs_valid(&o)) continue;
    valid++;
    better += o.objective < best;
  }
  printf("best of 220: %.4f ms (optimum %.4f), %lld of %lld valid configurations are better\n", best,
         mpt_replay_optimum(rep), (long long)better, (long long)valid);
  assert_true(better <= valid / 100);
  free(oa);
  free(ob);
}

static void test_resume(void **state) {
  (void)state;
  check_resume(NULL, 0);
  /* hyperparameter refits at fixed counts of valid observations: resume is exact too */
  const char *fit[] = {"fit_hyperparameters=1", "refit_interval=7"};
  check_resume(fit, 2);
  /* the stall rule in its other mode, triggered early */
  const char *stall[] = {"stall_after=5", "stall_action=variance"};
  check_resume(stall, 2);
  const char *enc[] = {"encoding=onehot", "encoding=index"};
  check_resume(enc, 1);
  check_resume(enc + 1, 1);
  /* every kind of local pick (the default is hamming every 2nd pick); cross draws its children from
   * a generator seeded by the told count, so resume stays exact */
  const char *kinds[] = {"box", "adjacent", "strictly-adjacent", "elite", "hamming+elite", "cross", "hamming+cross"};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    char opt[64];
    snprintf(opt, sizeof opt, "local_kind=%s", kinds[k]);
    const char *lk[] = {opt, "local_when=stalled", "stall_after=4"};
    check_resume(lk, 1);
    check_resume(lk, 3);
  }
}

/* a space where 90% of the configurations fail: the initial sample is topped up with random ones until
 * 3 x initial_samples have been asked, then the model takes over. A run resumed anywhere (in the sample,
 * among its random replacements, after it) continues like the uninterrupted one: the observations told
 * count towards the initial phase, and the replacements are drawn from a generator seeded by the
 * told count (a resumed run once went on drawing replacements the original never drew) */
static void test_resume_mostly_failing(void **state) {
  (void)state;
  fail_unless_mod = 10;
  int64_t ids[90], ids2[90];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 90);
  run(NULL, 0, 3, 220, 1, 90, ids, obs);
  int n_ok = 0;
  for (int i = 0; i < 90; i++) n_ok += mpt_obs_valid(&obs[i]);
  assert_true(n_ok >= 2 && n_ok < 30);
  const int at[] = {1, 5, 10, 11, 20, 29, 30, 31, 45};
  for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
    mpt_strategy *s;
    mpt_error err;
    assert_int_equal(mpt_strategy_create("bo", space, NULL, 0, 3, 220, &s, &err), 0);
    mpt_strategy_tell(s, obs, at[k]);
    for (int i = at[k]; i < 90; i++) {
      assert_int_equal(mpt_strategy_ask(s, 1, &ids2[i]), 1);
      mpt_obs o = observe(ids2[i]);
      mpt_strategy_tell(s, &o, 1);
    }
    assert_memory_equal(ids + at[k], ids2 + at[k], sizeof(int64_t) * (size_t)(90 - at[k]));
    mpt_strategy_destroy(s);
  }
  free(obs);
  fail_unless_mod = 0;
}

/* the tick of a long ask: counts its calls, keeps the last note, asks to stop at call stop_at (0: never) */
typedef struct {
  int calls, stop_at;
  char last[128];
} tick_log;

static int log_tick(void *ctx, const char *doing) {
  tick_log *t = ctx;
  snprintf(t->last, sizeof t->last, "%s", doing);
  return ++t->calls == t->stop_at;
}

/* The first ask of a resumed run takes in every logged observation (minutes for thousands on a large
 * space): it says how far it is through the tick and gives up when the run stops (MPT_ERR_STOPPED, the
 * model as far as it got); a later ask goes on from there and proposes what the uninterrupted run does.
 * Before, nothing was shown and a signal waited for the whole model. */
static void test_resume_ask_stops(void **state) {
  (void)state;
  enum { TOLD = 150, MORE = 20 };
  int64_t ids[TOLD + MORE], ids2[MORE];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * (TOLD + MORE));
  run(NULL, 0, 5, 220, 1, TOLD + MORE, ids, obs);
  for (int stop_at = 0; stop_at <= 3; stop_at += 3) {
    mpt_strategy *s;
    mpt_error err;
    assert_int_equal(mpt_strategy_create("bo", space, NULL, 0, 5, 220, &s, &err), 0);
    mpt_strategy_tell(s, obs, TOLD);
    tick_log t = {0, stop_at, ""};
    mpt_strategy_set_tick(s, log_tick, &t);
    int got = mpt_strategy_ask(s, 1, &ids2[0]);
    if (stop_at) {
      assert_int_equal(got, MPT_ERR_STOPPED);
      assert_int_equal(t.calls, 3);
      assert_string_equal(t.last, "bo: model from 32 of 150 logged observations");
      assert_non_null(strstr(mpt_strategy_ask_error(s), "bo: stopped taking in logged observations (32 of 150)"));
      mpt_strategy_set_tick(s, NULL, NULL);
      got = mpt_strategy_ask(s, 1, &ids2[0]);
    } else {
      assert_int_equal(t.calls, 150 / 16 + 1); /* every 16th observation, while there are more than 64 */
    }
    assert_int_equal(got, 1);
    for (int i = 0; i < MORE; i++) {
      if (i > 0) assert_int_equal(mpt_strategy_ask(s, 1, &ids2[i]), 1);
      mpt_obs o = observe(ids2[i]);
      mpt_strategy_tell(s, &o, 1);
    }
    assert_memory_equal(ids + TOLD, ids2, sizeof ids2);
    mpt_strategy_destroy(s);
  }
  free(obs);
}

/* With a refit of the hyperparameters at every observation (each refactors the whole GP), the first ask
 * of a resumed run ticks after every refit, not only every 16 observations: a --time or a signal is acted
 * on within one refit (it waited for 16: 10 s past `--time 3` in a review). */
static void test_resume_ask_stops_after_refit(void **state) {
  (void)state;
  enum { TOLD = 100 };
  int64_t ids[TOLD];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * TOLD);
  run(NULL, 0, 5, 220, 1, TOLD, ids, obs);
  const char *opts[] = {"fit_hyperparameters=1", "refit_interval=1"};
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, opts, 2, 5, 220, &s, &err), 0);
  mpt_strategy_tell(s, obs, TOLD);
  tick_log t = {0, 3, ""};
  mpt_strategy_set_tick(s, log_tick, &t);
  int64_t id;
  assert_int_equal(mpt_strategy_ask(s, 1, &id), MPT_ERR_STOPPED);
  int k = -1;
  assert_int_equal(sscanf(t.last, "bo: model from %d of 100 logged observations", &k), 1);
  /* ticks at observation 0, then after the first two refits (the first at the 10th valid observation) */
  assert_true(k >= 10 && k < 16);
  mpt_strategy_destroy(s);
  free(obs);
}

/* an asynchronous caller with more workers than initial samples: the default configuration (reserved,
 * evaluated by the caller) fails while the whole initial sample is in flight; bo gives a random unseen
 * configuration to every idle worker (answering 0 would get the single one the base layer tops up with) */
static void test_no_model_yet(void **state) {
  (void)state;
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, NULL, 0, 9, 220, &s, &err), 0);
  int64_t def = 0, ids[16];
  assert_int_equal(mpt_strategy_reserve(s, def), 0);
  assert_int_equal(mpt_strategy_ask(s, 16, ids), 10); /* the initial sample only */
  mpt_obs o;
  mpt_obs_init(&o, def);
  o.status = MPT_STATUS_RUNTIME_ERROR;
  mpt_strategy_tell(s, &o, 1);
  assert_int_equal(mpt_strategy_ask(s, 4, ids + 10), 4);
  ids[14] = def;
  bo_check_valid_distinct(space, ids, 15);
  /* once the sample is told, the model picks: 16 distinct, unseen */
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 14);
  for (int i = 0; i < 14; i++) obs[i] = observe(ids[i]);
  mpt_strategy_tell(s, obs, 14);
  int64_t more[31];
  assert_int_equal(mpt_strategy_ask(s, 16, more), 16);
  memcpy(more + 16, ids, 15 * sizeof(int64_t));
  bo_check_valid_distinct(space, more, 31);
  mpt_strategy_destroy(s);
  free(obs);
}

/* an asynchronous coordinator with as many workers as the initial sample: the first result comes back
 * while the rest pend, and the next ask is a model pick. With one valid observation the incumbent was
 * left infinite under the rank transform (the default), every EI infinite, and the pick always id 0 */
static void test_model_from_one_observation(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    mpt_strategy *s;
    mpt_error err;
    assert_int_equal(mpt_strategy_create("bo", space, NULL, 0, seed, 220, &s, &err), 0);
    int64_t ids[11];
    assert_int_equal(mpt_strategy_ask(s, 10, ids), 10);
    int k = 0;
    mpt_obs o = observe(ids[k]);
    while (!mpt_obs_valid(&o)) o = observe(ids[++k]);
    mpt_strategy_tell(s, &o, 1);
    assert_int_equal(mpt_strategy_ask(s, 1, ids + 10), 1);
    assert_true(ids[10] != 0);
    bo_check_valid_distinct(space, ids, 11);
    mpt_strategy_destroy(s);
  }
}

static void test_bad_options(void **state) {
  (void)state;
  mpt_strategy *s;
  mpt_error err;
  const char *o1[] = {"acquisition=nope"}, *o2[] = {"no_such_key=1"}, *o3[] = {"lengthscale=-1"};
  assert_true(mpt_strategy_create("bo", space, o1, 1, 1, 100, &s, &err) < 0);
  assert_true(mpt_strategy_create("bo", space, o2, 1, 1, 100, &s, &err) < 0);
  assert_true(strstr(err.msg, "acquisition") != NULL); /* the valid keys are listed */
  assert_true(mpt_strategy_create("bo", space, o3, 1, 1, 100, &s, &err) < 0);
}

/* a GP that cannot grow (here: over gp_memory_limit, as when out of memory) fails the ask with the reason:
 * which GP, to how many observations, and the size it needed (the caller printed only "failed to propose") */
static void test_ask_error(void **state) {
  (void)state;
  /* room for 64 observations takes about N * (24 + 64 * 4) bytes, for 128 about N * (24 + 128 * 4): a limit
   * between them lets the GP hold 64 observations and not 65 */
  char opt[64];
  snprintf(opt, sizeof opt, "gp_memory_limit=%.6f", (double)N * (24 + 96 * 4) / 1048576.0);
  const char *o[] = {opt};
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, o, 1, 1, 200, &s, &err), 0);
  assert_string_equal(mpt_strategy_ask_error(s), "");
  int64_t id;
  int rc = 0, told_ok = 0;
  for (int i = 0; i < 200 && (rc = mpt_strategy_ask(s, 1, &id)) == 1; i++) {
    mpt_obs ob = observe(id);
    told_ok += mpt_obs_valid(&ob);
    mpt_strategy_tell(s, &ob, 1);
  }
  assert_true(rc < 0);
  assert_true(told_ok >= 64);
  const char *msg = mpt_strategy_ask_error(s);
  assert_non_null(strstr(msg, "bo: cannot extend the GP to 65 observations: "));
  assert_non_null(strstr(msg, "room for 128 observations needs "));
  assert_non_null(strstr(msg, " MB, over the limit of "));
  mpt_strategy_destroy(s);
}

/* feasibility model: fewer failed evaluations than random search (11% of the space fails) */
static void test_failures(void **state) {
  (void)state;
  int64_t ids[220];
  mpt_obs *obs = malloc(sizeof(mpt_obs) * 220);
  int fails = 0, fails_off = 0;
  const char *off[] = {"feasibility=off"};
  for (int seed = 1; seed <= 3; seed++) {
    run(NULL, 0, (uint64_t)seed, 220, 1, 220, ids, obs);
    for (int i = 0; i < 220; i++) fails += !mpt_obs_valid(&obs[i]);
    run(off, 1, (uint64_t)seed, 220, 1, 220, ids, obs);
    for (int i = 0; i < 220; i++) fails_off += !mpt_obs_valid(&obs[i]);
  }
  int64_t failed = 0;
  for (int64_t id = 0; id < N; id++) {
    mpt_obs o = observe(id);
    failed += !mpt_obs_valid(&o);
  }
  double random_share = (double)failed / (double)N, bo_share = fails / (3 * 220.0);
  printf("failed share: space %.3f, bo %.3f, bo without feasibility model %.3f\n", random_share, bo_share,
         fails_off / (3 * 220.0));
  /* the model wastes fewer evaluations on failures than random search and than BO without it */
  assert_true(bo_share < random_share);
  assert_true(fails < fails_off);
  free(obs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_determinism_budget_validity),
      cmocka_unit_test(test_resume),
      cmocka_unit_test(test_resume_mostly_failing),
      cmocka_unit_test(test_resume_ask_stops),
      cmocka_unit_test(test_resume_ask_stops_after_refit),
      cmocka_unit_test(test_no_model_yet),
      cmocka_unit_test(test_model_from_one_observation),
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_failures),
      cmocka_unit_test(test_ask_error),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
