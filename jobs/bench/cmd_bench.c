/* jobs/bench/cmd_bench.c: `mptune bench`: runs strategies (and option variants of them) R times on replayed
 * brute-forced spaces, in process (ask/tell against mpt_replay_get), the (space, strategy, repeat)
 * jobs spread round-robin over the MPI ranks and gathered on rank 0 one (space, strategy) at a time; rank 0
 * scores them (jobs/bench/bench.h) and writes their rows of curves.csv and runs.csv, then prints the tables and
 * writes summary.csv and bench.png (scripts/plot_bench.py).
 * Before any run, rank 0 finds the plot script and refuses an --out where an output would replace an input
 * or that cannot be written.
 * This file owns the command's course: the setup (strategies, spaces, transfer, outputs) with one go/no-go
 * over the ranks, the warnings about the spaces, the runs and the report; its parts are the cmd_bench_*.c
 * files (jobs/bench/cmd_bench_impl.h). */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench.h"
#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "strategies/strategy.h"
#include "jobs/bench/cmd_bench_impl.h"

static void free_ctx(bench_ctx *c) {
  for (int i = 0; i < c->a.n_space_args; i++) {
    mpt_replay_free(c->sp[i].replay);
    mpt_bench_ref_free(&c->sp[i].ref);
    /* problem paths of PROBLEM:DATA arguments were strndup'ed, one per --space */
    if (c->sp[i].problem_path && c->sp[i].problem_path != c->a.problem) free((char *)c->sp[i].problem_path);
  }
  for (int64_t i = 0; c->joint && i < (int64_t)c->n_st * c->a.repeats * c->n_sp; i++) mpt_bench_run_free(&c->joint[i]);
  free(c->joint);
  free(c->joint_done);
  for (int i = 0; i < c->n_pr; i++) {
    mpt_space_free(c->pr[i].s);
    mpt_problem_free(c->pr[i].p);
  }
}

/* --prior-from-others, --transfer online: at least two spaces, all of one problem (config ids name the same
 * configurations), and the cache of joint campaigns; 0 or an error */
static int setup_transfer(bench_ctx *c, mpt_error *err) {
  const bench_args *a = &c->a;
  if (!a->online && !a->prior_others) return 0;
  const char *opt = a->online ? "--transfer online" : "--prior-from-others";
  if (c->n_sp < 2) return mpt_error_set(err, MPT_ERR_VALUE, "%s: needs at least two --space files", opt);
  for (int i = 1; i < c->n_sp; i++)
    if (c->sp[i].problem != c->sp[0].problem)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s: --space %s has another problem (%s) than --space %s (%s)", opt,
                           c->sp[i].data_path, c->sp[i].problem_path, c->sp[0].data_path, c->sp[0].problem_path);
  if (!a->online) return 0;
  int64_t n = (int64_t)c->n_st * a->repeats;
  c->joint = calloc((size_t)(n * c->n_sp), sizeof *c->joint);
  c->joint_done = calloc((size_t)n, 1);
  if (!c->joint || !c->joint_done) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  return 0;
}

/* the strategies and their options, the spaces, and every variant created once (its options checked by the
 * strategy) before any run; 0 or an error */
static int setup_bench(bench_ctx *c, mpt_error *err) {
  const bench_args *a = &c->a;
  int rc = bench_parse_strategies(a, c->st, &c->n_st, err);
  if (!rc) rc = bench_apply_global_options(a, c->st, c->n_st, err);
  if (!rc) {
    c->n_sp = a->n_space_args;
    rc = bench_setup_spaces(a, c->sp, c->pr, &c->n_pr, err);
  }
  for (int s = 0; !rc && s < c->n_st; s++) {
    mpt_strategy *t = NULL;
    const bench_space *b = &c->sp[0];
    rc = mpt_strategy_create(c->st[s].name, c->pr[b->problem].s, (const char *const *)c->st[s].opts,
                             c->st[s].n_opts, a->seed, a->budget, &t, err);
    if (rc) mpt_error_prefix(err, "--strategy %s", c->st[s].label);
    mpt_strategy_destroy(t);
  }
  return rc ? rc : setup_transfer(c, err);
}

/* rank 0, before --out is created: the plot script, no output replacing an input, a writable --out; then
 * (every rank) a gather that fits an int, and (rank 0) the CSV writer open; 0 or an error */
static int prepare_outputs(bench_ctx *c, int rank, bench_writer *w, mpt_error *err) {
  const bench_args *a = &c->a;
  int rc = 0;
  if (rank == 0 && !a->no_plot) rc = bench_find_plot_script(a, c->plot_script, sizeof c->plot_script, err);
  if (!rc && rank == 0) rc = bench_check_outputs(a, c->sp, c->n_sp, a->no_plot ? NULL : c->plot_script, err);
  if (!rc && rank == 0) rc = bench_mkdir_p(a->out, err);
  int64_t R = a->repeats, L = REC_HEAD + 2 * a->budget;
  if (!rc && R * L > INT_MAX)
    rc = mpt_error_set(err, MPT_ERR_VALUE, "too many repeats x budget for one gather (%lld values)", (long long)(R * L));
  if (!rc && rank == 0) rc = bench_open_writer(c, w, err);
  return rc;
}

/* go/no-go: every rank stops on any rank's setup error (rc), said once: rank 0's message when the same bad
 * input fails on every rank, else the failing rank's. 1 when the run stops */
static int setup_failed(int rc, int rank, const mpt_error *err) {
  int bad = rc != 0, any_bad = 0, bad0 = bad;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Bcast(&bad0, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (any_bad && rc && (rank == 0 || !bad0)) fprintf(stderr, "mptune bench: %s\n", err->msg);
  return any_bad;
}

/* rank 0: a file that does not cover its space exactly is scored all the same, but said once; a space whose
 * optimum random search is expected to find at the first score term has no score */
static void warn_about_spaces(const bench_ctx *c) {
  for (int i = 0; i < c->n_sp; i++) {
    char msg[1024];
    const char *in_progress = mpt_replay_in_progress(c->sp[i].replay);
    if (in_progress[0]) fprintf(stderr, "mptune bench: warning: %s\n", in_progress);
    if (mpt_replay_coverage(c->sp[i].replay, "they count as failed evaluations", msg, sizeof msg))
      fprintf(stderr, "mptune bench: warning: --space %s: %s\n", c->sp[i].data_path, msg);
    /* E_random(k) only decreases with k: equal to the optimum at the first score term, it is at every one */
    const mpt_bench_ref *ref = &c->sp[i].ref;
    int64_t k0 = c->a.budget < c->a.step ? c->a.budget : c->a.step;
    if (ref->n_valid > 0 && isnan(mpt_bench_score_at(ref, k0, mpt_bench_optimum(ref))))
      fprintf(stderr,
              "mptune bench: warning: --space %s: no score: random search is expected to find the optimum "
              "within %lld evaluations (%lld configurations); its best@k columns are still shown\n",
              c->sp[i].data_path, (long long)k0, (long long)ref->n);
  }
}

/* rank 0, after every group: curves.csv and runs.csv closed, the tables, summary.csv, the closing line and
 * the plot; 0 or an error */
static int report_results(const bench_ctx *c, const mpt_bench_summary *sum, bench_writer *w, int size, double elapsed,
                          mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t n_jobs = (int64_t)c->n_sp * c->n_st * a->repeats;
  int rc = bench_close_writer(w, 1, err);
  if (!rc) {
    bench_print_tables(c, sum);
    rc = bench_write_summary(c, sum, err);
  }
  if (!rc) {
    printf("%lld runs on %d rank%s in %.1f s; wrote %s/curves.csv, runs.csv, summary.csv", (long long)n_jobs, size,
           size > 1 ? "s" : "", elapsed, a->out);
    if (!a->no_plot) {
      char png[4096];
      snprintf(png, sizeof png, "%s/bench.png", a->out);
      rc = bench_run_plot(c->plot_script, w->curves_path, png, err);
      if (!rc) printf(", bench.png");
    }
    printf("\n");
  }
  return rc;
}

int mpt_cmd_bench(int argc, char **argv) {
  mpt_outfile_remove_on_signal(); /* no cut temporary output left by Ctrl-C */
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bench_ctx *c = calloc(1, sizeof *c);
  mpt_error err;
  mpt_error_clear(&err);
  if (!c) {
    if (rank == 0) fprintf(stderr, "mptune bench: out of memory\n");
    return 1;
  }
  int rc = bench_parse_args(argc, argv, &c->a, &err);
  if (!rc && c->a.help) {
    if (rank == 0) bench_usage(stdout);
    free(c);
    return 0;
  }
  if (!rc) rc = setup_bench(c, &err);
  bench_writer w = {0};
  if (!rc) rc = prepare_outputs(c, rank, &w, &err);
  if (setup_failed(rc, rank, &err)) {
    bench_close_writer(&w, 0, &err);
    free_ctx(c);
    free(c);
    return 1;
  }
  if (rank == 0) warn_about_spaces(c);

  int64_t n_groups = (int64_t)c->n_sp * c->n_st;
  mpt_bench_summary *sum = rank == 0 ? calloc((size_t)n_groups, sizeof *sum) : NULL;
  int any_bad = 0;
  double elapsed = 0;
  rc = bench_run_groups(c, rank, size, &w, sum, &any_bad, &elapsed, &err);
  if (rc) fprintf(stderr, "mptune bench: %s\n", err.msg);
  if (rank != 0 || any_bad || rc) {
    bench_close_writer(&w, 0, &err);
    free(sum);
    free_ctx(c);
    free(c);
    return any_bad || rc ? 1 : 0;
  }
  rc = report_results(c, sum, &w, size, elapsed, &err);
  if (rc) fprintf(stderr, "mptune bench: %s\n", err.msg);
  free(sum);
  free_ctx(c);
  free(c);
  return rc ? 1 : 0;
}
