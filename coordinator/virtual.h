/* coordinator/virtual.h: a tuning run projected onto N simulated workers on a virtual clock (`mptune tune
 * --simulate FILE --virtual-workers N`). Rank 0 alone runs the real strategy; each evaluation comes from the
 * in-process evaluator (the replayed file, no sleeping) and takes F times its recorded compile + benchmark time
 * on the virtual clock. The coordinator's own work (ask, log, tell) is measured for real and added to the
 * clock: while rank 0 is busy, workers that finish wait, as in a real run. Event-driven (a heap of completion
 * times): a run of thousands of evaluations takes the strategy's time only. The coordinator loop is mirrored:
 * the results taken (each logged, then told): the earliest one, then every one that finished while rank 0 was busy,
 * then every idle worker given work in one batched ask. */
#ifndef MPT_VIRTUAL_H
#define MPT_VIRTUAL_H
#include <stdint.h>
#include "coordinator/coordinator.h"

typedef struct mpt_virtual_config {
  int n_workers;        /* simulated workers (>= 1) */
  double delay_scale;   /* F: an evaluation takes F * (compile_ms + benchmark_ms) virtual milliseconds */
  double epoch;         /* unix time the virtual clock starts at (observations' t_start/t_end are epoch +
                           virtual seconds) */
  int cpu_time;         /* 1: rank 0's work counts its process CPU time (what it would take on a core of its own,
                           on a machine shared with other work), or, when the strategy has model ranks (bo's
                           --model-ranks), the critical path of rank 0 and the model ranks (each model rank's
                           command its largest compute, strategies/bo/bo_dist.h mpt_bo_model_clock); 0: wall */
} mpt_virtual_config;

typedef struct mpt_virtual_result {
  double makespan_s;    /* virtual time from the start to the last result taken */
  double busy_s;        /* sum of the evaluations' virtual durations (worker time) */
  double coord_s;       /* rank 0's measured time added to the clock (ask + log + tell; wall or CPU time) */
  double ask_s;         /* of which asking the strategy */
  int64_t asks;         /* calls to the strategy's ask */
  double real_s;        /* real time the projection took */
  double utilization;   /* busy_s / (n_workers * makespan_s), 0..1 (0 when the makespan is 0) */
  double evals_per_s;   /* evaluations taken / makespan_s */
  const char *clock;    /* what rank 0's time on the clock is: "wall", "CPU", "critical path" (model ranks) */
} mpt_virtual_result;

/* Runs the projection with c's strategy, space, budget, default, record callback and progress; c->local is the
 * in-process evaluator (the sim evaluator, without its delay), c->comm is not used, c->time_budget counts
 * virtual seconds and c->resume_each must be NULL. Fills r as mpt_coord_run does, with wall_s the makespan,
 * eval_s the workers' busy time and n_workers = v->n_workers (so the usual rate line gives the projection),
 * and vr. Returns 0, or <0 with err (an evaluation that failed, the log). */
int mpt_coord_run_virtual(const mpt_coord_config *c, const mpt_virtual_config *v, mpt_coord_result *r,
                          mpt_virtual_result *vr, mpt_error *err);

/* "projected: N workers, makespan …, utilization … %, … evaluations/s, rank 0 busy … s (asks … s in N calls);
 * clock: …" (the clock: "wall time", "rank 0's CPU time", or "critical path of rank 0 and the model ranks (CPU
 * time)") */
int mpt_virtual_format(const mpt_virtual_result *vr, int n_workers, char *buf, int cap);

#endif
