/* jobs/output/summary.h: a run log at a glance, as `mptune show` prints it and `mptune export --header` writes
 * it: per device class (the log's class of each record where it has several, else the vendor, name, arch of the
 * worker that evaluated it), the best configurations
 * by objective with the statistics of their per-iteration times and the speed-up over the default
 * configuration, the failures counted by status with their first distinct reasons, and the parameter values
 * as the problem gives them. Read in two passes over the log's records (memory grows with its valid
 * records, about 24 bytes each, not with their size). */
#ifndef MPT_SUMMARY_H
#define MPT_SUMMARY_H
#include <stdint.h>
#include "jobs/runlog/runlog.h"
#include "spaces/expr/value.h"
#include "spaces/sys/error.h"
#include "spaces/sys/obs.h"

#define MPT_SUMMARY_REASONS 3      /* distinct reasons kept per status and device class */
#define MPT_SUMMARY_REASON_LEN 200 /* bytes of a reason's first line kept */

/* the objective the log records: a time in milliseconds, lower is better (docs/RUNLOG.md) */
#define MPT_SUMMARY_OBJECTIVE "time"
#define MPT_SUMMARY_UNIT "ms"

/* the objective a log records (its attribute "objective", docs/RUNLOG.md; "time" without one): the first
 * one's name, unit and direction; the logged values are its minimized form (a maximized one negated) */
typedef struct mpt_summary_objective { char name[64]; const char *unit; int maximized; } mpt_summary_objective;
mpt_summary_objective mpt_summary_objective_of(mpt_runlog *log);

/* one configuration among the best: its best valid record */
typedef struct mpt_summary_top {
  int64_t id;          /* config id */
  int64_t record;      /* index of the record in append order */
  int32_t *config;     /* value index per parameter */
  double objective;    /* ms */
  int n_times;         /* per-iteration times logged (0: none) */
  double median, std, min, max; /* of those times (ms; std the sample standard deviation); NAN without times */
  double speedup;      /* the default's objective over this one; NAN when the default was not measured */
} mpt_summary_top;

/* the failures of one status */
typedef struct mpt_summary_failure {
  int status;          /* mpt_status */
  int64_t count;
  int n_reasons;
  char *reasons[MPT_SUMMARY_REASONS]; /* first lines, distinct, in the order first seen */
} mpt_summary_failure;

/* the records evaluated on one device class: in a log of several classes (its attribute "classes") the log's class
 * a record's device_class names, else the device (vendor, name, arch) of the worker that evaluated it */
typedef struct mpt_summary_device {
  char vendor[32], name[128], arch[32]; /* "unknown" (vendor) when no row of the device table names the worker */
  char class_name[64]; /* the log's name of the class ("": a log of one class, grouped by device) */
  char target[200];    /* the macro naming it in a header: TARGET_ and its name, non-alphanumerics as '_' */
  int workers;         /* distinct worker ranks bound to it (a log of several classes: that evaluated its records) */
  int64_t evaluations; /* records of its search, cancelled ones and portability checks not counted */
  int64_t valid, failed, cancelled;
  int64_t cross_checks; /* portability checks run here (records with cross_from: another class's best measured on
                           this one, coordinator/cross.h), cancelled ones not counted: none of its search's counts,
                           best configurations, default or failures */
  int64_t configs;     /* distinct configurations with a valid record */
  int n_top;
  mpt_summary_top *top; /* the best configurations, best first */
  int default_seen;    /* the default configuration was evaluated here (its last record counts) */
  int default_status;
  double default_objective; /* ms; NAN when its last record failed */
  int64_t default_id;  /* its config id (-1: not measured here) */
  /* the confirmation (/confirmations, --confirm: the re-measurements of this class's finalists and default, those
   * whose device_class is one of this class's records'; a log of one class with records: all of them) as `mptune
   * tune` reported it: the best confirmed among the finalists and the default confirmed (each the median of its
   * valid re-measurements; NAN: none), and the speed-up of the one over the other */
  int64_t confirmations; /* re-measurements logged for this class (0: no confirmation) */
  int64_t confirmed_best_id; /* -1: none */
  int confirmed_rank;  /* the best confirmed's place among the search's best (1: the confirmation keeps the search's
                          best; 0: not among the top kept) */
  double confirmed_best, confirmed_default, confirmed_speedup;
  mpt_summary_failure failures[MPT_STATUS_COUNT]; /* indexed by status (count 0: none; OK unused) */
} mpt_summary_device;

typedef struct mpt_summary {
  mpt_runlog *log;     /* borrowed: outlives the summary */
  int n_params;
  const char **names;  /* parameter names (the log's) */
  int *n_values;
  mpt_value **values;  /* values[p][i]: from the problem the log holds when it matches the log's tables, else
                          from the tables */
  int32_t *default_config; /* the problem's Default per parameter; NULL when unknown */
  int64_t records;     /* records in the log, cancelled ones included */
  int n_devices;
  mpt_summary_device *devices; /* in the order of the device table (a log of several classes: of its classes),
                                  then "unknown" when records name no row (no class) */
  int n_with_records;  /* device classes with records (several: the log is shown per device class) */
  int n_log_classes;
  int *log_class_device; /* per index of the log's class table (a record's device_class): the device class here
                            whose search records have it first, -1 none; what a confirmation's class is shown as */
} mpt_summary;

/* The summary of an open log with the top configurations per device class; 0 or an error (reading the log,
 * out of memory). */
int mpt_summary_build(mpt_runlog *log, int top, mpt_summary **out, mpt_error *err);
void mpt_summary_free(mpt_summary *s);
/* the counts over every device class (evaluations, valid, failed, cancelled, portability checks; the rest 0) */
mpt_summary_device mpt_summary_totals(const mpt_summary *s);

/* value i of parameter p as Python's str() gives it (what mptune prints for a configuration) */
int mpt_summary_value_text(const mpt_summary *s, int p, int i, char *buf, int cap);
/* the same as the value of a preprocessor define, as the evaluators write it for the kernel
 * (evaluators/kernel_launch.c: a bool as 0 or 1, anything else as str()) */
int mpt_summary_value_define(const mpt_summary *s, int p, int i, char *buf, int cap);
/* the first line of a reason, blanks trimmed, cut (at a character) to MPT_SUMMARY_REASON_LEN bytes */
void mpt_summary_reason_line(const char *reason, char *buf, int cap);

/* Writes the best configuration as a C header (jobs/output/header.c), whole or not at all
 * (jobs/output/outfile.h): the configuration as `#define NAME VALUE` lines; with several device classes
 * one `#if defined(TARGET_...)`/`#elif` block each and the first class's as the default. log_path names the
 * log in the header's comment. An error when no device class has a valid record. */
int mpt_summary_write_header(const mpt_summary *s, const char *log_path, const char *path, mpt_error *err);

#endif
