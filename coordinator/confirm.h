/* coordinator/confirm.h: the confirmation of a run's finalists (--confirm K): once a run has stopped by its
 * budget or an exhausted space, its K best configurations are measured again, interleaved (A B C A B C ...,
 * `rounds` times each), one after another on one worker (rank 1, or in-process with one rank) so that they
 * share one device and its conditions. The baseline of the speed-up (the default configuration), when there is
 * one to measure, is measured again in the same rounds, after the finalists (A B C D A B C D ...). Each re-measurement is recorded (its `confirm` the round) but counts
 * against no budget and no strategy hears of it; rounds already logged (a confirmation cut short and
 * resumed) are not measured again. A signal stops it; the run stays resumable. A run of several device classes
 * confirms each class's finalists and default on a worker of that class, one class after the other (each
 * re-measurement stamped with its class). */
#ifndef MPT_CONFIRM_H
#define MPT_CONFIRM_H
#include <stdint.h>
#include "spaces/sys/error.h"
#include "spaces/sys/obs.h"

typedef struct mpt_coord_confirm {
  int k;                 /* finalists (0: no confirmation) */
  int rounds;            /* re-measurements of each */
  /* the finalists, best first: at most k ids into ids; returns how many */
  int (*finalists)(void *ctx, int64_t *ids, int k);
  /* the configuration measured again after the finalists in each round (the default: the baseline of the
   * speed-up), -1 none; NULL: none. Called after finalists; one of the finalists is not measured twice */
  int64_t (*baseline)(void *ctx);
  /* the rounds of id already logged */
  int (*logged_rounds)(void *ctx, int64_t id);
  /* records one re-measurement durably (its confirm set); <0 stops */
  int (*record)(void *ctx, const mpt_obs *o, mpt_error *err);
  void *ctx;
  /* the ctx of the callbacks above for device class `device_class`'s finalists (NULL: none to confirm there);
   * NULL: ctx for every class */
  void *(*for_class)(void *ctx, int32_t device_class);
} mpt_coord_confirm;

struct mpt_coord_config;
/* Runs the confirmation of c->confirm for device class `device_class` on rank 0 with worker rank `worker` (one of
 * that class; with one rank: in-process), the workers still waiting for work. Returns the
 * re-measurements made (>= 0; *stopped 1 when a signal cut it short: the run stays resumable and a resume
 * goes on with the rounds not logged), or <0 with err (a worker's evaluator failed, the log could not be
 * written). */
int mpt_coord_confirm_run(const struct mpt_coord_config *c, int32_t device_class, int worker, int *stopped,
                          mpt_error *err);

#endif
