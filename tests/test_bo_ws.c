/* tests/test_bo_ws.c: bo's working set of candidates on huge spaces (strategies/bo/bo_ws.c, option working_set)
 * and the GP's replaced candidates under it (gp/gp_replace.c, mpt_gp_replace_candidates): the replaced columns
 * against a GP created with the new candidates; bo with a forced small working set on a real brute-forced space
 * (convolution on the A6000, replayed): every pick and every pending evaluation in the working set, the set a
 * bijection of slots and configurations, its refresh bringing in the incumbent's neighbours, deterministic, with
 * batches, asynchronous workers (the pool of pending evaluations), failures (the feasibility model) and another
 * device's observations (transfer); a working set larger than the space changes no pick. */
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
#include "gp/gp.h"
#include "spaces/space.h"
#include "spaces/sys/rng.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_state.h"
#include "tests/bo_replay.h"
#include "tests/conv_fixture.h"

static mpt_space *space;
static mpt_replay *rep, *rep_other;

static int setup(void **state) {
  return bo_replay_setup(state, "bo_ws", &space, &rep) || bo_replay_load(*state, "A100", &rep_other) ? -1 : 0;
}

static int teardown(void **state) {
  mpt_replay_free(rep);
  mpt_replay_free(rep_other);
  return conv_fixture_teardown(state);
}

/* NC candidates on a grid of 11 values per dimension (kept as codes), NOBS observations: slots replaced by
 * other grid points against a GP created with the replaced candidates and given the same observations (means,
 * variances, variance sum to rounding; the other slots bit for bit unchanged); then both given more
 * observations and new hyperparameters (the stored candidates are the new ones); a point off the grid refused */
static void test_replace_exact(void **state) {
  (void)state;
  enum { NC = 3000, DIM = 4, NOBS = 150, NR = 300, MORE = 20 };
  mpt_rng r;
  mpt_rng_seed(&r, 11);
  double *X = malloc(sizeof(double) * NC * DIM), *X2 = malloc(sizeof(double) * NC * DIM);
  double *Xo = malloc(sizeof(double) * (NOBS + MORE) * DIM), y[NOBS + MORE], *XR = malloc(sizeof(double) * NR * DIM);
  int64_t slots[NR];
  for (int i = 0; i < NC * DIM; i++) X[i] = (double)mpt_rng_below(&r, 11) / 10.0;
  for (int i = 0; i < (NOBS + MORE) * DIM; i++) Xo[i] = (double)mpt_rng_below(&r, 11) / 10.0;
  for (int i = 0; i < NOBS + MORE; i++) y[i] = sin(3.0 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2] - Xo[i * DIM + 3];
  memcpy(X2, X, sizeof(double) * NC * DIM);
  for (int j = 0; j < NR; j++) { /* every tenth slot, and a few at the end (a partial panel) */
    slots[j] = j < NR - 5 ? 10 * j + 3 : NC - 1 - (NR - 1 - j);
    for (int d = 0; d < DIM; d++) XR[j * DIM + d] = (double)mpt_rng_below(&r, 11) / 10.0;
    memcpy(X2 + slots[j] * DIM, XR + j * DIM, sizeof(double) * DIM);
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-4;
  mpt_gp *a, *c;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X2, &c, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, NOBS, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(c, NOBS, Xo, y, NULL, &err), 0);
  double *m0 = malloc(sizeof(double) * NC), *v0 = malloc(sizeof(double) * NC);
  double *m1 = malloc(sizeof(double) * NC), *v1 = malloc(sizeof(double) * NC);
  double *m2 = malloc(sizeof(double) * NC), *v2 = malloc(sizeof(double) * NC);
  mpt_gp_predict_block_var(a, 0, NC, m0, v0);
  double off[DIM] = {0.05, 0.1, 0.2, 0.3}; /* 0.05 is not on the grid */
  int64_t one = 7;
  assert_int_not_equal(mpt_gp_candidate_fits(a, off), 1);
  assert_int_not_equal(mpt_gp_replace_candidates(a, 1, &one, off, &err), 0);
  int64_t bad = NC;
  assert_int_not_equal(mpt_gp_replace_candidates(a, 1, &bad, XR, &err), 0);
  assert_int_equal(mpt_gp_replace_candidates(a, NR, slots, XR, &err), 0);
  for (int round = 0; round < 3; round++) {
    double scale, dm = 0, dv = 0;
    mpt_gp_normalization(c, NULL, &scale);
    mpt_gp_predict_block_var(a, 0, NC, m1, v1);
    mpt_gp_predict_block_var(c, 0, NC, m2, v2);
    int64_t changed = 0;
    for (int64_t k = 0; k < NC; k++) {
      dm = fmax(dm, fabs(m1[k] - m2[k]));
      dv = fmax(dv, fabs(v1[k] - v2[k]));
      if (round == 0) changed += m1[k] != m0[k] || v1[k] != v0[k];
    }
    double s1 = mpt_gp_variance_sum(a, NULL, NULL), s2 = mpt_gp_variance_sum(c, NULL, NULL);
    printf("round %d: replaced candidates against a fresh GP: max |mean diff| %.3g (scale %.3g), max |var diff| %.3g, "
           "variance sums %.9g / %.9g\n", round, dm, scale, dv, s1, s2);
    assert_true(dm < 1e-5 * scale && dv < 1e-5);
    assert_true(fabs(s1 - s2) < 1e-6 * s2);
    if (round == 0) assert_true(changed <= NR); /* the other slots bit for bit as before */
    if (round == 0) { /* more observations: their rows over the new candidates' codes */
      assert_int_equal(mpt_gp_add_many(a, MORE, Xo + NOBS * DIM, y + NOBS, NULL, &err), 0);
      assert_int_equal(mpt_gp_add_many(c, MORE, Xo + NOBS * DIM, y + NOBS, NULL, &err), 0);
    } else if (round == 1) { /* refactored from scratch over the stored candidates */
      double ls[DIM] = {0.7, 1.1, 0.9, 2.0};
      assert_int_equal(mpt_gp_set_hyper(a, ls, 1.3, 1e-3, &err), 0);
      assert_int_equal(mpt_gp_set_hyper(c, ls, 1.3, 1e-3, &err), 0);
    }
  }
  mpt_gp_free(a);
  mpt_gp_free(c);
  free(X); free(X2); free(Xo); free(XR); free(m0); free(v0); free(m1); free(v1); free(m2); free(v2);
}

/* the working set is a bijection between its slots and configurations */
static void check_bijection(const bo_state *b) {
  int64_t in = 0;
  for (int64_t c = 0; c < b->n_slots; c++) assert_int_equal(b->ws_slot[b->ws_id[c]], c);
  for (int64_t id = 0; id < b->N; id++) in += b->ws_slot[id] >= 0;
  assert_int_equal(in, b->n_slots);
}

typedef struct run_stats {
  int64_t asks, outside;  /* asks, and model-based picks pending without a slot after an ask */
  int64_t nb_in, nb_free; /* at the asks after a new best: its unseen Hamming neighbours in the working set, and all */
  double best;
  int64_t best_id;
} run_stats;

/* the incumbent's unseen Hamming neighbours: how many, and how many in the working set */
static void incumbent_neighbours(const mpt_strategy *s, int64_t best, run_stats *st) {
  const bo_state *b = s->data;
  int idx[64];
  mpt_space_config(space, best, idx);
  int64_t *buf = NULL, cap = 0, cnt = mpt_space_neighbors_grow(space, idx, MPT_NB_HAMMING, &buf, &cap);
  for (int64_t q = 0; q < cnt; q++) {
    if (mpt_strategy_is_seen(s, buf[q])) continue;
    st->nb_free++;
    st->nb_in += b->ws_slot[buf[q]] >= 0;
  }
  free(buf);
}

/* what a run looks at between asks and tells: its statistics, and whether a new best came since the last ask */
typedef struct run_watch {
  run_stats *st;
  int improved;
} run_watch;

/* after an ask: the incumbent's neighbours after a new best, the model-based picks pending without a slot */
static void watch_ask(void *ctx, const mpt_strategy *s) {
  run_watch *w = ctx;
  const bo_state *b = s->data;
  w->st->asks++;
  if (w->improved && b->ws_id && b->n_ok >= 1) incumbent_neighbours(s, w->st->best_id, w->st);
  w->improved = 0;
  for (int64_t k = 0; k < b->n_pend; k++)
    w->st->outside += b->ws_id && b->ws_slot[b->pend[k].id] < 0 && b->pend[k].af >= 0;
}

/* before a tell: a new best */
static void watch_tell(void *ctx, const mpt_obs *o) {
  run_watch *w = ctx;
  if (!(mpt_obs_valid(o) && o->objective < w->st->best)) return;
  w->st->best = o->objective;
  w->st->best_id = o->id;
  w->improved = 1;
}

/* `total` evaluations with bo and options opts: rounds of ask(batch) told whole (workers 1), or `workers` in
 * flight (each ask fills the idle ones, the oldest is told: bo_replay_drive); related: another device's
 * brute-forced records told first. ids out in ask order; the strategy is returned for checks (the caller
 * destroys it) */
static mpt_strategy *run(const char *const *opts, int n_opts, int workers, int batch, int64_t total, int related,
                         int64_t *ids, run_stats *st) {
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, opts, n_opts, 3, total, &s, &err), 0);
  if (related) {
    int64_t n = mpt_space_size(space);
    mpt_obs *o = malloc(sizeof(mpt_obs) * (size_t)n);
    for (int64_t id = 0; id < n; id++) o[id] = bo_replay_observe(rep_other, id);
    mpt_strategy_tell_related(s, 0, o, (int)n);
    free(o);
  }
  memset(st, 0, sizeof *st);
  st->best = INFINITY;
  run_watch w = {.st = st};
  bo_drive d = {.rep = rep, .asked = watch_ask, .telling = watch_tell, .ctx = &w};
  bo_replay_drive(s, &d, workers, batch, total, ids);
  return s;
}

/* synchronous rounds of 1, a working set of 2048 of the space's valid configurations: valid distinct picks, each
 * model-based pick in the working set, the set a bijection, the incumbent's neighbours brought in at the ask after
 * every new best, the same picks again from the same seed, and a search that finds configurations close to the
 * space's best (within 10 % of the optimum; random search's expected best of 220 is far above) */
static void test_ws_sync(void **state) {
  (void)state;
  enum { T = 220 };
  const char *ws[] = {"working_set=2048"};
  int64_t a[T], c[T];
  run_stats st, st2;
  mpt_strategy *s = run(ws, 1, 1, 1, T, 0, a, &st);
  bo_state *b = s->data;
  assert_non_null(b->ws_id);
  assert_int_equal(b->n_slots, 2048);
  assert_true(mpt_space_size(space) > 2048);
  check_bijection(b);
  bo_check_valid_distinct(space, a, T);
  double opt = INFINITY;
  for (int64_t id = 0; id < mpt_space_size(space); id++) {
    mpt_obs o = bo_replay_observe(rep, id);
    if (mpt_obs_valid(&o) && o.objective < opt) opt = o.objective;
  }
  printf("working set 2048 of %lld: best %.4g (optimum %.4g), picks outside it %lld, incumbent's neighbours in it "
         "%lld of %lld\n", (long long)mpt_space_size(space), st.best, opt, (long long)st.outside, (long long)st.nb_in,
         (long long)st.nb_free);
  assert_int_equal(st.outside, 0);
  assert_true(st.nb_free > 0);
  assert_int_equal(st.nb_in, st.nb_free);
  assert_true(st.best <= 1.1 * opt);
  mpt_strategy_destroy(s);
  s = run(ws, 1, 1, 1, T, 0, c, &st2);
  mpt_strategy_destroy(s);
  assert_memory_equal(a, c, sizeof a);
}

/* batches of 8, 8 asynchronous workers (every ask finds 7 pending: the pool of pending evaluations), and rounds
 * with another GPU's records told as related observations (transfer's prior mean over the working set): valid,
 * distinct, every model-based pick and pending evaluation in the working set */
static void test_ws_batches(void **state) {
  (void)state;
  enum { T = 160 };
  const char *ws[] = {"working_set=2048", "working_set_refresh=16"};
  int64_t a[T];
  run_stats st;
  struct { int workers, batch, related; } mode[] = {{1, 8, 0}, {8, 1, 0}, {1, 4, 1}};
  for (int m = 0; m < 3; m++) {
    mpt_strategy *s = run(ws, 2, mode[m].workers, mode[m].batch, T, mode[m].related, a, &st);
    check_bijection(s->data);
    bo_check_valid_distinct(space, a, T);
    printf("workers %d, batch %d, related %d: %lld asks, best %.4g, model-based picks outside the working set %lld\n",
           mode[m].workers, mode[m].batch, mode[m].related, (long long)st.asks, st.best, (long long)st.outside);
    assert_int_equal(st.outside, 0);
    mpt_strategy_destroy(s);
  }
}

/* a working set at least the space's size is no working set: the picks of working_set=0, one by one */
static void test_ws_not_below(void **state) {
  (void)state;
  enum { T = 120 };
  char big[64];
  snprintf(big, sizeof big, "working_set=%lld", (long long)mpt_space_size(space));
  const char *w0[] = {"working_set=0"}, *w1[] = {big};
  int64_t a[T], c[T];
  run_stats st;
  mpt_strategy *s = run(w0, 1, 1, 1, T, 0, a, &st);
  mpt_strategy_destroy(s);
  s = run(w1, 1, 1, 1, T, 0, c, &st);
  assert_null(((bo_state *)s->data)->ws_id);
  mpt_strategy_destroy(s);
  assert_memory_equal(a, c, sizeof a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_replace_exact),
      cmocka_unit_test(test_ws_sync),
      cmocka_unit_test(test_ws_batches),
      cmocka_unit_test(test_ws_not_below),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
