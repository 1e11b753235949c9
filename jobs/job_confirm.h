/* jobs/job_confirm.h: rank 0's side of --confirm K (coordinator/confirm.h): the K best configurations of the
 * search as the observations arrive (the finalists), and the default configuration, the baseline of the
 * speed-up, measured again in the same rounds when its last search measurement is valid and it is not a
 * finalist; their re-measurements (this session's and those a resumed log holds for the same finalists and
 * default, which are not measured again), the confirmed objective of each (the median of its
 * re-measurements) and the summary's table, which says when the confirmation reorders the finalists. A run of
 * several device classes has these of each class (mpt_job_confirm_classes): each class's finalists are its own
 * search's, its baseline its own default, its re-measurements those stamped with its class. */
#ifndef MPT_JOB_CONFIRM_H
#define MPT_JOB_CONFIRM_H
#include <stdint.h>
#include <stdio.h>
#include "coordinator/confirm.h"
#include "jobs/job_objective.h"

#define MPT_CONFIRM_DEFAULT_K 3   /* --confirm's default: the three best */
#define MPT_CONFIRM_MAX_K 32
#define MPT_CONFIRM_ROUNDS 3      /* re-measurements of each finalist */

typedef struct mpt_job_finalist {
  int64_t id;
  double search;                  /* its best objective in the search (minimized) */
  int n_conf;
  double conf[MPT_CONFIRM_ROUNDS];/* its re-measured objectives (minimized; NAN: that run failed) */
  double confirmed;               /* the median of conf (NAN: none valid) */
} mpt_job_finalist;

typedef struct mpt_job_confirm {
  int k;
  int n;                          /* finalists so far, best first */
  mpt_job_finalist f[MPT_CONFIRM_MAX_K];
  int64_t default_id;             /* the default configuration (-1: none; set before the search is seen) */
  int default_valid;              /* its last search measurement is valid (a failed one is not measured again) */
  mpt_job_finalist def;           /* the default's search objective and re-measurements when it is no finalist */
  mpt_obs *logged;                /* the confirmations a resumed log holds */
  int64_t n_logged;
  int use_logged;                 /* they were of these finalists: their rounds count */
  int (*record)(void *ctx, const mpt_obs *o, mpt_error *err); /* logs a re-measurement */
  void *record_ctx;
  int32_t device_class;           /* the class these finalists are of (0: the first, which holds the others) */
  int64_t made;                   /* re-measurements made in this session */
  int n_classes;                  /* the first's: the run's device classes (1 until mpt_job_confirm_classes) */
  struct mpt_job_confirm *others; /* the first's: classes 1..n_classes-1, each one of these (logged: the first's) */
} mpt_job_confirm;

void mpt_job_confirm_init(mpt_job_confirm *jc, int k);
void mpt_job_confirm_free(mpt_job_confirm *jc);
/* a run of n device classes: the finalists of each kept apart (after init, default_id and the logged
 * confirmations are set: each class has them too); 0, or an error (out of memory) */
int mpt_job_confirm_classes(mpt_job_confirm *jc, int n, mpt_error *err);
/* class device_class's finalists (jc itself for class 0), NULL when the run has no such class */
mpt_job_confirm *mpt_job_confirm_of(mpt_job_confirm *jc, int32_t device_class);
/* a search observation (of its class's; portability checks are none): the finalists kept up to date */
void mpt_job_confirm_see(mpt_job_confirm *jc, const mpt_obs *o);
/* the confirm callbacks of the coordinator (their ctx: a class's mpt_job_confirm, for_class giving it): a
 * re-measurement is logged by record (record_ctx) and then taken in */
mpt_coord_confirm mpt_job_confirm_plan(mpt_job_confirm *jc, int (*record)(void *, const mpt_obs *, mpt_error *),
                                       void *record_ctx);
/* a re-measurement (made now or logged) of a finalist of its class, taken in */
void mpt_job_confirm_take(mpt_job_confirm *jc, const mpt_obs *o);
/* the finalist the confirmation ranks first (NULL without a confirmation); *reordered 1 when it is not the
 * search's best. This and what follows: of one class's jc (mpt_job_confirm_of) */
const mpt_job_finalist *mpt_job_confirm_best(mpt_job_confirm *jc, int *reordered);
/* the default's confirmed objective (the median of its re-measurements, as a finalist or not; NAN: none) and
 * in *n_conf how many there were */
double mpt_job_confirm_default(mpt_job_confirm *jc, int *n_conf);
/* 1 when the summary has a confirmation to report: re-measurements made in this session or logged before */
int mpt_job_confirm_any(const mpt_job_confirm *jc);
/* the summary's table of the finalists (and of the default re-measured with them), each line after indent */
void mpt_job_confirm_print(FILE *out, mpt_job_confirm *jc, const mpt_job_objective *jo, const mpt_space *s,
                           int64_t made, const char *indent);

#endif
