/* jobs/runlog/runlog.h: the HDF5 run log: one file per run, written by rank 0 only (serial HDF5 calls on the
 * MPI build of the library). Run metadata, parameter tables, the device table, and one record per
 * evaluation in preallocated record storage with a CRC per record and a /count written last, flushed
 * on every append, so a killed run's log opens as it is. Layout: docs/RUNLOG.md. */
#ifndef MPT_RUNLOG_H
#define MPT_RUNLOG_H
#include <stdint.h>
#include <stdio.h>
#include "spaces/space.h"
#include "spaces/sys/obs.h"
#include "spaces/sys/error.h"
#include "evaluators/evaluator.h"

typedef struct mpt_run_meta {
  const char *mode;          /* "tune" or "collect" */
  const char *problem_path;
  const char *problem_text;  /* the T1 file's text */
  const char *strategy;
  const char *options;       /* "key=value,key=value" */
  const char *evaluator;     /* "sim", "cpu", … */
  const char *simulate;      /* replayed file or NULL */
  uint64_t seed;
  int64_t budget;            /* evaluations (0: none) */
  double time_budget;        /* seconds (0: none) */
  const char *command_line;
  const char *t4;            /* the T4 export's path, "" or NULL: none (standard output is not kept) */
  const char *objective;     /* --objective as evaluators/objective.h describes it; NULL or "": time */
  int64_t records;           /* records a new log is to have room for (a run of several device classes: a budget
                                each, and the portability evaluations); 0: the budget's */
  const char *priors;        /* the --prior files the strategy was told ("" or NULL: none; jobs/prior.h) */
  const char *evaluator_options; /* the --evaluator-option key=value the workers measured with, one a line ("" or
                                    NULL: none) */
} mpt_run_meta;

typedef struct mpt_runlog mpt_runlog;

/* Creates a new log (fails when the file exists and is not to be overwritten: caller decides). A log
 * opened for writing (create, open) is locked against other writers until closed (PATH.lock,
 * jobs/runlog/runlog_lock.h): another process's create or open of it fails, naming the writer. */
int mpt_runlog_create(const char *path, const mpt_space *space, const mpt_run_meta *meta,
                      mpt_runlog **out, mpt_error *err);
/* Reopens an existing log to append (resume). Fails with a clear message when the file is not an
 * mptune log, belongs to another problem (parameter tables differ), or is marked finished. */
int mpt_runlog_open(const char *path, const mpt_space *space, mpt_runlog **out, mpt_error *err);
/* The same, but a log finished by its evaluation budget is reopened when extend_to (the new budget) is
 * more than the evaluations it holds: the run goes on to extend_to (it is marked finished again then).
 * A budget no larger, or a log finished otherwise (space exhausted), fails as above. */
int mpt_runlog_open_to(const char *path, const mpt_space *space, int64_t extend_to, mpt_runlog **out, mpt_error *err);
/* mpt_runlog_open_to in two steps, so that a resume refused for a reason found later leaves the log as it
 * was: _checked locks, reads and checks it and writes nothing; mpt_runlog_begin_session then keeps a damaged
 * or recovered file beside it (mpt_runlog_damaged_copy), adds the session and rewrites it. Appending before
 * begin_session is an error. mode ("tune", "collect"; NULL: any): a log another command wrote is refused
 * (MPT_ERR_STATE, naming that command), also when it is finished. */
int mpt_runlog_open_checked(const char *path, const mpt_space *space, int64_t extend_to, const char *mode,
                            mpt_runlog **out, mpt_error *err);
int mpt_runlog_begin_session(mpt_runlog *log, mpt_error *err);
/* 0 when no other run writes the log at path now (its lock is free), else the error a create or open
 * would give; an early check, before a run starts (the create or open takes the lock for real) */
int mpt_runlog_check_unlocked(const char *path, mpt_error *err);
/* 1 when mpt_runlog_open_to reopened a finished log to extend it */
int mpt_runlog_extended(const mpt_runlog *log);
/* Read-only open for export/inspection. */
int mpt_runlog_open_readonly(const char *path, mpt_runlog **out, mpt_error *err);
/* 0 when a log opened read-only is of the problem of space (the same parameters and values, and ids naming the
 * same configurations), else MPT_ERR_VALUE naming the difference (path: the log's name in the message) */
int mpt_runlog_check_problem(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err);

int mpt_runlog_set_devices(mpt_runlog *log, const mpt_device_info *devs, int n, mpt_error *err);
/* The run's class table as text (the root attribute "classes": one class a line, "name<TAB>vendor<TAB>device
 * <TAB>arch"; a record's device_class is its line's index), stored with the next change of the file (the
 * device table a run writes). */
int mpt_runlog_set_classes(mpt_runlog *log, const char *text, mpt_error *err);
/* Appends and flushes (H5Fflush) before returning. */
int mpt_runlog_append(mpt_runlog *log, const mpt_obs *obs, int n, mpt_error *err);
int64_t mpt_runlog_count(const mpt_runlog *log);
/* of the records read at open, the measurements: neither cancelled nor missing (a log recovered from its records:
 * all of them) */
int64_t mpt_runlog_measured(const mpt_runlog *log);
/* of those, the search measurements of the device class that has most (a budget is per class; portability
 * evaluations are left out): what a finished run's budget is compared with when --resume extends it */
int64_t mpt_runlog_measured_class(const mpt_runlog *log);
/* Records found damaged when the log was opened (checksum mismatch before the last valid record: damage
 * to the file, not the torn tail of a killed append); they are skipped, the valid records after them
 * kept. mpt_runlog_open then rewrites the log without them, keeping the file as it was beside it:
 * mpt_runlog_damaged_copy is that path (PATH.damaged), NULL when nothing was damaged. */
int64_t mpt_runlog_damaged(const mpt_runlog *log);
const char *mpt_runlog_damaged_copy(const mpt_runlog *log);
/* A log HDF5 can not read (its metadata damaged, or the file cut short by an interrupted copy) still
 * holds its records, each with its CRC. mpt_runlog_recover opens such a file read-only from them alone:
 * one pass over the file finds every complete record of a configuration of `space` (value indices as
 * the space's, CRC right), in their order. The run's settings (strategy, seed, budget) and its device and
 * session tables are taken from the log's metadata copy (/metadata_copy, its own CRC) when that is intact,
 * else they are lost (mpt_runlog_recovered_meta tells which). It fails with HDF5's message when nothing is
 * found, and for a log that reads as it is. mpt_runlog_open (resume) recovers by itself, keeps the file as it was (PATH.damaged, as for
 * damaged records) and rewrites the log from the records. mpt_runlog_recovered: why the log had to be
 * recovered (the message reading it gave), NULL for a log read as it is. */
int mpt_runlog_recover(const char *path, const mpt_space *space, mpt_runlog **out, mpt_error *err);
const char *mpt_runlog_recovered(const mpt_runlog *log);
/* 1 when a recovered log's settings and device and session tables were recovered too (its metadata copy) */
int mpt_runlog_recovered_meta(const mpt_runlog *log);
/* the same for messages: "were recovered from its metadata copy" or "were lost (no intact metadata copy)" */
const char *mpt_runlog_recovered_meta_text(const mpt_runlog *log);
/* The run settings a log lacks (all of them in a recovered log: mode, strategy, options, evaluator, seed,
 * budget, command line) are taken from the run resuming it; stored with the next change of the file (the
 * device table tune writes). A log that has them keeps its own. */
int mpt_runlog_adopt_meta(mpt_runlog *log, const mpt_run_meta *meta, mpt_error *err);
/* A resume: adopts what the log lacks as mpt_runlog_adopt_meta does, and stores the settings the run goes on
 * with (strategy, options, evaluator_options, seed, budget, time_budget, t4), so that the next plain --resume continues with those
 * a --resume replaced (stored with the next change of the file). mode, evaluator, simulate and
 * command_line stay the first session's. */
int mpt_runlog_resume_meta(mpt_runlog *log, const mpt_run_meta *meta, mpt_error *err);
/* 1 once this process refused a log because HDF5 failed reading its metadata. libhdf5 1.10 can leak
 * internal blocks on such a failure and then prints "HDF5: infinite loop closing library" when it shuts
 * down (at MPI_Finalize or exit), after the refusal's own message; main hides that line. */
int mpt_runlog_hdf5_failed(void);
/* Reads all records in the order they were appended; *obs is malloc'd (caller frees). */
int mpt_runlog_read(mpt_runlog *log, mpt_obs **obs, int64_t *n, mpt_error *err);
/* Calls fn for each record in append order with its value indices (one per parameter), reading the log
 * in blocks (memory independent of its length); stops at fn's first negative return, which it returns. */
int mpt_runlog_each(mpt_runlog *log, int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config), void *ctx,
                    mpt_error *err);
/* The device table (/devices), one row per worker and session (jobs/runlog/runlog_tables.c): row i as the worker
 * reported it, and the session that bound it (*session may be NULL); 0, or -1 for a row out of range. A
 * record was evaluated on the row of its session and rank. */
int mpt_runlog_n_devices(const mpt_runlog *log);
int mpt_runlog_device(const mpt_runlog *log, int i, mpt_device_info *out, int32_t *session);
/* The sessions table (/sessions), one row per start of the run (creation, then every --resume). */
typedef struct mpt_runlog_session_info {
  double start_unix;
  int32_t pid;
  char host[64];
  char start_time[40]; /* UTC, ISO 8601 */
} mpt_runlog_session_info;
int mpt_runlog_n_sessions(const mpt_runlog *log);
int mpt_runlog_session(const mpt_runlog *log, int i, mpt_runlog_session_info *out);
/* mpt_runlog_each with the session each record was written in (the row of /sessions; with its rank, the row
 * of /devices that evaluated it) */
int mpt_runlog_each_session(mpt_runlog *log,
                            int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config, int32_t session), void *ctx,
                            mpt_error *err);
/* Stored metadata strings (attribute names as in docs/RUNLOG.md); NULL when absent. Owned by log. */
const char *mpt_runlog_meta(mpt_runlog *log, const char *key);
/* --confirm: a re-measurement of a finalist (o->confirm >= 1, its round), kept in /confirmations, apart from
 * the evaluations (it counts against no budget and no strategy hears of it); the file is rewritten whole. */
int mpt_runlog_append_confirmation(mpt_runlog *log, const mpt_obs *o, mpt_error *err);
/* the logged confirmations (malloc'd, in the order made; *n 0 and *out NULL when none) */
int mpt_runlog_confirmations(mpt_runlog *log, mpt_obs **out, int64_t *n, mpt_error *err);
/* Marks the run finished with a reason ("budget", "exhausted"); a finished run can not be resumed.
 * "signal", "time" and "waiting" (a device class without workers has its budget left) do not mark it
 * finished (a stopped run is resumable, with more time or the missing workers). */
int mpt_runlog_finish(mpt_runlog *log, const char *reason, mpt_error *err);
int mpt_runlog_is_finished(mpt_runlog *log);
void mpt_runlog_close(mpt_runlog *log);

/* Writes the log as a T4 results file, evaluations in the order they finished. `space` may be NULL
 * (then the parameter tables stored in the log are used). */
int mpt_runlog_export_t4(const char *log_path, const char *t4_path, mpt_error *err);
/* The same for a log already open (mptune export opens it once, to tell of damaged records too). */
int mpt_runlog_write_t4(mpt_runlog *log, const char *t4_path, mpt_error *err);
/* The same for the records of one device class (the index of the classes attribute; -1: all of them). */
int mpt_runlog_write_t4_class(mpt_runlog *log, const char *t4_path, int device_class, mpt_error *err);
/* The T4 export of a log of several device classes: one file per class, t4_path with ".CLASS-SLUG" before its
 * ".json" (run_T4.json: run_T4.a100.json; jobs/output/export_classes.c); a log of one class (or an export to
 * standard output or a pipe) as mpt_runlog_write_t4. Each path written is said on `report` (may be NULL) as
 * "LABEL PATH (class NAME)". */
int mpt_runlog_write_t4_classes(mpt_runlog *log, const char *t4_path, FILE *report, const char *label, mpt_error *err);
int mpt_runlog_export_t4_classes(const char *log_path, const char *t4_path, FILE *report, const char *label,
                                 mpt_error *err);
/* The path of class `name`'s T4 file beside t4_path (as mpt_runlog_write_t4_classes names it). */
void mpt_runlog_t4_class_path(const char *t4_path, const char *name, char *buf, size_t cap);

#endif
