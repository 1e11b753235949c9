/* evaluators/cpu/cpu_child.c: the cpu evaluator's child side (the isolated process, evaluators/isolate.h):
 * one evaluation of a compiled variant: dlopen, the kernel found, its arguments' working copies set, a warm-up
 * call whose output is verified against the reference (or recorded as it), for a variant that started threads a
 * few more untimed calls, then the timed iterations, a run the scheduler delayed run again. */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/cpu/cpu_internal.h"
#include "spaces/sys/clock.h"

typedef void (*launch_fn)(void *const *);
typedef float (*timed_launch_fn)(void *const *); /* ReturnsTime: the kernel's time in ms */

/* the threads of this process (/proc/self/status), 1 when unknown */
static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = 1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
  if (f) fclose(f);
  return n;
}

/* the call wrapper of the variant loaded at h, once the kernel is found there too; NULL with r's reason when not */
static void *find_launch(const cpu_state *st, void *h, cpu_resp *r) {
  void *kern = dlsym(h, st->ks->kernel_name);
  void *sym = dlsym(h, CPU_LAUNCH_SYMBOL);
  if (kern && sym) return sym;
  r->status = MPT_STATUS_LAUNCH_ERROR;
  snprintf(r->reason, sizeof r->reason, "dlsym: kernel '%s' not found in %s", st->ks->kernel_name, st->ks->kernel_file);
  return NULL;
}

/* one call of the kernel through the wrapper at sym: the time it returns (ReturnsTime), else NAN */
static double call_kernel(const cpu_state *st, void *sym) {
  if (st->ks->returns_time == 1) {
    timed_launch_fn timed;
    memcpy(&timed, &sym, sizeof timed);
    return (double)timed(st->work);
  }
  launch_fn launch;
  memcpy(&launch, &sym, sizeof launch);
  launch(st->work);
  return NAN;
}

/* the time the threads of this process have waited on a runqueue so far (ms: the second field of each thread's
 * /proc/self/task/TID/schedstat, in ns), NAN when the kernel does not tell */
static double runqueue_wait_ms(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return NAN;
  double sum = 0;
  int seen = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[96];
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    FILE *f = fopen(path, "r");
    unsigned long long ran, waited;
    if (f && fscanf(f, "%llu %llu", &ran, &waited) == 2) sum += (double)waited * 1e-6, seen++;
    if (f) fclose(f);
  }
  closedir(d);
  return seen ? sum : NAN;
}

/* the timed iterations into r: each CLOCK_MONOTONIC around the call, or the time the kernel returns, which must
 * be a time (finite, >= 0: Kernel Tuner takes a negative one for a launch that asked for too many resources). A run
 * the scheduler delayed (its threads waited for a core for CPU_DELAYED_SHARE of it: 1-10 ms on a loaded node, where
 * an OpenMP kernel of tests/kernels/omp.c takes 3 us) is run again, within the bounds of CPU_DELAYED_RUNS */
static void time_iterations(const cpu_state *st, void *sym, int iterations, cpu_resp *r) {
  int n = iterations < MPT_OBS_MAX_TIMES ? iterations : MPT_OBS_MAX_TIMES, again = 0;
  double kept_ms = 0, set_aside_ms = 0;
  for (int it = 0; it < n; it++) {
    double w = runqueue_wait_ms(), a = mpt_clock_mono_ms();
    double returned = call_kernel(st, sym), wall = mpt_clock_mono_ms() - a;
    w = runqueue_wait_ms() - w;
    r->times[it] = st->ks->returns_time == 1 ? returned : wall;
    if (w >= CPU_DELAYED_MIN_MS && w >= CPU_DELAYED_SHARE * wall && again < CPU_DELAYED_RUNS * n &&
        set_aside_ms + wall <= kept_ms + CPU_DELAYED_BUDGET_MS) {
      again++;
      set_aside_ms += wall;
      it--;
      continue;
    }
    kept_ms += wall;
    if (st->ks->returns_time == 1 && !(returned >= 0 && isfinite(returned))) {
      r->status = MPT_STATUS_RUNTIME_ERROR;
      snprintf(r->reason, sizeof r->reason, "the kernel returned %g as its time in ms (ReturnsTime): not a time",
               returned);
      return;
    }
  }
  r->n_times = n;
}

long mpt_cpu_serve(void *ctx, const void *reqp, size_t req_len, void *respp, size_t cap) {
  cpu_state *st = ctx;
  const cpu_req *req = reqp;
  cpu_resp *r = respp;
  if (req_len != sizeof *req || cap < sizeof *r) return -1;
  memset(r, 0, sizeof *r);
  const mpt_kernel_spec *ks = st->ks;
  double t0 = mpt_clock_mono_ms();
  void *h = dlopen(req->so_path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    r->status = MPT_STATUS_LAUNCH_ERROR;
    const char *e = dlerror();
    size_t pl = strlen(req->so_path);
    if (e && strncmp(e, req->so_path, pl) == 0 && e[pl] == ':') e += pl + 1; /* the scratch path says nothing */
    while (e && *e == ' ') e++;
    snprintf(r->reason, sizeof r->reason, "dlopen: %s", e ? e : "failed");
    return sizeof *r;
  }
  void *sym = find_launch(st, h, r);
  if (!sym) {
    dlclose(h);
    return sizeof *r;
  }
  for (int i = 0; i < ks->n_args; i++) memcpy(st->work[i], st->args->init[i], ks->args[i].bytes);
  double warm0 = mpt_clock_mono_ms();
  call_kernel(st, sym); /* warm-up, and the run whose output is verified */
  int threaded = thread_count() > 1;
  r->status = MPT_STATUS_OK;
  if (req->mode == REQ_REFERENCE) {
    for (int i = 0; i < ks->n_args; i++)
      if (ks->args[i].output) mpt_args_set_reference(st->args, i, st->work[i]);
  } else {
    for (int i = 0; i < ks->n_args; i++)
      if (ks->args[i].output && !mpt_args_compare(st->args, i, st->work[i], r->reason, sizeof r->reason)) {
        r->status = MPT_STATUS_WRONG_RESULT;
        break;
      }
  }
  for (int i = 0; r->status == MPT_STATUS_OK && threaded && i < CPU_THREADED_WARMUPS &&
                  mpt_clock_mono_ms() - warm0 <= CPU_THREADED_WARMUP_MS; i++)
    call_kernel(st, sym); /* the pool's threads settle on the cores before the timed runs */
  if (r->status == MPT_STATUS_OK) time_iterations(st, sym, req->iterations, r);
  r->benchmark_ms = mpt_clock_mono_ms() - t0;
  /* a variant that started threads (OpenMP's pool) keeps its library: unloading it under running
   * threads crashes them, and the next variant with them; this child then ends after its answer */
  if (threaded || thread_count() > 1) mpt_isolate_retire();
  else dlclose(h);
  return sizeof *r;
}
