/* evaluators/cpu/cpu_internal.h: what the parts of the cpu evaluator (evaluators/cpu.c and evaluators/cpu/) share
 * and nothing else uses: the evaluator's state, the child's request and answer, a compiler's command line, what a
 * variant's compile leaves, and each part's functions. */
#ifndef MPT_EVALUATORS_CPU_INTERNAL_H
#define MPT_EVALUATORS_CPU_INTERNAL_H
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "evaluators/args.h"
#include "evaluators/cpu_toolchain.h"
#include "evaluators/evaluator.h"
#include "evaluators/isolate.h"
#include "evaluators/kernel_spec.h"
#include "evaluators/kernel_spec_eval.h"

#define CPU_COMPILE_TIMEOUT_S 120.0
#define CPU_FIRST_TIMEOUT_S 60.0 /* until a valid variant has been timed */
#define CPU_MIN_TIMEOUT_S 10.0
#define CPU_TIMEOUT_FACTOR 20.0
/* a variant that started threads (an OpenMP pool) gets this many more untimed calls after its verified warm-up, as
 * long as they take at most CPU_THREADED_WARMUP_MS: the first calls after a pool starts wait for a core more often
 * on a loaded node (measured: 13 % of the timed runs of tests/kernels/omp.c delayed by the scheduler, 1-10 ms
 * each, against 5 % with two more calls) */
#define CPU_THREADED_WARMUPS 2
#define CPU_THREADED_WARMUP_MS 50.0
/* a timed run during which the variant's threads waited for a core (runnable, on a runqueue: the scheduler's delay
 * on a loaded node, not the kernel's time) for at least this share of the run and this long is run again: at most
 * CPU_DELAYED_RUNS times per timed run, and while the runs set aside took at most CPU_DELAYED_BUDGET_MS more than
 * the runs kept; one still delayed then is kept */
#define CPU_DELAYED_SHARE 0.25
#define CPU_DELAYED_MIN_MS 0.05
#define CPU_DELAYED_RUNS 10
#define CPU_DELAYED_BUDGET_MS 50.0
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

/* a compiler's command line, built word by word */
typedef struct cc_command {
  char **argv;                 /* n words, then NULL */
  int n, cap;
  char **owned;                /* the words made here (-I, -D), freed with the command */
  int n_owned;
} cc_command;

/* what a variant's compile leaves */
typedef struct cpu_artifact {
  int32_t rc;                  /* <0: the compiler cannot be run at all (reason: the error) */
  int32_t status;              /* MPT_STATUS_OK, or how the compile failed */
  char so_path[PATH_MAX];      /* the shared object (status OK) */
  char reason[MPT_OBS_REASON];
} cpu_artifact;

/* cpu_child.c: the child's side of one evaluation (an mpt_isolate serve function; ctx: the cpu_state) */
long mpt_cpu_serve(void *ctx, const void *reqp, size_t req_len, void *respp, size_t cap);

/* cpu_run.c: the isolation the variants run in; a compiled variant run in the child (mode: REQ_EVAL or
 * REQ_REFERENCE), its outcome in obs */
int mpt_cpu_start_isolation(const mpt_evaluator *ev, cpu_state *st, mpt_error *err);
int mpt_cpu_run_variant(cpu_state *st, int mode, const char *so_path, mpt_obs *obs, mpt_error *err);

/* cpu_compile.c: a text file written; a compiler's command line; compiles and their outcome; the call wrapper */
int mpt_cpu_write_text(const char *path, const char *text);
void mpt_cpu_cmd_free(cc_command *c);
void mpt_cpu_cmd_push(cc_command *c, const char *word);
int mpt_cpu_kernel_command(const cpu_state *st, const mpt_launch *l, const char *mode, int extra, cc_command *c,
                           mpt_error *err);
int mpt_cpu_push_kernel_language(const cpu_state *st, cc_command *c);
int mpt_cpu_run_kernel_compiler(cpu_state *st, const mpt_cpu_cc *cc, char *const argv[], double timeout, char *out,
                                size_t cap, int *status, double *secs, mpt_error *err);
void mpt_cpu_compile_outcome(const cpu_state *st, int status, double timeout, const char *out, mpt_obs *obs);
double mpt_cpu_compile_timeout(const cpu_state *st);
int mpt_cpu_compile_call_wrapper(cpu_state *st, mpt_error *err);

/* cpu_compile_reason.c: a compiler's output as a reason; the CompilerOptions entry a message names (-1: none) */
void mpt_cpu_compiler_reason(char *dst, size_t cap, const char *prefix, const char *out);
int mpt_cpu_option_named(const mpt_kernel_spec *ks, const char *msg);

/* cpu_scratch.c: the scratch directory made (stale ones removed first) and removed */
int mpt_cpu_make_scratch_dir(cpu_state *st, const mpt_eval_settings *settings, mpt_error *err);
void mpt_cpu_remove_scratch_dir(cpu_state *st);

/* cpu_ahead.c: the compile-ahead operations; configuration id's shared object in art, o: how its compile went */
extern const mpt_ahead_ops mpt_cpu_ahead_ops;
int mpt_cpu_take_variant(mpt_evaluator *ev, int64_t id, cpu_artifact *art, mpt_obs *o, mpt_error *err);

/* cpu_reference.c: the launch of configuration id; the kernel's return type checked; the reference run */
int mpt_cpu_launch_of(const mpt_evaluator *ev, const cpu_state *st, int64_t id, mpt_launch *l, mpt_error *err);
int mpt_cpu_check_return_type(mpt_evaluator *ev, cpu_state *st, mpt_error *err);
int mpt_cpu_run_reference(mpt_evaluator *ev, cpu_state *st, mpt_error *err);
#endif
