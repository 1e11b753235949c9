/* jobs/bench/cmd_bench_csv.c: `mptune bench`'s CSVs on rank 0: curves.csv and runs.csv written one (space,
 * strategy) group at a time as its runs arrive, summary.csv at the end; each a jobs/output/outfile.h output
 * (a temporary name until it is closed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/bench/bench.h"
#include "jobs/output/outfile.h"
#include "jobs/bench/cmd_bench_impl.h"

/* dir/name, opened as a jobs/output/outfile.h output (a temporary name until close_out renames it) */
static FILE *open_out(const char *dir, const char *name, char *path, size_t cap, mpt_error *err) {
  snprintf(path, cap, "%s/%s", dir, name);
  return mpt_outfile_open(path, err);
}

static int close_out(FILE *f, const char *path, mpt_error *err) { return mpt_outfile_close(f, path, 1, err); }

/* the CSV field of a label: quoted (labels hold commas: ga:a=1,b=2) */
static void csv_label(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* keep = 0: the temporary files removed (after an error; err untouched) */
int bench_close_writer(bench_writer *w, int keep, mpt_error *err) {
  int rc = 0;
  if (w->curves && mpt_outfile_close(w->curves, w->curves_path, keep, err) < 0) rc = err->code, keep = 0;
  if (w->runs && mpt_outfile_close(w->runs, w->runs_path, keep, err) < 0 && !rc) rc = err->code;
  free(w->col);
  w->curves = w->runs = NULL; /* the paths stay: curves_path is the plot's input */
  w->col = NULL;
  return rc;
}

int bench_open_writer(const bench_ctx *c, bench_writer *w, mpt_error *err) {
  memset(w, 0, sizeof *w);
  if (!(w->col = malloc((size_t)c->a.repeats * sizeof *w->col)))
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (!(w->curves = open_out(c->a.out, "curves.csv", w->curves_path, sizeof w->curves_path, err)) ||
      !(w->runs = open_out(c->a.out, "runs.csv", w->runs_path, sizeof w->runs_path, err))) {
    bench_close_writer(w, 0, err);
    return err->code;
  }
  fprintf(w->curves, "space,strategy,evaluations,median,q25,q75,mean,min,max,e_random,optimum\n");
  fprintf(w->runs, "space,strategy,repeat,seed,score,best,found_optimum,evaluations,failed,asks,ask_median_ms,strategy_s\n");
  return 0;
}

/* the curves.csv rows (quantiles over the runs at every evaluation count) and runs.csv rows of group
 * g = space * S + strategy, runs[r] and scores[r] its repeat r */
int bench_write_group(const bench_ctx *c, bench_writer *w, int64_t g, const mpt_bench_run *runs,
                      const double *scores, mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t R = a->repeats, B = a->budget;
  const bench_space *sp = &c->sp[g / c->n_st];
  const bench_strategy *st = &c->st[g % c->n_st];
  const mpt_bench_ref *ref = &sp->ref;
  double *col = w->col;
  for (int64_t k = 1; k <= B; k++) {
    double mean = 0;
    for (int64_t r = 0; r < R; r++) {
      double b = runs[r].best[k - 1];
      col[r] = isfinite(b) ? b : mpt_bench_worst(ref);
      mean += col[r] / (double)R;
    }
    double q25 = mpt_bench_quantile(col, R, 0.25), med = mpt_bench_quantile(col, R, 0.5),
           q75 = mpt_bench_quantile(col, R, 0.75);
    csv_label(w->curves, sp->label);
    fputc(',', w->curves);
    csv_label(w->curves, st->label);
    fprintf(w->curves, ",%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", (long long)k, med, q25, q75, mean, col[0],
            col[R - 1], mpt_bench_expected_random(ref, k), mpt_bench_optimum(ref));
  }
  for (int64_t r = 0; r < R; r++) {
    const mpt_bench_run *run = &runs[r];
    double *t = malloc((size_t)(run->n_asks > 0 ? run->n_asks : 1) * sizeof *t);
    if (!t) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    memcpy(t, run->ask_s, (size_t)run->n_asks * sizeof *t);
    double med = mpt_bench_quantile(t, run->n_asks, 0.5);
    free(t);
    double best = run->best[B - 1];
    csv_label(w->runs, sp->label);
    fputc(',', w->runs);
    csv_label(w->runs, st->label);
    fprintf(w->runs, ",%lld,%llu,%.9g,%.9g,%d,%lld,%lld,%d,%.6g,%.6g\n", (long long)r,
            (unsigned long long)(a->seed + (uint64_t)r), scores[r], isfinite(best) ? best : NAN,
            best <= mpt_bench_optimum(ref), (long long)run->n_evals, (long long)run->n_failed, run->n_asks, 1e3 * med,
            run->strategy_s);
  }
  return 0;
}

int bench_write_summary(const bench_ctx *c, const mpt_bench_summary *sum, mpt_error *err) {
  int S = c->n_st;
  char path[4096];
  FILE *f = open_out(c->a.out, "summary.csv", path, sizeof path, err);
  if (!f) return err->code;
  fprintf(f, "space,strategy,runs,score_mean,score_sd");
  for (int k = 0; k < sum[0].n_checkpoints; k++) fprintf(f, ",best_mean_%lld", (long long)sum[0].checkpoint[k]);
  fprintf(f, ",found_optimum,failed_mean,ask_median_ms,strategy_mean_s\n");
  for (int p = 0; p < c->n_sp; p++)
    for (int s = 0; s < S; s++) {
      const mpt_bench_summary *m = &sum[p * S + s];
      csv_label(f, c->sp[p].label);
      fputc(',', f);
      csv_label(f, c->st[s].label);
      fprintf(f, ",%d,%.9g,%.9g", m->n_runs, m->score_mean, m->score_sd);
      for (int k = 0; k < m->n_checkpoints; k++) fprintf(f, ",%.9g", m->best_mean[k]);
      fprintf(f, ",%d,%.9g,%.6g,%.6g\n", m->found_optimum, m->failed_mean, 1e3 * m->ask_median_s, m->strategy_mean_s);
    }
  return close_out(f, path, err) < 0 ? err->code : 0;
}
