/* tests/bench_bo.c: ask time and memory of the `bo` strategy after a given number of observations on a
 * T1 space with a synthetic objective (no replay file needed):
 *
 *   bench_bo PROBLEM.json [--obs 220] [--measure 21] [--batch 1] [--pending 0] [--option key=value]...
 *
 * Runs ask/tell with the synthetic objective until --obs observations, then times --measure more
 * ask(batch) calls (each ask includes putting the previous tell into the model) and prints the median
 * ask time (wall and thread CPU time), the 10th percentile (less disturbed on a shared machine; above the
 * few asks after a failed evaluation, which add no row to the GP) and the max,
 * and the process's peak RSS. Run with OPENBLAS_NUM_THREADS=1 for
 * the one-core figure.
 *
 * --pending P: asynchronous workers: after the --obs observations one untimed ask(P) fills P evaluations in
 *   flight; each timed ask(batch) then finds P evaluations pending from earlier asks, and after it the oldest
 *   `batch` of those in flight are told (first in, first out), so the next ask takes them in.
 * --warm-batch W: the asks before the timed ones are ask(W) (default 1), so that reaching --obs observations takes
 *   --obs / W asks (with model ranks on a huge space each ask of the warm-up is a round of the ranks' commands).
 * --ids FILE: writes every asked id (one per line), to compare the proposals of two builds.
 * --model-ranks: under `mpiexec.mpich -n R`, bo's model on the R ranks (strategies/bo/bo_dist.h: rank 0 runs the
 *   benchmark, the others serve the candidates' slices); the times are rank 0's, and a second line gives the
 *   critical path per ask (gp/gp_slices.h: rank 0's work outside the model ranks' commands plus, for each command,
 *   the largest compute of any rank; CPU time outside MPI calls): what the ask takes with a core per rank, measured
 *   even where the ranks share cores, beside rank 0's CPU and wall time.
 * --fail-region Q: failures cluster as well: a configuration whose first two parameters of more than two values both
 *   lie in the lower Q of their value ranges (index encoding) fails too (Q 0.3: 31.5% of
 *   paper_hotspot's valid configurations), a region next to the objective's optimum that the objective's
 *   GP, which never sees failures, keeps rating high.
 * --perf-ctl FIFO: writes "enable" to FIFO when the timed asks start and "disable" after them, so
 * `perf record -D -1 --control fifo:FIFO -- bench_bo ...` profiles the timed asks only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <mpi.h>
#include "gp/gp_slices.h"
#include "spaces/space.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_dist.h"
#include "spaces/sys/clock.h"
#include "tests/bo_synthetic.h"

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* the evaluations in flight (--pending), oldest first */
typedef struct fifo {
  int64_t *id;
  int n, cap;
} fifo;

static int fifo_push(fifo *f, const int64_t *ids, int n) {
  if (f->n + n > f->cap) {
    int nc = 2 * (f->n + n);
    int64_t *p = realloc(f->id, sizeof(int64_t) * (size_t)nc);
    if (!p) return -1;
    f->id = p;
    f->cap = nc;
  }
  memcpy(f->id + f->n, ids, sizeof(int64_t) * (size_t)n);
  f->n += n;
  return 0;
}

/* the oldest n (at most all) into out; returns how many */
static int fifo_pop(fifo *f, int n, int64_t *out) {
  if (n > f->n) n = f->n;
  memcpy(out, f->id, sizeof(int64_t) * (size_t)n);
  memmove(f->id, f->id + n, sizeof(int64_t) * (size_t)(f->n - n));
  f->n -= n;
  return n;
}

int main(int argc, char **argv) {
  const char *problem = NULL;
  int n_obs = 220, measure = 21, batch = 1, pending = 0, warm_batch = 1;
  double fail_q = 0;
  const char *opts[64], *perf_ctl = NULL, *ids_path = NULL;
  int n_opts = 0, model_ranks = 0, n_ranks = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--obs") == 0 && i + 1 < argc) n_obs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--measure") == 0 && i + 1 < argc) measure = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) batch = atoi(argv[++i]);
    else if (strcmp(argv[i], "--pending") == 0 && i + 1 < argc) pending = atoi(argv[++i]);
    else if (strcmp(argv[i], "--warm-batch") == 0 && i + 1 < argc) warm_batch = atoi(argv[++i]);
    else if (strcmp(argv[i], "--perf-ctl") == 0 && i + 1 < argc) perf_ctl = argv[++i];
    else if (strcmp(argv[i], "--ids") == 0 && i + 1 < argc) ids_path = argv[++i];
    else if (strcmp(argv[i], "--fail-region") == 0 && i + 1 < argc) fail_q = atof(argv[++i]);
    else if (strcmp(argv[i], "--model-ranks") == 0) model_ranks = 1;
    else if (strcmp(argv[i], "--option") == 0 && i + 1 < argc && n_opts < 64) opts[n_opts++] = argv[++i];
    else problem = argv[i];
  }
  if (!problem || measure < 1 || batch < 1 || pending < 0 || warm_batch < 1) {
    fprintf(stderr, "usage: bench_bo PROBLEM.json [--obs N] [--measure M] [--batch B] [--pending P] [--warm-batch W] "
                    "[--fail-region Q] [--model-ranks] [--option k=v]...\n");
    return 2;
  }
  mpt_error err;
  if (model_ranks) { /* the ranks other than 0 serve bo's model until rank 0 is done */
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    if (rank != 0) {
      int rc = mpt_gp_slices_serve(MPI_COMM_WORLD, &err);
      MPI_Finalize();
      return rc ? 1 : 0;
    }
  }
  mpt_problem *p;
  mpt_space *sp;
  if (mpt_problem_load(problem, &p, &err) || mpt_space_build(p, &sp, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (fail_q > 0) { /* the share of the space that fails */
    int64_t nf = 0, n = mpt_space_size(sp);
    mpt_obs o;
    for (int64_t c = 0; c < n; c++) {
      bo_synthetic(sp, c, fail_q, &o);
      nf += o.status != MPT_STATUS_OK;
    }
    printf("--fail-region %g: %.1f%% of the %lld configurations fail\n", fail_q, 100.0 * (double)nf / (double)n, (long long)n);
  }
  int64_t budget = n_obs + pending + (int64_t)measure * batch;
  mpt_strategy *s;
  double t0 = mpt_clock_mono_s();
  if (mpt_strategy_create("bo", sp, opts, n_opts, 1, budget, &s, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (model_ranks && mpt_bo_use_model_ranks(s, MPI_COMM_WORLD, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double t_create = mpt_clock_mono_s() - t0;
  int most = batch > pending ? batch : pending;
  most = most > warm_batch ? most : warm_batch;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)most);
  mpt_obs *obs = malloc(sizeof(mpt_obs) * (size_t)most);
  fifo flight = {0};
  double *times = malloc(sizeof(double) * (size_t)measure), *ctimes = malloc(sizeof(double) * (size_t)measure);
  double *ptimes = malloc(sizeof(double) * (size_t)measure), pa = 0, pb = 0; /* the critical path (model ranks) */
  double psum = 0;
  mpt_gp_slices_path path_a = {0}, path_b = {0}, in_asks = {0}; /* the commands' totals over the timed asks */
  int done = 0, m = 0;
  t0 = mpt_clock_mono_s();
  double t_warm = 0;
  FILE *ctl = NULL, *idf = NULL;
  if (ids_path && !(idf = fopen(ids_path, "w"))) {
    fprintf(stderr, "cannot write %s\n", ids_path);
    return 1;
  }
  while (m < measure) {
    int want = done < n_obs ? (n_obs - done < warm_batch ? n_obs - done : warm_batch) : batch;
    if (done >= n_obs && pending > 0 && flight.n == 0 && m == 0) { /* fill the workers: untimed */
      int got = mpt_strategy_ask(s, pending, ids);
      if (got <= 0 || fifo_push(&flight, ids, got)) break;
      for (int i = 0; idf && i < got; i++) fprintf(idf, "%lld\n", (long long)ids[i]);
    }
    if (perf_ctl && !ctl && done >= n_obs && (ctl = fopen(perf_ctl, "w")) != NULL) {
      fputs("enable\n", ctl);
      fflush(ctl);
    }
    if (model_ranks) mpt_bo_model_clock(s, &pa, &path_a, &err);
    double ta = mpt_clock_mono_s(), ca = mpt_clock_thread_cpu_s();
    int got = mpt_strategy_ask(s, want, ids);
    double dt = mpt_clock_mono_s() - ta, dc = mpt_clock_thread_cpu_s() - ca;
    if (model_ranks) mpt_bo_model_clock(s, &pb, &path_b, &err);
    if (got <= 0) break;
    if (done >= n_obs) {
      ptimes[m] = pb - pa;
      psum += pb - pa;
      in_asks.steps += path_b.steps - path_a.steps;
      in_asks.path_s += path_b.path_s - path_a.path_s;
      in_asks.inside_s += path_b.inside_s - path_a.inside_s;
      in_asks.rank0_s += path_b.rank0_s - path_a.rank0_s;
      ctimes[m] = dc;
      times[m++] = dt;
    }
    else if (done + got >= n_obs) t_warm = mpt_clock_mono_s() - t0;
    for (int i = 0; idf && i < got; i++) fprintf(idf, "%lld\n", (long long)ids[i]);
    if (flight.n > 0) { /* the oldest in flight finish; the new ones join the end */
      if (fifo_push(&flight, ids, got)) break;
      got = fifo_pop(&flight, got, ids);
    }
    for (int i = 0; i < got; i++) bo_synthetic(sp, ids[i], fail_q, &obs[i]);
    mpt_strategy_tell(s, obs, got);
    done += got;
  }
  if (ctl) {
    fputs("disable\n", ctl);
    fclose(ctl);
  }
  if (idf) fclose(idf);
  qsort(times, (size_t)m, sizeof(double), cmpd);
  qsort(ctimes, (size_t)m, sizeof(double), cmpd);
  qsort(ptimes, (size_t)m, sizeof(double), cmpd);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (pending > 0) printf("%d evaluations pending from earlier asks at each timed ask\n", pending);
  if (model_ranks) printf("model ranks: %d (times and peak RSS: rank 0's)\n", n_ranks);
  printf("%s: %lld configurations, %d observations, ask(%d): median %.3f ms (CPU %.3f ms), p10 %.3f ms (CPU "
         "%.3f ms), max %.3f ms over %d asks; create %.3f s, first %d evaluations %.2f s; peak RSS %.1f MiB\n",
         problem, (long long)mpt_space_size(sp), n_obs, batch, 1e3 * times[m / 2], 1e3 * ctimes[m / 2],
         1e3 * times[m / 10], 1e3 * ctimes[m / 10], 1e3 * times[m - 1], m, t_create, n_obs, t_warm, ru.ru_maxrss / 1024.0);
  int64_t *bytes = model_ranks ? malloc(sizeof(int64_t) * 2 * (size_t)n_ranks) : NULL;
  if (bytes && mpt_bo_model_memory(s, bytes, bytes + n_ranks, &err) == 0) { /* the largest server's peak RSS */
    int64_t most = 0;
    for (int r = 1; r < n_ranks; r++) most = bytes[n_ranks + r] > most ? bytes[n_ranks + r] : most;
    printf("model ranks' peak RSS: rank 0 %.1f MiB, the largest of the others %.1f MiB\n", bytes[n_ranks] / 1024.0,
           most / 1024.0);
  }
  free(bytes);
  if (model_ranks && m > 0)
    printf("critical path per ask(%d) over %d ranks: median %.3f ms, p10 %.3f ms, max %.3f ms (%.1f model-rank "
           "commands per ask; rank 0's CPU and wall above)\n", batch, n_ranks, 1e3 * ptimes[m / 2], 1e3 * ptimes[m / 10],
           1e3 * ptimes[m - 1], (double)in_asks.steps / m);
  if (model_ranks && m > 0) /* the means over the timed asks */
    printf("per ask, mean: the commands' path %.3f ms (rank 0's compute in them %.3f ms, its CPU in them with its MPI "
           "waits %.3f ms), rank 0's work between them %.3f ms\n", 1e3 * in_asks.path_s / m, 1e3 * in_asks.rank0_s / m,
           1e3 * in_asks.inside_s / m, 1e3 * (psum - in_asks.path_s) / m);
  mpt_strategy_destroy(s);
  if (model_ranks) {
    mpt_gp_slices_quit(MPI_COMM_WORLD);
    MPI_Finalize();
  }
  free(ids); free(obs); free(times); free(ctimes); free(ptimes); free(flight.id);
  mpt_space_free(sp);
  mpt_problem_free(p);
  return 0;
}
