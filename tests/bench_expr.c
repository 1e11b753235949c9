/* tests/bench_expr.c: benchmark of the expression hot path (not a test): ns per mpt_expr_eval_bool of
 * typical T1 constraints over a sweep of integer parameter values, and compile time per expression.
 * Usage: bench_expr [evaluations-per-expression] [--slow]   (default 20,000,000; --slow disables the
 * numeric fast path (spaces/expr/fast.c) to time the general evaluator) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "spaces/expr/expr.h"
#include <string.h>
#include "spaces/sys/clock.h"

int main(int argc, char **argv) {
  long iters = 20000000L;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--slow")) mpt_expr_set_fast_path(0);
    else iters = atol(argv[i]);
  }
  static const char *const names[] = {"block_size_x", "tile_size_x", "temporal_tiling_factor", "block_size_y",
                                      "tile_size_y", "sh_power", "KWG", "MDIMC", "NDIMC", "MDIMA", "use_padding"};
  const int n_names = 11;
  const char *exprs[] = {
      "(block_size_x * tile_size_x + temporal_tiling_factor * 2) * (block_size_y * tile_size_y + temporal_tiling_factor * 2) * (2 + sh_power) * 4 <= 49152",
      "32 <= block_size_x * block_size_y <= 1024",
      "use_padding==0 or block_size_x % 32 != 0",
      "temporal_tiling_factor % tile_size_x == 0",
      "KWG % ((MDIMC * NDIMC)/MDIMA) == 0",
      "not (KWG == 128 and MDIMC == 128 and NDIMC == 8 and MDIMA == 8)",
      "block_size_x in [16, 32, 64]",
  };
  const int n_exprs = (int)(sizeof exprs / sizeof exprs[0]);
  mpt_value vars[11];
  for (int i = 0; i < n_names; i++) vars[i] = mpt_value_int(1);
  /* 5 rounds per expression; the minimum filters out interference from other work on the machine */
  enum { ROUNDS = 5 };
  printf("%-60s %10s %10s %8s\n", "expression", "min ns", "median ns", "true");
  for (int k = 0; k < n_exprs; k++) {
    mpt_expr *e;
    mpt_error err;
    int col;
    if (mpt_expr_compile(exprs[k], names, n_names, &e, &col, &err)) {
      fprintf(stderr, "bench_expr: %s\n", err.msg);
      return 1;
    }
    double ns[ROUNDS];
    long n_true = 0, per = iters / ROUNDS > 0 ? iters / ROUNDS : 1;
    for (int round = 0; round < ROUNDS; round++) {
      n_true = 0;
      double t0 = mpt_clock_thread_cpu_s();
      for (long it = 0; it < per; it++) {
        /* vary the parameters like an enumeration does */
        vars[0].u.i = 1 + (it & 1023);
        vars[1].u.i = 1 + ((it >> 10) & 7);
        vars[2].u.i = 1 + ((it >> 3) & 7);
        vars[3].u.i = 1 + ((it >> 6) & 31);
        vars[6].u.i = 16 << ((it >> 4) & 3);
        vars[7].u.i = 8 << ((it >> 2) & 3);
        vars[8].u.i = 8 << ((it >> 7) & 3);
        vars[9].u.i = 8 << ((it >> 9) & 3);
        vars[10].u.i = (it >> 5) & 1;
        int truth;
        if (mpt_expr_eval_bool(e, vars, &truth, &err)) {
          fprintf(stderr, "bench_expr: %s\n", err.msg);
          return 1;
        }
        n_true += truth;
      }
      ns[round] = 1e9 * (mpt_clock_thread_cpu_s() - t0) / (double)per;
    }
    for (int i = 0; i < ROUNDS; i++) /* sort */
      for (int j = i + 1; j < ROUNDS; j++)
        if (ns[j] < ns[i]) { double t = ns[i]; ns[i] = ns[j]; ns[j] = t; }
    printf("%-60.60s %10.1f %10.1f %8.3f\n", exprs[k], ns[0], ns[ROUNDS / 2], (double)n_true / (double)per);
    mpt_expr_free(e);
  }
  /* compile cost */
  double t0 = mpt_clock_thread_cpu_s();
  long nc = iters / 100 > 1000 ? iters / 100 : 1000;
  for (long it = 0; it < nc; it++) {
    mpt_expr *e;
    mpt_error err;
    int col;
    if (mpt_expr_compile(exprs[it % n_exprs], names, n_names, &e, &col, &err)) return 1;
    mpt_expr_free(e);
  }
  printf("compile: %.2f us/expression (mean over the expressions above)\n", 1e6 * (mpt_clock_thread_cpu_s() - t0) / (double)nc);
  return 0;
}
