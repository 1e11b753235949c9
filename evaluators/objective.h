/* evaluators/objective.h: what a run optimizes (`--objective`): `time` (ms, the default), `energy` (J per
 * launch), `edp` (energy x delay, J*s) or a metric the problem defines in its `Metrics` list (an expression
 * over the tuning parameters, `time` in ms, `energy` in J and `power` in W, e.g. GFLOP/s), each to minimize
 * or maximize (`gflops:max`; a metric's `Goal`, else min). Several, comma-separated (`time,energy`), make a
 * multi-objective run: the strategy minimizes the first, the run keeps the Pareto front of all.
 * The observation's objective is the first term in its minimized form (negated when maximized); its other
 * fields stay as measured. */
#ifndef MPT_OBJECTIVE_H
#define MPT_OBJECTIVE_H
#include "spaces/space.h"
#include "spaces/sys/error.h"
#include "spaces/sys/obs.h"

#define MPT_OBJECTIVE_MAX_TERMS 4
/* the shortest power window of an evaluation when the objective needs the energy: NVML's readings and energy
 * counter move every 20-100 ms on recent GPUs, so a short kernel is launched again until this much */
#define MPT_OBJECTIVE_POWER_WINDOW_MS 200.0

typedef enum mpt_objective_kind { MPT_OBJ_TIME, MPT_OBJ_ENERGY, MPT_OBJ_EDP, MPT_OBJ_METRIC } mpt_objective_kind;

typedef struct mpt_objective_term {
  mpt_objective_kind kind;
  int maximize;
  char name[64];        /* "time", "energy", "edp", or the metric's Name */
  char unit[32];        /* "ms", "J", "J*s", or the metric's Unit ("" without one) */
  struct mpt_expr *expr; /* a metric's expression */
} mpt_objective_term;

typedef struct mpt_objective {
  int n;
  mpt_objective_term t[MPT_OBJECTIVE_MAX_TERMS];
  int needs_energy;     /* a term reads the energy or the power */
} mpt_objective;

/* Parses spec (NULL or "": time) against problem p's Metrics. Errors name the option or the problem's field. */
int mpt_objective_parse(const char *spec, const mpt_problem *p, mpt_objective *out, mpt_error *err);
void mpt_objective_free(mpt_objective *o);
/* the spec in its canonical form ("time", "energy:min,gflops:max") */
void mpt_objective_describe(const mpt_objective *o, char *buf, size_t cap);
/* A valid observation's time: the mean of its per-iteration times (ms), else its median. */
double mpt_objective_time_ms(const mpt_obs *o);
/* The value of term k for observation ob of configuration ob->id in its own unit (NAN when it cannot be had:
 * why says so). */
double mpt_objective_value(const mpt_objective *o, int k, const mpt_space *s, const mpt_obs *ob, char *why,
                           size_t cap);
/* A term's value as the strategies minimize it (negated when maximized), and back. */
double mpt_objective_minimized(const mpt_objective_term *t, double v);
/* Sets ob->objective of a valid observation to the first term, minimized; an observation whose objective
 * cannot be had (no power observer for energy, a metric that fails) becomes a runtime_error saying why. */
void mpt_objective_apply(const mpt_objective *o, const mpt_space *s, mpt_obs *ob);

#endif
