/* jobs/bench/cmd_bench_run.c: `mptune bench`'s runs: the (space, strategy, repeat) jobs round-robin over the
 * MPI ranks, each run in process (independent, with the other spaces as priors, or out of a joint campaign:
 * jobs/bench/bench_transfer.h) into a record of doubles, gathered on rank 0 one (space, strategy) group at
 * a time, scored there and written (cmd_bench_csv.c); rank 0's progress line. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coordinator/progress.h"
#include "jobs/bench/bench.h"
#include "jobs/bench/bench_transfer.h"
#include "jobs/bench/cmd_bench_impl.h"

/* rank 0's progress line: its runs are 1/size of all, the other ranks run as many */
static void print_progress(int64_t done, int64_t mine, double elapsed) {
  char el[32], eta[32];
  double rate = elapsed > 0 ? (double)done / elapsed : 0;
  mpt_progress_duration(elapsed, el, sizeof el);
  mpt_progress_duration(rate > 0 ? (double)(mine - done) / rate : NAN, eta, sizeof eta);
  fprintf(stderr, "mptune bench: rank 0: %lld/%lld runs (%.0f%%) | %.3g runs/s | elapsed %s ETA %s\n", (long long)done,
          (long long)mine, mine > 0 ? 100.0 * (double)done / (double)mine : 100.0, rate, el, eta);
}

/* the jobs of group g (j = g R + r, r < R) that rank q of size runs (j % size == q): their number, the first
 * in *first, the others every size after it */
static int64_t group_jobs(int64_t g, int64_t R, int q, int size, int64_t *first) {
  int64_t lo = g * R;
  *first = lo + ((q - lo) % size + size) % size;
  return *first < lo + R ? (lo + R - 1 - *first) / size + 1 : 0;
}

/* --transfer online: the run of strategy s, repeat r on space p out of its joint campaign over every space (run
 * once on this rank, kept for the other spaces' jobs); NULL and err on error */
static const mpt_bench_run *joint_run(const bench_ctx *c, int64_t p, int64_t s, int64_t r, mpt_error *err) {
  const bench_args *a = &c->a;
  mpt_bench_run *runs = c->joint + (s * a->repeats + r) * c->n_sp;
  uint8_t *done = &c->joint_done[s * a->repeats + r];
  if (!*done) {
    const mpt_replay *rep[MAX_ITEMS];
    for (int q = 0; q < c->n_sp; q++) rep[q] = c->sp[q].replay;
    int rc = mpt_bench_run_joint(c->pr[c->sp[0].problem].s, rep, c->n_sp, c->st[s].name,
                                 (const char *const *)c->st[s].opts, c->st[s].n_opts, a->seed + (uint64_t)r,
                                 a->budget, (int)a->batch, runs, err);
    if (rc) return NULL;
    *done = 1;
  }
  return &runs[p];
}

/* the run of strategy s, repeat r on space p: independent, with the other spaces as priors, or out of a joint
 * campaign (joint: *run points into the cache, not to be freed); 0 or an error */
static int run_one(const bench_ctx *c, int64_t p, int64_t s, int64_t r, mpt_bench_run *run, int *joint,
                   mpt_error *err) {
  const bench_args *a = &c->a;
  const bench_space *b = &c->sp[p];
  const char *const *opts = (const char *const *)c->st[s].opts;
  *joint = a->online;
  if (a->online) {
    const mpt_bench_run *j = joint_run(c, p, s, r, err);
    if (j) *run = *j;
    return j ? 0 : err->code ? err->code : MPT_ERR_VALUE;
  }
  if (!a->prior_others)
    return mpt_bench_run_strategy(c->pr[b->problem].s, b->replay, c->st[s].name, opts, c->st[s].n_opts,
                                  a->seed + (uint64_t)r, a->budget, (int)a->batch, run, err);
  const mpt_replay *priors[MAX_ITEMS];
  int sources[MAX_ITEMS], n = 0;
  for (int q = 0; q < c->n_sp; q++)
    if (q != p) { sources[n] = q; priors[n++] = c->sp[q].replay; }
  return mpt_bench_run_with_priors(c->pr[b->problem].s, b->replay, priors, sources, n, c->st[s].name, opts,
                                   c->st[s].n_opts, a->seed + (uint64_t)r, a->budget, (int)a->batch, run, err);
}

/* runs job j into its record o (REC_HEAD values, then best-so-far and ask times, budget each) */
static int run_job(const bench_ctx *c, int64_t j, double *o, mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t S = c->n_st, R = a->repeats, B = a->budget;
  int64_t p = j / (S * R), s = (j / R) % S, r = j % R;
  const bench_space *b = &c->sp[p];
  mpt_bench_run run;
  memset(&run, 0, sizeof run);
  int joint = 0;
  int rc = run_one(c, p, s, r, &run, &joint, err);
  if (rc) mpt_error_prefix(err, "%s on %s, repeat %lld", c->st[s].label, b->label, (long long)r);
  o[REC_JOB] = (double)j;
  o[REC_RC] = rc;
  o[REC_EVALS] = (double)run.n_evals;
  o[REC_FAILED] = (double)run.n_failed;
  o[REC_ASKS] = run.n_asks;
  o[REC_STRAT_S] = run.strategy_s;
  if (!rc) {
    memcpy(o + REC_HEAD, run.best, (size_t)B * sizeof *o);
    memcpy(o + REC_HEAD + B, run.ask_s, (size_t)run.n_asks * sizeof *o);
  }
  if (!joint) mpt_bench_run_free(&run);
  return rc;
}

/* rank 0, the R gathered records of group g in rec (in rank order): runs[r] and scores[r] of repeat r (the
 * runs' best and ask_s point into rec), the group's summary, its rows of curves.csv and runs.csv */
static int finish_group(const bench_ctx *c, int64_t g, double *rec, mpt_bench_run *runs, double *scores,
                        const int64_t *cps, int n_cps, mpt_bench_summary *sum, bench_writer *w, mpt_error *err) {
  int64_t R = c->a.repeats, B = c->a.budget, L = REC_HEAD + 2 * B;
  const mpt_bench_ref *ref = &c->sp[g / c->n_st].ref;
  for (int64_t i = 0; i < R; i++) {
    double *o = rec + i * L;
    int64_t r = (int64_t)o[REC_JOB] - g * R;
    mpt_bench_run *run = &runs[r];
    run->n_evals = (int64_t)o[REC_EVALS];
    run->n_failed = (int64_t)o[REC_FAILED];
    run->n_asks = (int)o[REC_ASKS];
    run->strategy_s = o[REC_STRAT_S];
    run->best = o + REC_HEAD;
    run->ask_s = o + REC_HEAD + B;
    scores[r] = mpt_bench_score(ref, run->best, run->n_evals, B, c->a.step);
  }
  int rc = mpt_bench_summarize(ref, runs, scores, (int)R, B, cps, n_cps, sum, err);
  return rc ? rc : bench_write_group(c, w, g, runs, scores, err);
}

/* the summary's checkpoints: 20, 60, 100 and 220 evaluations within the budget B, and B; their count */
static int summary_checkpoints(int64_t B, int64_t cps[5]) {
  static const int64_t checkpoints[] = {20, 60, 100, 220};
  int n_cps = 0;
  for (int k = 0; k < 4; k++)
    if (checkpoints[k] <= B) cps[n_cps++] = checkpoints[k];
  if (!n_cps || cps[n_cps - 1] != B) cps[n_cps++] = B;
  return n_cps;
}

/* The runs: jobs j = group * R + repeat (group = space * S + strategy), j % size == rank, as one round-robin
 * over all of them; one group at a time: every rank runs its jobs of the group, rank 0 gathers them, scores
 * them (sum[g]) and writes the group's rows, so that it holds R traces (best-so-far and ask times, 2 x budget
 * doubles each), not those of every group. Rank 0 writes its records straight into the first block of the
 * gather buffer (MPI_IN_PLACE). 0 or this rank's error; *any_bad: some rank failed; *elapsed: seconds */
int bench_run_groups(const bench_ctx *c, int rank, int size, bench_writer *w, mpt_bench_summary *sum, int *any_bad,
                     double *elapsed, mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t S = c->n_st, R = a->repeats, B = a->budget;
  int64_t n_groups = (int64_t)c->n_sp * S, n_jobs = n_groups * R, L = REC_HEAD + 2 * B;
  int rc = 0;
  int64_t mine = n_jobs > rank ? (n_jobs - rank + size - 1) / size : 0;
  int64_t n_rec = (rank == 0 ? R : (R + size - 1) / size) * L;
  double *rec = calloc((size_t)n_rec, sizeof *rec);
  mpt_bench_run *runs = rank == 0 ? calloc((size_t)R, sizeof *runs) : NULL;
  double *scores = rank == 0 ? malloc((size_t)R * sizeof *scores) : NULL;
  int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
  int *displs = rank == 0 ? malloc((size_t)size * sizeof *displs) : NULL;
  if (!rec || (rank == 0 && (!runs || !scores || !sum || !counts || !displs)))
    rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int64_t cps[5];
  int n_cps = summary_checkpoints(B, cps);
  double t_start = MPI_Wtime(), t_last = t_start;
  int show = rank == 0 && (a->progress == 1 || (a->progress < 0 && mpt_progress_terminal(stderr)));
  int64_t done = 0;
  *any_bad = 0;
  for (int64_t g = 0; g < n_groups; g++) {
    int64_t first, n_mine = group_jobs(g, R, rank, size, &first);
    for (int64_t i = 0; !rc && i < n_mine; i++, done++) {
      rc = run_job(c, first + i * size, rec + i * L, err);
      if (show && (MPI_Wtime() - t_last >= a->progress_every || done + 1 == mine)) {
        t_last = MPI_Wtime();
        print_progress(done + 1, mine, t_last - t_start);
      }
    }
    /* rank 0's rc also says that the last group could not be scored or written */
    int bad = rc != 0;
    MPI_Allreduce(&bad, any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (*any_bad) break;
    if (rank == 0)
      for (int q = 0, off = 0; q < size; q++) {
        int64_t unused;
        counts[q] = (int)(group_jobs(g, R, q, size, &unused) * L);
        displs[q] = off;
        off += counts[q];
      }
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : rec, (int)(n_mine * L), MPI_DOUBLE, rec, counts, displs, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    if (rank == 0) rc = finish_group(c, g, rec, runs, scores, cps, n_cps, &sum[g], w, err);
  }
  *elapsed = MPI_Wtime() - t_start;
  free(rec);
  free(runs); /* their best and ask_s pointed into rec */
  free(scores);
  free(counts);
  free(displs);
  return rc;
}
