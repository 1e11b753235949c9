/* jobs/campaign/campaign_file.h: a campaign file (docs/CAMPAIGNS.md, schema docs/campaign-1.0.json): several
 * tuning jobs over one allocation, each a T1 problem with its strategy, options, budget per device class and
 * the classes that run it, plus settings they share (log directory, seed, replayed files per class). Read
 * strictly (spaces/json/json_doc.h); every fault is one message "FILE:LINE:COL: FIELD: why" (an unknown key
 * with the key meant, a missing problem, a duplicate job name, a bad value). Relative paths are resolved
 * against the campaign file's folder. The classes a job names are checked against the classes present at
 * run time by mpt_campaign_check_classes. */
#ifndef MPT_CAMPAIGN_FILE_H
#define MPT_CAMPAIGN_FILE_H
#include <stdint.h>
#include "jobs/job.h"
#include "spaces/sys/error.h"

#define MPT_CAMPAIGN_SCHEMA_VERSION "1.0"

/* a budget for one named class (mpt_campaign_job.class_budgets) */
typedef struct mpt_campaign_budget {
  const char *device_class;
  int64_t budget;
} mpt_campaign_budget;

typedef struct mpt_campaign_job {
  const char *name;             /* unique in the campaign; the log's default name */
  int index;                    /* place in the file's jobs[] */
  mpt_job_options opts;         /* what a `tune` of this job gets: problem (resolved), strategy (NULL: the
                                   problem's Search block, else random), options as key=value, budget (per class;
                                   -1: the class budgets or the problem's Budget block), time budget, seed
                                   (the job's, else the campaign's + index), log, simulate settings, progress */
  int all_classes;              /* 1: every class present runs it ("classes": "all", the default) */
  const char **classes;         /* else these (n_classes, as the file names them) */
  int n_classes;
  mpt_campaign_budget *class_budgets; /* "budget": {"CLASS": N, ...}; "*" (every other class) is opts.budget */
  int n_class_budgets;
} mpt_campaign_job;

/* a replayed file for a simulated class ("simulate": {"CLASS": "FILE"}) */
typedef struct mpt_campaign_sim {
  const char *device_class;
  const char *path;             /* resolved */
} mpt_campaign_sim;

typedef struct mpt_campaign {
  char *path;                   /* the campaign file */
  char *text;                   /* its text (for line and column) */
  const char *name;             /* "name", else the file's base name without .json */
  const char *log_dir;          /* resolved "log_dir" (default: the campaign file's folder) */
  uint64_t seed;
  int seed_given;
  double time_budget;           /* seconds per job and class ("time", 0: none) */
  double grace_s;               /* "grace" (20 when absent) */
  const char *evaluator;        /* "evaluator" (NULL: as tune chooses) */
  mpt_campaign_sim *sims;       /* "simulate", n_sims */
  int n_sims;
  double simulate_delay;
  mpt_campaign_job *jobs;
  int n_jobs;
  void *owned;                  /* the parsed document and the strings the jobs borrow (campaign_file.c) */
} mpt_campaign;

/* Reads and checks the campaign file at path (its problems exist and are files; their contents are read when
 * the jobs are opened or planned). 0 with *out, or <0 with err and *out NULL. */
int mpt_campaign_load(const char *path, mpt_campaign **out, mpt_error *err);
/* The same from text (path names it in messages and is the folder relative paths start from). */
int mpt_campaign_parse(const char *text, const char *path, mpt_campaign **out, mpt_error *err);
void mpt_campaign_free(mpt_campaign *c);

/* Every class a job names (in "classes" or "budget") is one of the n classes present at run time; else
 * "FILE:LINE:COL: jobs[i].classes[k]: unknown device class 'X' (present: A, B)". */
int mpt_campaign_check_classes(const mpt_campaign *c, const char *const *present, int n, mpt_error *err);
/* The same for job i alone. */
int mpt_campaign_check_job_classes(const mpt_campaign *c, int i, const char *const *present, int n, mpt_error *err);
/* The classes of the campaign's "simulate" (the classes present in a simulated campaign) into names (cap),
 * their number. */
int mpt_campaign_sim_classes(const mpt_campaign *c, const char **names, int cap);

/* The budget of job j for class cls: its "budget" for that class, else its "*" or plain budget; -1 when the
 * class does not run the job, 0 when the file gives no budget (the problem's Budget block then). */
int64_t mpt_campaign_job_budget(const mpt_campaign_job *j, const char *cls);

/* What a `tune` of job j on class cls gets, into *out: j's options with the class's budget (-1 when the file
 * gives none: the problem's Budget block or the time budget) and, in a simulated campaign, the class's replayed
 * file (evaluator sim unless the file names one). 0, or -1 when cls does not run the job (*out untouched). */
int mpt_campaign_job_options(const mpt_campaign *c, const mpt_campaign_job *j, const char *cls,
                             mpt_job_options *out);

#endif
