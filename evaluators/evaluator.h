/* evaluators/evaluator.h: the compile-and-time backends behind one interface (cpu, cuda, hip, sim; auto picks
 * one of the first three per worker), registered by name in evaluators/registry.c, one file per evaluator, each
 * with its option table (--evaluator-option key=value). An evaluator is opened once per worker for the device
 * that worker is bound to and evaluates config ids. */
#ifndef MPT_EVALUATOR_H
#define MPT_EVALUATOR_H
#include <stdint.h>
#include <stdio.h>
#include "spaces/space.h"
#include "spaces/sys/obs.h"
#include "spaces/sys/error.h"
#include "spaces/sys/option.h"
#include "spaces/sys/watch.h"
#include "evaluators/ahead.h"

/* What a worker is bound to; printed in the device table and stored in the run log. */
typedef struct mpt_device_info {
  int32_t rank;          /* MPI rank of the worker */
  int32_t index;         /* device index on its node after *_VISIBLE_DEVICES (-1: CPU) */
  char host[64];
  char vendor[32];       /* "NVIDIA", "AMD", "CPU", "replay" */
  char name[128];        /* device or CPU model name */
  char arch[32];         /* "sm_90", "gfx90a", "x86_64" … */
  double memory_gib;     /* device memory (host memory for the CPU) */
  char evaluator[16];    /* evaluator name */
  int32_t max_threads_per_block; /* the device's limit (0: unknown or none, as for the CPU) */
  int32_t pad;
  int64_t max_shared_per_block;  /* bytes of shared memory per block (0: unknown or none) */
  char device_class[64]; /* the class whose timings are comparable with this one's (mpi/device_class.h);
                            "" until assigned */
} mpt_device_info;

/* Settings from the command line that evaluators read. */
typedef struct mpt_eval_settings {
  const char *simulate_path;   /* sim: brute-forced file to replay */
  double simulate_delay;       /* sim: scale factor on recorded compile+benchmark time (0: no delay) */
  int simulate_skip_missing;   /* sim: a configuration the file has no record of is an observation of status
                                  missing (not a measurement), not an error that ends the run */
  double timeout_s;            /* per-evaluation timeout (0: derived automatically) */
  int iterations;              /* timed iterations (0: the problem's or the default) */
  const char *workdir;         /* scratch directory for compiled variants */
  int local_rank;              /* node-local rank among workers: picks the device */
  int rank;                    /* MPI rank */
  const char *objective;       /* --objective (evaluators/objective.h): NULL or "" time */
  double power_window_ms;      /* set by mpt_evaluator_open: MPT_OBJECTIVE_POWER_WINDOW_MS when the objective
                                  needs the energy (cuda/hip: the timed launches go on until the power window
                                  lasts this long), else 0 (the power of the timed iterations alone) */
  mpt_watch watch;             /* the caller's watch over each evaluation: asked at least every 100 ms while one
                                  waits (a compile, the process that runs the variant, the device server, a
                                  simulated delay), never while the evaluator opens; once it says stop the
                                  evaluation is cancelled (MPT_STATUS_CANCELLED: a resume evaluates it again).
                                  {NULL}: none */
  const char *const *options;  /* n_options "key=value" of the type's option table (--evaluator-option), checked at
                                  open; a key given twice: the last wins */
  int n_options;
  int compile_jobs;            /* compiles at once, ahead of the device (evaluators/ahead.h); 0: the node's online
                                  cores / its workers (local_workers), at least 1 */
  int local_workers;           /* workers on this node (0: unknown, taken as 1) */
} mpt_eval_settings;

typedef struct mpt_evaluator mpt_evaluator;

typedef struct mpt_evaluator_type {
  const char *name;
  const char *summary;
  int (*open)(mpt_evaluator *ev, mpt_error *err);     /* allocates ev->data; binds the device */
  /* evaluates one configuration; failures of the variant are data (obs->status), not errors:
   * return <0 only when the evaluator itself cannot go on */
  int (*evaluate)(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err);
  void (*close)(mpt_evaluator *ev);
  const mpt_option_spec *options;  /* its settings (--evaluator-option key=value), ending in a NULL key; NULL: none */
  /* optional: the types whose options this one takes (NULL-terminated; `auto` takes those of the type it picks) */
  const char *const *takes_options_of;
  /* compile-ahead (evaluators/ahead.h; ctx is the mpt_evaluator): a type whose evaluate compiles through
   * mpt_evaluator_compile names its compile here; NULL: evaluate does all its work itself */
  const mpt_ahead_ops *ahead;
} mpt_evaluator_type;

struct mpt_evaluator {
  const mpt_evaluator_type *type;
  const mpt_problem *problem;
  const mpt_space *space;
  mpt_eval_settings settings;
  mpt_device_info device;    /* filled by open() */
  mpt_watch watch;           /* what a type hands to the waits of its evaluations (evaluators/isolate.h), set
                                before open(): settings.watch (with the per-evaluation watch of
                                mpt_evaluator_evaluate_watched before it) once open() has returned, nothing
                                before */
  void *data;
};

const mpt_evaluator_type *mpt_evaluator_find(const char *name);
int mpt_evaluator_count(void);
const mpt_evaluator_type *mpt_evaluator_at(int i);

int mpt_evaluator_open(const char *name, const mpt_problem *p, const mpt_space *s,
                       const mpt_eval_settings *settings, mpt_evaluator **out, mpt_error *err);
/* sets obs->id, t_start/t_end and framework_ms around the type's evaluate */
int mpt_evaluator_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err);
/* mpt_evaluator_evaluate with a watch of this evaluation's own (may be NULL), asked in its waits before the
 * evaluator's settings.watch (with one rank the coordinator redraws its progress line there) */
int mpt_evaluator_evaluate_watched(mpt_evaluator *ev, int64_t id, const mpt_watch *also, mpt_obs *out,
                                   mpt_error *err);
void mpt_evaluator_close(mpt_evaluator *ev);
/* For a type's open that hands the evaluator over to another type (`auto`): ev becomes type t, with t's
 * compile-ahead (before t's open, which may compile); 0 or MPT_ERR_NOMEM */
int mpt_evaluator_become(mpt_evaluator *ev, const mpt_evaluator_type *t, mpt_error *err);

/* Option tables (evaluators/evaluator_options.c). Checks one "key=value" for type t: 0, or a message naming the
 * evaluator, the key (with the valid keys, and the one meant when key is a misspelling) or the bad value. */
int mpt_evaluator_check_option(const mpt_evaluator_type *t, const char *kv, mpt_error *err);
/* Prints t's options, one a line (type, default, range or choices, help) */
void mpt_evaluator_print_options(const mpt_evaluator_type *t, FILE *f);
/* The value of option key for an opened evaluator: the user's (settings.options, the last given), else the
 * default of the row of that key in the type's table; NULL when neither */
const char *mpt_evaluator_opt_str(const mpt_evaluator *ev, const char *key);
/* 1 when the user gave option key (settings.options) */
int mpt_evaluator_opt_given(const mpt_evaluator *ev, const char *key);
int64_t mpt_evaluator_opt_int(const mpt_evaluator *ev, const char *key);
double mpt_evaluator_opt_double(const mpt_evaluator *ev, const char *key);
/* Compile-ahead, for the worker that holds a queue of upcoming configurations: prepare starts id's compile when a
 * compile job is free (nothing for a type without one), discard drops a configuration that will not be evaluated
 * (its compile killed). */
void mpt_evaluator_prepare(mpt_evaluator *ev, int64_t id);
void mpt_evaluator_discard(mpt_evaluator *ev, int64_t id);
/* the compile jobs of a worker of evaluator (name) on a node with local_workers workers (0: unknown, 1): its
 * online cores per worker, less the core a variant the cpu evaluator times takes, at least 1 */
int mpt_evaluator_default_jobs(const char *evaluator, int local_workers);
/* the compile jobs resolved from the settings (mpt_eval_settings.compile_jobs) */
int mpt_evaluator_compile_jobs(const mpt_evaluator *ev);
/* 1 when this node runs more processes than it has cores: workers + compile jobs > online cores, or a 1-minute
 * load average above them (other processes compete for the cores) */
int mpt_evaluator_node_oversubscribed(const mpt_evaluator *ev);
/* For a type's evaluate: the artifact of id's compile (mpt_ahead_take: cached, compiled ahead, or compiled now,
 * watched by ev->watch). A compile that crashed, timed out or was cancelled sets obs (status, reason,
 * compile_ms) and res->outcome says so; obs->compile_ms is the compile's time either way. <0: an error. */
int mpt_evaluator_compile(mpt_evaluator *ev, int64_t id, mpt_ahead_result *res, mpt_obs *obs, mpt_error *err);
/* stops (1) or resumes (0) the compiles running ahead: the cpu evaluator times on the cores they use */
void mpt_evaluator_pause_compiles(mpt_evaluator *ev, int paused);
void mpt_evaluator_compile_stats(const mpt_evaluator *ev, mpt_ahead_stats *out);

#endif
