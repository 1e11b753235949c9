/* tests/test_virtual.c: the virtual clock (coordinator/virtual.c) on the convolution space of the shared data,
 * its real A100 brute-forced file and a file of equally long evaluations written here: the budget is exact,
 * no configuration is evaluated twice, the default goes first, a worker runs one evaluation at a time, the
 * clock's busy time is the evaluations' durations, utilization is ~100 % when every evaluation is equally long
 * and the strategy is cheap, with one worker the clock is exactly the evaluations plus rank 0's measured ask,
 * log and tell time, the delay scale stretches the clock, and a space smaller than the budget ends
 * exhausted. No timing is asserted beyond what the bookkeeping implies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "coordinator/virtual.h"
#include "evaluators/evaluator.h"
#include "strategies/strategy.h"
#include "tests/conv_fixture.h"

/* what the record callback keeps: every observation in the order it was taken */
typedef struct recorded {
  mpt_obs *obs;
  int64_t n, cap;
} recorded;

static int record(void *ctx, const mpt_obs *o, mpt_error *err) {
  (void)err;
  recorded *r = ctx;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 256;
    r->obs = realloc(r->obs, sizeof *r->obs * (size_t)r->cap);
    assert_non_null(r->obs);
  }
  r->obs[r->n++] = *o;
  return 0;
}

typedef struct vrun {
  mpt_coord_result r;
  mpt_virtual_result vr;
  recorded rec;
} vrun;

static int cpu_time; /* mpt_virtual_config.cpu_time of the projections */

/* the projection of strategy `name` over the replayed file `path` with n workers, scale F and the budget */
static void project(fixture *f, const char *path, const char *name, int n, double scale, int64_t budget, vrun *out) {
  mpt_error err;
  mpt_error_clear(&err);
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  set.simulate_path = path;
  set.rank = 2; /* not the first worker: the coverage warnings stay quiet */
  mpt_evaluator *ev;
  int rc = mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_strategy *st;
  assert_int_equal(mpt_strategy_create(name, f->s, NULL, 0, 7, budget, &st, &err), 0);
  memset(out, 0, sizeof *out);
  mpt_coord_config c;
  memset(&c, 0, sizeof c);
  c.local = ev, c.strategy = st, c.space = f->s, c.budget = budget;
  c.default_id = mpt_space_default_id(f->s), c.default_first = 1;
  c.record = record, c.record_ctx = &out->rec, c.progress = MPT_PROGRESS_OFF;
  mpt_virtual_config v = {n, scale, 1000.0, cpu_time};
  rc = mpt_coord_run_virtual(&c, &v, &out->r, &out->vr, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_strategy_destroy(st);
  mpt_evaluator_close(ev);
}

static void a100(fixture *f, char *path, size_t cap) {
  snprintf(path, cap, "%s/brute-forced/convolution_A100_T4.json.gz", f->dir);
}

static int by_id(const void *a, const void *b) {
  int64_t x = ((const mpt_obs *)a)->id, y = ((const mpt_obs *)b)->id;
  return (x > y) - (x < y);
}

static int by_rank_start(const void *a, const void *b) {
  const mpt_obs *x = a, *y = b;
  if (x->rank != y->rank) return x->rank - y->rank;
  return (x->t_start > y->t_start) - (x->t_start < y->t_start);
}

/* the bookkeeping every projection must satisfy */
static void check_run(fixture *f, vrun *v, int n_workers) {
  recorded *rec = &v->rec;
  assert_int_equal(rec->n, v->r.done + v->r.missing);
  assert_int_equal(rec->obs[0].id, mpt_space_default_id(f->s)); /* the default first */
  int64_t valid = 0;
  double busy = 0, best = INFINITY, last = 0;
  for (int64_t i = 0; i < rec->n; i++) {
    const mpt_obs *o = &rec->obs[i];
    assert_true(o->rank >= 1 && o->rank <= n_workers);
    assert_true(o->t_end >= o->t_start && o->t_start >= 1000.0);
    assert_true(o->t_end >= last - 1e-9); /* taken in order of completion */
    last = o->t_end;
    busy += o->t_end - o->t_start;
    if (mpt_obs_valid(o)) valid++, best = fmin(best, o->objective);
  }
  assert_int_equal(valid, v->r.valid);
  assert_int_equal(v->r.valid + v->r.failed, v->r.done);
  assert_true(best == v->r.best);
  assert_true(fabs(busy - v->vr.busy_s) <= 1e-6 * (1 + busy));
  assert_true(v->vr.makespan_s >= last - 1000.0 - 1e-9);
  assert_true(v->vr.utilization > 0 && v->vr.utilization <= 1 + 1e-12);
  assert_true(v->vr.coord_s >= v->vr.ask_s && v->vr.ask_s >= 0);
  qsort(rec->obs, (size_t)rec->n, sizeof *rec->obs, by_id);
  for (int64_t i = 1; i < rec->n; i++) assert_true(rec->obs[i].id != rec->obs[i - 1].id); /* no duplicate */
  qsort(rec->obs, (size_t)rec->n, sizeof *rec->obs, by_rank_start);
  for (int64_t i = 1; i < rec->n; i++) /* one evaluation at a time per worker */
    if (rec->obs[i].rank == rec->obs[i - 1].rank) assert_true(rec->obs[i].t_start >= rec->obs[i - 1].t_end - 1e-9);
}

static void test_budget_exact(void **state) {
  fixture *f = *state;
  char path[1200];
  a100(f, path, sizeof path);
  const char *names[] = {"random", "ga", "bo"};
  int64_t budgets[] = {500, 300, 60};
  for (int k = 0; k < 3; k++) {
    vrun v;
    project(f, path, names[k], 16, 1.0, budgets[k], &v);
    assert_string_equal(v.r.reason, "budget");
    assert_int_equal(v.r.done, budgets[k]);
    assert_int_equal(v.r.new_evals, budgets[k]);
    assert_int_equal(v.r.n_workers, 16);
    assert_true(v.vr.asks > 0);
    check_run(f, &v, 16);
    free(v.rec.obs);
  }
}

/* a Kernel Tuner cache of every valid configuration, each compiled in 100 ms and timed in 900 ms (one second
 * per evaluation), its time varying with the configuration */
static void write_equal_cache(fixture *f, const char *path) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  const mpt_problem *p = f->p;
  fprintf(fp, "{\"device_name\": \"Equal GPU\", \"tune_params_keys\": [");
  for (int k = 0; k < p->n_params; k++) fprintf(fp, "%s\"%s\"", k ? ", " : "", p->params[k].name);
  fprintf(fp, "], \"cache\": {");
  int idx[64];
  for (int64_t id = 0; id < mpt_space_size(f->s); id++) {
    mpt_space_config(f->s, id, idx);
    fprintf(fp, "%s\"", id ? ",\n" : "");
    for (int k = 0; k < p->n_params; k++) fprintf(fp, "%s%g", k ? "," : "", p->params[k].numeric[idx[k]]);
    fprintf(fp, "\": {\"time\": %g, \"compile_time\": 100, \"benchmark_time\": 900}", 1.0 + (double)(id % 97) / 100);
  }
  fprintf(fp, "}}\n");
  fclose(fp);
}

static void test_equal_evaluations_keep_workers_busy(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/equal_cache.json", f->tmpdir);
  write_equal_cache(f, path);
  vrun v;
  project(f, path, "random", 8, 1.0, 400, &v);
  check_run(f, &v, 8);
  assert_true(fabs(v.vr.busy_s - 400.0) < 1e-9);
  /* 50 rounds of one second, plus only what rank 0 spent (asks of a random search are microseconds) */
  assert_true(v.vr.makespan_s >= 50.0 - 1e-9 && v.vr.makespan_s <= 50.0 + v.vr.coord_s + 1e-9);
  assert_true(v.vr.utilization > 0.999);
  assert_true(fabs(v.vr.evals_per_s - 400.0 / v.vr.makespan_s) < 1e-9);
  /* the 8 results of a round finish together and are taken together: one ask per round (the first one gives 7
   * beside the default), not one per result */
  assert_int_equal(v.vr.asks, 50);
  free(v.rec.obs);
  /* twice the delay scale: every evaluation two seconds */
  project(f, path, "random", 8, 2.0, 400, &v);
  assert_true(fabs(v.vr.busy_s - 800.0) < 1e-9);
  assert_true(v.vr.makespan_s >= 100.0 - 1e-9 && v.vr.makespan_s <= 100.0 + v.vr.coord_s + 1e-9);
  free(v.rec.obs);
  /* rank 0's work counted in CPU time: the same schedule */
  cpu_time = 1;
  project(f, path, "random", 8, 1.0, 400, &v);
  cpu_time = 0;
  check_run(f, &v, 8);
  assert_true(v.vr.makespan_s >= 50.0 - 1e-9 && v.vr.makespan_s <= 50.0 + v.vr.coord_s + 1e-9);
  free(v.rec.obs);
  /* 7 workers for 400 evaluations: the last round has 1 of 7 busy (57 full rounds + 1) */
  project(f, path, "random", 7, 1.0, 400, &v);
  assert_true(v.vr.makespan_s >= 58.0 - 1e-9);
  assert_true(fabs(v.vr.utilization - 400.0 / (7 * v.vr.makespan_s)) < 1e-12);
  free(v.rec.obs);
}

/* one worker: nothing overlaps, so the clock is every evaluation plus every ask, log and tell of rank 0 */
static void test_one_worker_adds_rank0_time(void **state) {
  fixture *f = *state;
  char path[1200];
  a100(f, path, sizeof path);
  vrun v;
  project(f, path, "bo", 1, 1.0, 30, &v);
  check_run(f, &v, 1);
  assert_true(v.vr.ask_s > 0 && v.vr.asks == 29); /* the default went first without an ask */
  assert_true(fabs(v.vr.makespan_s - (v.vr.busy_s + v.vr.coord_s)) < 1e-6);
  assert_true(fabs(v.vr.utilization - v.vr.busy_s / (v.vr.busy_s + v.vr.coord_s)) < 1e-9);
  free(v.rec.obs);
}

static void test_small_space_exhausted(void **state) {
  fixture *f = *state;
  char path[1200];
  a100(f, path, sizeof path);
  vrun v;
  project(f, path, "random", 32, 0.5, 100000, &v);
  assert_string_equal(v.r.reason, "exhausted");
  assert_int_equal(v.r.done, mpt_space_size(f->s));
  check_run(f, &v, 32);
  free(v.rec.obs);
}

static int setup(void **state) { return conv_fixture_setup(state, "virtual"); }
static int teardown(void **state) { return conv_fixture_teardown(state); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget_exact),
      cmocka_unit_test(test_equal_evaluations_keep_workers_busy),
      cmocka_unit_test(test_one_worker_adds_rank0_time),
      cmocka_unit_test(test_small_space_exhausted),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
