/* jobs/bench/cmd_bench_impl.h: private to `mptune bench` (jobs/bench/cmd_bench*.c), nothing else includes it:
 * the parsed arguments, the spaces, problems and strategy variants, the context of a run, the CSV writer, the
 * layout of a run's record, and the functions the command's files share. */
#ifndef MPT_JOBS_BENCH_CMD_BENCH_IMPL_H
#define MPT_JOBS_BENCH_CMD_BENCH_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench.h"
#include "spaces/space.h"
#include "spaces/sys/error.h"
#include "spaces/t1.h"

#define MAX_ITEMS 64
#define MAX_OPTS 32

typedef struct bench_space {
  const char *problem_path, *data_path;
  char label[128];
  int problem;          /* index into problems */
  mpt_replay *replay;
  mpt_bench_ref ref;
} bench_space;

typedef struct bench_problem {
  const char *path;
  mpt_problem *p;
  mpt_space *s;
} bench_problem;

typedef struct bench_strategy {
  char label[256];
  char name[64];
  char *opts[MAX_OPTS];
  int n_opts;
  char buf[256];
} bench_strategy;

typedef struct bench_args {
  const char *problem;
  const char *space_args[MAX_ITEMS];
  int n_space_args;
  const char *strategy_args[MAX_ITEMS];
  int n_strategy_args;
  const char *options[MAX_OPTS];
  int n_options;
  int64_t repeats, budget, batch, step;
  uint64_t seed;
  const char *out;
  const char *plot_script;
  int no_plot, progress, help; /* progress: -1 on a terminal only (default), 0 off, 1 on */
  int prior_others, online;    /* --prior-from-others, --transfer online */
  double progress_every;
} bench_args;

/* a run's record (cmd_bench_run.c): these REC_HEAD values, then its best-so-far and its ask times, budget each */
enum { REC_JOB, REC_RC, REC_EVALS, REC_FAILED, REC_ASKS, REC_STRAT_S, REC_HEAD };

typedef struct bench_ctx {
  bench_args a;
  bench_space sp[MAX_ITEMS];
  bench_problem pr[MAX_ITEMS];
  int n_sp, n_pr;
  bench_strategy st[MAX_ITEMS];
  int n_st;
  char plot_script[4096]; /* rank 0, unless --no-plot: found before any run */
  /* --transfer online: this rank's joint campaigns, run (s, r) once for every space: runs[(s R + r) n_sp + p] */
  mpt_bench_run *joint;
  uint8_t *joint_done;
} bench_ctx;

/* rank 0's curves.csv and runs.csv, written one (space, strategy) group at a time as its runs arrive
 * (bench_write_group), so that only one group's traces are held; summary.csv at the end (bench_write_summary) */
typedef struct bench_writer {
  FILE *curves, *runs;
  char curves_path[4096], runs_path[4096];
  double *col; /* R: one evaluation count's best of every run of a group */
} bench_writer;

/* cmd_bench_args.c */
void bench_usage(FILE *f);
int bench_parse_args(int argc, char **argv, bench_args *a, mpt_error *err);
int bench_parse_strategies(const bench_args *a, bench_strategy *st, int *n_st, mpt_error *err);
int bench_apply_global_options(const bench_args *a, bench_strategy *st, int n_st, mpt_error *err);

/* cmd_bench_spaces.c */
int bench_file_exists(const char *p);
int bench_setup_spaces(const bench_args *a, bench_space *sp, bench_problem *pr, int *n_pr, mpt_error *err);

/* cmd_bench_outdir.c */
int bench_mkdir_p(const char *dir, mpt_error *err);
int bench_check_outputs(const bench_args *a, const bench_space *sp, int n_sp, const char *script, mpt_error *err);

/* cmd_bench_plot.c */
int bench_find_plot_script(const bench_args *a, char *out, size_t cap, mpt_error *err);
int bench_run_plot(const char *script, const char *csv, const char *png, mpt_error *err);

/* cmd_bench_csv.c */
int bench_close_writer(bench_writer *w, int keep, mpt_error *err);
int bench_open_writer(const bench_ctx *c, bench_writer *w, mpt_error *err);
int bench_write_group(const bench_ctx *c, bench_writer *w, int64_t g, const mpt_bench_run *runs,
                      const double *scores, mpt_error *err);
int bench_write_summary(const bench_ctx *c, const mpt_bench_summary *sum, mpt_error *err);

/* cmd_bench_tables.c */
void bench_print_tables(const bench_ctx *c, const mpt_bench_summary *sum);

/* cmd_bench_run.c */
int bench_run_groups(const bench_ctx *c, int rank, int size, bench_writer *w, mpt_bench_summary *sum, int *any_bad,
                     double *elapsed, mpt_error *err);

#endif
