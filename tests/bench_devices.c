/* tests/bench_devices.c: times of the device side of a run's start (docs/PERFORMANCE.md, "Devices: limits per
 * class, auto binding"):
 *
 *   bench_devices [-n 5] [-t MAX_THREADS] [-m MAX_SHARED] PROBLEM.json...
 *
 * A file whose launch geometry cannot be read (its first line of the error shown) is skipped.
 * Per file: the valid count, the time of mpt_device_excluded (the configurations a device of MAX_THREADS threads
 * and MAX_SHARED bytes per block refuses: the best of n runs) and how many it refuses; then the time of
 * mpt_gpu_probe (the node's GPUs listed in a child process, as --evaluator auto does at open: the best of n). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/device_limits.h"
#include "evaluators/gpu/gpu_probe.h"
#include "spaces/sys/clock.h"
#include "spaces/space.h"

/* the best of n runs of mpt_device_excluded on file; 0 or 1 */
static int bench_file(const char *file, int n, const mpt_device_info *d) {
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  mpt_error err = {0};
  if (mpt_problem_load(file, &p, &err) || mpt_space_build(p, &s, &err)) {
    fprintf(stderr, "bench_devices: %s\n", err.msg);
    return 1;
  }
  uint8_t *ex = malloc((size_t)mpt_space_size(s) + 1);
  double best = 1e30;
  int64_t refused = 0;
  for (int r = 0; r < n; r++) {
    double t0 = mpt_clock_mono_s();
    if (mpt_device_excluded(p, s, d, ex, &refused, &err)) { /* a file whose launch cannot be read: said, skipped */
      printf("%-26s %12lld  (%.200s)\n", strrchr(file, '/') ? strrchr(file, '/') + 1 : file,
             (long long)mpt_space_size(s), err.msg);
      break;
    }
    double t = mpt_clock_mono_s() - t0;
    if (t < best) best = t;
  }
  const char *base = strrchr(file, '/');
  if (best < 1e30)
    printf("%-26s %12lld %12.4f %10.3f %12lld\n", base ? base + 1 : file, (long long)mpt_space_size(s), best,
         best * 1e9 / (double)(mpt_space_size(s) ? mpt_space_size(s) : 1) / 1e3, (long long)refused);
  free(ex);
  mpt_space_free(s);
  mpt_problem_free(p);
  return 0;
}

int main(int argc, char **argv) {
  int n = 5, first = 1;
  mpt_device_info d;
  memset(&d, 0, sizeof d);
  d.max_threads_per_block = 1024;
  d.max_shared_per_block = 49152;
  for (; first + 1 < argc && argv[first][0] == '-'; first += 2) {
    if (strcmp(argv[first], "-n") == 0) n = atoi(argv[first + 1]);
    else if (strcmp(argv[first], "-t") == 0) d.max_threads_per_block = atoi(argv[first + 1]);
    else if (strcmp(argv[first], "-m") == 0) d.max_shared_per_block = atoll(argv[first + 1]);
    else break;
  }
  if (first >= argc || n < 1) {
    fprintf(stderr, "usage: bench_devices [-n 5] [-t MAX_THREADS] [-m MAX_SHARED] PROBLEM.json...\n");
    return 2;
  }
  printf("%-26s %12s %12s %10s %12s\n", "file", "valid", "excluded_s", "us/config", "refused");
  for (int f = first; f < argc; f++)
    if (bench_file(argv[f], n, &d)) return 1;
  double best = 1e30;
  for (int r = 0; r < n; r++) {
    mpt_gpu_desc g[MPT_GPU_PROBE_MAX];
    mpt_error err = {0};
    double t0 = mpt_clock_mono_s();
    int found = mpt_gpu_probe(g, MPT_GPU_PROBE_MAX, NULL, 0, &err);
    double t = mpt_clock_mono_s() - t0;
    if (found < 0) fprintf(stderr, "bench_devices: %s\n", err.msg);
    if (t < best) best = t;
  }
  printf("mpt_gpu_probe: %.1f ms (best of %d)\n", best * 1e3, n);
  return 0;
}
