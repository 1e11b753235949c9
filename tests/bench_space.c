/* tests/bench_space.c: benchmark of the search space (docs/PERFORMANCE.md): construction time (median of
 * R builds) and memory of every T1 file given, and the cost of the hot queries (lookup, the four
 * neighbourhoods, random/LHS sampling) on it.
 * usage: bench_space [-r R] FILE.json...   (prints one line per file) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "spaces/space.h"
#include "spaces/sys/clock.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int R = 5, first = 1;
  if (argc > 2 && strcmp(argv[1], "-r") == 0) {
    R = atoi(argv[2]);
    first = 3;
  }
  if (first >= argc || R < 1) {
    fprintf(stderr, "usage: bench_space [-r R] FILE.json...\n");
    return 2;
  }
  double total = 0, total_cpu = 0;
  printf("%-26s %10s %9s %8s %9s %9s | %8s %8s %8s %8s %8s %8s | %8s %8s %8s\n", "file", "valid", "build_ms", "min_ms", "cpu_ms", "MiB",
         "lookup", "strict", "adjac", "hamming", "idxdist", "rand100", "idx_any", "lhs20", "mm20x20");
  printf("%-26s %10s %9s %8s %9s %9s | %8s %8s %8s %8s %8s %8s | %8s %8s %8s\n", "", "", "(median)", "", "(median)", "", "ns", "us", "us", "us",
         "us", "us", "cpu us", "cpu ms", "cpu ms");
  for (int f = first; f < argc; f++) {
    mpt_problem *p = NULL;
    mpt_error err = {0};
    if (mpt_problem_load(argv[f], &p, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    double *t = malloc(sizeof(double) * (size_t)R), *c = malloc(sizeof(double) * (size_t)R);
    mpt_space *s = NULL;
    for (int r = 0; r < R; r++) {
      mpt_space_free(s);
      double c0 = mpt_clock_thread_cpu_s();
      int brc = mpt_space_build(p, &s, &err);
      c[r] = mpt_clock_thread_cpu_s() - c0;
      if (brc) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
      }
      mpt_space_stats st;
      mpt_space_stats_get(s, &st);
      t[r] = st.seconds;
    }
    qsort(t, (size_t)R, sizeof(double), cmp_d);
    qsort(c, (size_t)R, sizeof(double), cmp_d);
    double med = R % 2 ? t[R / 2] : 0.5 * (t[R / 2 - 1] + t[R / 2]);
    double cmed = R % 2 ? c[R / 2] : 0.5 * (c[R / 2 - 1] + c[R / 2]);
    total += med;
    total_cpu += cmed;
    mpt_space_stats st;
    mpt_space_stats_get(s, &st);
    /* queries at random valid centres */
    int d = mpt_space_dims(s);
    int64_t n = mpt_space_size(s);
    mpt_rng rng;
    mpt_rng_seed(&rng, 1);
    const int Q = 2000;
    int *cent = malloc(sizeof(int) * (size_t)d * Q);
    for (int q = 0; q < Q; q++) mpt_space_config(s, (int64_t)mpt_rng_below(&rng, (uint64_t)n), cent + q * d);
    double t0 = mpt_clock_mono_s();
    int64_t sink = 0;
    for (int rep = 0; rep < 50; rep++)
      for (int q = 0; q < Q; q++) sink += mpt_space_lookup(s, cent + q * d);
    double lookup_ns = (mpt_clock_mono_s() - t0) / (50.0 * Q) * 1e9;
    double nb_us[4];
    int64_t *buf = malloc(sizeof(int64_t) * 4096);
    for (int k = 0; k < 4; k++) {
      int nq = k == 3 ? 200 : Q;
      t0 = mpt_clock_mono_s();
      for (int q = 0; q < nq; q++) sink += mpt_space_neighbors(s, cent + q * d, (mpt_neighbor_kind)k, buf, 4096);
      nb_us[k] = (mpt_clock_mono_s() - t0) / nq * 1e6;
    }
    int64_t ids[100];
    t0 = mpt_clock_mono_s();
    for (int q = 0; q < 20; q++) sink += mpt_space_sample_random(s, &rng, n < 100 ? n : 100, ids);
    double rand_us = (mpt_clock_mono_s() - t0) / 20 * 1e6;
    /* index distance from arbitrary (mostly invalid) configurations, LHS and maximin designs of 20 */
    for (int q = 0; q < 200; q++)
      for (int p = 0; p < d; p++) cent[q * d + p] = (int)mpt_rng_below(&rng, (uint64_t)mpt_space_n_values(s, p));
    t0 = mpt_clock_thread_cpu_s();
    for (int q = 0; q < 200; q++) sink += mpt_space_neighbors(s, cent + q * d, MPT_NB_INDEX_DISTANCE, buf, 4096);
    double idx_any_us = (mpt_clock_thread_cpu_s() - t0) / 200 * 1e6;
    t0 = mpt_clock_thread_cpu_s();
    for (int q = 0; q < 5; q++) sink += mpt_space_sample_lhs(s, &rng, 20, ids);
    double lhs_ms = (mpt_clock_thread_cpu_s() - t0) / 5 * 1e3;
    t0 = mpt_clock_thread_cpu_s();
    sink += mpt_space_sample_maximin(s, &rng, 20, 20, ids);
    double mm_ms = (mpt_clock_thread_cpu_s() - t0) * 1e3;
    const char *base = strrchr(argv[f], '/');
    printf("%-26s %10lld %9.3f %8.3f %9.3f %9.2f | %8.0f %8.1f %8.1f %8.1f %8.1f %8.1f | %8.1f %8.2f %8.1f%s\n",
           base ? base + 1 : argv[f], (long long)st.valid, med * 1e3, t[0] * 1e3, cmed * 1e3, st.bytes / 1048576.0,
           lookup_ns, nb_us[0], nb_us[1], nb_us[2], nb_us[3], rand_us, idx_any_us, lhs_ms, mm_ms,
           sink == 42 ? " " : "");
    free(buf);
    free(cent);
    free(t);
    free(c);
    mpt_space_free(s);
    mpt_problem_free(p);
  }
  printf("total of medians: %.3f ms wall, %.3f ms CPU\n", total * 1e3, total_cpu * 1e3);
  return 0;
}
