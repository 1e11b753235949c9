/* tests/test_coord_searches.c: the coordinator's searches under mpiexec -n 4 (coordinator/search.h): two
 * searches over their own workers (ranks 1 and 3 replay the A100 space, rank 2 the MI250X one), each with its
 * own budget and no duplicates, observations stamped with their class and coming only from their own workers,
 * then the portability evaluations (each search's best measured once on the other's class); and the one
 * implicit search over an explicit set of workers (rank 3 left out); and two jobs in one run (a campaign): each
 * search its own record callback, a worker at home in one job taking the other's work once its own is done; and a
 * search's own time budget.
 * Every test is entered by every rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conv_fixture.h"
#include "coordinator/coordinator.h"
#include "evaluators/evaluator.h"
#include "mpi/wire.h"
#include "mpi/worker.h"
#include "strategies/strategy.h"

static int g_rank, g_size;

/* what rank 0's record callback saw */
typedef struct seen {
  mpt_obs obs[256];
  int n;
} seen;

static int record(void *ctx, const mpt_obs *o, mpt_error *err) {
  (void)err;
  seen *s = ctx;
  if (s->n < 256) s->obs[s->n++] = *o;
  return 0;
}

/* a worker of `jobs` jobs (1 or 2): the replay of its class's file for each, until STOP */
static void serve_jobs(const fixture *f, const char *file, int jobs, double delay) {
  char path[2048];
  snprintf(path, sizeof path, "%s/brute-forced/%s", f->dir, file);
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  set.simulate_path = path;
  set.simulate_delay = delay;
  mpt_evaluator *ev[2] = {NULL, NULL};
  mpt_error err;
  for (int j = 0; j < jobs; j++) assert_int_equal(mpt_evaluator_open("sim", f->p, f->s, &set, &ev[j], &err), 0);
  if (jobs == 1) assert_int_equal(mpt_worker_run(MPI_COMM_WORLD, 0, ev[0], NULL, NULL), 0);
  else assert_int_equal(mpt_worker_run_jobs(MPI_COMM_WORLD, 0, ev, jobs, NULL, NULL), 0);
  for (int j = 0; j < jobs; j++) mpt_evaluator_close(ev[j]);
}

static void serve(const fixture *f, const char *file) { serve_jobs(f, file, 1, 0); }

/* rank 0: the coordinator over searches S[0..n) (record: the run's callback's context, NULL: each search's own),
 * ended by its budget */
static void run_searches(const fixture *f, mpt_coord_search *S, int n, seen *record_ctx, mpt_coord_result *r) {
  mpt_coord_config c;
  memset(&c, 0, sizeof c);
  c.comm = MPI_COMM_WORLD;
  c.searches = S, c.n_searches = n, c.transfer = 1, c.cross = 1;
  c.space = f->s;
  if (record_ctx) c.record = record, c.record_ctx = record_ctx;
  c.progress = MPT_PROGRESS_OFF;
  mpt_error err;
  assert_int_equal(mpt_coord_run(&c, r, &err), 0);
  assert_string_equal(r->reason, "budget");
}

static mpt_strategy *random_strategy(const fixture *f, uint64_t seed, int64_t budget) {
  mpt_strategy *st = NULL;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, seed, budget, &st, &err), 0);
  return st;
}

/* the searches' observations: from their own ranks, stamped with their class, their budgets exact, no id twice
 * within a search; then one portability evaluation of each search's best on the other class */
static void check_two_searches(const seen *s, const mpt_coord_search *S) {
  int count[2] = {0, 0}, cross[2] = {0, 0};
  for (int i = 0; i < s->n; i++) {
    const mpt_obs *o = &s->obs[i];
    assert_true(o->device_class == 10 || o->device_class == 11);
    int k = o->device_class - 10;
    assert_true(k == 0 ? (o->rank == 1 || o->rank == 3) : o->rank == 2);
    if (o->cross_from) { /* the other search's best, measured here */
      assert_int_equal(o->cross_from - 1, S[1 - k].device_class);
      assert_int_equal(o->id, S[1 - k].res.best_id);
      cross[k]++;
      continue;
    }
    count[k]++;
    for (int j = 0; j < i; j++)
      if (!s->obs[j].cross_from && s->obs[j].device_class == o->device_class) assert_true(s->obs[j].id != o->id);
  }
  assert_int_equal(count[0], 12);
  assert_int_equal(count[1], 7);
  assert_int_equal(cross[0], 1);
  assert_int_equal(cross[1], 1);
  assert_int_equal(S[0].res.done, 12);
  assert_int_equal(S[1].res.done, 7);
}

static void test_two_searches(void **state) {
  const fixture *f = *state;
  if (g_rank != 0) {
    serve(f, g_rank == 2 ? "convolution_MI250X_T4.json.gz" : "convolution_A100_T4.json.gz");
    return;
  }
  static const int a100[] = {1, 3}, mi250x[] = {2};
  mpt_coord_search S[2] = {
    {"A100", 10, 0, random_strategy(f, 1, 12), 12, mpt_space_default_id(f->s), 1, a100, 2, {0}, NULL, NULL, NULL, NULL, NULL, 0},
    {"MI250X", 11, 0, random_strategy(f, 2, 7), 7, mpt_space_default_id(f->s), 1, mi250x, 1, {0}, NULL, NULL, NULL, NULL, NULL, 0},
  };
  static seen s;
  s.n = 0;
  mpt_coord_result r;
  run_searches(f, S, 2, &s, &r);
  assert_int_equal(r.done, 19);
  check_two_searches(&s, S);
  assert_true(S[0].res.default_seen && S[1].res.default_seen); /* each class measures its own default */
  mpt_strategy_destroy(S[0].strategy);
  mpt_strategy_destroy(S[1].strategy);
}

/* a search's own time budget (a campaign's job with "time"): A100's (1 ns) is spent before anything is handed out,
 * so it measures nothing, ends as "time" and takes no part in the portability evaluations; MI250X, without one, runs
 * to its budget; the run ends once both are finished or out of time, as "time" */
static void test_search_time(void **state) {
  const fixture *f = *state;
  if (g_rank != 0) {
    serve(f, g_rank == 2 ? "convolution_MI250X_T4.json.gz" : "convolution_A100_T4.json.gz");
    return;
  }
  static const int a100[] = {1, 3}, mi250x[] = {2};
  int64_t def = mpt_space_default_id(f->s);
  mpt_coord_search S[2] = {
    {"A100", 10, 0, random_strategy(f, 1, 12), 12, def, 1, a100, 2, {0}, NULL, NULL, NULL, NULL, NULL, 1e-9},
    {"MI250X", 11, 0, random_strategy(f, 2, 7), 7, def, 1, mi250x, 1, {0}, NULL, NULL, NULL, NULL, NULL, 0},
  };
  static seen s;
  s.n = 0;
  mpt_coord_config c;
  memset(&c, 0, sizeof c);
  c.comm = MPI_COMM_WORLD;
  c.searches = S, c.n_searches = 2, c.transfer = 1, c.cross = 1;
  c.space = f->s;
  c.record = record, c.record_ctx = &s;
  c.progress = MPT_PROGRESS_OFF;
  mpt_coord_result r;
  mpt_error err;
  assert_int_equal(mpt_coord_run(&c, &r, &err), 0);
  assert_string_equal(r.reason, "time");
  assert_string_equal(S[0].res.reason, "time");
  assert_string_equal(S[1].res.reason, "budget");
  assert_int_equal(S[0].res.done, 0);
  assert_int_equal(S[1].res.done, 7);
  assert_int_equal(s.n, 7); /* MI250X's alone: no portability evaluation either way */
  for (int i = 0; i < s.n; i++) {
    assert_int_equal(s.obs[i].device_class, 11);
    assert_int_equal(s.obs[i].cross_from, 0);
    assert_int_equal(s.obs[i].rank, 2);
  }
  mpt_strategy_destroy(S[0].strategy);
  mpt_strategy_destroy(S[1].strategy);
}

/* rank 0's config of one implicit search: strategy st, its budget, record(ctx); no default unless the caller sets one */
static void one_search(const fixture *f, mpt_coord_config *c, mpt_strategy *st, int64_t budget,
                       mpt_coord_record_fn rec, seen *ctx) {
  memset(c, 0, sizeof *c);
  c->comm = MPI_COMM_WORLD;
  c->strategy = st;
  c->budget = budget;
  c->default_id = -1;
  c->space = f->s;
  c->record = rec, c->record_ctx = ctx;
  c->progress = MPT_PROGRESS_OFF;
}

static void test_explicit_workers(void **state) {
  const fixture *f = *state;
  if (g_rank != 0) {
    serve(f, "convolution_A100_T4.json.gz"); /* rank 3 gets no work: only the STOP */
    return;
  }
  static const int workers[] = {1, 2};
  static seen s;
  s.n = 0;
  mpt_coord_config c;
  one_search(f, &c, random_strategy(f, 5, 9), 9, record, &s);
  c.workers = workers, c.n_workers = 2;
  mpt_coord_result r;
  mpt_error err;
  assert_int_equal(mpt_coord_run(&c, &r, &err), 0);
  assert_int_equal(r.done, 9);
  assert_int_equal(r.n_workers, 2);
  for (int i = 0; i < s.n; i++) assert_true(s.obs[i].rank == 1 || s.obs[i].rank == 2);
  mpt_strategy_destroy(c.strategy);
}

/* the record callback of test_results_taken_together: at the first result of each round of three it waits until
 * the other two workers' results have arrived too (at most 60 s), so that the three are waiting together */
static int record_round(void *ctx, const mpt_obs *o, mpt_error *err) {
  seen *s = ctx;
  if (s->n % 3 == 0)
    for (int k = 1; k <= 3; k++) {
      if (k == o->rank) continue;
      int flag = 0;
      for (double t0 = mpt_wire_now(); !flag && mpt_wire_now() - t0 < 60;) {
        MPI_Iprobe(k, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag) usleep(1000);
      }
    }
  return record(ctx, o, err);
}

/* three workers that finish together: their three results are all taken before the strategy is asked again, once
 * for the three (3 asks for 9 evaluations: the first gives 2 beside the default), not once per result (7) */
static void test_results_taken_together(void **state) {
  const fixture *f = *state;
  if (g_rank != 0) {
    serve(f, "convolution_A100_T4.json.gz");
    return;
  }
  static seen s;
  s.n = 0;
  mpt_coord_config c;
  one_search(f, &c, random_strategy(f, 11, 9), 9, record_round, &s);
  c.default_id = mpt_space_default_id(f->s), c.default_first = 1;
  mpt_coord_result r;
  mpt_error err;
  assert_int_equal(mpt_coord_run(&c, &r, &err), 0);
  assert_int_equal(r.done, 9);
  assert_int_equal(r.asks, 3);
  mpt_strategy_destroy(c.strategy);
}

/* job 0: A100 (ranks 1, 3; budget 3) and MI250X (rank 2; budget 5); job 1: A100 only (ranks 1, 3; budget 80).
 * Rank 1 is at home in job 0, rank 3 in job 1 (mpt_search_homes); job 0's A100 work runs out first (3 against
 * 80: the margin keeps a loaded machine's scheduling from letting rank 3 finish alone) and rank 1 goes on with
 * job 1's. Each job's observations reach its own record callback only; the portability evaluations
 * stay within job 0. */
static void test_two_jobs(void **state) {
  const fixture *f = *state;
  if (g_rank != 0) {
    /* evaluations of a few ms (the recorded times x 0.005): job 1's 80 take rank 3 far longer than job 0's 3 take
     * rank 1, even when a loaded machine schedules rank 1 late */
    serve_jobs(f, g_rank == 2 ? "convolution_MI250X_T4.json.gz" : "convolution_A100_T4.json.gz", 2, 0.005);
    return;
  }
  static const int a100[] = {1, 3}, mi250x[] = {2};
  static seen s0, s1;
  s0.n = s1.n = 0;
  int64_t def = mpt_space_default_id(f->s);
  mpt_coord_search S[3] = {
    {"j0/A100", 0, 0, random_strategy(f, 1, 3), 3, def, 1, a100, 2, {0}, f->s, record, &s0, NULL, NULL, 0},
    {"j0/MI250X", 1, 0, random_strategy(f, 2, 5), 5, def, 1, mi250x, 1, {0}, f->s, record, &s0, NULL, NULL, 0},
    {"j1/A100", 0, 1, random_strategy(f, 3, 80), 80, def, 1, a100, 2, {0}, f->s, record, &s1, NULL, NULL, 0},
  };
  int home[4];
  mpt_search_homes(S, 3, 4, home);
  assert_int_equal(home[0], -1);
  assert_int_equal(home[1], 0);
  assert_int_equal(home[2], 1);
  assert_int_equal(home[3], 2);
  mpt_coord_result r;
  run_searches(f, S, 3, NULL, &r); /* each search's own record callback */
  assert_int_equal(r.n_workers, 3);
  int a0 = 0, m0 = 0, cross0 = 0, a1 = 0, by1 = 0;
  for (int i = 0; i < s0.n; i++) {
    const mpt_obs *o = &s0.obs[i];
    if (o->cross_from) cross0++;
    else if (o->device_class == 0) a0++, assert_true(o->rank == 1 || o->rank == 3);
    else m0++, assert_int_equal(o->rank, 2);
  }
  for (int i = 0; i < s1.n; i++) {
    const mpt_obs *o = &s1.obs[i];
    assert_int_equal(o->cross_from, 0); /* one class: no portability evaluations */
    assert_true(o->rank == 1 || o->rank == 3);
    by1 += o->rank == 1;
    a1++;
    for (int j = 0; j < i; j++) assert_true(s1.obs[j].id != o->id);
  }
  assert_int_equal(a0, 3);
  assert_int_equal(m0, 5);
  assert_int_equal(cross0, 2);
  assert_int_equal(a1, 80);
  assert_true(by1 > 0); /* rank 1 took job 1's work once job 0's A100 work was done */
  assert_string_equal(S[0].res.reason, "budget");
  assert_string_equal(S[2].res.reason, "budget");
  for (int i = 0; i < 3; i++) mpt_strategy_destroy(S[i].strategy);
}

static int setup(void **state) { return conv_fixture_setup(state, "searches"); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (g_size != 4) {
    if (g_rank == 0) fprintf(stderr, "run with 4 ranks\n");
    MPI_Finalize();
    return 1;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_two_searches),
    cmocka_unit_test(test_explicit_workers),
    cmocka_unit_test(test_two_jobs),
    cmocka_unit_test(test_results_taken_together),
    cmocka_unit_test(test_search_time),
  };
  int failed = cmocka_run_group_tests(tests, setup, conv_fixture_teardown);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
