/* tests/bench_lhs_valid.c: time of bo's default initial design, mpt_space_sample_lhs_valid over the
 * parameters with more than one value (bo's active ones), on T1 files (docs/PERFORMANCE.md):
 *
 *   bench_lhs_valid [-n 20] [-s SEED] PROBLEM.json...
 *
 * Prints per file the valid count, the space build time, the design's wall and thread CPU time, and a
 * checksum of the picked ids (equal between builds that pick the same designs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/sys/clock.h"
#include "spaces/space.h"

int main(int argc, char **argv) {
  int64_t n = 20;
  uint64_t seed = 1;
  int first = 1;
  for (; first + 1 < argc && argv[first][0] == '-'; first += 2) {
    if (strcmp(argv[first], "-n") == 0) n = atoll(argv[first + 1]);
    else if (strcmp(argv[first], "-s") == 0) seed = strtoull(argv[first + 1], NULL, 10);
    else break;
  }
  if (first >= argc || n < 1) {
    fprintf(stderr, "usage: bench_lhs_valid [-n 20] [-s SEED] PROBLEM.json...\n");
    return 2;
  }
  printf("%-26s %12s %9s %10s %10s %s\n", "file", "valid", "build_s", "design_s", "cpu_s", "checksum");
  for (int f = first; f < argc; f++) {
    mpt_problem *p = NULL;
    mpt_space *s = NULL;
    mpt_error err = {0};
    double t0 = mpt_clock_mono_s();
    if (mpt_problem_load(argv[f], &p, &err) || mpt_space_build(p, &s, &err)) {
      fprintf(stderr, "bench_lhs_valid: %s\n", err.msg);
      return 1;
    }
    double build_s = mpt_clock_mono_s() - t0;
    int *params = malloc(sizeof(int) * (size_t)mpt_space_dims(s) + 1), np = 0;
    for (int q = 0; q < mpt_space_dims(s); q++)
      if (mpt_space_n_values(s, q) > 1) params[np++] = q;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)n);
    mpt_rng rng;
    mpt_rng_seed(&rng, seed);
    t0 = mpt_clock_mono_s();
    double c0 = mpt_clock_thread_cpu_s();
    int64_t m = mpt_space_sample_lhs_valid(s, params, np, &rng, n, ids);
    double cpu = mpt_clock_thread_cpu_s() - c0, wall = mpt_clock_mono_s() - t0;
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < m; i++) h = (h ^ (uint64_t)ids[i]) * 1099511628211ull;
    const char *base = strrchr(argv[f], '/');
    printf("%-26s %12lld %9.2f %10.3f %10.3f %016llx (%lld ids)\n", base ? base + 1 : argv[f], (long long)mpt_space_size(s),
           build_s, wall, cpu, (unsigned long long)h, (long long)m);
    free(ids);
    free(params);
    mpt_space_free(s);
    mpt_problem_free(p);
  }
  return 0;
}
