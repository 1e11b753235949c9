/* coordinator/search.h: a search, the unit the coordinator schedules: one strategy with its own budget over
 * the workers of one device class in one job (a run of one job on one class has one), and what every
 * search's bookkeeping needs: counting its observations, whether it is finished, its default configuration
 * first, telling an observation to its own strategy and, as related knowledge, to the other searches of its
 * job (transfer between device classes), the run's totals over all of them, and which search a worker serves
 * first (its home: a campaign lists a worker in one search per job of its class). */
#ifndef MPT_COORD_SEARCH_H
#define MPT_COORD_SEARCH_H
#include <stdint.h>
#include "coordinator/coordinator.h"

typedef struct mpt_coord_search {
  const char *name;            /* its device class, as progress lines and messages name it */
  int32_t device_class;        /* stamped on its observations (mpt_obs.device_class): the class table's index */
  int32_t job;                 /* the job it belongs to (0 with one job) */
  mpt_strategy *strategy;
  int64_t budget;              /* its evaluations, logged ones included (> 0) */
  int64_t default_id;          /* the problem's default configuration (-1: none) */
  int default_first;           /* measure default_id first when it is not logged yet */
  const int *workers;          /* its worker ranks; none: it waits (its class has no worker in this session) */
  int n_workers;
  mpt_coord_result res;        /* filled by mpt_coord_run: this search's counts, best and default; its reason: why
                                  it finished ("budget", "exhausted"), else the run's */
  /* its job's own (a campaign: several jobs, each its space and log); NULL: the mpt_coord_config's */
  const mpt_space *space;
  mpt_coord_record_fn record;
  void *record_ctx;
  mpt_coord_each_fn resume_each; /* its job's logged observations (the searches of one job share them) */
  void *resume_src;
  double time_budget;          /* seconds of this session it hands out work (0: none of its own, the run's holds); then
                                  it is finished ("time"): what it handed out is still taken, and it has no
                                  portability evaluations (mpt_coord_run; the virtual clock's run ignores it) */
} mpt_coord_search;

/* Counts observation o into r (the default's measurement, valid, failed, missing, the best). Cancelled
 * ones are no measurement and are not counted. */
void mpt_search_count(mpt_coord_result *r, int64_t default_id, const mpt_obs *o);

/* Why search s is finished ("exhausted", "budget"), or NULL while it goes on; exhausted: its strategy has
 * nothing left to propose, in_flight: its evaluations running now. */
const char *mpt_search_finished(const mpt_coord_search *s, int64_t space_size, int64_t in_flight, int exhausted);

/* Search s's space: its job's, else the run's one space. */
const mpt_space *mpt_search_space(const mpt_coord_search *s, const mpt_coord_config *c);

/* 1 and *id when s's default configuration is to be dispatched now (a fresh run measures it first). */
int mpt_search_take_default(mpt_coord_search *s, int64_t *id);

/* Tells n observations of search `from` to its strategy and, with transfer, to the strategy of every other
 * search of the same job as related observations (source: from's device class). */
void mpt_search_tell(mpt_coord_search *all, int n_searches, int from, const mpt_obs *o, int n, int transfer);

/* The index of the search of (job, device_class), -1 when none. */
int mpt_search_find(const mpt_coord_search *all, int n_searches, int32_t job, int32_t device_class);

/* Search s's part of the progress line: " | NAME done/budget best B ms R/s ETA m:ss" (done0: its evaluations when
 * the session started, elapsed: the session's seconds); returns the length written into buf (cap bytes). */
int mpt_search_progress(const mpt_coord_search *s, int64_t done0, double elapsed, char *buf, int cap);

/* The place of rank among s's workers, -1 when it is not one of them. */
int mpt_search_worker_place(const mpt_coord_search *s, int rank);

/* Each rank's home search into home[0..size) (-1: none lists it): the one search that lists it, or, for a rank
 * listed by m searches (its class in m jobs of a campaign) at place p among the first one's workers, the
 * (p mod m)-th of them, so that a class's workers start on all its jobs at once. The coordinator hands a worker
 * another search's work only while its home search has none left for it. */
void mpt_search_homes(const mpt_coord_search *all, int n_searches, int size, int *home);

/* The run's totals over every search's result (sums; the best over all; the default and the ask that was
 * cut short: the first search's that has them). Leaves reason, signal, timings and n_workers alone. */
void mpt_search_totals(const mpt_coord_search *all, int n_searches, mpt_coord_result *total);

#endif
