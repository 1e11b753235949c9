/* tests/test_bo_dist.c: bo with model ranks (strategies/bo/bo_dist.h, gp/gp_slices.h) under mpiexec.mpich
 * -n 3 against the serial bo: rank 0 runs both strategies with the same seed and options on
 * paper_dedispersion (../shared/data/t1), tells both the same observations (a synthetic objective with 5 %
 * failures, so that the feasibility model takes part) and checks that every batch they ask is the same, ids and
 * order, with batch_pool=0 and with the default pool of a batch, and with asynchronous workers (asks while
 * evaluations of earlier asks are pending: fantasized on the pool, pending_pool); ranks 1 and 2 serve the slices. Also:
 * --model-ranks refuses options it does not serve, each rank's GP holds only its slice, the slices' merged pool
 * equals one GP's (and a batch's pool loaded from the columns the slices send equals the pool loaded from one
 * GP, and planned with the pending evaluations' columns the slices send it, it fantasizes them as that GP's pool),
 * and at the crossover the marginal likelihood goes to ScaLAPACK over the three ranks with the serial value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_dist.h"
#include "gp/gp_pool.h"
#include "gp/gp_slices.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "strategies/bo/bo_dist.h"
#include "strategies/strategy.h"
#include "tests/bo_synthetic.h"
#include "tests/gp_dist_fixture.h"

static gpd_points g_pts;

static void tell_ids(mpt_strategy *s, const int64_t *ids, int n) {
  mpt_obs obs[64];
  for (int i = 0; i < n; i++) bo_synthetic(g_pts.space, ids[i], 0, &obs[i]);
  mpt_strategy_tell(s, obs, n);
}

/* rank 0: rounds of ask(batch) on both strategies; the number of rounds whose batches were the same */
static int compare_rounds(mpt_strategy *ser, mpt_strategy *dis, int rounds, int batch) {
  int same = 0;
  int64_t a[64], b[64];
  for (int r = 0; r < rounds; r++) {
    int na = mpt_strategy_ask(ser, batch, a), nb = mpt_strategy_ask(dis, batch, b);
    assert_true(na > 0);
    assert_int_equal(na, nb);
    if (memcmp(a, b, sizeof(int64_t) * (size_t)na) != 0) break;
    same++;
    tell_ids(ser, a, na);
    tell_ids(dis, b, nb);
  }
  return same;
}

/* rank 0: the serial bo and bo on the model ranks, both with opts (and the same seed), 40 rounds of ask(4):
 * how many rounds gave the same batch (ids and order); bytes: each model rank's GP */
static int same_batches(const char **opts, int n_opts, int64_t *bytes) {
  mpt_error err;
  mpt_strategy *ser, *dis;
  assert_int_equal(mpt_strategy_create("bo", g_pts.space, opts, n_opts, 7, 400, &ser, &err), 0);
  assert_int_equal(mpt_strategy_create("bo", g_pts.space, opts, n_opts, 7, 400, &dis, &err), 0);
  assert_int_equal(mpt_bo_use_model_ranks(dis, MPI_COMM_WORLD, &err), 0);
  int same = compare_rounds(ser, dis, 40, 4); /* 160 picks, the first 12 the initial sample */
  int64_t rss[3];
  int mem_rc = mpt_bo_model_memory(dis, bytes, rss, &err);
  mpt_strategy_destroy(ser);
  mpt_strategy_destroy(dis);
  return mem_rc == 0 ? same : -1;
}

/* batch_pool=0 (every pick fantasized over every candidate: on the slices, one pass over each slice's V per
 * pick) and the default batch_pool=512 (the later picks of a batch from the pool, whose members' columns the
 * slices send to rank 0): the picks of the serial bo in both, every batch */
static void test_picks_identical(void **state) {
  (void)state;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  const char *full[] = {"initial_samples=12", "batch_pool=0"}, *pooled[] = {"initial_samples=12"};
  int64_t bytes[3] = {0, 0, 0}, bytes_pool[3] = {0, 0, 0};
  int same_full = same_batches(full, 2, bytes), same_pool = same_batches(pooled, 1, bytes_pool);
  mpt_gp_slices_quit(MPI_COMM_WORLD); /* the servers are released before any assertion can end the test */
  printf("batches identical: %d of 40 (batch_pool=0), %d of 40 (batch_pool=512); GP bytes per model rank: %lld %lld "
         "%lld\n", same_full, same_pool, (long long)bytes[0], (long long)bytes[1], (long long)bytes[2]);
  assert_int_equal(same_full, 40);
  assert_int_equal(same_pool, 40);
  /* each rank's GP: a third of the candidates; the float matrix of one GP over all of them, with room for the
   * same 256 observations, is 256 x N x 4 bytes */
  int64_t whole = (int64_t)256 * mpt_space_size(g_pts.space) * 4;
  for (int r = 0; r < 3; r++) assert_true(bytes[r] < whole / 2 && bytes_pool[r] < whole / 2);
}

/* model_share0=0.25: rank 0's slice a quarter of each model rank's (it also merges the pools and marks the
 * skipped candidates of the whole space): the same picks as the serial bo, every batch, and rank 0's GP holds
 * fewer candidates than the model ranks' */
static void test_share0_picks_identical(void **state) {
  (void)state;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  const char *opts[] = {"initial_samples=12", "model_share0=0.25"};
  int64_t bytes[3] = {0, 0, 0};
  int same = same_batches(opts, 2, bytes);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  printf("model_share0=0.25: batches identical: %d of 40; GP bytes per rank: %lld %lld %lld\n", same,
         (long long)bytes[0], (long long)bytes[1], (long long)bytes[2]);
  assert_int_equal(same, 40);
  assert_true(bytes[0] * 2 < bytes[1] && bytes[0] * 2 < bytes[2]); /* 1 : 4 : 4 of the candidates, and the factor each */
}

/* rank 0: `total` evaluations with `workers` in flight, on both strategies in step: each ask fills the idle
 * workers, then the oldest in flight is told (first in, first out), so every ask after the initial sample finds
 * workers - 1 evaluations pending from earlier asks (tests/test_bo_pending.c's asynchronous run). Returns how many
 * asks gave the same ids in the same order, up to the first that differs; *asks: how many asks were made. */
static int compare_async(mpt_strategy *ser, mpt_strategy *dis, int workers, int total, int *asks) {
  int64_t a[256], b[256];
  int asked = 0, told = 0, same = 0;
  *asks = 0;
  assert_true(total <= 256);
  while (told < total) {
    int want = workers - (asked - told);
    if (want > total - asked) want = total - asked;
    if (want > 0) {
      int na = mpt_strategy_ask(ser, want, a + asked), nb = mpt_strategy_ask(dis, want, b + asked);
      (*asks)++;
      assert_true(na > 0);
      assert_int_equal(na, nb);
      if (memcmp(a + asked, b + asked, sizeof(int64_t) * (size_t)na) != 0) break;
      same++;
      asked += na;
    }
    tell_ids(ser, a + told, 1);
    tell_ids(dis, b + told, 1);
    told++;
  }
  return same;
}

/* asynchronous workers (8 in flight, 120 evaluations): with pending_pool (the default) the serial bo fantasizes the
 * evaluations pending from earlier asks on the pool of the ask; bo on the model ranks does the same on rank 0's
 * pool, with the pending evaluations' columns of V from the slices that hold them: the same picks, every ask
 * (before, the model ranks fantasized each pending evaluation over every slice and picked otherwise) */
static void test_pending_picks_identical(void **state) {
  (void)state;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  const char *opts[] = {"initial_samples=12"};
  mpt_strategy *ser, *dis;
  assert_int_equal(mpt_strategy_create("bo", g_pts.space, opts, 1, 11, 120, &ser, &err), 0);
  assert_int_equal(mpt_strategy_create("bo", g_pts.space, opts, 1, 11, 120, &dis, &err), 0);
  int rc = mpt_bo_use_model_ranks(dis, MPI_COMM_WORLD, &err), asks = 0;
  int same = rc == 0 ? compare_async(ser, dis, 8, 120, &asks) : -1;
  mpt_strategy_destroy(ser);
  mpt_strategy_destroy(dis);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  printf("asynchronous, 8 workers, 120 evaluations: %d of %d asks identical to the serial bo's\n", same, asks);
  assert_int_equal(rc, 0);
  assert_true(asks >= 100);
  assert_int_equal(same, asks);
}

static void test_refused_options(void **state) {
  (void)state;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  mpt_error err;
  mpt_strategy *s;
  const char *opts[] = {"acquisition=multi"};
  assert_int_equal(mpt_strategy_create("bo", g_pts.space, opts, 1, 1, 100, &s, &err), 0);
  assert_true(mpt_bo_use_model_ranks(s, MPI_COMM_WORLD, &err) < 0);
  assert_non_null(strstr(err.msg, "acquisition=ei"));
  mpt_strategy_destroy(s);
  assert_int_equal(mpt_strategy_create("ga", g_pts.space, NULL, 0, 1, 100, &s, &err), 0);
  assert_true(mpt_bo_use_model_ranks(s, MPI_COMM_WORLD, &err) < 0);
  assert_non_null(strstr(err.msg, "only bo"));
  mpt_strategy_destroy(s);
}

/* mpt_gp_cand_fn over g_pts-wide rows of the table ctx */
static void table_rows(void *ctx, int64_t first, int64_t n, double *rows) {
  memcpy(rows, (const double *)ctx + first * g_pts.dim, sizeof(double) * (size_t)(n * g_pts.dim));
}

/* rank 0: one GP over the candidates C (every valid configuration) and the slices of the same over the three
 * ranks, both told n_obs observations (gpd_encode's points from x0 on, every step-th) and synced; 0 or an error */
static int whole_and_slices(const double *C, int n_obs, int x0, int step, mpt_gp **gp, mpt_gp_slices **sl) {
  int64_t N = mpt_space_size(g_pts.space);
  int dim = g_pts.dim, rc;
  double *X = gpd_encode(&g_pts, n_obs, x0, step), *y = malloc(sizeof(double) * (size_t)n_obs);
  gpd_outputs(X, n_obs, dim, y);
  mpt_gp_config cfg;
  mpt_error err;
  mpt_gp_config_default(&cfg);
  assert_int_equal(mpt_gp_create(&cfg, dim, N, C, gp, &err), 0);
  assert_int_equal(mpt_gp_slices_create(MPI_COMM_WORLD, &cfg, dim, N, table_rows, (void *)C, sl, &err), 0);
  for (int i = 0; i < n_obs; i++) assert_int_equal(mpt_gp_add(*gp, X + (size_t)i * dim, y[i], &err), 0);
  rc = mpt_gp_slices_sync(*sl, *gp, &err);
  free(X);
  free(y);
  return rc;
}

/* the pool of the best 100 candidates by EI from the three slices equals the pool of one GP over every
 * candidate (the same ids in the same order; EI equal up to the rounding of the float panels, which the
 * slices do over other blocks of candidates: 1e-5 relative), with a quarter of the candidates skipped */
static void test_pool_slices(void **state) {
  (void)state;
  int rank, n_obs = 60, P = 100;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  int64_t N = mpt_space_size(g_pts.space), n_free = 0;
  double *C = gpd_encode(&g_pts, N, 0, 1);
  uint8_t *skip = malloc((size_t)N);
  for (int64_t c = 0; c < N; c++) skip[c] = c % 4 == 1;
  mpt_gp *gp;
  mpt_gp_slices *sl;
  int rc = whole_and_slices(C, n_obs, 5, 181, &gp, &sl), n_sl = 0;
  mpt_gp_pool_item a[100], b[100];
  double m, sc;
  mpt_gp_normalization(gp, &m, &sc);
  if (rc == 0) rc = mpt_gp_slices_pool(sl, skip, NULL, (1.5 - m) / sc, 0.01, P, b, &n_sl, &n_free, &err);
  int n_one = mpt_gp_ei_pool(gp, 0, N, 0, skip, (1.5 - m) / sc, 0.01, P, a);
  mpt_gp_slices_free(sl);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  mpt_gp_free(gp);
  free(C); free(skip);
  assert_int_equal(rc, 0);
  assert_int_equal(n_one, P);
  assert_int_equal(n_sl, P);
  assert_int_equal(n_free, N - (N + 2) / 4);
  double worst = 0;
  for (int i = 0; i < P; i++) worst = fmax(worst, fabs(a[i].key - b[i].key) / fabs(a[i].key));
  printf("pool of %d: largest relative difference of EI between the slices and one GP %.1e\n", P, worst);
  for (int i = 0; i < P; i++) {
    assert_int_equal(a[i].id, b[i].id);
    assert_int_equal(a[i].tier, b[i].tier);
    assert_true(fabs(a[i].key - b[i].key) <= 1e-5 * fabs(a[i].key)); /* the float panels' rounding */
    assert_true(i == 0 || !mpt_gp_pool_before(&a[i], &a[i - 1])); /* sorted */
  }
}

/* the largest relative difference of the posteriors (mean, variance) of two pools' n members */
static double pools_differ(const mpt_gp_pool *a, const mpt_gp_pool *b, int n) {
  double worst = 0;
  for (int j = 0; j < n; j++) {
    double ma, va, mb, vb;
    mpt_gp_pool_predict_var(a, j, j + 1, &ma, &va);
    mpt_gp_pool_predict_var(b, j, j + 1, &mb, &vb);
    worst = fmax(worst, fmax(fabs(ma - mb) / fmax(fabs(mb), 1e-300), fabs(va - vb) / fmax(vb, 1e-300)));
  }
  return worst;
}

/* the pool of a batch from the three slices (by log EI) holds the candidates one GP's pass keeps, in the same
 * order, and loaded from the columns the slices send it is the pool loaded from that GP: the same posterior
 * up to the float panels' rounding, before and after a fantasy */
static void test_batch_pool_columns(void **state) {
  (void)state;
  int rank, dim = g_pts.dim, n_obs = 60, P = 100;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  int64_t N = mpt_space_size(g_pts.space), ids[100];
  double *C = gpd_encode(&g_pts, N, 0, 1), abv[300], m, sc;
  double *PX = malloc(sizeof(double) * (size_t)P * (size_t)dim);
  float *V = malloc(sizeof(float) * (size_t)P * (size_t)n_obs);
  uint8_t *skip = malloc((size_t)N);
  for (int64_t c = 0; c < N; c++) skip[c] = c % 5 == 2;
  mpt_gp *gp;
  mpt_gp_slices *sl;
  mpt_gp_pool *one, *cols;
  int n_sl = 0, rc = whole_and_slices(C, n_obs, 3, 167, &gp, &sl);
  mpt_gp_normalization(gp, &m, &sc);
  mpt_gp_pool_item a[100], b[100];
  if (rc == 0) rc = mpt_gp_slices_batch_pool(sl, skip, NULL, (1.5 - m) / sc, 0.01, P, b, &n_sl, &err);
  if (rc == 0) rc = mpt_gp_slices_columns(sl, b, n_sl, V, abv, &err);
  mpt_gp_slices_free(sl);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  assert_int_equal(rc, 0);
  int n_one = mpt_gp_log_ei_pool(gp, 0, N, 0, skip, (1.5 - m) / sc, 0.01, P, a);
  assert_int_equal(n_one, P);
  assert_int_equal(n_sl, P);
  for (int j = 0; j < P; j++) {
    assert_int_equal(a[j].id, b[j].id);
    assert_true(j == 0 || a[j].key <= a[j - 1].key); /* by log EI alone */
    ids[j] = a[j].id;
    memcpy(PX + (size_t)j * dim, C + (size_t)ids[j] * dim, sizeof(double) * (size_t)dim);
  }
  assert_int_equal(mpt_gp_pool_create(&one, &err), 0);
  assert_int_equal(mpt_gp_pool_create(&cols, &err), 0);
  assert_int_equal(mpt_gp_pool_load(one, gp, ids, PX, P, &err), 0);
  assert_int_equal(mpt_gp_pool_load_columns(cols, gp, ids, PX, V, abv, P, &err), 0);
  double before = pools_differ(one, cols, P);
  assert_int_equal(mpt_gp_pool_add_member(one, 0, 0.5, &err), 0);
  assert_int_equal(mpt_gp_pool_add_member(cols, 0, 0.5, &err), 0);
  double after = pools_differ(one, cols, P);
  printf("batch pool of %d from the slices' columns against one GP's: relative difference %.1e, after a fantasy %.1e\n",
         P, before, after);
  assert_true(before <= 1e-5 && after <= 1e-5);
  mpt_gp_pool_free(one);
  mpt_gp_pool_free(cols);
  mpt_gp_free(gp);
  free(C); free(PX); free(V); free(skip);
}

/* 30 candidates that are not members of a batch's pool (pending: ids across the three slices, out of order): the
 * slices send each one's column of V and A, B, var (mpt_gp_slices_cand_columns; each one's posterior from them is
 * its slice's, bit for bit); the pool loaded from the slices' columns on a GP without candidates (rank 0's with
 * model ranks) plans them (mpt_gp_pool_plan_columns) and
 * fantasizes them in turn (predict, then add at the predicted mean) as the same pool of one GP over every
 * candidate planned from its own V (mpt_gp_pool_plan_candidates) does: the same predictions and the same
 * posterior of the members afterwards, up to V's rounding; a candidate outside the slices refused (and the
 * servers serve on) */
static void test_pending_columns(void **state) {
  (void)state;
  enum { P = 100, NF = 30 };
  int rank, dim = g_pts.dim, n_obs = 60;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  int64_t N = mpt_space_size(g_pts.space), ids[P], cand[NF + 1];
  double *C = gpd_encode(&g_pts, N, 0, 1), abv[3 * P], cabv[3 * NF], m, sc;
  double *PX = malloc(sizeof(double) * (size_t)P * (size_t)dim);
  float *V = malloc(sizeof(float) * (size_t)P * (size_t)n_obs), *CV = malloc(sizeof(float) * (size_t)NF * (size_t)n_obs);
  mpt_gp *gp;
  mpt_gp_slices *sl;
  mpt_gp_pool *one, *cols;
  mpt_gp_pool_item b[P];
  uint8_t *pend = calloc((size_t)N, 1); /* pending: left out of the pool, as seen configurations are */
  for (int f = 0; f < NF; f++) pend[cand[f] = N - 1 - (int64_t)f * (N / NF) - (f % 3)] = 1; /* every slice, descending */
  cand[NF] = N;                                                                                /* outside every slice */
  int n_sl = 0, rc = whole_and_slices(C, n_obs, 2, 173, &gp, &sl);
  mpt_gp_normalization(gp, &m, &sc);
  if (rc == 0) rc = mpt_gp_slices_batch_pool(sl, pend, NULL, (1.5 - m) / sc, 0.01, P, b, &n_sl, &err);
  if (rc == 0) rc = mpt_gp_slices_columns(sl, b, n_sl, V, abv, &err);
  float bad_v[NF * 60];
  double bad_abv[3 * NF];
  int rc_bad = rc == 0 ? mpt_gp_slices_cand_columns(sl, cand + 1, NF, bad_v, bad_abv, &err) : 0;
  if (rc == 0) rc = mpt_gp_slices_cand_columns(sl, cand, NF, CV, cabv, &err); /* the servers serve on */
  int exact = 0; /* each one's A, B, var as its slice holds them: its posterior as the slice predicts it, bit for bit */
  for (int f = 0; rc == 0 && f < NF; f++) {
    double ms, ss;
    rc = mpt_gp_slices_predict(sl, cand[f], &ms, &ss, &err);
    exact += ms == m + cabv[3 * f] - m * cabv[3 * f + 1] && ss == sc * sqrt(cabv[3 * f + 2] > 0 ? cabv[3 * f + 2] : 0.0);
  }
  mpt_gp_slices_free(sl);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  assert_int_equal(rc, 0);
  assert_true(rc_bad < 0);
  assert_int_equal(exact, NF);
  assert_int_equal(n_sl, P);
  for (int j = 0; j < P; j++) {
    ids[j] = b[j].id;
    for (int f = 0; f < NF; f++) assert_true(ids[j] != cand[f]); /* not members: the GP's columns stand in */
    memcpy(PX + (size_t)j * dim, C + (size_t)ids[j] * dim, sizeof(double) * (size_t)dim);
  }
  /* the columns' pool on a GP of the observations alone, as rank 0's in bo with model ranks: nothing of it is read
   * for the candidates */
  mpt_gp *g0;
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  double *X = gpd_encode(&g_pts, n_obs, 2, 173), *y = malloc(sizeof(double) * (size_t)n_obs);
  gpd_outputs(X, n_obs, dim, y);
  assert_int_equal(mpt_gp_create(&cfg, dim, 0, NULL, &g0, &err), 0);
  for (int i = 0; i < n_obs; i++) assert_int_equal(mpt_gp_add(g0, X + (size_t)i * dim, y[i], &err), 0);
  assert_int_equal(mpt_gp_pool_create(&one, &err), 0);
  assert_int_equal(mpt_gp_pool_create(&cols, &err), 0);
  assert_int_equal(mpt_gp_pool_load(one, gp, ids, PX, P, &err), 0);
  assert_int_equal(mpt_gp_pool_load_columns(cols, g0, ids, PX, V, abv, P, &err), 0);
  assert_int_equal(mpt_gp_pool_plan_candidates(one, cand, NF, &err), 0);
  assert_int_equal(mpt_gp_pool_plan_columns(cols, cand, NF, CV, cabv, &err), 0);
  double dp = 0, m1, s1, m2, s2;
  for (int f = 0; f < NF; f++) {
    const double *x = C + (size_t)cand[f] * dim;
    assert_int_equal(mpt_gp_pool_predict_candidate(one, cand[f], x, &m1, &s1, &err), 0);
    assert_int_equal(mpt_gp_pool_predict_candidate(cols, cand[f], x, &m2, &s2, &err), 0);
    dp = fmax(dp, fmax(fabs(m1 - m2), fabs(s1 - s2)) / sc); /* of the output scale (means cross 0) */
    assert_int_equal(mpt_gp_pool_add_candidate(one, cand[f], x, m1, &err), 0);
    assert_int_equal(mpt_gp_pool_add_candidate(cols, cand[f], x, m1, &err), 0);
  }
  double after = pools_differ(one, cols, P);
  /* past the plan, a candidate the GP does not hold is refused */
  assert_true(mpt_gp_pool_predict_candidate(cols, cand[0], C, &m2, &s2, &err) < 0);
  printf("%d pending evaluations planned from the slices' columns against one GP's: predictions %.1e (of the output "
         "scale), members after them %.1e relative\n", NF, dp, after);
  /* the one GP took the observations one by one, the slices in one pass (mpt_gp_add_many): V's rounding differs,
   * and an sd is the root of a variance near 0 next to an observation (1e-8 apart: 1e-4 of sd) */
  assert_true(dp <= 1e-3 && after <= 1e-5);
  mpt_gp_pool_free(one);
  mpt_gp_pool_free(cols);
  mpt_gp_free(gp);
  mpt_gp_free(g0);
  free(C); free(PX); free(V); free(CV); free(pend); free(X); free(y);
}

/* the marginal likelihood switches to ScaLAPACK over the model ranks at the crossover (set to 2000 here)
 * (mpt_gp_fit calls mpt_gp_log_marginal): the same value as the serial LAPACK path to 1e-10 */
static void test_lml_switch(void **state) {
  (void)state;
  setenv("MPT_GP_DIST_MIN_OBS", "2000", 1); /* the crossover, smaller than the default's for a short test */
  int rank, n = mpt_gp_dist_min_obs(), dim = g_pts.dim;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  double *X = gpd_encode(&g_pts, n, 0, 3), *y = malloc(sizeof(double) * (size_t)n), *C = gpd_encode(&g_pts, 99, 1, 7);
  gpd_outputs(X, n, dim, y);
  mpt_gp_config c;
  mpt_gp_config_default(&c);
  c.noise = 1e-3;
  mpt_gp *gp;
  mpt_gp_slices *sl;
  assert_int_equal(mpt_gp_create(&c, dim, 0, NULL, &gp, &err), 0);
  for (int i = 0; i < n; i++) assert_int_equal(mpt_gp_add(gp, X + (size_t)i * dim, y[i], &err), 0);
  assert_int_equal(mpt_gp_slices_create(MPI_COMM_WORLD, &c, dim, 99, table_rows, C, &sl, &err), 0);
  double ls[64], lml_dist = 0, lml_serial = 0, lml_small = 0;
  for (int q = 0; q < dim; q++) ls[q] = 0.8 + 0.05 * q;
  mpt_gp_set_lml_backend(gp, mpt_gp_slices_lml, sl);
  int rc_d = mpt_gp_log_marginal(gp, ls, 1.1, 2e-3, &lml_dist, &err);
  int64_t h_before = 0, rss[3], bytes[3];
  mpt_gp_slices_memory(sl, bytes, rss, &err);
  h_before = bytes[1]; /* the servers took the observations in: their GP holds n of them */
  mpt_gp_set_lml_backend(gp, NULL, NULL);
  int rc_s = mpt_gp_log_marginal(gp, ls, 1.1, 2e-3, &lml_serial, &err);
  mpt_gp_truncate(gp, n - 1, &err); /* below the crossover the backend declines: the serial path */
  mpt_gp_set_lml_backend(gp, mpt_gp_slices_lml, sl);
  int rc_small = mpt_gp_log_marginal(gp, ls, 1.1, 2e-3, &lml_small, &err);
  mpt_gp_slices_free(sl);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  mpt_gp_free(gp);
  free(X); free(y); free(C);
  printf("lml of %d observations: ScaLAPACK %.12g, LAPACK %.12g\n", n, lml_dist, lml_serial);
  assert_int_equal(rc_d, 0);
  assert_int_equal(rc_s, 0);
  assert_int_equal(rc_small, 0);
  assert_true(fabs(lml_dist - lml_serial) <= 1e-10 * fabs(lml_serial));
  assert_true(lml_small != lml_dist);
  assert_true(h_before > (int64_t)n * n * 8); /* a server's replicated factor: the observations arrived */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (gpd_open("paper_dedispersion.json", &g_pts) != 0) {
    MPI_Finalize();
    return 1;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_picks_identical), cmocka_unit_test(test_refused_options),
                                     cmocka_unit_test(test_share0_picks_identical),
                                     cmocka_unit_test(test_pending_picks_identical),
                                     cmocka_unit_test(test_pool_slices), cmocka_unit_test(test_batch_pool_columns),
                                     cmocka_unit_test(test_pending_columns),
                                     cmocka_unit_test(test_lml_switch)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL), any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  gpd_close(&g_pts);
  MPI_Finalize();
  return any ? 1 : 0;
}
