/* tests/test_confirm.c: the Pareto front of a multi-objective run (jobs/output/pareto.c) and rank 0's side of
 * --confirm (jobs/job_confirm.c), on observations of the real convolution space: dominance with objectives
 * minimized and maximized, a configuration seen again, the front sorted by the first objective; the
 * finalists kept as observations arrive, their confirmed objective (the median of the re-measurements, a
 * failed one left out), a reorder said, and the confirmations of a resumed log counted only when they are
 * of the same finalists; the default measured again with them (not when its last search measurement failed,
 * nor apart when it is a finalist), its confirmed objective, and its logged re-measurements counted on a
 * resume; with two device classes, each class's finalists, default and re-measurements apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>
#include "jobs/job_confirm.h"
#include "jobs/output/pareto.h"
#include "tests/conv_fixture.h"

static int setup(void **state) { return conv_fixture_setup(state, "confirm"); }
static int teardown(void **state) { return conv_fixture_teardown(state); }

static mpt_obs obs(int64_t id, double time_ms, double energy_j) {
  mpt_obs o;
  mpt_obs_init(&o, id);
  o.n_times = 1;
  o.times[0] = time_ms;
  o.objective = time_ms;
  o.energy_j = energy_j;
  o.n_power = 10;
  return o;
}

static void test_pareto(void **state) {
  fixture *f = *state;
  mpt_objective ob;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_objective_parse("time,energy", f->p, &ob, &err), 0);
  mpt_pareto fr;
  mpt_pareto_init(&fr, &ob);
  mpt_obs a = obs(1, 1, 0.4), b = obs(2, 2, 0.1), c = obs(3, 3, 0.045), d = obs(4, 4, 0.12), e = obs(5, 2, 0.5);
  const mpt_obs *all[] = {&d, &a, &e, &b, &c};
  for (int i = 0; i < 5; i++) assert_int_equal(mpt_pareto_add(&fr, f->s, all[i]), 0);
  mpt_pareto_sort(&fr);
  assert_int_equal(fr.n, 3); /* d dominated by b and c, e by a */
  assert_int_equal(fr.p[0].id, 1);
  assert_int_equal(fr.p[1].id, 2);
  assert_int_equal(fr.p[2].id, 3);
  mpt_obs a2 = obs(1, 5, 1.0); /* seen again, worse: its point goes, and it is dominated now */
  assert_int_equal(mpt_pareto_add(&fr, f->s, &a2), 0);
  assert_int_equal(fr.n, 2);
  mpt_obs bad = obs(6, 0.5, NAN); /* no energy: not on the front */
  assert_int_equal(mpt_pareto_add(&fr, f->s, &bad), 0);
  assert_int_equal(fr.n, 2);
  mpt_pareto_free(&fr);
  mpt_objective_free(&ob);
  /* energy maximized (as a stand-in for a metric to maximize): c's low energy is now the worst */
  assert_int_equal(mpt_objective_parse("time,energy:max", f->p, &ob, &err), 0);
  double x[2] = {1, 0.4}, y[2] = {2, 0.1};
  assert_true(mpt_pareto_dominates(&ob, x, y));
  assert_false(mpt_pareto_dominates(&ob, y, x));
  assert_false(mpt_pareto_dominates(&ob, x, x));
  mpt_objective_free(&ob);
}

static mpt_obs remeasured(int64_t id, double v, int round) {
  mpt_obs o = obs(id, v, NAN);
  o.confirm = round;
  return o;
}

static void test_finalists_and_reorder(void **state) {
  (void)state;
  mpt_job_confirm jc;
  mpt_job_confirm_init(&jc, 2);
  double t[] = {5, 3, 4, 1, 2};
  for (int i = 0; i < 5; i++) {
    mpt_obs o = obs(10 + i, t[i], NAN);
    mpt_job_confirm_see(&jc, &o);
  }
  mpt_obs again = obs(12, 0.5, NAN); /* id 12 measured again, faster: now the best */
  mpt_job_confirm_see(&jc, &again);
  assert_int_equal(jc.n, 2);
  assert_int_equal(jc.f[0].id, 12);
  assert_int_equal(jc.f[1].id, 13);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  int64_t ids[2];
  assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
  assert_int_equal(ids[0], 12);
  /* re-measured: 12 at 2.0, 2.2 and a failure; 13 at 1.1, 0.9, 1.0 */
  mpt_obs r[] = {remeasured(12, 2.0, 1), remeasured(13, 1.1, 1), remeasured(12, 2.2, 2), remeasured(13, 0.9, 2),
                 remeasured(12, 9, 3), remeasured(13, 1.0, 3)};
  r[4].status = MPT_STATUS_CRASH;
  r[4].objective = NAN;
  for (int i = 0; i < 6; i++) mpt_job_confirm_take(&jc, &r[i]);
  assert_int_equal(plan.logged_rounds(plan.ctx, 12), 3);
  int reordered = 0;
  const mpt_job_finalist *best = mpt_job_confirm_best(&jc, &reordered);
  assert_non_null(best);
  assert_int_equal(best->id, 13);
  assert_true(reordered);
  assert_true(fabs(best->confirmed - 1.0) < 1e-12);
  assert_true(fabs(jc.f[0].confirmed - 2.1) < 1e-12); /* the failed run left out */
  mpt_job_confirm_free(&jc);
}

static void test_logged_confirmations(void **state) {
  (void)state;
  for (int same = 0; same <= 1; same++) {
    mpt_job_confirm jc;
    mpt_job_confirm_init(&jc, 2);
    mpt_obs a = obs(1, 1, NAN), b = obs(2, 2, NAN);
    mpt_job_confirm_see(&jc, &a);
    mpt_job_confirm_see(&jc, &b);
    jc.n_logged = 3;
    jc.logged = malloc(sizeof(mpt_obs) * 3);
    jc.logged[0] = remeasured(1, 1.0, 1);
    jc.logged[1] = remeasured(same ? 2 : 7, 2.0, 1); /* of other finalists: not counted */
    jc.logged[2] = remeasured(1, 1.1, 2);
    mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
    int64_t ids[2];
    assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
    assert_int_equal(jc.use_logged, same);
    assert_int_equal(plan.logged_rounds(plan.ctx, 1), same ? 2 : 0);
    assert_int_equal(plan.logged_rounds(plan.ctx, 2), same ? 1 : 0);
    mpt_job_confirm_free(&jc);
  }
}

/* a stop after the first finalist's first round: the resume keeps it and measures the second from round 1 */
static void test_logged_before_every_finalist(void **state) {
  (void)state;
  mpt_job_confirm jc;
  mpt_job_confirm_init(&jc, 2);
  mpt_obs a = obs(1, 1, NAN), b = obs(2, 2, NAN);
  mpt_job_confirm_see(&jc, &a);
  mpt_job_confirm_see(&jc, &b);
  jc.n_logged = 1;
  jc.logged = malloc(sizeof(mpt_obs));
  jc.logged[0] = remeasured(1, 1.0, 1);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  int64_t ids[2];
  assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
  assert_int_equal(jc.use_logged, 1);
  assert_int_equal(plan.logged_rounds(plan.ctx, 1), 1);
  assert_int_equal(plan.logged_rounds(plan.ctx, 2), 0);
  mpt_job_confirm_free(&jc);
}

/* five search observations, the default (id 20) the fourth at `def_ms` (NAN: it failed); k 2 */
static void search_with_default(mpt_job_confirm *jc, double def_ms) {
  mpt_job_confirm_init(jc, 2);
  jc->default_id = 20;
  double t[] = {5, 3, 4, def_ms, 1};
  int64_t id[] = {10, 11, 12, 20, 13};
  for (int i = 0; i < 5; i++) {
    mpt_obs o = obs(id[i], t[i], NAN);
    if (isnan(def_ms) && id[i] == 20) o.status = MPT_STATUS_RUNTIME_ERROR, o.objective = NAN;
    mpt_job_confirm_see(jc, &o);
  }
}

static void test_default_measured_again(void **state) {
  (void)state;
  mpt_job_confirm jc;
  search_with_default(&jc, 8);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  int64_t ids[2];
  assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
  assert_int_equal(ids[0], 13);
  assert_int_equal(ids[1], 11);
  assert_non_null(plan.baseline);
  assert_int_equal(plan.baseline(plan.ctx), 20);
  int n_def = -1;
  assert_true(isnan(mpt_job_confirm_default(&jc, &n_def)));
  assert_int_equal(n_def, 0);
  mpt_obs r[] = {remeasured(13, 1.2, 1), remeasured(11, 3.1, 1), remeasured(20, 7.0, 1),
                 remeasured(13, 1.0, 2), remeasured(11, 3.0, 2), remeasured(20, 6.0, 2)};
  for (int i = 0; i < 6; i++) mpt_job_confirm_take(&jc, &r[i]);
  assert_int_equal(plan.logged_rounds(plan.ctx, 20), 2);
  assert_true(fabs(mpt_job_confirm_default(&jc, &n_def) - 6.5) < 1e-12);
  assert_int_equal(n_def, 2);
  int reordered = 1;
  const mpt_job_finalist *best = mpt_job_confirm_best(&jc, &reordered);
  assert_int_equal(best->id, 13); /* the default is no finalist: never the best */
  assert_false(reordered);
  mpt_job_confirm_free(&jc);
}

static void test_failed_default_not_measured_again(void **state) {
  (void)state;
  mpt_job_confirm jc;
  search_with_default(&jc, NAN);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  int64_t ids[2];
  assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
  assert_int_equal(plan.baseline(plan.ctx), -1);
  mpt_obs r = remeasured(20, 7.0, 1); /* not one of those measured again: not taken */
  mpt_job_confirm_take(&jc, &r);
  assert_int_equal(plan.logged_rounds(plan.ctx, 20), 0);
  int n_def = -1;
  assert_true(isnan(mpt_job_confirm_default(&jc, &n_def)));
  mpt_job_confirm_free(&jc);
  /* valid first, then its last measurement failed: not measured again either */
  search_with_default(&jc, 8);
  mpt_obs failed = obs(20, NAN, NAN);
  failed.status = MPT_STATUS_TIMEOUT;
  mpt_job_confirm_see(&jc, &failed);
  plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  assert_int_equal(plan.baseline(plan.ctx), -1);
  mpt_job_confirm_free(&jc);
}

/* the default among the finalists: measured once per round, as a finalist, and its confirmed objective is that */
static void test_default_a_finalist(void **state) {
  (void)state;
  mpt_job_confirm jc;
  search_with_default(&jc, 2);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  int64_t ids[2];
  assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
  assert_int_equal(ids[1], 20);
  assert_int_equal(plan.baseline(plan.ctx), -1);
  mpt_obs r[] = {remeasured(13, 1.0, 1), remeasured(20, 2.5, 1), remeasured(20, 2.1, 2)};
  for (int i = 0; i < 3; i++) mpt_job_confirm_take(&jc, &r[i]);
  int n_def = 0;
  assert_true(fabs(mpt_job_confirm_default(&jc, &n_def) - 2.3) < 1e-12);
  assert_int_equal(n_def, 2);
  mpt_job_confirm_free(&jc);
}

/* a resumed log with the default's re-measurements: they count (none measured twice), the rest is measured */
static void test_logged_default(void **state) {
  (void)state;
  mpt_job_confirm jc;
  search_with_default(&jc, 8);
  jc.n_logged = 4;
  jc.logged = malloc(sizeof(mpt_obs) * 4);
  jc.logged[0] = remeasured(13, 1.0, 1);
  jc.logged[1] = remeasured(11, 3.0, 1);
  jc.logged[2] = remeasured(20, 7.5, 1);
  jc.logged[3] = remeasured(13, 1.1, 2);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  int64_t ids[2];
  assert_int_equal(plan.finalists(plan.ctx, ids, 2), 2);
  assert_int_equal(jc.use_logged, 1);
  assert_int_equal(plan.baseline(plan.ctx), 20);
  assert_int_equal(plan.logged_rounds(plan.ctx, 20), 1);
  assert_int_equal(plan.logged_rounds(plan.ctx, 11), 1);
  assert_int_equal(plan.logged_rounds(plan.ctx, 13), 2);
  int n_def = 0;
  assert_true(fabs(mpt_job_confirm_default(&jc, &n_def) - 7.5) < 1e-12);
  assert_int_equal(n_def, 1);
  mpt_job_confirm_free(&jc);
}

/* a run of two classes: each class's finalists are its own search's (a portability check is none), its baseline its
 * own default, its re-measurements and logged rounds its own; a class without state (out of range) confirms nothing */
static void test_classes_apart(void **state) {
  (void)state;
  mpt_job_confirm jc;
  mpt_error err;
  mpt_error_clear(&err);
  mpt_job_confirm_init(&jc, 1);
  jc.default_id = 20;
  jc.n_logged = 2;
  jc.logged = malloc(sizeof(mpt_obs) * 2);
  jc.logged[0] = remeasured(1, 1.0, 1); /* class 0's round 1 of its finalist */
  jc.logged[1] = remeasured(1, 5.0, 1); /* of class 1: not of its finalist */
  jc.logged[1].device_class = 1;
  assert_int_equal(mpt_job_confirm_classes(&jc, 2, &err), 0);
  double t[] = {1, 8, 3, 9};
  int64_t id[] = {1, 20, 2, 20};
  for (int i = 0; i < 4; i++) {
    mpt_obs o = obs(id[i], t[i], NAN);
    o.device_class = i / 2; /* class 0: ids 1, 20; class 1: ids 2, 20 */
    mpt_job_confirm_see(&jc, &o);
  }
  mpt_obs cross = obs(1, 0.5, NAN); /* class 0's best measured on class 1: no finalist of class 1 */
  cross.device_class = 1, cross.cross_from = 1;
  mpt_job_confirm_see(&jc, &cross);
  mpt_coord_confirm plan = mpt_job_confirm_plan(&jc, NULL, NULL);
  assert_non_null(plan.for_class);
  assert_null(plan.for_class(plan.ctx, 2));
  void *c0 = plan.for_class(plan.ctx, 0), *c1 = plan.for_class(plan.ctx, 1);
  assert_ptr_equal(c0, &jc);
  int64_t ids[1];
  assert_int_equal(plan.finalists(c0, ids, 1), 1);
  assert_int_equal(ids[0], 1);
  assert_int_equal(plan.finalists(c1, ids, 1), 1);
  assert_int_equal(ids[0], 2);
  assert_int_equal(plan.baseline(c0), 20);
  assert_int_equal(plan.baseline(c1), 20);
  assert_int_equal(plan.logged_rounds(c0, 1), 1); /* class 0's logged round counts */
  assert_int_equal(plan.logged_rounds(c1, 2), 0); /* class 1's logged one was of another finalist: not */
  assert_true(jc.use_logged);
  assert_false(mpt_job_confirm_of(&jc, 1)->use_logged);
  mpt_obs r = remeasured(20, 9.5, 1); /* class 1's default measured again */
  r.device_class = 1;
  mpt_job_confirm_take(&jc, &r);
  int n_def = 0;
  assert_true(fabs(mpt_job_confirm_default(mpt_job_confirm_of(&jc, 1), &n_def) - 9.5) < 1e-12);
  assert_int_equal(n_def, 1);
  assert_true(isnan(mpt_job_confirm_default(&jc, &n_def)));
  mpt_job_confirm_free(&jc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_pareto, setup, teardown),
    cmocka_unit_test(test_finalists_and_reorder),
    cmocka_unit_test(test_logged_confirmations),
    cmocka_unit_test(test_logged_before_every_finalist),
    cmocka_unit_test(test_default_measured_again),
    cmocka_unit_test(test_failed_default_not_measured_again),
    cmocka_unit_test(test_default_a_finalist),
    cmocka_unit_test(test_logged_default),
    cmocka_unit_test(test_classes_apart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
