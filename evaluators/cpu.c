/* evaluators/cpu.c: the `cpu` evaluator. Compiles the problem's C or C++ kernel per configuration (cc or c++,
 * or the compiler the problem or $CC/$CXX names: evaluators/cpu_toolchain.h; -O3 -march=native -fPIC -shared,
 * the problem's options, -D per parameter; its temporary files in a private TMPDIR, emptied after each compile)
 * into a shared object, and runs it in an isolated child process (evaluators/isolate.h): dlopen, one call of
 * the kernel per "launch" with the arguments in T1 order, on 64-byte aligned working copies between guard pages
 * (made before the child is forked, so a fault's address names the argument it hit), output checked against
 * the reference (the default configuration's output, computed in open(), or ReferenceArguments), a warm-up
 * run, then the timed iterations (CLOCK_MONOTONIC, or the time in ms a kernel returns with ReturnsTime).
 * Crashes, hangs and memory exhaustion of a variant become `crash` and `timeout` observations; the child is
 * restarted. Each worker's scratch directory names its owner process (a marker file); open removes those whose
 * owner is provably gone (a killed run's). Details: docs/KERNELS.md. This file holds the evaluator's table, its
 * options, open (in phases), evaluate and close; the parts they call are in evaluators/cpu/, one concern a file
 * (the child's side, running a variant, compiles, compiler messages, the scratch directory, compile-ahead, the
 * reference), sharing evaluators/cpu/cpu_internal.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "evaluators/cpu/cpu_internal.h"

static void cpu_close(mpt_evaluator *ev);

static void cpu_device(mpt_evaluator *ev) {
  mpt_device_info *d = &ev->device;
  snprintf(d->vendor, sizeof d->vendor, "CPU");
  snprintf(d->name, sizeof d->name, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
        char *c = strchr(line, ':');
        if (!c) continue;
        c++;
        while (*c == ' ' || *c == '\t') c++;
        c[strcspn(c, "\n")] = 0;
        snprintf(d->name, sizeof d->name, "%s", c);
        break;
      }
    }
    fclose(f);
  }
  struct utsname u;
  if (uname(&u) == 0) snprintf(d->arch, sizeof d->arch, "%s", u.machine);
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  d->memory_gib = pages > 0 && psz > 0 ? (double)pages * (double)psz / (1024.0 * 1024.0 * 1024.0) : 0;
  d->index = -1;
}

/* ---- open, in phases: the kernel, the scratch directory, its return type, the call wrapper, the child, the
 * reference ---- */

/* the working copies of the arguments the kernel runs on: made here, before any child is forked, so that the
 * addresses a child faults at can be told apart here (describe_fault) */
static int make_work_buffers(cpu_state *st, mpt_error *err) {
  const mpt_kernel_spec *ks = st->ks;
  st->work = calloc((size_t)ks->n_args + 1, sizeof(void *));
  if (!st->work) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < ks->n_args; i++)
    if (!(st->work[i] = mpt_args_buffer_alloc(ks->args[i].bytes)))
      return mpt_error_set(err, MPT_ERR_NOMEM, "%s: KernelSpecification.Arguments[%d] (%s): cannot allocate %zu bytes "
                           "for its working copy", ks->problem->path, i, ks->args[i].name, ks->args[i].bytes);
  return 0;
}

/* the KernelSpecification (a C or C++ kernel), its compilers, the timed iterations (settings, else the spec's, at
 * most MPT_OBS_MAX_TIMES), the argument buffers and their working copies */
static int load_kernel(mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  const mpt_problem *p = ev->problem;
  int rc = mpt_kspec_load(p, &st->ks, err);
  if (rc) return rc;
  if (st->ks->lang != MPT_LANG_C && st->ks->lang != MPT_LANG_CXX)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: KernelSpecification.Language is \"%s\"; the cpu evaluator runs C "
                         "kernels (\"Language\": \"C\") and C++ kernels (\"C++\")", p->path, st->ks->language);
  if ((rc = mpt_cpu_cc_kernel(st->ks, &st->cc, err)) || (rc = mpt_cpu_cc_wrapper(st->ks, &st->cc_wrapper, err)))
    return rc;
  st->returns_float = st->ks->returns_time == 1;
  st->iterations = ev->settings.iterations > 0 ? ev->settings.iterations : st->ks->iterations;
  if (st->iterations > MPT_OBS_MAX_TIMES) st->iterations = MPT_OBS_MAX_TIMES;
  if ((rc = mpt_args_create(st->ks, 1, &st->args, err))) return rc;
  return make_work_buffers(st, err);
}

static int cpu_open(mpt_evaluator *ev, mpt_error *err) {
  cpu_device(ev);
  cpu_state *st = calloc(1, sizeof *st);
  if (!st) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  ev->data = st;
  st->best_bench_ms = NAN;
  st->ref_objective = NAN;
  st->timeout_s = ev->settings.timeout_s > 0 ? ev->settings.timeout_s : 0;
  st->watch = ev->watch;
  int rc = load_kernel(ev, st, err);
  if (rc == 0) rc = mpt_cpu_make_scratch_dir(st, &ev->settings, err);
  if (rc == 0) rc = mpt_cpu_check_return_type(ev, st, err);
  if (rc == 0) rc = mpt_cpu_compile_call_wrapper(st, err);
  if (rc == 0) rc = mpt_cpu_start_isolation(ev, st, err);
  if (rc == 0) rc = mpt_cpu_run_reference(ev, st, err);
  if (rc) cpu_close(ev); /* whatever the phases made so far */
  return rc;
}

static int cpu_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err) {
  cpu_state *st = ev->data;
  int dims = mpt_space_dims(ev->space);
  int *idx = calloc((size_t)(dims > 0 ? dims : 1), sizeof(int));
  if (!idx) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  mpt_space_config(ev->space, id, idx);
  mpt_launch l;
  mpt_error lerr = {0};
  int rc = mpt_kspec_launch(st->ks, idx, &l, &lerr);
  free(idx);
  if (rc) { /* a launch size that fails for this configuration is a property of the variant */
    out->status = MPT_STATUS_LAUNCH_ERROR;
    snprintf(out->reason, sizeof out->reason, "%s", lerr.msg);
    return 0;
  }
  mpt_launch_free(&l);
  cpu_artifact art;
  rc = mpt_cpu_take_variant(ev, id, &art, out, err);
  if (rc || out->status != MPT_STATUS_OK) return rc;
  /* compiles ahead share the cores the variant is timed on: stopped while it runs when the node has no core
   * to spare for them */
  int pause = mpt_evaluator_node_oversubscribed(ev);
  if (pause) mpt_evaluator_pause_compiles(ev, 1);
  rc = mpt_cpu_run_variant(st, REQ_EVAL, art.so_path, out, err);
  if (pause) mpt_evaluator_pause_compiles(ev, 0);
  if (rc) return rc;
  if (out->status == MPT_STATUS_OK && (!isfinite(st->best_bench_ms) || out->benchmark_ms < st->best_bench_ms))
    st->best_bench_ms = out->benchmark_ms;
  return 0;
}

static void cpu_close(mpt_evaluator *ev) {
  cpu_state *st = ev->data;
  if (!st) return;
  mpt_isolate_destroy(st->iso);
  mpt_args_free(st->args);
  for (int i = 0; st->work && i < st->ks->n_args; i++) mpt_args_buffer_free(st->work[i], st->ks->args[i].bytes);
  free(st->work);
  mpt_cpu_cc_free(&st->cc);
  mpt_cpu_cc_free(&st->cc_wrapper);
  mpt_kspec_free(st->ks);
  mpt_cpu_remove_scratch_dir(st);
  free(st);
  ev->data = NULL;
}

/* the cpu evaluator's settings (--evaluator-option key=value) */
static const mpt_option_spec cpu_options[] = {
  {"memory_limit_mb", MPT_OPT_INT, "0", "address-space limit of the process that runs the variants, in MiB "
   "(0: $MPT_CPU_MEMORY_LIMIT_MB, else half the host memory)", NULL, 0, 1 << 20},
  {"isolation", MPT_OPT_STRING, "server", "server: one child runs the variants one after another and is replaced "
   "after a crash; fork: a fresh child per variant (also $MPT_CPU_ISOLATION=fork)", "server|fork", 0, -1},
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const mpt_evaluator_type mpt_evaluator_cpu = {
  .name = "cpu",
  .summary = "compiles C and C++ kernels with cc or c++ into shared objects and times them in an isolated child process",
  .open = cpu_open,
  .evaluate = cpu_evaluate,
  .close = cpu_close,
  .options = cpu_options,
  .ahead = &mpt_cpu_ahead_ops,
};
