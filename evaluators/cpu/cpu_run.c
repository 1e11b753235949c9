/* evaluators/cpu/cpu_run.c: the cpu evaluator's parent side of running a variant: the isolation it runs in (the
 * memory limit, a serving child or one per call), the timeout of a run, and the child's answer, crash, hang or
 * cancellation turned into an observation (the mean and median of the timed iterations; where a crash faulted). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/cpu/cpu_internal.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double current_timeout(const cpu_state *st) {
  if (st->timeout_s > 0) return st->timeout_s;
  if (!isfinite(st->best_bench_ms)) return CPU_FIRST_TIMEOUT_S;
  double t = CPU_TIMEOUT_FACTOR * st->best_bench_ms * 1e-3;
  return t > CPU_MIN_TIMEOUT_S ? t : CPU_MIN_TIMEOUT_S;
}

/* where a crash by SIGSEGV or SIGBUS faulted, as ": ..." (empty when the child's handler did not see it): the
 * address and the argument buffer it lies in or next to, or, for a general-protection fault (x86-64 gives it no
 * address), what causes one */
static void describe_fault(const cpu_state *st, const mpt_isolate_result *res, char *out, size_t cap) {
  out[0] = '\0';
  if (!res->fault_known) return;
  int code = res->fault_code;
  if (code == SI_USER || code == SI_TKILL || code == SI_QUEUE) {
    snprintf(out, cap, ": sent by a process (kill, raise), not a faulting access");
    return;
  }
#if defined(__x86_64__)
  if (res->signal == SIGSEGV && code == SI_KERNEL && res->fault_addr == 0) {
    snprintf(out, cap, ": a general-protection fault, which has no address (on x86-64: an aligned vector load or "
             "store at an address that is not a multiple of the vector's size, or a non-canonical pointer)");
    return;
  }
#endif
  const char *what = "invalid access";
  if (res->signal == SIGBUS && code == BUS_ADRALN) what = "misaligned access";
  else if (res->signal == SIGBUS && code == BUS_ADRERR) what = "access to a nonexistent physical address";
  char where[300];
  mpt_args_locate(st->ks, st->work, res->fault_addr, where, sizeof where);
  snprintf(out, cap, ": %s at address 0x%llx, %s", what, (unsigned long long)res->fault_addr, where);
}

/* runs a compiled variant in the child and fills obs */
int mpt_cpu_run_variant(cpu_state *st, int mode, const char *so_path, mpt_obs *obs, mpt_error *err) {
  cpu_req req;
  memset(&req, 0, sizeof req);
  req.mode = mode;
  req.iterations = st->iterations;
  snprintf(req.so_path, sizeof req.so_path, "%s", so_path);
  cpu_resp *resp = malloc(sizeof *resp);
  if (!resp) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  size_t len = 0;
  mpt_isolate_result res;
  double timeout = current_timeout(st);
  int rc = mpt_isolate_call(st->iso, &req, sizeof req, resp, sizeof *resp, &len, timeout, &res, err);
  if (rc) {
    free(resp);
    return rc;
  }
  if (res.outcome == MPT_ISO_CRASH) {
    obs->status = MPT_STATUS_CRASH;
    obs->benchmark_ms = res.seconds * 1e3;
    char where[400];
    describe_fault(st, &res, where, sizeof where);
    if (res.mem_limit_hit) /* only then: a plain bad pointer is no memory limit's doing */
      snprintf(obs->reason, sizeof obs->reason, "%s%s (out of memory: the evaluation process reached its "
               "address-space limit, RLIMIT_AS, %zu MiB above the worker's size; MPT_CPU_MEMORY_LIMIT_MB sets it)",
               res.reason, where, st->mem_limit >> 20);
    else
      snprintf(obs->reason, sizeof obs->reason, "%s%s", res.reason, where);
  } else if (res.outcome == MPT_ISO_CANCELLED) {
    obs->status = MPT_STATUS_CANCELLED; /* not the variant's outcome: a resume evaluates it again */
    obs->benchmark_ms = res.seconds * 1e3;
    snprintf(obs->reason, sizeof obs->reason, "%s", res.reason);
  } else if (res.outcome == MPT_ISO_TIMEOUT) {
    obs->status = MPT_STATUS_TIMEOUT;
    obs->benchmark_ms = res.seconds * 1e3;
    snprintf(obs->reason, sizeof obs->reason, "no result after %.3g s (timeout %s): killed", res.seconds,
             st->timeout_s > 0 ? "set by --timeout" : "max(10 s, 20 x best benchmark time)");
  } else if (len != sizeof *resp) {
    obs->status = MPT_STATUS_CRASH;
    snprintf(obs->reason, sizeof obs->reason, "evaluation process sent a malformed answer");
  } else {
    obs->status = resp->status;
    obs->benchmark_ms = resp->benchmark_ms;
    snprintf(obs->reason, sizeof obs->reason, "%s", resp->reason);
    obs->n_times = resp->n_times;
    for (int i = 0; i < resp->n_times; i++) obs->times[i] = resp->times[i];
    if (obs->status == MPT_STATUS_OK && obs->n_times > 0) {
      double sum = 0, sorted[MPT_OBS_MAX_TIMES];
      for (int i = 0; i < obs->n_times; i++) sum += sorted[i] = obs->times[i];
      qsort(sorted, (size_t)obs->n_times, sizeof(double), cmp_double);
      int m = obs->n_times;
      obs->objective = sum / m;
      obs->median = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
    }
  }
  free(resp);
  return 0;
}

/* option memory_limit_mb, else $MPT_CPU_MEMORY_LIMIT_MB, else half the machine */
static size_t memory_limit(const mpt_evaluator *ev) {
  int64_t mb = mpt_evaluator_opt_int(ev, "memory_limit_mb");
  if (mb > 0) return (size_t)mb << 20;
  const char *e = getenv("MPT_CPU_MEMORY_LIMIT_MB");
  if (e && *e) return (size_t)strtoull(e, NULL, 10) << 20;
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || psz <= 0) return 0;
  return (size_t)pages * (size_t)psz / 2; /* half the machine per variant */
}

/* the isolation the variants run in: the memory limit (none under AddressSanitizer), a child that serves
 * every call, or one per call with MPT_CPU_ISOLATION=fork */
int mpt_cpu_start_isolation(const mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  st->mem_limit = memory_limit(ev);
#if defined(__SANITIZE_ADDRESS__)
  st->mem_limit = 0; /* isolate.c sets no RLIMIT_AS under AddressSanitizer */
#endif
  mpt_isolate_opts io = {.mem_limit = st->mem_limit, .one_shot = 0, .max_request = sizeof(cpu_resp) + 4096,
                         .watch = st->watch};
  const char *mode = getenv("MPT_CPU_ISOLATION"), *opt = mpt_evaluator_opt_str(ev, "isolation");
  if (strcmp(opt, "fork") == 0 || (mode && strcmp(mode, "fork") == 0 && !mpt_evaluator_opt_given(ev, "isolation"))) io.one_shot = 1;
  return mpt_isolate_create(&io, mpt_cpu_serve, NULL, st, &st->iso, err);
}
