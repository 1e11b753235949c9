/* jobs/bench/cmd_bench_tables.c: `mptune bench`'s tables on stdout (rank 0, at the end): the scores of every
 * strategy on every space and their mean, then per space its strategies' score, best@k, optima found,
 * failed evaluations and times. */
#include <math.h>
#include <stdio.h>
#include "jobs/bench/bench.h"
#include "jobs/bench/cmd_bench_impl.h"

/* a table cell: n/a where a space has no score (its optimum is found by random search at once) */
static void print_score(double v) {
  if (isnan(v)) printf(" n/a |");
  else printf(" %.3f |", v);
}

void bench_print_tables(const bench_ctx *c, const mpt_bench_summary *sum) {
  const bench_args *a = &c->a;
  int S = c->n_st;
  printf("## Scores (%lld repeats, budget %lld, batch %lld, seeds %llu..%llu; 1 = optimum at once, 0 = random search)\n\n",
         (long long)a->repeats, (long long)a->budget, (long long)a->batch, (unsigned long long)a->seed,
         (unsigned long long)(a->seed + (uint64_t)a->repeats - 1));
  printf("| space |");
  for (int s = 0; s < S; s++) printf(" %s |", c->st[s].label);
  printf("\n| --- |");
  for (int s = 0; s < S; s++) printf(" ---: |");
  printf("\n");
  for (int p = 0; p < c->n_sp; p++) {
    printf("| %s |", c->sp[p].label);
    for (int s = 0; s < S; s++) print_score(sum[p * S + s].score_mean);
    printf("\n");
  }
  printf("| mean |");
  for (int s = 0; s < S; s++) { /* over the spaces that have a score */
    double m = 0;
    int n = 0;
    for (int p = 0; p < c->n_sp; p++)
      if (!isnan(sum[p * S + s].score_mean)) m += sum[p * S + s].score_mean, n++;
    print_score(n ? m / n : NAN);
  }
  printf("\n\n");
  for (int p = 0; p < c->n_sp; p++) {
    const bench_space *b = &c->sp[p];
    printf("### %s: %lld configurations, %lld valid, optimum %.6g, E_random(%lld) %.6g\n\n", b->label,
           (long long)b->ref.n, (long long)b->ref.n_valid, mpt_bench_optimum(&b->ref), (long long)a->budget,
           mpt_bench_expected_random(&b->ref, a->budget));
    const mpt_bench_summary *s0 = &sum[p * S];
    printf("| strategy | score | sd |");
    for (int k = 0; k < s0->n_checkpoints; k++) printf(" best@%lld |", (long long)s0->checkpoint[k]);
    printf(" optimum found | failed evals (mean) | ask ms (median) | strategy s/run |\n| --- | ---: | ---: |");
    for (int k = 0; k < s0->n_checkpoints; k++) printf(" ---: |");
    printf(" ---: | ---: | ---: | ---: |\n");
    for (int s = 0; s < S; s++) {
      const mpt_bench_summary *m = &sum[p * S + s];
      printf("| %s |", c->st[s].label);
      print_score(m->score_mean);
      print_score(m->score_sd);
      for (int k = 0; k < m->n_checkpoints; k++) printf(" %.6g |", m->best_mean[k]);
      printf(" %d/%d | %.1f | %.3g | %.3g |\n", m->found_optimum, m->n_runs, m->failed_mean, 1e3 * m->ask_median_s,
             m->strategy_mean_s);
    }
    printf("\n");
  }
  fflush(stdout);
}
