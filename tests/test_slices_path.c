/* tests/test_slices_path.c: the critical path of the model ranks' commands (gp/gp_slices.h, mpt_gp_slices_path)
 * under mpiexec.mpich -n 3, on paper_dedispersion (../shared/data/t1): a command where rank 2 holds 90 % of the
 * candidates (slices by shares) costs about what the same work costs one GP on rank 2's slice alone, far more
 * than rank 0's own compute in it (rank 0 waits in MPI meanwhile, which does not count), and never more than the
 * command's wall time; an ask of bo on the model ranks has a critical path > 0 and <= its wall time
 * (mpt_bo_model_clock); bad shares are refused before anything is sent. */
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
#include "gp/gp_slices.h"
#include "spaces/sys/clock.h"
#include "strategies/bo/bo_dist.h"
#include "strategies/strategy.h"
#include "tests/bo_synthetic.h"
#include "tests/gp_dist_fixture.h"

static gpd_points g_pts;

/* mpt_gp_cand_fn over g_pts-wide rows of the table ctx */
static void table_rows(void *ctx, int64_t first, int64_t n, double *rows) {
  memcpy(rows, (const double *)ctx + first * g_pts.dim, sizeof(double) * (size_t)(n * g_pts.dim));
}

/* rank 0: the thread CPU time of taking n observations X, y into a GP over the candidates C[first, N) as a slice
 * does in its first sync: in one pass (mpt_gp_add_many), then the hyperparameters set (a refactor) */
static double one_gp_take_in(const double *C, int64_t first, int64_t N, int n, const double *X, const double *y) {
  mpt_gp_config cfg;
  mpt_error err;
  mpt_gp *gp;
  mpt_gp_config_default(&cfg);
  assert_int_equal(mpt_gp_create(&cfg, g_pts.dim, N - first, C + first * g_pts.dim, &gp, &err), 0);
  double t = mpt_clock_thread_cpu_s();
  assert_int_equal(mpt_gp_add_many(gp, n, X, y, NULL, &err), 0);
  double ls[64], variance, noise;
  mpt_gp_get_hyper(gp, ls, &variance, &noise);
  assert_int_equal(mpt_gp_set_hyper(gp, ls, variance, noise, &err), 0);
  t = mpt_clock_thread_cpu_s() - t;
  mpt_gp_free(gp);
  return t;
}

/* slices of shares 1 : 1 : 18 take in 400 observations (one sync): the command's critical path is rank 2's
 * take-in (within a factor of 2 of one GP doing rank 2's part, measured the same way), at least 4 times rank 0's
 * compute in it, > 0 and <= its wall time */
static void test_path_follows_loaded_rank(void **state) {
  (void)state;
  int rank, n = 400, dim = g_pts.dim;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  int64_t N = mpt_space_size(g_pts.space);
  double *C = gpd_encode(&g_pts, N, 0, 1), *X = gpd_encode(&g_pts, n, 3, 23), *y = malloc(sizeof(double) * (size_t)n);
  gpd_outputs(X, n, dim, y);
  double shares[3] = {1, 1, 18};
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  mpt_gp *g0;
  mpt_gp_slices *sl;
  assert_int_equal(mpt_gp_create(&cfg, dim, 0, NULL, &g0, &err), 0);
  assert_int_equal(mpt_gp_slices_create_shares(MPI_COMM_WORLD, &cfg, dim, N, shares, table_rows, C, &sl, &err), 0);
  assert_int_equal(mpt_gp_add_many(g0, n, X, y, NULL, &err), 0);
  mpt_gp_slices_path a, b;
  mpt_gp_slices_path_get(sl, &a);
  double w = mpt_clock_mono_s();
  int rc = mpt_gp_slices_sync(sl, g0, &err);
  w = mpt_clock_mono_s() - w;
  mpt_gp_slices_path_get(sl, &b);
  int64_t bytes[3], rss[3];
  assert_int_equal(mpt_gp_slices_memory(sl, bytes, rss, &err), 0);
  double ref = one_gp_take_in(C, N * 2 / 20, N, n, X, y); /* rank 2 holds [N 2/20, N) */
  mpt_gp_slices_free(sl);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  mpt_gp_free(g0);
  free(C); free(X); free(y);
  double path = b.path_s - a.path_s, own = b.rank0_s - a.rank0_s, inside = b.inside_s - a.inside_s;
  printf("GP bytes per rank %lld, %lld, %lld\n", (long long)bytes[0], (long long)bytes[1], (long long)bytes[2]);
  printf("sync of %d observations, shares 1:1:18: critical path %.1f ms, one GP on rank 2's slice %.1f ms, rank 0's "
         "compute %.1f ms, rank 0 inside (CPU, with its MPI waits) %.1f ms, wall %.1f ms\n", n, 1e3 * path, 1e3 * ref,
         1e3 * own, 1e3 * inside, 1e3 * w);
  assert_int_equal(rc, 0);
  assert_true(bytes[2] > 4 * bytes[1] && bytes[2] > 4 * bytes[0]); /* the shares: rank 2's V is 18 times (the
                                                                      factor, 400 x 400, is on every rank) */
  assert_int_equal(b.steps - a.steps, 1);
  assert_true(path > 0 && path <= w);
  assert_true(path >= ref / 2 && path <= 2 * ref);
  assert_true(own >= 0 && own * 4 <= path);
  assert_true(inside >= own);
}

/* bo on the model ranks (equal slices), 30 observations, then ask(8): the critical path of the ask is > 0, at
 * most its wall time, and took model-rank commands */
static void test_ask_path(void **state) {
  (void)state;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  const char *opts[] = {"initial_samples=12"};
  mpt_strategy *s;
  assert_int_equal(mpt_strategy_create("bo", g_pts.space, opts, 1, 5, 100, &s, &err), 0);
  double t;
  assert_true(mpt_bo_model_clock(s, &t, NULL, &err) < 0); /* no model ranks yet */
  assert_int_equal(mpt_bo_use_model_ranks(s, MPI_COMM_WORLD, &err), 0);
  int64_t ids[8];
  mpt_obs obs[8];
  for (int done = 0; done < 30;) {
    int got = mpt_strategy_ask(s, 6, ids);
    assert_true(got > 0);
    for (int i = 0; i < got; i++) bo_synthetic(g_pts.space, ids[i], 0, &obs[i]);
    mpt_strategy_tell(s, obs, got);
    done += got;
  }
  double p0, p1;
  mpt_gp_slices_path a, b;
  assert_int_equal(mpt_bo_model_clock(s, &p0, &a, &err), 0);
  double w = mpt_clock_mono_s();
  int got = mpt_strategy_ask(s, 8, ids);
  w = mpt_clock_mono_s() - w;
  assert_int_equal(mpt_bo_model_clock(s, &p1, &b, &err), 0);
  mpt_strategy_destroy(s);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
  printf("ask(8) after 30 observations: critical path %.2f ms in %lld commands, wall %.2f ms\n", 1e3 * (p1 - p0),
         (long long)(b.steps - a.steps), 1e3 * w);
  assert_int_equal(got, 8);
  assert_true(b.steps - a.steps >= 2); /* the sync and the pool, at least */
  assert_true(p1 - p0 > 0 && p1 - p0 <= w);
  assert_true(b.path_s - a.path_s <= p1 - p0); /* the commands' part of the ask's path */
}

/* a share <= 0 is refused on rank 0 before any message: the servers still serve the next command */
static void test_bad_shares(void **state) {
  (void)state;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_error err;
  if (rank != 0) { assert_int_equal(mpt_gp_slices_serve(MPI_COMM_WORLD, &err), 0); return; }
  double C[8 * 64] = {0}, shares[3] = {1, 0, 2};
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  mpt_gp_slices *sl = NULL;
  assert_true(mpt_gp_slices_create_shares(MPI_COMM_WORLD, &cfg, g_pts.dim, 8, shares, table_rows, C, &sl, &err) < 0);
  assert_null(sl);
  assert_non_null(strstr(err.msg, "share"));
  shares[1] = 1;
  assert_int_equal(mpt_gp_slices_create_shares(MPI_COMM_WORLD, &cfg, g_pts.dim, 8, shares, table_rows, C, &sl, &err), 0);
  mpt_gp_slices_free(sl);
  mpt_gp_slices_quit(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (gpd_open("paper_dedispersion.json", &g_pts) != 0 || g_pts.dim > 64) {
    MPI_Finalize();
    return 1;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_path_follows_loaded_rank), cmocka_unit_test(test_ask_path),
                                     cmocka_unit_test(test_bad_shares)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL), any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  gpd_close(&g_pts);
  MPI_Finalize();
  return any ? 1 : 0;
}
