/* tests/bench_gpu_compile.c: compile-time benchmark of the GPU examples (docs/PERFORMANCE.md):
 * compiles N configurations of a T1 problem (its default, then a seeded uniform sample of the valid
 * set) with NVRTC or hiprtc through the evaluators' own path (kernel_spec defines, isolated child),
 * and prints per-configuration times and mean/median/min/max: the compiler's own time, the wall
 * time of the isolated call (fork + compile + transfer) and the CPU time of the compiling child
 * (user + system, from getrusage: what a loaded machine does not inflate).
 *   bench_gpu_compile [-n N] [--seed S] nvrtc|hiprtc ARCH FILE.json...  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "evaluators/gpu/cuda_api.h"
#include "evaluators/gpu/gpu_eval.h"
#include "evaluators/gpu/hip_api.h"
#include "evaluators/kernel_spec.h"
#include "spaces/sys/rng.h"
#include "spaces/space.h"
#include "spaces/sys/clock.h"

static double children_cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void summary(const char *what, double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  printf("  %-22s mean %7.0f  median %7.0f  min %7.0f  max %7.0f ms\n", what, s / n, med, v[0], v[n - 1]);
}

int main(int argc, char **argv) {
  int n = 10;
  uint64_t seed = 1;
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (strcmp(argv[a], "-n") == 0 && a + 1 < argc)
      n = atoi(argv[++a]);
    else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
      seed = strtoull(argv[++a], NULL, 10);
    else {
      fprintf(stderr, "bench_gpu_compile: unknown option %s\n", argv[a]);
      return 2;
    }
  }
  if (argc - a < 3 || n < 1) {
    fprintf(stderr, "usage: bench_gpu_compile [-n N] [--seed S] nvrtc|hiprtc ARCH FILE.json...\n");
    return 2;
  }
  const char *compiler = argv[a], *arch = argv[a + 1];
  mpt_rtc_compile_fn fn = strcmp(compiler, "nvrtc") == 0 ? mpt_nvrtc_compile
                          : strcmp(compiler, "hiprtc") == 0 ? mpt_hiprtc_compile : NULL;
  if (!fn) {
    fprintf(stderr, "bench_gpu_compile: compiler must be nvrtc or hiprtc\n");
    return 2;
  }
  int status = 0;
  for (int f = a + 2; f < argc; f++) {
    mpt_error err;
    mpt_error_clear(&err);
    mpt_problem *p = NULL;
    mpt_space *s = NULL;
    mpt_kernel_spec *ks = NULL;
    if (mpt_problem_load(argv[f], &p, &err) || mpt_space_build(p, &s, &err) || mpt_kspec_load(p, &ks, &err)) {
      fprintf(stderr, "bench_gpu_compile: %s\n", err.msg);
      mpt_space_free(s);
      mpt_problem_free(p);
      return 1;
    }
    int64_t size = mpt_space_size(s);
    int m = n < size ? n : (int)size;
    int64_t *ids = malloc((size_t)m * sizeof *ids);
    double *comp = malloc((size_t)m * sizeof *comp), *wall = malloc((size_t)m * sizeof *wall);
    double *cpu = malloc((size_t)m * sizeof *cpu);
    mpt_rng rng;
    mpt_rng_seed(&rng, seed);
    ids[0] = mpt_space_default_id(s) >= 0 ? mpt_space_default_id(s) : 0;
    for (int i = 1; i < m; i++) {
      int dup;
      do {
        ids[i] = (int64_t)mpt_rng_below(&rng, (uint64_t)size);
        dup = 0;
        for (int j = 0; j < i; j++) dup |= ids[j] == ids[i];
      } while (dup);
    }
    printf("%s: %s for %s, %d of %lld configurations\n", argv[f], compiler, arch, m, (long long)size);
    int ok = 0;
    for (int i = 0; i < m; i++) {
      mpt_rtc_result r;
      double t0 = mpt_clock_mono_ms(), c0 = children_cpu_ms();
      int rc = mpt_gpu_compile_config(ks, s, ids[i], fn, arch, 600, NULL, &r, &err);
      double w = mpt_clock_mono_ms() - t0, c = children_cpu_ms() - c0;
      if (rc) {
        fprintf(stderr, "bench_gpu_compile: %s\n", err.msg);
        status = 1;
        break;
      }
      char cfg[512];
      mpt_space_format(s, ids[i], cfg, sizeof cfg);
      printf("  %7.0f ms (wall %7.0f, cpu %7.0f ms) %7zu bytes %s %s\n", r.compile_ms, w, c, r.code_size,
             r.ok ? "ok " : "ERR", cfg);
      if (r.ok) {
        comp[ok] = r.compile_ms;
        wall[ok] = w;
        cpu[ok] = c;
        ok++;
      } else {
        fprintf(stderr, "%s\n", r.log ? r.log : "");
        status = 1;
      }
      mpt_rtc_result_free(&r);
    }
    if (ok > 0) {
      summary("compiler", comp, ok);
      summary("isolated call (wall)", wall, ok);
      summary("compiling child (cpu)", cpu, ok);
    }
    free(ids);
    free(comp);
    free(wall);
    free(cpu);
    mpt_kspec_free(ks);
    mpt_space_free(s);
    mpt_problem_free(p);
  }
  return status;
}
