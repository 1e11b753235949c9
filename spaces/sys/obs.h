/* spaces/sys/obs.h: mpt_obs, the one record of an evaluation shared by evaluators, the wire, the run log
 * and the strategies. One of the basics at the bottom of the house (spaces/sys/), which every part may use.
 * Fixed size and pointer-free, so it crosses MPI as bytes. */
#ifndef MPT_OBS_H
#define MPT_OBS_H
#include <stdint.h>

typedef enum mpt_status {
  MPT_STATUS_OK = 0,
  MPT_STATUS_COMPILE_ERROR,
  MPT_STATUS_LAUNCH_ERROR,
  MPT_STATUS_RUNTIME_ERROR,
  MPT_STATUS_WRONG_RESULT,
  MPT_STATUS_TIMEOUT,
  MPT_STATUS_CRASH,
  MPT_STATUS_CANCELLED,  /* in flight when the run was stopped; not a measurement */
  MPT_STATUS_INVALID,    /* replayed file says the configuration is invalid (InvalidConfig) */
  MPT_STATUS_MISSING,    /* the replayed file has no record of it (--simulate-missing skip); not a measurement */
  MPT_STATUS_COUNT
} mpt_status;

#define MPT_OBS_MAX_TIMES 32
#define MPT_OBS_REASON 1024

typedef struct mpt_obs {
  int64_t id;            /* config id in the valid set */
  int32_t status;        /* mpt_status */
  int32_t rank;          /* worker rank that evaluated it */
  int32_t device;        /* device index on that worker's node (-1: CPU/none) */
  int32_t n_times;       /* number of valid entries in times[] */
  double objective;      /* ms (or the user's metric); NAN unless status == OK. Lower is better. */
  double median;         /* median of times[] (ms); NAN when none */
  double times[MPT_OBS_MAX_TIMES]; /* per-iteration times (ms) */
  double compile_ms;     /* compile time */
  double benchmark_ms;   /* time spent running/timing the kernel */
  double framework_ms;   /* evaluator overhead besides compile and benchmark */
  double t_start;        /* unix time (s) the evaluation started */
  double t_end;          /* unix time (s) it ended */
  int32_t device_class;  /* the worker's device class: an index into the run's class table (0 with one class) */
  int32_t cross_from;    /* 0: an evaluation of its class's search; k + 1: a portability evaluation, the best
                            configuration of class k measured on device_class (no search hears of it, no budget
                            counts it) */
  int32_t n_power;       /* power samples behind energy_j (0: no power observer) */
  int32_t confirm;       /* 0: an evaluation of the search; k >= 1: the k-th re-measurement of a finalist at the end
                            of a run (--confirm), which counts against no budget and no strategy hears of */
  double energy_j;       /* energy per launch (J), from the board power sampled during the timed runs; NAN: none */
  double power_w;        /* mean board power during the timed runs (W); NAN: none */
  double clock_mhz;      /* mean SM/core clock during the timed runs (MHz); NAN: none */
  double temp_c;         /* device temperature at the end of the timed runs (C); NAN: none */
  char reason[MPT_OBS_REASON]; /* failure reason / compiler message (NUL-terminated, may be truncated) */
} mpt_obs;

/* "ok", "compile_error", ... ; NULL for out-of-range */
const char *mpt_status_name(int status);
/* initializes an observation for id with status OK, NAN objective/median, zero times */
void mpt_obs_init(mpt_obs *o, int64_t id);
/* true when the observation is a valid measurement (status OK and finite objective) */
int mpt_obs_valid(const mpt_obs *o);

#endif
