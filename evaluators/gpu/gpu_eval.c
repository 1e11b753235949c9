/* evaluators/gpu/gpu_eval.c: the common cuda/hip evaluator: open (spec, language and kernel checks, the
 * device server, the reference output), evaluate (launch description, isolated compile, load +
 * verify + time in the device server, classification of failures) and close. See gpu_eval.h. */
#include "evaluators/gpu/gpu_eval.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "evaluators/args.h"
#include "evaluators/isolate.h"
#include "evaluators/gpu/power.h"
#include "evaluators/gpu/device_lock.h"
#include "spaces/sys/clock.h"

enum { REQ_HELLO = 1, REQ_EVAL = 2, REQ_REF = 3 };

typedef struct gpu_req {
  int32_t kind;
  int32_t iterations;
  int64_t id;
  double power_window_ms; /* with a power observer: launches go on until the window is this long */
  int64_t grid[3], block[3], shared;
  uint64_t code_size, lowered_len; /* followed by the lowered name (no NUL) and, at code_offset(), the code */
} gpu_req;

typedef struct gpu_resp {
  int32_t ok;       /* HELLO: the device is ready */
  int32_t restart;  /* the context is unusable: start a fresh server */
  char msg[1024];
  char arch[64];
  char power[256];  /* HELLO: the power observer ("nvml"), or "none: " and why */
  mpt_device_info info;
  mpt_obs obs;
} gpu_resp;

typedef struct gpu_eval {
  const mpt_gpu_backend *be;
  mpt_kernel_spec *ks;
  mpt_args *args;
  mpt_isolate *iso;
  int local_rank;
  int iterations;
  double power_window_ms; /* settings.power_window_ms */
  char power[256];       /* the device server's power observer, as HELLO said */
  char arch[64];
  double best_bench_s;   /* fastest benchmark so far (timeout derivation) */
  double timeout_s;      /* settings.timeout_s */
  mpt_watch watch;       /* the evaluator's (mpt_evaluator.watch): compiles and server calls ask it */
  int lock_fd;           /* the device's node-local lock (evaluators/gpu/device_lock.h), -1: none */
  char *req;             /* request buffer */
  size_t req_cap;
  /* device server state (only meaningful in the server process) */
  void *st;
  int ready;
  char init_msg[1024];
  mpt_device_info info;
  char srv_arch[64];
  mpt_power_meter *meter; /* NULL: no power observer (srv_power says why) */
  char srv_power[256];
  uint64_t *dptr;        /* device buffer per argument (vectors) */
  void **params;         /* the kernel's parameters: one per argument that is passed (any number) */
  int n_params;
  void *scratch;         /* host copy of one output */
} gpu_eval;

static int is_symbol_arg(const mpt_ks_arg *a) { return a->constant || a->mem == MPT_MEM_SYMBOL; }
static int is_writable(const mpt_ks_arg *a) { return a->access != MPT_ACCESS_READ_ONLY; }

int mpt_gpu_source_has_kernel(const char *source, const char *name) {
  size_t n = strcspn(name, "<( "); /* scale<float>: scale */
  const char *base = name;         /* ns::k is declared as k inside its namespace */
  for (const char *c = name; c + 1 < name + n; c++)
    if (c[0] == ':' && c[1] == ':') base = c + 2;
  n -= (size_t)(base - name);
  if (n == 0 || n > 255) return n > 255;
  char key[256];
  memcpy(key, base, n);
  key[n] = '\0';
  for (const char *p = strstr(source, key); p; p = strstr(p + 1, key)) {
    int before = p > source && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    int after = isalnum((unsigned char)p[n]) || p[n] == '_';
    if (!before && !after) return 1;
  }
  return 0;
}

/* blanks every "#pragma unroll NAME" directive of src (spaces: lines and columns stay) */
static void drop_unroll_pragmas(char *src, const char *name) {
  size_t nl = strlen(name);
  for (char *p = strchr(src, '#'); p; p = strchr(p + 1, '#')) {
    const char *q = p + 1;
    while (*q == ' ' || *q == '\t') q++;
    if (strncmp(q, "pragma", 6) != 0 || (q[6] != ' ' && q[6] != '\t')) continue;
    q += 6;
    while (*q == ' ' || *q == '\t') q++;
    if (strncmp(q, "unroll", 6) != 0 || (q[6] != ' ' && q[6] != '\t')) continue;
    q += 6;
    while (*q == ' ' || *q == '\t') q++;
    if (strncmp(q, name, nl) != 0 || isalnum((unsigned char)q[nl]) || q[nl] == '_') continue;
    memset(p, ' ', (size_t)(q + nl - p));
  }
}

char *mpt_gpu_prepare_source(const char *source, const char *const *defines, int n_defines) {
  size_t len = strlen(source) + 16;
  for (int i = 0; i < n_defines; i++) len += strlen(defines[i]) + 10;
  char *out = malloc(len), *at = out;
  if (!out) return NULL;
  for (int i = 0; i < n_defines; i++) { /* "name=value" -> "#define name value" */
    size_t nl = strcspn(defines[i], "=");
    at += sprintf(at, "#define %.*s %s\n", (int)nl, defines[i], defines[i][nl] ? defines[i] + nl + 1 : "");
  }
  at += sprintf(at, "#line 1\n");
  char *body = at;
  strcpy(body, source);
  for (int i = 0; i < n_defines; i++) { /* loop_unroll_factor_X = 0: no unroll pragma for that loop */
    size_t nl = strcspn(defines[i], "=");
    if (strncmp(defines[i], "loop_unroll_factor", 18) == 0 && strcmp(defines[i] + nl, "=0") == 0) {
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(nl < 255 ? nl : 255), defines[i]);
      drop_unroll_pragmas(body, name);
    }
  }
  return out;
}

/* ---- device server (runs in the isolate child) ----------------------------------------------- */

static int server_init(void *ctx) {
  gpu_eval *g = ctx;
  const mpt_kernel_spec *ks = g->ks;
  g->ready = 0;
  g->init_msg[0] = 0;
  memset(&g->info, 0, sizeof g->info);
  if (g->be->init(&g->st, g->local_rank, &g->info, g->srv_arch, sizeof g->srv_arch, g->init_msg,
                  sizeof g->init_msg) != 0)
    return 0; /* HELLO reports init_msg */
  char why[200], bus[64] = "";
  if (g->be->pci_bus_id) g->be->pci_bus_id(g->st, bus, sizeof bus);
  g->meter = mpt_power_open(g->be->vendor, g->info.index, bus, why, sizeof why);
  snprintf(g->srv_power, sizeof g->srv_power, "%s%s", g->meter ? mpt_power_name(g->meter) : "none: ",
           g->meter ? "" : why);
  g->dptr = calloc((size_t)ks->n_args + 1, sizeof *g->dptr);
  g->params = calloc((size_t)ks->n_args + 1, sizeof *g->params);
  size_t most = 1;
  for (int i = 0; i < ks->n_args; i++)
    if (ks->args[i].output && ks->args[i].bytes > most) most = ks->args[i].bytes;
  g->scratch = malloc(most);
  if (!g->dptr || !g->params || !g->scratch) {
    snprintf(g->init_msg, sizeof g->init_msg, "out of host memory in the device server");
    return 0;
  }
  for (int i = 0; i < ks->n_args; i++) {
    const mpt_ks_arg *a = &ks->args[i];
    if (a->mem != MPT_MEM_VECTOR || is_symbol_arg(a)) continue;
    char m[512];
    if (g->be->alloc(g->st, a->bytes, &g->dptr[i], m, sizeof m) ||
        g->be->upload(g->st, g->dptr[i], g->args->init[i], a->bytes, m, sizeof m)) {
      snprintf(g->init_msg, sizeof g->init_msg, "argument '%s' (%zu bytes) on the device: %s", a->name, a->bytes, m);
      return 0;
    }
  }
  g->n_params = 0;
  for (int i = 0; i < ks->n_args; i++) { /* every argument passed, however many (params has n_args slots) */
    const mpt_ks_arg *a = &ks->args[i];
    if (is_symbol_arg(a) || a->mem == MPT_MEM_LOCAL) continue;
    g->params[g->n_params++] = a->mem == MPT_MEM_VECTOR ? (void *)&g->dptr[i] : g->args->init[i];
  }
  g->ready = 1;
  return 0;
}

static double median_of(const double *x, int n) {
  double s[MPT_OBS_MAX_TIMES];
  memcpy(s, x, (size_t)n * sizeof *s);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
      double t = s[j];
      s[j] = s[j - 1];
      s[j - 1] = t;
    }
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* the timed launches of one variant: rq->iterations of them into o->times; with a power observer the window
 * goes on with more (timed, not kept) launches until it lasts rq->power_window_ms, and its power, energy per
 * launch, clock and temperature go into o. 0 or the failing launch's status (message in m). */
static int timed_runs(gpu_eval *g, const gpu_req *rq, void *fn, mpt_obs *o, char *m, size_t cap) {
  const mpt_gpu_backend *be = g->be;
  double kernel_ms = 0;
  int launches = 0, st = 0;
  if (g->meter) mpt_power_begin(g->meter);
  for (int it = 0; st == 0 && (it < rq->iterations || (g->meter && mpt_power_window_ms(g->meter, NULL) <
                                                                        rq->power_window_ms)); it++) {
    float ms = 0;
    st = be->launch(g->st, fn, rq->grid, rq->block, (unsigned)rq->shared, g->params, &ms, m, cap);
    if (st) break;
    if (it < rq->iterations) o->times[it] = ms;
    kernel_ms += ms;
    launches++;
  }
  if (g->meter) mpt_power_end(g->meter, launches, kernel_ms, o);
  if (st) return st;
  o->n_times = rq->iterations;
  return 0;
}

/* loads, verifies (or records the reference) and times one compiled variant */
static void server_run(gpu_eval *g, const gpu_req *rq, const char *lowered, const char *code, gpu_resp *rs) {
  const mpt_kernel_spec *ks = g->ks;
  const mpt_gpu_backend *be = g->be;
  mpt_obs *o = &rs->obs;
  char m[MPT_OBS_REASON];
  void *mod = NULL, *fn = NULL;
  int st;
  double t0 = mpt_clock_mono_ms();
  m[0] = 0;
  if ((st = be->load(g->st, code, rq->code_size, lowered, &mod, &fn, m, sizeof m)) != 0) goto done;
  for (int i = 0; i < ks->n_args; i++) {
    const mpt_ks_arg *a = &ks->args[i];
    if (!is_symbol_arg(a)) continue;
    if ((st = be->set_symbol(g->st, mod, a->name, g->args->init[i], a->bytes, m, sizeof m)) != 0) goto done;
  }
  int max_threads = 0, regs = 0, sshared = 0;
  be->func_info(g->st, fn, &max_threads, &regs, &sshared);
  int64_t threads = rq->block[0] * rq->block[1] * rq->block[2];
  if (max_threads > 0 && threads > max_threads) {
    st = MPT_STATUS_LAUNCH_ERROR;
    snprintf(m, sizeof m, "block of %lld threads exceeds this kernel's limit of %d (%d registers per thread)",
             (long long)threads, max_threads, regs);
    goto done;
  }
  for (int i = 0; i < ks->n_args; i++) { /* outputs start from their initial contents */
    const mpt_ks_arg *a = &ks->args[i];
    if (a->mem == MPT_MEM_VECTOR && !is_symbol_arg(a) && is_writable(a))
      if ((st = be->upload(g->st, g->dptr[i], g->args->init[i], a->bytes, m, sizeof m)) != 0) {
        rs->restart = 1;
        goto done;
      }
  }
  void **params = g->params;
  /* first run: warm-up and verification */
  if ((st = be->launch(g->st, fn, rq->grid, rq->block, (unsigned)rq->shared, params, NULL, m, sizeof m)) != 0) {
    if (st == MPT_STATUS_RUNTIME_ERROR) rs->restart = 1;
    goto done;
  }
  if ((st = be->sync(g->st, m, sizeof m)) != 0) {
    rs->restart = 1;
    goto done;
  }
  for (int i = 0; i < ks->n_args; i++) {
    const mpt_ks_arg *a = &ks->args[i];
    if (!a->output || a->mem != MPT_MEM_VECTOR || is_symbol_arg(a)) continue;
    if ((st = be->download(g->st, g->scratch, g->dptr[i], a->bytes, m, sizeof m)) != 0) {
      rs->restart = 1;
      goto done;
    }
    if (rq->kind == REQ_REF) {
      mpt_args_set_reference(g->args, i, g->scratch);
    } else {
      char cm[768];
      if (!mpt_args_compare(g->args, i, g->scratch, cm, sizeof cm)) {
        st = MPT_STATUS_WRONG_RESULT;
        snprintf(m, sizeof m, "output '%s' differs from the reference: %s", a->name, cm);
        goto done;
      }
    }
  }
  /* timed iterations, each bracketed by events, with the power observer sampling */
  int n = rq->iterations;
  if ((st = timed_runs(g, rq, fn, o, m, sizeof m)) != 0) {
    if (st == MPT_STATUS_RUNTIME_ERROR) rs->restart = 1;
    goto done;
  }
  double sum = 0;
  for (int it = 0; it < n; it++) sum += o->times[it];
  o->objective = sum / n;
  o->median = median_of(o->times, n);
  st = MPT_STATUS_OK;
done:
  if (mod) be->unload(g->st, mod);
  o->status = st;
  o->benchmark_ms = mpt_clock_mono_ms() - t0;
  if (st != MPT_STATUS_OK) {
    o->objective = NAN;
    snprintf(o->reason, sizeof o->reason, "%s", m);
  }
}

/* where the code lies in a request: after the lowered name, 16-byte aligned (as a malloc'd image would
 * be: the driver parses the ELF image in place) */
static size_t code_offset(uint64_t lowered_len) { return (sizeof(gpu_req) + (size_t)lowered_len + 15) & ~(size_t)15; }

static long server_serve(void *ctx, const void *req, size_t req_len, void *resp, size_t resp_cap) {
  gpu_eval *g = ctx;
  if (req_len < sizeof(gpu_req) || resp_cap < sizeof(gpu_resp)) return -1;
  gpu_req rq;
  memcpy(&rq, req, sizeof rq);
  if (rq.lowered_len > 4096 || sizeof rq + rq.lowered_len > req_len ||
      (rq.code_size && code_offset(rq.lowered_len) + rq.code_size > req_len))
    return -1;
  gpu_resp *rs = resp;
  memset(rs, 0, sizeof *rs);
  rs->ok = g->ready;
  snprintf(rs->arch, sizeof rs->arch, "%s", g->srv_arch);
  snprintf(rs->power, sizeof rs->power, "%s", g->srv_power);
  rs->info = g->info;
  if (!g->ready) {
    snprintf(rs->msg, sizeof rs->msg, "%s", g->init_msg);
    mpt_obs_init(&rs->obs, rq.id);
    rs->obs.status = MPT_STATUS_RUNTIME_ERROR;
    snprintf(rs->obs.reason, sizeof rs->obs.reason, "device not ready: %s", g->init_msg);
    rs->restart = 1;
    return (long)sizeof *rs;
  }
  if (rq.kind == REQ_HELLO) return (long)sizeof *rs;
  char lowered[4097];
  const char *p = (const char *)req + sizeof rq;
  memcpy(lowered, p, rq.lowered_len);
  lowered[rq.lowered_len] = 0;
  mpt_obs_init(&rs->obs, rq.id);
  server_run(g, &rq, lowered, (const char *)req + code_offset(rq.lowered_len), rs);
  return (long)sizeof *rs;
}

/* ---- worker side ------------------------------------------------------------------------------ */

/* the launch description of configuration id (mpt_kspec_launch), from its value indices */
static int config_launch(const mpt_kernel_spec *ks, const mpt_space *s, int64_t id, mpt_launch *l, mpt_error *err) {
  memset(l, 0, sizeof *l);
  int *idx = calloc((size_t)mpt_space_dims(s) + 1, sizeof *idx);
  if (!idx) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  mpt_space_config(s, id, idx);
  int rc = mpt_kspec_launch(ks, idx, l, err);
  free(idx);
  return rc;
}

int mpt_gpu_compile_launch(const mpt_kernel_spec *ks, const mpt_launch *l, mpt_rtc_compile_fn compile,
                           const char *arch, double timeout_s, const mpt_watch *watch, mpt_rtc_result *res,
                           mpt_error *err) {
  memset(res, 0, sizeof *res);
  /* the defines as #define lines before the source, as Kernel Tuner writes them: as -D options they
   * would also rewrite the runtime's built-in headers (a parameter named mode, T or n would break every
   * compile) */
  char *src = mpt_gpu_prepare_source(ks->source, (const char *const *)l->defines, l->n_defines);
  if (!src) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_rtc_compile_isolated(compile, src, ks->kernel_file, ks->kernel_name, arch,
                                    (const char *const *)ks->options, ks->n_options, timeout_s, watch, res, err);
  free(src);
  return rc;
}

int mpt_gpu_compile_config(const mpt_kernel_spec *ks, const mpt_space *s, int64_t id,
                           mpt_rtc_compile_fn compile, const char *arch, double timeout_s,
                           mpt_launch *launch_out, mpt_rtc_result *res, mpt_error *err) {
  memset(res, 0, sizeof *res);
  mpt_launch l;
  int rc = config_launch(ks, s, id, &l, err);
  if (rc) return rc;
  rc = mpt_gpu_compile_launch(ks, &l, compile, arch, timeout_s, NULL, res, err);
  if (launch_out && !rc)
    *launch_out = l;
  else
    mpt_launch_free(&l);
  return rc;
}

static int make_iso(gpu_eval *g, mpt_error *err) {
  mpt_isolate_opts o;
  memset(&o, 0, sizeof o);
  o.mem_limit = 0;     /* GPU runtimes reserve huge address ranges: no RLIMIT_AS */
  o.one_shot = 0;
  o.max_request = g->req_cap;
  o.watch = g->watch;
  return mpt_isolate_create(&o, server_serve, server_init, g, &g->iso, err);
}

static void restart_server(gpu_eval *g) {
  mpt_isolate_destroy(g->iso);
  g->iso = NULL;
  mpt_error e;
  mpt_error_clear(&e);
  make_iso(g, &e); /* a failure shows at the next call */
}

static double eval_timeout(const gpu_eval *g) {
  if (g->timeout_s > 0) return g->timeout_s;
  double t = 20 * g->best_bench_s;
  return t > 30 ? t : 30;
}

static double compile_timeout(const gpu_eval *g) {
  return g->timeout_s > 300 ? g->timeout_s : 300;
}

/* one request of `need` bytes (in g->req) to the device server, a fresh one started when it is gone; a fresh
 * server that cannot take the device (lost after a fault, being reset) is no verdict on this configuration: two
 * more, a second and two apart; then the evaluator stops (the run ends resumable) instead of logging every
 * remaining configuration as failed */
static int server_call(gpu_eval *g, size_t need, gpu_resp *rs, size_t *got, mpt_isolate_result *ir, mpt_error *err) {
  for (int attempt = 1;; attempt++) {
    int rc;
    if (!g->iso && (rc = make_iso(g, err)) != 0) return rc;
    rc = mpt_isolate_call(g->iso, g->req, need, rs, sizeof *rs, got, eval_timeout(g), ir, err);
    if (rc) return rc;
    if (ir->outcome != MPT_ISO_OK || *got < sizeof *rs || rs->ok) return 0;
    restart_server(g);
    if (attempt == 3)
      return mpt_error_set(err, MPT_ERR_DEVICE, "the device is not usable any more (%s; 3 fresh device servers tried): "
                           "the run stops here; resume it once the device works", rs->msg);
    struct timespec nap = {attempt, 0};
    nanosleep(&nap, NULL);
  }
}

/* ---- compile-ahead (evaluators/ahead.h): the key and the compile of a configuration, the artifact being the
 * compile function's outcome (mpt_rtc_pack) ---- */

/* the source configuration id compiles from (malloc'd; NULL when its launch cannot be computed) */
static char *config_source(const gpu_eval *g, const mpt_space *s, int64_t id) {
  mpt_launch l;
  mpt_error e;
  mpt_error_clear(&e);
  if (config_launch(g->ks, s, id, &l, &e) != 0) return NULL;
  char *src = mpt_gpu_prepare_source(g->ks->source, (const char *const *)l.defines, l.n_defines);
  mpt_launch_free(&l);
  return src;
}

static int ahead_key(void *ctx, int64_t id, mpt_ahead_key *key) {
  const mpt_evaluator *ev = ctx;
  const gpu_eval *g = ev->data;
  char *src = config_source(g, ev->space, id);
  if (!src) return -1;
  mpt_ahead_key_init(key);
  mpt_ahead_key_str(key, src);
  mpt_ahead_key_str(key, g->ks->kernel_file);
  mpt_ahead_key_str(key, g->ks->kernel_name);
  mpt_ahead_key_str(key, g->arch);
  for (int i = 0; i < g->ks->n_options; i++) mpt_ahead_key_str(key, g->ks->options[i]);
  free(src);
  return 0;
}

/* in the compile process: the compile function called directly (the process is the isolation) */
static int ahead_compile(void *ctx, int64_t id, const mpt_ahead_key *key, char **blob, size_t *len) {
  (void)key;
  const mpt_evaluator *ev = ctx;
  const gpu_eval *g = ev->data;
  mpt_rtc_result r;
  memset(&r, 0, sizeof r);
  mpt_error e;
  mpt_error_clear(&e);
  char *src = config_source(g, ev->space, id);
  int rc = src ? g->be->compile(src, g->ks->kernel_file, g->ks->kernel_name, g->arch, (const char *const *)g->ks->options,
                                g->ks->n_options, &r, &e)
               : mpt_error_set(&e, MPT_ERR_NOMEM, "out of memory");
  return mpt_rtc_pack(rc, &e, &r, blob, len);
}

static double ahead_timeout(void *ctx) { return compile_timeout(((const mpt_evaluator *)ctx)->data); }

/* an error of the compile function itself (no compiler, out of memory) is not kept: a second request tries
 * again */
static int ahead_cacheable(void *ctx, const char *blob, size_t len) {
  (void)ctx;
  int rc = mpt_rtc_packed_rc(blob, len);
  return rc == 0 || rc == MPT_ERR_INTERNAL; /* a compile error of this source is its outcome */
}

const mpt_ahead_ops mpt_gpu_ahead_ops = {ahead_key, ahead_compile, ahead_timeout, NULL, ahead_cacheable};

/* id's compile (ahead, cached or now) into r; 1 when o says it failed (its status, reason), 0 when r holds the
 * code, <0 on an error of the evaluator */
static int compile_config(mpt_evaluator *ev, gpu_eval *g, int64_t id, mpt_rtc_result *r, mpt_obs *o, mpt_error *err) {
  mpt_ahead_result ar;
  int rc = mpt_evaluator_compile(ev, id, &ar, o, err);
  if (rc || ar.outcome != MPT_AHEAD_DONE) return rc ? rc : 1;
  mpt_error ce;
  mpt_error_clear(&ce);
  rc = mpt_rtc_unpack(ar.blob, ar.len, r, &ce);
  free(ar.blob);
  /* the compiler refused the setup itself (not found, an architecture or CompilerOptions it does not take):
   * every variant would fail alike, so the evaluator stops here and the run ends, resumable, instead of
   * logging each configuration as failed */
  if (rc == MPT_ERR_VALUE)
    return mpt_error_set(err, rc, "%s: the %s compiler refuses the device architecture %s or "
                         "KernelSpecification.CompilerOptions, for every configuration: %s; the run stops here",
                         g->ks->problem->path, g->be->label, g->arch, ce.msg);
  if (rc) return mpt_error_set(err, rc, "%s", ce.msg);
  if (r->ok) return 0;
  o->status = r->crashed ? MPT_STATUS_CRASH : MPT_STATUS_COMPILE_ERROR;
  snprintf(o->reason, sizeof o->reason, "%s", r->log ? r->log : "compile error");
  mpt_rtc_result_free(r);
  return 1;
}

/* compile + one server call for config id; fills o (status, reason, times) */
static int run_config(mpt_evaluator *ev, gpu_eval *g, int64_t id, int kind, mpt_obs *o, mpt_error *err) {
  const mpt_space *s = ev->space;
  mpt_launch l;
  mpt_rtc_result r;
  mpt_error ce;
  mpt_error_clear(&ce);
  int rc = config_launch(g->ks, s, id, &l, &ce);
  if (rc == MPT_ERR_NOMEM) return mpt_error_set(err, rc, "%s", ce.msg);
  if (rc) { /* the configuration's launch cannot be computed: a property of this variant */
    o->status = MPT_STATUS_LAUNCH_ERROR;
    snprintf(o->reason, sizeof o->reason, "%s", ce.msg);
    return 0;
  }
  rc = compile_config(ev, g, id, &r, o, err);
  if (rc) {
    mpt_launch_free(&l);
    return rc < 0 ? rc : 0;
  }
  size_t need = code_offset(strlen(r.lowered)) + r.code_size;
  if (need > g->req_cap) {
    o->status = MPT_STATUS_COMPILE_ERROR;
    snprintf(o->reason, sizeof o->reason, "compiled code of %zu bytes exceeds the %zu-byte request limit",
             r.code_size, g->req_cap);
    mpt_rtc_result_free(&r);
    mpt_launch_free(&l);
    return 0;
  }
  gpu_req rq;
  memset(&rq, 0, sizeof rq);
  rq.kind = kind;
  rq.id = id;
  rq.iterations = g->iterations;
  rq.power_window_ms = g->power_window_ms;
  for (int d = 0; d < 3; d++) {
    rq.grid[d] = l.grid[d];
    rq.block[d] = l.block[d];
  }
  rq.shared = l.shared_bytes;
  rq.lowered_len = strlen(r.lowered);
  rq.code_size = r.code_size;
  memcpy(g->req, &rq, sizeof rq);
  memcpy(g->req + sizeof rq, r.lowered, rq.lowered_len);
  memcpy(g->req + code_offset(rq.lowered_len), r.code, r.code_size);
  mpt_rtc_result_free(&r);
  mpt_launch_free(&l);
  gpu_resp rs;
  size_t got = 0;
  mpt_isolate_result ir;
  if (mpt_device_lock_take(g->lock_fd, &g->watch)) { /* the run stops while another worker times */
    o->status = MPT_STATUS_CANCELLED;
    snprintf(o->reason, sizeof o->reason, "cancelled while waiting for the device: the run is stopping");
    return 0;
  }
  rc = server_call(g, need, &rs, &got, &ir, err);
  mpt_device_lock_release(g->lock_fd);
  if (rc) return rc;
  if (ir.outcome != MPT_ISO_OK || got < sizeof rs) {
    o->status = ir.outcome == MPT_ISO_TIMEOUT     ? MPT_STATUS_TIMEOUT
                : ir.outcome == MPT_ISO_CANCELLED ? MPT_STATUS_CANCELLED
                                                  : MPT_STATUS_CRASH;
    snprintf(o->reason, sizeof o->reason, "device server: %s", ir.reason);
    o->benchmark_ms = ir.seconds * 1e3;
    return 0; /* the next call forks a fresh server (new context) */
  }
  double compile_ms = o->compile_ms;
  *o = rs.obs;
  o->compile_ms = compile_ms;
  if (rs.restart) restart_server(g);
  return 0;
}

const mpt_option_spec mpt_gpu_eval_options[] = {
  {"compile_options", MPT_OPT_STRING, NULL, "more options for the run-time compiler (NVRTC, hiprtc), separated by "
   "blanks, after the problem's KernelSpecification.CompilerOptions (e.g. \"-use_fast_math\")", NULL, 0, -1},
  {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* the blank-separated words of option compile_options appended to the kernel's CompilerOptions (the run-time
 * compiler gets them after the problem's own) */
static int add_compile_options(mpt_kernel_spec *ks, const char *words, mpt_error *err) {
  char *copy = strdup(words ? words : "");
  if (!copy) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = 0;
  for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w && rc == 0; w = strtok_r(NULL, " \t", &save)) {
    char **grown = realloc(ks->options, sizeof *grown * (size_t)(ks->n_options + 1));
    if (grown) ks->options = grown;
    if (!grown || !(ks->options[ks->n_options] = strdup(w))) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    else ks->n_options++;
  }
  free(copy);
  return rc;
}

static void gpu_eval_free(gpu_eval *g) {
  if (!g) return;
  mpt_isolate_destroy(g->iso);
  if (g->lock_fd >= 0) close(g->lock_fd);
  mpt_args_free(g->args);
  mpt_kspec_free(g->ks);
  free(g->req);
  free(g);
}

int mpt_gpu_eval_open(mpt_evaluator *ev, const mpt_gpu_backend *be, mpt_error *err) {
  gpu_eval *g = calloc(1, sizeof *g);
  if (!g) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  g->be = be;
  g->lock_fd = -1;
  g->local_rank = ev->settings.local_rank;
  g->timeout_s = ev->settings.timeout_s;
  g->power_window_ms = ev->settings.power_window_ms;
  g->watch = ev->watch;
  int rc = mpt_kspec_load(ev->problem, &g->ks, err);
  if (rc == 0) rc = add_compile_options(g->ks, mpt_evaluator_opt_str(ev, "compile_options"), err);
  if (rc) goto fail;
  const mpt_kernel_spec *ks = g->ks;
  int lang_ok = ks->lang == MPT_LANG_CUDA || (strcmp(be->name, "hip") == 0 && ks->lang == MPT_LANG_HIP);
  if (!lang_ok) {
    rc = mpt_error_set(err, MPT_ERR_VALUE, "%s: KernelSpecification.Language is '%s'; the %s evaluator runs %s",
                       ev->problem->path, ks->language, be->name,
                       strcmp(be->name, "hip") == 0 ? "CUDA or HIP kernels (through hiprtc)" : "CUDA kernels");
    goto fail;
  }
  if (!mpt_gpu_source_has_kernel(ks->source, ks->kernel_name)) {
    rc = mpt_error_set(err, MPT_ERR_NAME, "%s: KernelSpecification.KernelName: kernel '%s' not found in %s",
                       ev->problem->path, ks->kernel_name, ks->kernel_file);
    goto fail;
  }
  if ((rc = be->available(err)) != 0) goto fail;
  g->iterations = ev->settings.iterations > 0 ? ev->settings.iterations : ks->iterations;
  if (g->iterations < 1) g->iterations = 1;
  if (g->iterations > MPT_OBS_MAX_TIMES) g->iterations = MPT_OBS_MAX_TIMES;
  g->req_cap = (size_t)64 << 20;
  g->req = malloc(g->req_cap);
  if (!g->req) {
    rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if ((rc = mpt_args_create(ks, 1, &g->args, err)) != 0) goto fail;
  if ((rc = make_iso(g, err)) != 0) goto fail;
  /* the device server starts, initializes the runtime and reports the device */
  gpu_req rq;
  memset(&rq, 0, sizeof rq);
  rq.kind = REQ_HELLO;
  gpu_resp rs;
  size_t got = 0;
  mpt_isolate_result ir;
  if ((rc = mpt_isolate_call(g->iso, &rq, sizeof rq, &rs, sizeof rs, &got, 120, &ir, err)) != 0) goto fail;
  if (ir.outcome != MPT_ISO_OK || got < sizeof rs) {
    rc = mpt_error_set(err, MPT_ERR_DEVICE, "no %s device: the device server failed to start: %s", be->label, ir.reason);
    goto fail;
  }
  if (!rs.ok) {
    rc = mpt_error_set(err, MPT_ERR_DEVICE, "%s", rs.msg);
    goto fail;
  }
  snprintf(g->arch, sizeof g->arch, "%s", rs.arch);
  snprintf(g->power, sizeof g->power, "%s", rs.power);
  if (g->power_window_ms > 0 && strncmp(g->power, "none", 4) == 0) {
    rc = mpt_error_set(err, MPT_ERR_DEVICE, "--objective %s needs the energy of each launch, and %s has no power "
                       "observer: %s", ev->settings.objective, rs.info.name, g->power + 6);
    goto fail;
  }
  ev->device.index = rs.info.index;
  snprintf(ev->device.vendor, sizeof ev->device.vendor, "%s", be->vendor);
  snprintf(ev->device.name, sizeof ev->device.name, "%s", rs.info.name);
  snprintf(ev->device.arch, sizeof ev->device.arch, "%s", rs.info.arch);
  ev->device.memory_gib = rs.info.memory_gib;
  ev->device.max_threads_per_block = rs.info.max_threads_per_block; /* the device's limits (evaluators/device_limits.h) */
  ev->device.max_shared_per_block = rs.info.max_shared_per_block;
  g->lock_fd = mpt_device_lock_open(be->name, rs.info.index);
  ev->data = g;
  /* reference output: ReferenceArguments, else the default configuration's output */
  if (mpt_args_needs_reference_run(g->args)) {
    int64_t ref = mpt_space_default_id(ev->space);
    if (ref < 0) ref = 0;
    mpt_obs o;
    mpt_obs_init(&o, ref);
    if ((rc = run_config(ev, g, ref, REQ_REF, &o, err)) != 0) goto fail_data;
    if (o.status != MPT_STATUS_OK) {
      char cfg[512];
      mpt_space_format(ev->space, ref, cfg, sizeof cfg);
      rc = mpt_error_set(err, MPT_ERR_VALUE, "%s: the reference configuration (%s) failed on %s: %s: %.1500s",
                         ev->problem->path, cfg, ev->device.name, mpt_status_name(o.status), o.reason);
      goto fail_data;
    }
    if (o.benchmark_ms > 0) g->best_bench_s = o.benchmark_ms * 1e-3;
  }
  return 0;
fail_data:
  ev->data = NULL;
fail:
  gpu_eval_free(g);
  return rc;
}

int mpt_gpu_eval_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err) {
  gpu_eval *g = ev->data;
  int rc = run_config(ev, g, id, REQ_EVAL, out, err);
  if (rc) return rc;
  if (out->status == MPT_STATUS_OK && out->benchmark_ms > 0 &&
      (g->best_bench_s <= 0 || out->benchmark_ms * 1e-3 < g->best_bench_s))
    g->best_bench_s = out->benchmark_ms * 1e-3;
  return 0;
}

void mpt_gpu_eval_close(mpt_evaluator *ev) {
  gpu_eval_free(ev->data);
  ev->data = NULL;
}
