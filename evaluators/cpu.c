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
 * owner is provably gone (a killed run's). Details: docs/KERNELS.md. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "evaluators/args.h"
#include "evaluators/cpu_toolchain.h"
#include "evaluators/evaluator.h"
#include "evaluators/isolate.h"
#include "evaluators/kernel_spec.h"
#include "evaluators/kernel_spec_eval.h"
#include "spaces/sys/clock.h"

#define CPU_COMPILE_TIMEOUT_S 120.0
#define CPU_FIRST_TIMEOUT_S 60.0 /* until a valid variant has been timed */
#define CPU_MIN_TIMEOUT_S 10.0
#define CPU_TIMEOUT_FACTOR 20.0
#define CPU_LAUNCH_SYMBOL "mpt_cpu_launch__"

enum { REQ_EVAL = 0, REQ_REFERENCE = 1 };

typedef struct cpu_req {
  int32_t mode;
  int32_t iterations;
  char so_path[PATH_MAX];
} cpu_req;

typedef struct cpu_resp {
  int32_t status;
  int32_t n_times;
  double times[MPT_OBS_MAX_TIMES];
  double benchmark_ms;
  char reason[MPT_OBS_REASON];
} cpu_resp;

typedef struct cpu_state {
  mpt_kernel_spec *ks;
  mpt_args *args;
  mpt_isolate *iso;
  mpt_cpu_cc cc;               /* compiles the kernel */
  mpt_cpu_cc cc_wrapper;       /* compiles the call wrapper (C) */
  int returns_float;           /* the wrapper declares the kernel to return float (ReturnsTime, or found so) */
  char dir[PATH_MAX];          /* scratch directory (removed at close) */
  char launch_obj[PATH_MAX];   /* the compiled call wrapper */
  char cc_tmp[PATH_MAX];       /* the compiler's TMPDIR (in dir): emptied after every compile */
  int iterations;
  double best_bench_ms;        /* best benchmark time of a valid variant so far (NAN: none) */
  double timeout_s;            /* fixed timeout (settings), 0: derived */
  mpt_watch watch;             /* the evaluator's (mpt_evaluator.watch): compiles and the child's runs ask it */
  size_t mem_limit;            /* RLIMIT_AS of the child above the worker's size (0: none) */
  int64_t ref_id;
  double ref_objective;        /* the reference (default) configuration's mean time in open() */
  void **work;                 /* the working copies of the arguments (mpt_args_buffer_alloc), made in open() and
                                  inherited by the child at the same addresses */
} cpu_state;

typedef void (*launch_fn)(void *const *);
typedef float (*timed_launch_fn)(void *const *); /* ReturnsTime: the kernel's time in ms */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ---- child side: one evaluation ---- */

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

/* the timed iterations into r: each CLOCK_MONOTONIC around the call, or the time the kernel returns, which must
 * be a time (finite, >= 0: Kernel Tuner takes a negative one for a launch that asked for too many resources) */
static void time_iterations(const cpu_state *st, void *sym, int iterations, cpu_resp *r) {
  int n = iterations < MPT_OBS_MAX_TIMES ? iterations : MPT_OBS_MAX_TIMES;
  for (int it = 0; it < n; it++) {
    double a = mpt_clock_mono_ms();
    double returned = call_kernel(st, sym);
    r->times[it] = st->ks->returns_time == 1 ? returned : mpt_clock_mono_ms() - a;
    if (st->ks->returns_time == 1 && !(returned >= 0 && isfinite(returned))) {
      r->status = MPT_STATUS_RUNTIME_ERROR;
      snprintf(r->reason, sizeof r->reason, "the kernel returned %g as its time in ms (ReturnsTime): not a time",
               returned);
      return;
    }
  }
  r->n_times = n;
}

static long cpu_serve(void *ctx, const void *reqp, size_t req_len, void *respp, size_t cap) {
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
  call_kernel(st, sym); /* warm-up, and the run whose output is verified */
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
  if (r->status == MPT_STATUS_OK) time_iterations(st, sym, req->iterations, r);
  r->benchmark_ms = mpt_clock_mono_ms() - t0;
  /* a variant that started threads (OpenMP's pool) keeps its library: unloading it under running
   * threads crashes them, and the next variant with them; this child then ends after its answer */
  if (thread_count() > 1) mpt_isolate_retire();
  else dlclose(h);
  return sizeof *r;
}

/* ---- parent side ---- */

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

/* the call wrapper's source (evaluators/cpu_toolchain.h) written to path */
static int write_wrapper(cpu_state *st, const char *path, mpt_error *err) {
  char *src = mpt_cpu_wrapper_source(st->ks, CPU_LAUNCH_SYMBOL, st->returns_float, err);
  if (!src) return err->code ? err->code : MPT_ERR_NOMEM;
  int rc = write_text(path, src);
  free(src);
  if (rc) return mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

/* The compiler's temporary files (gcc's ccXXXXXX.s, .o, .res …) go to a private directory, emptied after
 * every compile: gcc removes them only when it ends by itself, so a compile killed when the run stops (a
 * signal, its timeout) would otherwise leave them in the user's $TMPDIR. */
static void empty_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(dirfd(d), e->d_name, 0);
  closedir(d);
}

/* a copy of the environment whose TMPDIR is dir (NULL when out of memory) */
static char **env_with_tmpdir(const char *dir) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  size_t len = strlen(dir) + 8;
  char *var = malloc(len);
  if (!env || !var) {
    free(env);
    free(var);
    return NULL;
  }
  snprintf(var, len, "TMPDIR=%s", dir);
  size_t k = 0;
  env[k++] = var; /* first: freed with the copy */
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = environ[i];
  return env;
}

/* runs the compiler with the private TMPDIR, emptied afterwards */
static int run_compiler(cpu_state *st, char *const argv[], double timeout, char *out, size_t cap, int *status,
                        double *secs, mpt_error *err) {
  char **env = env_with_tmpdir(st->cc_tmp); /* the environment as it is now */
  if (!env) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_run_command_env(argv, env, &st->watch, timeout, out, cap, status, secs, err);
  free(env[0]);
  free(env);
  empty_dir(st->cc_tmp);
  return rc;
}

/* Compiler output as a failure reason: its first few lines that say what went wrong, then its last line */
enum { REASON_LINES = 3 };

/* the linker names itself first: "/usr/bin/ld: cannot find -lfoo", "ld.bfd: ...", "x86_64-linux-gnu-ld: ..." */
static int linker_line(const char *line, size_t len) {
  const char *colon = memchr(line, ':', len);
  if (!colon) return 0;
  const char *base = colon;
  while (base > line && base[-1] != '/') base--;
  size_t n = (size_t)(colon - base);
  for (size_t k = 0; k + 2 <= n; k++) /* "ld" as the name or its last part, with a ".bfd"-like suffix */
    if (base[k] == 'l' && base[k + 1] == 'd' && (k == 0 || base[k - 1] == '-') && (k + 2 == n || base[k + 2] == '.'))
      return 1;
  return 0;
}

/* a line saying what went wrong: one naming an error, or the linker's; source excerpts and carets (indented)
 * and "In function" lines are context */
static int diagnostic_line(const char *line, size_t len) {
  if (len == 0 || line[0] == ' ' || line[0] == '\t') return 0;
  for (size_t k = 0; k + 5 <= len; k++)
    if (strncmp(line + k, "error", 5) == 0) return 1;
  return linker_line(line, len);
}

static void append_line(char *dst, size_t cap, size_t *n, const char *line, size_t len, int first) {
  if (*n + 1 >= cap) return;
  int w = snprintf(dst + *n, cap - *n, "%s%.*s", first ? "" : "\n", (int)len, line);
  if (w > 0) *n = *n + (size_t)w < cap ? *n + (size_t)w : cap - 1;
}

/* prefix, the first REASON_LINES diagnostic lines of out (or, when none is, its first unindented ones) and the
 * last unindented line ("collect2: error: ld returned 1 exit status") when it is not among them */
static void compiler_reason(char *dst, size_t cap, const char *prefix, const char *out) {
  size_t n = 0;
  append_line(dst, cap, &n, prefix, strlen(prefix), 1);
  int any_diag = 0;
  for (const char *p = out; *p;) {
    size_t len = strcspn(p, "\n");
    if (diagnostic_line(p, len)) any_diag = 1;
    p += len + (p[len] == '\n');
  }
  int shown = 0;
  const char *last = NULL, *last_shown = NULL;
  size_t last_len = 0;
  for (const char *p = out; *p;) {
    size_t len = strcspn(p, "\n");
    if (len > 0 && p[0] != ' ' && p[0] != '\t') last = p, last_len = len;
    if (shown < REASON_LINES && (any_diag ? diagnostic_line(p, len) : (len > 0 && p[0] != ' ' && p[0] != '\t'))) {
      append_line(dst, cap, &n, p, len, shown == 0);
      last_shown = p;
      shown++;
    }
    p += len + (p[len] == '\n');
  }
  if (last && last != last_shown) append_line(dst, cap, &n, last, last_len, shown == 0);
}

/* the CompilerOptions entry the compiler's message names as a whole word (an unknown flag, a -l library it
 * cannot find), -1 when none */
static int word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_-=+./,", c); }

static int option_named(const mpt_kernel_spec *ks, const char *msg) {
  for (int i = 0; i < ks->n_options; i++) {
    const char *o = ks->options[i];
    size_t n = strlen(o);
    if (n < 2) continue;
    for (const char *p = strstr(msg, o); p; p = strstr(p + 1, o))
      if ((p == msg || !word_char(p[-1])) && (!p[n] || !word_char(p[n]))) return i;
  }
  return -1;
}

/* a compiler's command line, built word by word */
typedef struct cc_command {
  char **argv;                 /* n words, then NULL */
  int n, cap;
  char **owned;                /* the words made here (-I, -D), freed with the command */
  int n_owned;
} cc_command;

static void free_command(cc_command *c) {
  for (int i = 0; i < c->n_owned; i++) free(c->owned[i]);
  free(c->owned);
  free(c->argv);
  memset(c, 0, sizeof *c);
}

/* appends a word (room was made by kernel_command) */
static void push(cc_command *c, const char *word) {
  if (c->n + 1 < c->cap) c->argv[c->n++] = (char *)word;
  c->argv[c->n] = NULL;
}

/* appends prefix+text as a word of the command's own */
static int push_owned(cc_command *c, const char *prefix, const char *text) {
  size_t len = strlen(prefix) + strlen(text) + 1;
  char *w = malloc(len);
  if (!w) return -1;
  snprintf(w, len, "%s%s", prefix, text);
  c->owned[c->n_owned++] = w;
  push(c, w);
  return 0;
}

/* The start of a kernel compile for launch l: the compiler, -O3 -march=native -fPIC and `mode` (-shared,
 * -fsyntax-only), the problem's CompilerOptions (after mptune's: they can override them), -I<kernel dir>, -D per
 * define; room for `extra` more words */
static int kernel_command(const cpu_state *st, const mpt_launch *l, const char *mode, int extra, cc_command *c,
                          mpt_error *err) {
  const mpt_kernel_spec *ks = st->ks;
  memset(c, 0, sizeof *c);
  c->cap = st->cc.n + 6 + ks->n_options + l->n_defines + extra;
  c->argv = calloc((size_t)c->cap, sizeof(char *));
  c->owned = calloc((size_t)l->n_defines + 1, sizeof(char *));
  int rc = !c->argv || !c->owned;
  for (int i = 0; !rc && i < st->cc.n; i++) push(c, st->cc.argv[i]);
  const char *ours[] = {"-O3", "-march=native", "-fPIC", mode};
  for (size_t i = 0; !rc && i < sizeof ours / sizeof ours[0]; i++) push(c, ours[i]);
  for (int i = 0; !rc && i < ks->n_options; i++) push(c, ks->options[i]);
  if (!rc) rc = push_owned(c, "-I", ks->kernel_dir);
  for (int i = 0; !rc && i < l->n_defines; i++) rc = push_owned(c, "-D", l->defines[i]);
  if (rc) {
    free_command(c);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return 0;
}

/* a C++ kernel is compiled as C++ whatever its file's suffix (clang++ warns about a .c file otherwise), unless
 * the CompilerOptions choose a language themselves; 1 when a -x option precedes the inputs */
static int push_kernel_language(const cpu_state *st, cc_command *c) {
  if (mpt_cpu_options_set_language(st->ks)) return 1;
  if (st->ks->lang != MPT_LANG_CXX) return 0;
  push(c, "-x");
  push(c, "c++");
  return 1;
}

/* runs a compile of the kernel's compiler; a compiler that cannot be started at all is an error naming where it
 * came from (KernelSpecification.Compiler, $CC, $CXX) */
static int run_kernel_compiler(cpu_state *st, const mpt_cpu_cc *cc, char *const argv[], double timeout, char *out,
                               size_t cap, int *status, double *secs, mpt_error *err) {
  int rc = run_compiler(st, argv, timeout, out, cap, status, secs, err);
  if (rc == 0) return 0;
  char inner[600];
  snprintf(inner, sizeof inner, "%s", err->msg);
  if (strcmp(cc->origin, "KernelSpecification.Compiler") == 0)
    return mpt_ks_err(err, rc, st->ks->problem, "Compiler", "%s", inner);
  return mpt_error_set(err, rc, "%s: the compiler (%s): %s", st->ks->problem->path, cc->origin, inner);
}

/* the outcome of a variant's compile (status as mpt_run_command gives it) in obs */
static void compile_outcome(const cpu_state *st, int status, double timeout, const char *out, mpt_obs *obs) {
  if (status == -1) {
    obs->status = MPT_STATUS_TIMEOUT;
    snprintf(obs->reason, sizeof obs->reason, "compiling took longer than %g s: killed", timeout);
  } else if (status == -2) {
    obs->status = MPT_STATUS_CANCELLED;
    snprintf(obs->reason, sizeof obs->reason, "cancelled while compiling: the run is stopping");
  } else if (status == 128 + SIGINT || status == 128 + SIGTERM) {
    /* the compiler caught the signal that stops the run (sent to the worker's process group in the instant
     * before the compiler has a group of its own): not the variant's fault, so not a compile error that a
     * resume would never try again */
    obs->status = MPT_STATUS_CANCELLED;
    snprintf(obs->reason, sizeof obs->reason, "the compiler was stopped by %s: the run is stopping",
             status == 128 + SIGINT ? "SIGINT" : "SIGTERM");
  } else if (status != 0) {
    obs->status = MPT_STATUS_COMPILE_ERROR;
    char prefix[320];
    const char *name = strrchr(st->cc.argv[0], '/');
    snprintf(prefix, sizeof prefix, "%s exited with status %d: ", name ? name + 1 : st->cc.argv[0], status);
    compiler_reason(obs->reason, sizeof obs->reason, prefix, out);
  }
}

static double compile_timeout(const cpu_state *st) {
  return st->timeout_s > CPU_COMPILE_TIMEOUT_S ? st->timeout_s : CPU_COMPILE_TIMEOUT_S;
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
static int run_variant(cpu_state *st, int mode, const char *so_path, mpt_obs *obs, mpt_error *err) {
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

/* ---- scratch directories: each carries its owner's identity (OWNER_MARKER), so that those of a worker that
 * was killed (SIGKILL leaves them: close never ran) are found and removed by the next open ---- */

#define SCRATCH_PREFIX "mptune-cpu-r"
#define OWNER_MARKER "mptune-owner"
#define OWNER_MAGIC "mptune cpu scratch 1"

/* A process as it can be told from another one with the same pid: the machine and its boot, the pid
 * namespace, the pid and the process's start time (clock ticks after boot, /proc/PID/stat field 22). */
typedef struct proc_identity {
  char host[256];
  char boot[64];
  char pidns[64];
  long pid;
  unsigned long long start;
} proc_identity;

/* the first line of a small file, without its newline ("" when unreadable) */
static void read_first_line(const char *path, char *out, size_t cap) {
  out[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  if (fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = '\0';
  fclose(f);
}

/* the start time of process pid: 0, 1 when there is no such process or it has ended (a zombie its parent has
 * not reaped yet), -1 when it cannot be read */
static int process_start(long pid, unsigned long long *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 1 : -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
  if (!p) return -1;
  p++;
  while (*p == ' ') p++;
  if (*p == 'Z' || *p == 'X') return 1; /* the state: exited */
  for (int field = 3; field < 22; field++) { /* after ')': field 3 (the state) on */
    while (*p == ' ') p++;
    p += strcspn(p, " ");
    if (!*p) return -1;
  }
  char *end;
  *start = strtoull(p, &end, 10);
  return end > p ? 0 : -1;
}

static int self_identity(proc_identity *id) {
  memset(id, 0, sizeof *id);
  if (gethostname(id->host, sizeof id->host - 1) != 0) return -1;
  read_first_line("/proc/sys/kernel/random/boot_id", id->boot, sizeof id->boot);
  ssize_t n = readlink("/proc/self/ns/pid", id->pidns, sizeof id->pidns - 1);
  id->pidns[n > 0 ? n : 0] = '\0';
  id->pid = (long)getpid();
  return process_start(id->pid, &id->start) == 0 && id->boot[0] && id->pidns[0] ? 0 : -1;
}

/* writes dir/OWNER_MARKER: this process is the directory's owner */
static int write_owner_marker(const char *dir, mpt_error *err) {
  proc_identity me;
  char path[PATH_MAX + 32], text[600];
  snprintf(path, sizeof path, "%s/" OWNER_MARKER, dir);
  if (self_identity(&me) != 0) /* no /proc: no marker, and such a directory is never taken for stale */
    return 0;
  snprintf(text, sizeof text, OWNER_MAGIC "\nhost %s\nboot %s\npidns %s\npid %ld\nstart %llu\n", me.host, me.boot,
           me.pidns, me.pid, me.start);
  if (write_text(path, text) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

/* reads an owner marker (fd: the directory); 0 when it is one of mptune's, complete */
static int read_owner_marker(int dir_fd, proc_identity *owner) {
  memset(owner, 0, sizeof *owner);
  int fd = openat(dir_fd, OWNER_MARKER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "r");
  if (!f) {
    close(fd);
    return -1;
  }
  char line[320];
  int magic = 0, have = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (strcmp(line, OWNER_MAGIC) == 0) magic = 1;
    else if (sscanf(line, "host %255s", owner->host) == 1) have |= 1;
    else if (sscanf(line, "boot %63s", owner->boot) == 1) have |= 2;
    else if (sscanf(line, "pidns %63s", owner->pidns) == 1) have |= 4;
    else if (sscanf(line, "pid %ld", &owner->pid) == 1) have |= 8;
    else if (sscanf(line, "start %llu", &owner->start) == 1) have |= 16;
  }
  fclose(f);
  return magic && have == 31 && owner->pid > 0 ? 0 : -1;
}

/* 1 only when the owner is provably gone: on this host, the machine booted since, or in this pid namespace no
 * process has its pid or the one that has it started at another time (the pid was reused). Another host or
 * namespace, or a process that cannot be read: 0, kept. */
static int owner_gone(const proc_identity *owner, const proc_identity *me) {
  if (strcmp(owner->host, me->host) != 0) return 0;
  if (strcmp(owner->boot, me->boot) != 0) return 1;
  if (strcmp(owner->pidns, me->pidns) != 0) return 0;
  unsigned long long start = 0;
  int rc = process_start(owner->pid, &start);
  return rc == 1 || (rc == 0 && start != owner->start);
}

/* removes the entries of directory fd, and of its subdirectories `depth` levels down (a scratch directory
 * holds files and cc-tmp/); symbolic links are removed, never followed */
static void remove_entries(int fd, int depth) {
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0 || depth <= 0) continue;
    int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    remove_entries(sub, depth - 1);
    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
  }
  closedir(d);
}

/* base/name when it is a scratch directory of this user whose marker's owner is gone: removed; 1 when it was */
static int remove_if_stale(int base_fd, const char *name, const proc_identity *me) {
  int fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat sb;
  proc_identity owner;
  if (fstat(fd, &sb) != 0 || sb.st_uid != getuid() || read_owner_marker(fd, &owner) != 0 || !owner_gone(&owner, me)) {
    close(fd);
    return 0;
  }
  remove_entries(fd, 2); /* through the descriptor: a new directory given the same name meanwhile is not this one */
  struct stat now;
  if (fstatat(base_fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != sb.st_ino || now.st_dev != sb.st_dev)
    return 0;
  return unlinkat(base_fd, name, AT_REMOVEDIR) == 0;
}

/* the scratch directories in base left by workers that were killed: removed, said in one line on stderr */
static void remove_stale_scratch(const char *base, int rank) {
  proc_identity me;
  if (self_identity(&me) != 0) return; /* whose owner is gone cannot be told */
  int base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base_fd < 0) return;
  DIR *d = fdopendir(base_fd);
  if (!d) {
    close(base_fd);
    return;
  }
  int removed = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) == 0) removed += remove_if_stale(dirfd(d), e->d_name, &me);
  closedir(d);
  if (removed > 0)
    fprintf(stderr, "mptune: cpu evaluator (rank %d): removed %d scratch director%s of killed runs (their process is "
            "gone) in %s\n", rank, removed, removed == 1 ? "y" : "ies", base);
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

/* the worker's scratch directory in --workdir, else $TMPDIR, else /tmp (after removing the stale ones there):
 * its owner marker, an absolute path, and the compiler's TMPDIR (cc-tmp) in it */
static int make_scratch_dir(cpu_state *st, const mpt_eval_settings *settings, mpt_error *err) {
  const char *base = settings->workdir;
  if (!base || !*base) base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  remove_stale_scratch(base, settings->rank);
  snprintf(st->dir, sizeof st->dir, "%s/" SCRATCH_PREFIX "%d-XXXXXX", base, settings->rank);
  if (!mkdtemp(st->dir)) {
    int rc = mpt_error_set(err, MPT_ERR_IO, "cannot create a scratch directory in %s: %s", base, strerror(errno));
    st->dir[0] = 0;
    return rc;
  }
  int rc = write_owner_marker(st->dir, err);
  if (rc) return rc;
  if (st->dir[0] != '/') { /* absolute: a variant that changes directory must not lose the next one's path */
    char abs[PATH_MAX];
    if (realpath(st->dir, abs) && strlen(abs) < sizeof st->dir) snprintf(st->dir, sizeof st->dir, "%s", abs);
  }
  snprintf(st->cc_tmp, sizeof st->cc_tmp, "%s/cc-tmp", st->dir);
  if (mkdir(st->cc_tmp, 0700) != 0) {
    rc = mpt_error_set(err, MPT_ERR_IO, "cannot create %s: %s", st->cc_tmp, strerror(errno));
    st->cc_tmp[0] = 0;
    return rc;
  }
  return 0;
}

/* writes the call wrapper into the scratch directory and compiles it (st->launch_obj) */
static int compile_call_wrapper(cpu_state *st, mpt_error *err) {
  char wrapper[PATH_MAX + 16];
  snprintf(wrapper, sizeof wrapper, "%s/launch.c", st->dir);
  snprintf(st->launch_obj, sizeof st->launch_obj, "%s/launch.o", st->dir);
  int rc = write_wrapper(st, wrapper, err);
  if (rc) return rc;
  cc_command c = {0};
  c.cap = st->cc_wrapper.n + 8;
  if (!(c.argv = calloc((size_t)c.cap, sizeof(char *)))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < st->cc_wrapper.n; i++) push(&c, st->cc_wrapper.argv[i]);
  const char *rest[] = {"-O2", "-fPIC", "-c", wrapper, "-o", st->launch_obj};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) push(&c, rest[i]);
  char out[4096];
  int status = 0;
  rc = run_kernel_compiler(st, &st->cc_wrapper, c.argv, CPU_COMPILE_TIMEOUT_S, out, sizeof out, &status, NULL, err);
  free_command(&c);
  if (rc) return rc;
  if (status != 0)
    return mpt_error_set(err, MPT_ERR_INTERNAL, "cpu evaluator: cannot compile the call wrapper %s:\n%s", wrapper, out);
  return 0;
}

/* the isolation the variants run in: the memory limit (none under AddressSanitizer), a child that serves
 * every call, or one per call with MPT_CPU_ISOLATION=fork */
static int start_isolation(const mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  st->mem_limit = memory_limit(ev);
#if defined(__SANITIZE_ADDRESS__)
  st->mem_limit = 0; /* isolate.c sets no RLIMIT_AS under AddressSanitizer */
#endif
  mpt_isolate_opts io = {.mem_limit = st->mem_limit, .one_shot = 0, .max_request = sizeof(cpu_resp) + 4096,
                         .watch = st->watch};
  const char *mode = getenv("MPT_CPU_ISOLATION"), *opt = mpt_evaluator_opt_str(ev, "isolation");
  if (strcmp(opt, "fork") == 0 || (mode && strcmp(mode, "fork") == 0 && !mpt_evaluator_opt_given(ev, "isolation"))) io.one_shot = 1;
  return mpt_isolate_create(&io, cpu_serve, NULL, st, &st->iso, err);
}

/* "default" when the problem has a Default configuration (the reference), else "first" */
static const char *reference_kind(const mpt_evaluator *ev) {
  return mpt_space_default_id(ev->space) >= 0 ? "default" : "first";
}

/* the reference configuration: the problem's Default, or the first valid one */
static int64_t reference_id(const mpt_evaluator *ev) {
  int64_t ref = mpt_space_default_id(ev->space);
  return ref < 0 ? 0 : ref;
}

/* the launch of configuration id (l: freed by the caller when this returns 0) */
static int launch_of(const mpt_evaluator *ev, const cpu_state *st, int64_t id, mpt_launch *l, mpt_error *err) {
  int dims = mpt_space_dims(ev->space);
  int *idx = calloc((size_t)(dims > 0 ? dims : 1), sizeof(int));
  if (!idx) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  mpt_space_config(ev->space, id, idx);
  int rc = mpt_kspec_launch(st->ks, idx, l, err);
  free(idx);
  return rc;
}

/* The kernel's return type, from a compile (-fsyntax-only, the reference configuration's defines) of a source that
 * includes the kernel file and asserts what it returns (evaluators/cpu_toolchain.h); UNKNOWN when that compile
 * cannot tell */
static int find_return_type(mpt_evaluator *ev, cpu_state *st, mpt_cpu_return *kind, mpt_error *err) {
  *kind = MPT_CPU_RETURNS_UNKNOWN;
  char *src = mpt_cpu_return_check_source(st->ks);
  if (!src) return 0;
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/return_check.%s", st->dir, st->ks->lang == MPT_LANG_CXX ? "cpp" : "c");
  int rc = write_text(path, src);
  free(src);
  if (rc) return mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  mpt_launch l;
  if ((rc = launch_of(ev, st, reference_id(ev), &l, err))) return rc;
  cc_command c;
  rc = kernel_command(st, &l, "-fsyntax-only", 4, &c, err);
  mpt_launch_free(&l);
  if (rc) return rc;
  push_kernel_language(st, &c);
  push(&c, path);
  char out[8192];
  int status = 0;
  rc = run_kernel_compiler(st, &st->cc, c.argv, compile_timeout(st), out, sizeof out, &status, NULL, err);
  free_command(&c);
  unlink(path);
  if (rc == 0) *kind = mpt_cpu_return_kind(status, out);
  return rc;
}

/* Kernel Tuner's C convention: a kernel that returns float returns its own time in ms. Such a kernel must say
 * what that value is (ReturnsTime true: its time; false: ignored, the call is timed), and ReturnsTime true needs
 * a kernel that returns float; the wrapper declares the kernel to return float when it does. */
static int check_return_type(mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  const mpt_kernel_spec *ks = st->ks;
  mpt_cpu_return kind;
  int rc = find_return_type(ev, st, &kind, err);
  if (rc) return rc;
  if (kind == MPT_CPU_RETURNS_FLOAT && ks->returns_time < 0)
    return mpt_ks_err(err, MPT_ERR_VALUE, ev->problem, "KernelName", "kernel '%s' returns float: in Kernel Tuner a C "
                      "kernel that returns float returns its own time in ms; add \"ReturnsTime\": true to the "
                      "KernelSpecification to take that time, or \"ReturnsTime\": false to time the call and ignore "
                      "the value", ks->kernel_name);
  if (ks->returns_time == 1 && (kind == MPT_CPU_RETURNS_VOID || kind == MPT_CPU_RETURNS_OTHER))
    return mpt_ks_err(err, MPT_ERR_VALUE, ev->problem, "ReturnsTime", "kernel '%s' returns %s, not float: "
                      "\"ReturnsTime\": true takes the float a kernel returns as its time in ms", ks->kernel_name,
                      kind == MPT_CPU_RETURNS_VOID ? "void" : "another type");
  if (kind == MPT_CPU_RETURNS_FLOAT) st->returns_float = 1;
  return 0;
}

/* ---- compile-ahead (evaluators/ahead.h): a variant's compile runs in a compile process of its own and leaves
 * its shared object, named by the compile's key, in the scratch directory ---- */

/* what a variant's compile leaves */
typedef struct cpu_artifact {
  int32_t rc;                  /* <0: the compiler cannot be run at all (reason: the error) */
  int32_t status;              /* MPT_STATUS_OK, or how the compile failed */
  char so_path[PATH_MAX];      /* the shared object (status OK) */
  char reason[MPT_OBS_REASON];
} cpu_artifact;

/* the command that compiles configuration id into so_path (c: freed by the caller when this returns 0) */
static int variant_command(const mpt_evaluator *ev, const cpu_state *st, int64_t id, const char *so_path, cc_command *c,
                           mpt_error *err) {
  mpt_launch l;
  int rc = launch_of(ev, st, id, &l, err);
  if (rc) return rc;
  rc = kernel_command(st, &l, "-shared", 10, c, err);
  mpt_launch_free(&l);
  if (rc) return rc;
  int language_set = push_kernel_language(st, c);
  push(c, st->ks->kernel_file);
  if (language_set) { /* the call wrapper is an object file, whatever -x the kernel was compiled with */
    push(c, "-x");
    push(c, "none");
  }
  push(c, st->launch_obj);
  push(c, "-o");
  push(c, so_path);
  return 0;
}

/* the key: every word of the command but the output's name */
static int cpu_ahead_key(void *ctx, int64_t id, mpt_ahead_key *key) {
  const mpt_evaluator *ev = ctx;
  cc_command c;
  mpt_error e;
  mpt_error_clear(&e);
  if (variant_command(ev, ev->data, id, "", &c, &e) != 0) return -1;
  mpt_ahead_key_init(key);
  for (int i = 0; i < c.n; i++) mpt_ahead_key_str(key, c.argv[i]);
  free_command(&c);
  return 0;
}

/* the compiler run (in the compile process, a TMPDIR of its own) into a */
static void compile_into(mpt_evaluator *ev, cpu_state *st, int64_t id, cpu_artifact *a) {
  mpt_error e;
  mpt_error_clear(&e);
  cc_command c;
  char out[8192];
  int status = 0;
  double timeout = compile_timeout(st);
  a->rc = variant_command(ev, st, id, a->so_path, &c, &e);
  if (!a->rc) {
    a->rc = run_kernel_compiler(st, &st->cc, c.argv, timeout, out, sizeof out, &status, NULL, &e);
    free_command(&c);
  }
  if (a->rc) {
    snprintf(a->reason, sizeof a->reason, "%s", e.msg);
    return;
  }
  mpt_obs o;
  mpt_obs_init(&o, id);
  compile_outcome(st, status, timeout, out, &o);
  a->status = o.status;
  snprintf(a->reason, sizeof a->reason, "%s", o.status == MPT_STATUS_OK ? "" : o.reason);
  if (status != 0) unlink(a->so_path);
}

/* the compile process's watch: the worker asked it to stop (the run stops, the configuration was dropped) */
static int cancelled_watch(void *ctx, const char *doing, double done) {
  (void)ctx, (void)doing, (void)done;
  return mpt_ahead_cancelled();
}

static int cpu_ahead_compile(void *ctx, int64_t id, const mpt_ahead_key *key, char **blob, size_t *len) {
  mpt_evaluator *ev = ctx;
  cpu_state *st = ev->data;
  cpu_artifact *a = calloc(1, sizeof *a);
  if (!a) return -1;
  st->watch = (mpt_watch){cancelled_watch, NULL}; /* never the worker's: it asks MPI */
  char hex[33];
  mpt_ahead_key_hex(key, hex);
  snprintf(a->so_path, sizeof a->so_path, "%s/k%s.so", st->dir, hex);
  size_t n = strlen(st->cc_tmp);
  snprintf(st->cc_tmp + n, sizeof st->cc_tmp - n, "/j%ld", (long)getpid()); /* compiles at once: TMPDIRs apart */
  mkdir(st->cc_tmp, 0700);
  compile_into(ev, st, id, a);
  rmdir(st->cc_tmp);
  *blob = (char *)a;
  *len = sizeof *a;
  return 0;
}

/* the compile process outlives the compiler's own timeout, which says what happened */
static double cpu_ahead_timeout(void *ctx) { return compile_timeout(((const mpt_evaluator *)ctx)->data) + 30; }

static void cpu_ahead_forget(void *ctx, const char *blob, size_t len) {
  (void)ctx;
  const cpu_artifact *a = (const cpu_artifact *)blob;
  if (len == sizeof *a && a->rc == 0 && a->status == MPT_STATUS_OK) unlink(a->so_path);
}

/* a compile that was cancelled (the run stopping, a signal to the compiler) or could not run is no outcome of the
 * variant's: not kept, a second request compiles again */
static int cpu_ahead_cacheable(void *ctx, const char *blob, size_t len) {
  (void)ctx;
  const cpu_artifact *a = (const cpu_artifact *)blob;
  return len == sizeof *a && a->rc == 0 && a->status != MPT_STATUS_CANCELLED;
}

static const mpt_ahead_ops cpu_ahead_ops = {cpu_ahead_key, cpu_ahead_compile, cpu_ahead_timeout, cpu_ahead_forget,
                                            cpu_ahead_cacheable};

/* configuration id's shared object (compiled ahead, cached, or compiled now) in art; o says how its compile went */
static int take_variant(mpt_evaluator *ev, int64_t id, cpu_artifact *art, mpt_obs *o, mpt_error *err) {
  mpt_ahead_result r;
  int rc = mpt_evaluator_compile(ev, id, &r, o, err);
  if (rc || r.outcome != MPT_AHEAD_DONE) return rc;
  int whole = r.len == sizeof *art;
  if (whole) memcpy(art, r.blob, sizeof *art);
  free(r.blob);
  if (!whole) {
    o->status = MPT_STATUS_CRASH;
    snprintf(o->reason, sizeof o->reason, "the compile process sent a malformed answer");
    return 0;
  }
  if (art->rc < 0) return mpt_error_set(err, art->rc, "%s", art->reason);
  o->status = art->status;
  if (o->status != MPT_STATUS_OK) snprintf(o->reason, sizeof o->reason, "%s", art->reason);
  return 0;
}

/* compiles configuration ref into so (o: its outcome, initialized here); an error only when its launch cannot
 * be computed or the compiler cannot be run */
static int compile_reference(mpt_evaluator *ev, cpu_state *st, int64_t ref, cpu_artifact *art, mpt_obs *o,
                             mpt_error *err) {
  mpt_launch l;
  int rc = launch_of(ev, st, ref, &l, err);
  if (rc) return rc;
  mpt_launch_free(&l);
  mpt_obs_init(o, ref);
  return take_variant(ev, ref, art, o, err);
}

/* the error for a reference configuration (cfg) that does not compile: the CompilerOptions entry the compiler
 * names, where it is in the file, else the problem file */
static int reference_compile_error(mpt_evaluator *ev, cpu_state *st, const char *cfg, const mpt_obs *o,
                                   mpt_error *err) {
  const char *which = reference_kind(ev);
  int opt = o->status == MPT_STATUS_COMPILE_ERROR ? option_named(st->ks, o->reason) : -1;
  if (opt >= 0) {
    char field[48];
    snprintf(field, sizeof field, "CompilerOptions[%d]", opt);
    return mpt_ks_err(err, MPT_ERR_VALUE, ev->problem, field, "the compiler refuses \"%s\", so the %s configuration "
                      "(%s) does not compile and there is no reference output: %s", st->ks->options[opt], which, cfg,
                      o->reason);
  }
  return mpt_error_set(err, MPT_ERR_VALUE, "%s: the %s configuration (%s) does not compile, so there is no reference "
                       "output: %s", ev->problem->path, which, cfg, o->reason);
}

/* the error for a reference run that failed (o), 0 when it succeeded and delivered every output: a kernel not
 * found, a scratch directory that allows no executables, another failure */
static int reference_run_error(mpt_evaluator *ev, cpu_state *st, const char *cfg, const mpt_obs *o,
                               mpt_error *err) {
  const char *path = ev->problem->path;
  if (o->status == MPT_STATUS_LAUNCH_ERROR) {
    char undefined[300];
    snprintf(undefined, sizeof undefined, "undefined symbol: %s", st->ks->kernel_name);
    if (strstr(o->reason, undefined) || strstr(o->reason, "dlsym"))
      return mpt_error_set(err, MPT_ERR_NAME, "%s: KernelSpecification.KernelName: kernel '%s' not found in %s (%s)%s",
                           path, st->ks->kernel_name, st->ks->kernel_file, o->reason,
                           st->ks->lang == MPT_LANG_CXX ? "; a C++ kernel must be declared extern \"C\" (extern \"C\" "
                           "void kernel(...)): C++ gives other functions a mangled symbol name" : "");
    /* e.g. a scratch directory on a noexec file system */
    return mpt_error_set(err, MPT_ERR_IO, "%s: cannot load the compiled %s configuration from %s (%s); choose a "
                         "scratch directory that allows executables with --workdir", path, reference_kind(ev), st->dir,
                         o->reason);
  }
  if (o->status != MPT_STATUS_OK)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: the reference configuration (%s) failed (%s): %s", path, cfg,
                         mpt_status_name(o->status), o->reason);
  if (mpt_args_needs_reference_run(st->args))
    return mpt_error_set(err, MPT_ERR_INTERNAL, "%s: the reference run did not deliver every output", path);
  return 0;
}

/* The reference configuration: the problem's Default, or the first valid one. It is compiled and run here, so
 * that a missing kernel or a broken default is reported before any evaluation; its run records the reference
 * output (unless ReferenceArguments gave it) and its time. */
static int run_reference(mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  int64_t ref = reference_id(ev);
  st->ref_id = ref;
  char cfg[512];
  mpt_space_format(ev->space, ref, cfg, sizeof cfg);
  mpt_obs o;
  cpu_artifact art;
  int rc = compile_reference(ev, st, ref, &art, &o, err);
  if (rc) return rc;
  if (o.status != MPT_STATUS_OK) return reference_compile_error(ev, st, cfg, &o, err);
  rc = run_variant(st, REQ_REFERENCE, art.so_path, &o, err);
  if (rc) return rc;
  if ((rc = reference_run_error(ev, st, cfg, &o, err))) return rc;
  st->ref_objective = o.objective;
  return 0;
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
  if (rc == 0) rc = make_scratch_dir(st, &ev->settings, err);
  if (rc == 0) rc = check_return_type(ev, st, err);
  if (rc == 0) rc = compile_call_wrapper(st, err);
  if (rc == 0) rc = start_isolation(ev, st, err);
  if (rc == 0) rc = run_reference(ev, st, err);
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
  rc = take_variant(ev, id, &art, out, err);
  if (rc || out->status != MPT_STATUS_OK) return rc;
  /* compiles ahead share the cores the variant is timed on: stopped while it runs when the node has no core
   * to spare for them */
  int pause = mpt_evaluator_node_oversubscribed(ev);
  if (pause) mpt_evaluator_pause_compiles(ev, 1);
  rc = run_variant(st, REQ_EVAL, art.so_path, out, err);
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
  if (st->dir[0]) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/launch.c", st->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/" OWNER_MARKER, st->dir);
    unlink(path);
    unlink(st->launch_obj);
    int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) remove_entries(fd, 2); /* the shared objects, cc-tmp and what a killed compile left there */
    rmdir(st->dir);
  }
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
  .ahead = &cpu_ahead_ops,
};
