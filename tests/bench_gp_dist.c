/* tests/bench_gp_dist.c: the distributed model's figures (docs/PERFORMANCE.md, "Distributed GP and model
 * ranks"), one command for every row, under mpiexec.mpich -n R:
 *
 *   mpiexec.mpich -n R bench_gp_dist [--sizes 1000,2000,...] [--serial-max N] [--problem T1.json
 *     [--obs 1000,5000] [--batch 16] [--measure 5]]
 *
 * Factorization rows, one per size n: the covariance of n configurations spread over the problem's valid
 * set (paper_dedispersion's without --problem; index encodings, Matérn 3/2) built, factorized (pdpotrf) and solved (pdpotrs) on all R ranks, wall time; and
 * up to --serial-max the same with LAPACK on rank 0 alone (dpotrf + dpotrs) with the relative difference of
 * the two solutions (wall time, and rank 0's CPU time: on a shared machine the CPU time is what the rank got). bo rows with --problem, one per observation count: bo with the R ranks as model ranks
 * (rank 0 among them) told that many observations of a synthetic objective (uniform random configurations),
 * then --measure asks of --batch (each followed by telling its results): median wall and rank-0 CPU time
 * per ask, and every rank's peak RSS (--obs 0: none). Run with OPENBLAS_NUM_THREADS=1 (one core per rank). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp.h"
#include "gp/gp_dist.h"
#include "gp/gp_slices.h"
#include "spaces/sys/clock.h"
#include "strategies/bo/bo_dist.h"
#include "strategies/strategy.h"
#include "tests/gp_dist_fixture.h"

static int g_rank, g_size;

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* rank 0: x = K^-1 y with LAPACK on the whole matrix; wall seconds (*cpu: CPU seconds), or -1 out of memory */
static double serial_solve(const mpt_gp_dist_hyper *h, const double *X, int n, const double *y, double *x, double *cpu) {
  double *K = malloc(sizeof(double) * (size_t)n * (size_t)n);
  if (!K) return -1;
  double t0 = mpt_clock_mono_s(), c0 = mpt_clock_thread_cpu_s();
  gpd_full_cov(h, X, n, K);
  memcpy(x, y, sizeof(double) * (size_t)n);
  int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, K, n);
  if (info == 0) LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, 1, K, n, x, 1);
  double dt = mpt_clock_mono_s() - t0;
  *cpu = mpt_clock_thread_cpu_s() - c0;
  free(K);
  return info == 0 ? dt : -1;
}

/* one factorization row (collective) */
static void factor_row(const gpd_points *pts, int n, int serial_max) {
  double inv_ls[64];
  for (int q = 0; q < pts->dim; q++) inv_ls[q] = 1.0 / 0.6;
  mpt_gp_dist_hyper h = {MPT_GP_MATERN32, pts->dim, inv_ls, 1.0, 1e-4};
  int64_t N = mpt_space_size(pts->space);
  double *X = gpd_encode(pts, n, 0, N / n > 0 ? N / n : 1), *y = malloc(sizeof(double) * n);
  double *x = malloc(sizeof(double) * n), *xs = malloc(sizeof(double) * n);
  gpd_outputs(X, n, pts->dim, y);
  /* points past the space's size repeat: the noise keeps K positive definite */
  mpt_error err;
  mpt_gp_dist *d = NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = mpt_clock_mono_s(), c0 = mpt_clock_thread_cpu_s();
  int rc = mpt_gp_dist_create(MPI_COMM_WORLD, n, 64, &d, &err);
  if (rc == 0) rc = mpt_gp_dist_factor(d, &h, X, &err);
  if (rc == 0) rc = mpt_gp_dist_solve(d, y, x, &err);
  double td = mpt_clock_mono_s() - t0, cd = mpt_clock_thread_cpu_s() - c0, cs = 0;
  mpt_gp_dist_free(d);
  double ts = -1, rel = NAN;
  if (g_rank == 0 && n <= serial_max && (ts = serial_solve(&h, X, n, y, xs, &cs)) >= 0) {
    double e = 0, m = 0;
    for (int i = 0; i < n; i++) {
      e = fmax(e, fabs(x[i] - xs[i]));
      m = fmax(m, fabs(xs[i]));
    }
    rel = e / m;
  }
  if (g_rank == 0) {
    if (rc) printf("factor n=%d ranks=%d: %s\n", n, g_size, err.msg);
    else if (ts >= 0)
      printf("factor n=%-6d ranks=%d  scalapack %8.2f s (rank 0 CPU %.2f s)  lapack(rank 0) %8.2f s (CPU %.2f s)  solution "
             "rel. diff %.1e\n", n, g_size, td, cd, ts, cs, rel);
    else printf("factor n=%-6d ranks=%d  scalapack %8.2f s (rank 0 CPU %.2f s)\n", n, g_size, td, cd);
    fflush(stdout);
  }
  free(X); free(y); free(x); free(xs);
}

/* a smooth objective of the index encoding with a heavy tail (tests/bench_bo.c's, without failures) */
static void objective(const mpt_space *sp, int64_t id, mpt_obs *o) {
  int D = mpt_space_dims(sp);
  double xe[256], f = 0;
  mpt_space_encode(sp, id, MPT_ENC_INDEX, xe);
  for (int d = 0; d < D && d < 256; d++) {
    double c = 0.3 + 0.4 * ((d * 37) % 11) / 10.0;
    f += (1.0 + d % 3) * (xe[d] - c) * (xe[d] - c);
    if (d > 0) f += 0.5 * xe[d] * xe[d - 1];
  }
  mpt_obs_init(o, id);
  o->objective = o->median = exp(2.0 * f);
}

/* rank 0: bo with the model ranks told n_obs random observations, then `measure` asks of `batch` */
static void bo_row(const gpd_points *pts, int n_obs, int batch, int measure) {
  mpt_error err;
  mpt_strategy *s = NULL;
  int64_t N = mpt_space_size(pts->space), *ids = malloc(sizeof(int64_t) * (size_t)(n_obs > batch ? n_obs : batch));
  mpt_obs *obs = malloc(sizeof(mpt_obs) * (size_t)(n_obs > batch ? n_obs : batch));
  double *wall = malloc(sizeof(double) * measure), *cpu = malloc(sizeof(double) * measure);
  int rc = mpt_strategy_create("bo", pts->space, NULL, 0, 1, n_obs + (int64_t)batch * measure, &s, &err);
  if (rc == 0) rc = mpt_bo_use_model_ranks(s, MPI_COMM_WORLD, &err);
  mpt_rng rng;
  mpt_rng_seed(&rng, 12345);
  int64_t got = rc == 0 ? mpt_space_sample_random(pts->space, &rng, n_obs, ids) : 0;
  for (int64_t i = 0; i < got; i++) objective(pts->space, ids[i], &obs[i]);
  double t0 = mpt_clock_mono_s();
  if (rc == 0) mpt_strategy_tell(s, obs, (int)got);
  int m = 0;
  double t_model = 0;
  while (rc == 0 && m < measure) {
    double ta = mpt_clock_mono_s(), ca = mpt_clock_thread_cpu_s();
    int k = mpt_strategy_ask(s, batch, ids);
    if (m == 0 && k > 0) t_model = mpt_clock_mono_s() - t0; /* the first ask takes the observations in */
    if (k <= 0) { rc = -1; break; }
    if (m > 0 || measure == 1) { wall[m] = mpt_clock_mono_s() - ta; cpu[m] = mpt_clock_thread_cpu_s() - ca; }
    for (int i = 0; i < k; i++) objective(pts->space, ids[i], &obs[i]);
    mpt_strategy_tell(s, obs, k);
    m++;
  }
  int64_t bytes[256], rss[256];
  if (rc == 0 && g_size <= 256) rc = mpt_bo_model_memory(s, bytes, rss, &err);
  if (rc == 0 && m > 1) {
    qsort(wall + 1, (size_t)(m - 1), sizeof *wall, cmpd);
    qsort(cpu + 1, (size_t)(m - 1), sizeof *cpu, cmpd);
    printf("bo %lld configurations, %d observations, model ranks %d: first ask (model of %d) %.1f s; ask(%d) median of %d: "
           "%.3f s wall, %.3f s CPU (rank 0); peak RSS per rank (MiB):", (long long)N, n_obs, g_size, n_obs, t_model,
           batch, m - 1, wall[1 + (m - 1) / 2], cpu[1 + (m - 1) / 2]);
    for (int r = 0; r < g_size; r++) printf(" %.0f", (double)rss[r] / 1024.0);
    printf("\n");
  } else {
    printf("bo row %d observations failed: %s\n", n_obs, rc == -1 ? mpt_strategy_ask_error(s) : err.msg);
  }
  fflush(stdout);
  mpt_strategy_destroy(s);
  free(ids); free(obs); free(wall); free(cpu);
}

/* a comma-separated list of ints into v (at most 32); how many */
static int parse_list(const char *s, int *v) {
  int n = 0;
  for (const char *p = s; p && *p && n < 32; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) v[n++] = atoi(p);
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int sizes[32], obs[32], n_sizes = parse_list("1000,2000,3000,5000", sizes), n_obs = 0;
  int serial_max = 8000, batch = 16, measure = 5;
  const char *problem = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--sizes") == 0) n_sizes = parse_list(argv[i + 1], sizes);
    else if (strcmp(argv[i], "--serial-max") == 0) serial_max = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--problem") == 0) problem = argv[i + 1];
    else if (strcmp(argv[i], "--obs") == 0) n_obs = parse_list(argv[i + 1], obs);
    else if (strcmp(argv[i], "--batch") == 0) batch = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--measure") == 0) measure = atoi(argv[i + 1]);
  }
  if (problem && n_obs == 0) n_obs = parse_list("1000,5000", obs);
  gpd_points bp; /* the problem's space, or paper_dedispersion's for the factorization rows alone */
  mpt_error err;
  if (!problem && gpd_open("paper_dedispersion.json", &bp) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
  if (problem && (mpt_problem_load(problem, &bp.prob, &err) != 0 || mpt_space_build(bp.prob, &bp.space, &err) != 0)) {
    fprintf(stderr, "%s\n", err.msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  bp.dim = mpt_space_dims(bp.space);
  for (int i = 0; i < n_sizes; i++) factor_row(&bp, sizes[i], serial_max);
  for (int i = 0; problem && i < n_obs; i++) {
    if (obs[i] <= 0) continue; /* --obs 0: the factorization rows alone, on the problem's configurations */
    if (g_rank == 0) bo_row(&bp, obs[i], batch, measure);
    else mpt_gp_slices_serve(MPI_COMM_WORLD, &err);
    if (g_rank == 0) mpt_gp_slices_quit(MPI_COMM_WORLD);
  }
  gpd_close(&bp);
  MPI_Finalize();
  return 0;
}
