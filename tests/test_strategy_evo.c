/* tests/test_strategy_evo.c: the evolutionary and local-search strategies (ga, de, pso, firefly and their
 * constraint_aware=0 penalty variants, sa, mls) on the real convolution space with the measured
 * objectives of convolution_A100_T4.json.gz (replay): every ask fulfilled with valid, distinct, unseen
 * ids until the whole space is used (sequential and batched asks), determinism per seed, resume (a fresh
 * instance told a run's observations continues exactly like the uninterrupted run), option errors, and
 * that the search beats the starting point. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "evaluators/replay.h"
#include "strategies/strategy.h"

typedef struct fixture { mpt_problem *p; mpt_space *s; mpt_replay *r; } fixture;

static const char *const specs[] = {
  "ga", "ga:constraint_aware=0", "de", "de:constraint_aware=0", "pso", "pso:constraint_aware=0",
  "firefly", "firefly:constraint_aware=0", "sa", "mls", "ga:method=uniform,elitism=0", "de:method=rand1bin",
  "ga_memetic", "ga_memetic:constraint_aware=0", "ga:mode=steady,local=0.3", "pso:constraint_aware=0,invalid_costs=0",
};
#define N_SPECS ((int)(sizeof specs / sizeof specs[0]))

static int setup(void **state) {
  const char *dir = getenv("MPT_SHARED_DATA");
  if (!dir) return -1;
  char path[1024];
  fixture *f = calloc(1, sizeof *f);
  mpt_error err;
  mpt_error_clear(&err);
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", dir);
  if (mpt_problem_load(path, &f->p, &err) || mpt_space_build(f->p, &f->s, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  snprintf(path, sizeof path, "%s/brute-forced/convolution_A100_T4.json.gz", dir);
  if (mpt_replay_load(path, f->s, &f->r, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mpt_replay_free(f->r);
  mpt_space_free(f->s);
  mpt_problem_free(f->p);
  free(f);
  return 0;
}

/* "name:k=v,k=v" -> strategy */
static mpt_strategy *make(fixture *f, const char *spec, uint64_t seed, int64_t budget) {
  char buf[256], *opts[16];
  int n = 0;
  snprintf(buf, sizeof buf, "%s", spec);
  char *colon = strchr(buf, ':');
  if (colon) {
    *colon = '\0';
    for (char *t = strtok(colon + 1, ","); t && n < 16; t = strtok(NULL, ",")) opts[n++] = t;
  }
  mpt_strategy *s = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = mpt_strategy_create(buf, f->s, (const char *const *)opts, n, seed, budget, &s, &err);
  if (rc) fprintf(stderr, "%s: %s\n", spec, err.msg);
  assert_int_equal(rc, 0);
  return s;
}

static void observe(fixture *f, int64_t id, mpt_obs *o) {
  const mpt_obs *r = mpt_replay_get(f->r, id);
  assert_non_null(r);
  *o = *r;
  o->id = id;
}

/* ask(batch)/tell until `evals` evaluations; writes the ids in order; checks every ask */
static int64_t run(fixture *f, mpt_strategy *s, int batch, int64_t evals, int64_t *order, uint8_t *hit) {
  int64_t size = mpt_space_size(f->s), used = 0;
  int64_t ids[64];
  mpt_obs obs[64];
  while (used < evals) {
    int want = (int)(batch < evals - used ? batch : evals - used);
    int got = mpt_strategy_ask(s, want, ids);
    if (got == 0) break;
    assert_true(got > 0 && got <= want);
    /* an ask is fulfilled in full while enough unseen configurations remain (sequential asks) */
    if (batch == 1) assert_int_equal(got, 1);
    for (int i = 0; i < got; i++) {
      assert_true(ids[i] >= 0 && ids[i] < size);
      assert_int_equal(hit[ids[i]], 0);
      hit[ids[i]] = 1;
      if (order) order[used] = ids[i];
      used++;
      observe(f, ids[i], &obs[i]);
    }
    mpt_strategy_tell(s, obs, got);
  }
  return used;
}

static void test_whole_space_sequential_and_batched(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  uint8_t *hit = malloc((size_t)size);
  for (int k = 0; k < N_SPECS; k++) {
    for (int b = 0; b < 2; b++) {
      int batch = b ? 16 : 1;
      if (batch == 1 && k % 3 != 0) continue; /* sequential exhaustion for a third of the specs (time) */
      memset(hit, 0, (size_t)size);
      mpt_strategy *s = make(f, specs[k], 5, 220);
      /* the budget and far beyond: every configuration exactly once, then nothing */
      int64_t used = run(f, s, batch, size, NULL, hit);
      if (used != size) fprintf(stderr, "%s batch %d: %lld of %lld\n", specs[k], batch, (long long)used, (long long)size);
      assert_int_equal(used, size);
      int64_t ids[4];
      assert_int_equal(mpt_strategy_ask(s, 4, ids), 0);
      assert_int_equal(s->n_told, size);
      mpt_strategy_destroy(s);
    }
  }
  free(hit);
}

static void test_deterministic_per_seed(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  uint8_t *hit = malloc((size_t)size);
  int64_t a[220], b[220], c[220];
  for (int k = 0; k < N_SPECS; k++) {
    mpt_strategy *s;
    memset(hit, 0, (size_t)size);
    s = make(f, specs[k], 11, 220);
    assert_int_equal(run(f, s, 1, 220, a, hit), 220);
    mpt_strategy_destroy(s);
    memset(hit, 0, (size_t)size);
    s = make(f, specs[k], 11, 220);
    assert_int_equal(run(f, s, 1, 220, b, hit), 220);
    mpt_strategy_destroy(s);
    assert_memory_equal(a, b, sizeof a);
    memset(hit, 0, (size_t)size);
    s = make(f, specs[k], 12, 220);
    assert_int_equal(run(f, s, 1, 220, c, hit), 220);
    mpt_strategy_destroy(s);
    assert_true(memcmp(a, c, sizeof a) != 0);
  }
  free(hit);
}

/* resume: a fresh instance told the first 100 observations (before its first ask) proposes exactly what
 * the uninterrupted run proposes next (sequential asks; see evo_common.h for why this holds) */
static void test_resume_continues_exactly(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  uint8_t *hit = malloc((size_t)size);
  int64_t a[160], b[60];
  for (int k = 0; k < N_SPECS; k++) {
    memset(hit, 0, (size_t)size);
    mpt_strategy *s = make(f, specs[k], 21, 220);
    assert_int_equal(run(f, s, 1, 160, a, hit), 160);
    mpt_strategy_destroy(s);
    mpt_strategy *r = make(f, specs[k], 21, 220);
    mpt_obs obs[100];
    for (int i = 0; i < 100; i++) observe(f, a[i], &obs[i]);
    mpt_strategy_tell(r, obs, 100);
    assert_int_equal(r->n_seen, 100);
    memset(hit, 0, (size_t)size);
    for (int i = 0; i < 100; i++) hit[a[i]] = 1;
    assert_int_equal(run(f, r, 1, 60, b, hit), 60);
    mpt_strategy_destroy(r);
    if (memcmp(a + 100, b, sizeof b)) fprintf(stderr, "resume differs for %s\n", specs[k]);
    assert_memory_equal(a + 100, b, sizeof b);
  }
  free(hit);
}

/* warm start from observations the strategy did not make (another run's log): no repeats, whole
 * budget used */
static void test_warm_start_foreign(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  uint8_t *hit = calloc((size_t)size, 1);
  for (int k = 0; k < N_SPECS; k++) {
    mpt_strategy *r = make(f, specs[k], 31, 300);
    memset(hit, 0, (size_t)size);
    mpt_obs o;
    for (int64_t id = 0; id < size; id += 3) {
      observe(f, id, &o);
      mpt_strategy_tell(r, &o, 1);
      hit[id] = 1;
    }
    assert_int_equal(run(f, r, 4, 300, NULL, hit), 300);
    mpt_strategy_destroy(r);
  }
  free(hit);
}

/* the search finds something better than the mean of random search over 220 evaluations */
static void test_improves_on_random(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  uint8_t *hit = malloc((size_t)size);
  int64_t order[220];
  /* median objective of the valid records */
  double worse_than = 0;
  int nv = 0;
  for (int64_t id = 0; id < size; id++) {
    const mpt_obs *o = mpt_replay_get(f->r, id);
    if (o && mpt_obs_valid(o)) { worse_than += o->objective; nv++; }
  }
  worse_than /= nv;
  for (int k = 0; k < N_SPECS; k++) {
    double sum = 0;
    for (int rep = 0; rep < 5; rep++) {
      memset(hit, 0, (size_t)size);
      mpt_strategy *s = make(f, specs[k], 100 + (uint64_t)rep, 220);
      assert_int_equal(run(f, s, 1, 220, order, hit), 220);
      mpt_strategy_destroy(s);
      double best = INFINITY;
      for (int i = 0; i < 220; i++) {
        const mpt_obs *o = mpt_replay_get(f->r, order[i]);
        if (mpt_obs_valid(o) && o->objective < best) best = o->objective;
      }
      sum += best;
    }
    assert_true(sum / 5 < 0.5 * worse_than);
  }
  free(hit);
}

static void test_option_errors(void **state) {
  fixture *f = *state;
  mpt_strategy *s = NULL;
  mpt_error err;
  const char *names[] = {"ga", "de", "pso", "firefly", "sa", "mls", "ga_memetic"};
  for (int k = 0; k < 7; k++) {
    const char *bad[] = {"no_such_key=1"};
    mpt_error_clear(&err);
    assert_int_equal(mpt_strategy_create(names[k], f->s, bad, 1, 1, 10, &s, &err), MPT_ERR_NAME);
    assert_null(s);
    assert_non_null(strstr(err.msg, names[k]));
    assert_non_null(strstr(err.msg, "no_such_key"));
    assert_non_null(strstr(err.msg, "valid options"));
  }
  struct { const char *name, *opt, *must; } cases[] = {
    {"ga", "popsize=abc", "popsize"}, {"ga", "popsize=1", "2..10000"}, {"ga", "method=three_point", "single_point|two_point|uniform"},
    {"ga", "constraint_aware=maybe", "boolean"}, {"de", "CR=1.5", "CR"}, {"de", "F=nan", "F"}, {"pso", "w=", "w"},
    {"sa", "neighbor=far", "Hamming"}, {"firefly", "gamma=-1", "gamma"}, {"mls", "max_batch=0", "max_batch"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mpt_error_clear(&err);
    int rc = mpt_strategy_create(cases[i].name, f->s, &cases[i].opt, 1, 1, 10, &s, &err);
    assert_int_equal(rc, MPT_ERR_VALUE);
    assert_null(s);
    assert_non_null(strstr(err.msg, cases[i].name));
    if (!strstr(err.msg, cases[i].must)) fprintf(stderr, "message lacks '%s': %s\n", cases[i].must, err.msg);
    assert_non_null(strstr(err.msg, cases[i].must));
    assert_non_null(strstr(err.msg, "valid options")); /* lists the keys with types and defaults */
  }
  /* good options are accepted and read back, defaults come from the spec table */
  const char *good[] = {"popsize=8", "F=0.5", "constraint_aware=false"};
  assert_int_equal(mpt_strategy_create("de", f->s, good, 3, 1, 10, &s, &err), 0);
  assert_int_equal(mpt_strategy_opt_int(s, "popsize"), 8);
  assert_true(fabs(mpt_strategy_opt_double(s, "F") - 0.5) < 1e-12);
  assert_true(fabs(mpt_strategy_opt_double(s, "CR") - 0.6) < 1e-12);
  assert_int_equal(mpt_strategy_opt_bool(s, "constraint_aware"), 0);
  assert_string_equal(mpt_strategy_opt_str(s, "method"), "best1bin");
  mpt_strategy_destroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_option_errors),
    cmocka_unit_test(test_deterministic_per_seed),
    cmocka_unit_test(test_resume_continues_exactly),
    cmocka_unit_test(test_warm_start_foreign),
    cmocka_unit_test(test_improves_on_random),
    cmocka_unit_test(test_whole_space_sequential_and_batched),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
