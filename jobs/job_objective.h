/* jobs/job_objective.h: what rank 0 of a job knows of its objective (evaluators/objective.h): the parsed
 * `--objective`, the best observation (its objective and the spread of its per-iteration times) and, with
 * several objectives, the Pareto front (jobs/output/pareto.h), fed with every observation logged now or
 * read back on --resume; and the summary's lines about them, each value with its unit. */
#ifndef MPT_JOB_OBJECTIVE_H
#define MPT_JOB_OBJECTIVE_H
#include <stdio.h>
#include "evaluators/objective.h"
#include "jobs/output/pareto.h"
#include "spaces/space.h"

typedef struct mpt_job_objective {
  mpt_objective obj;
  const mpt_space *space;
  mpt_pareto front;      /* with several objectives */
  mpt_obs best;          /* the valid observation of the lowest (minimized) objective, first of equals */
  int have_best;
} mpt_job_objective;

int mpt_job_objective_open(mpt_job_objective *jo, const char *spec, const mpt_problem *p, const mpt_space *s,
                           mpt_error *err);
/* rank 0, before anything runs or is logged: an objective that needs the energy of each launch only where the
 * workers' evaluator `runs` (--evaluator `asked` resolved: `auto` is cpu for a C or C++ kernel, sim with
 * --simulate) has a power observer, cuda or hip; else one error saying so */
int mpt_job_objective_check_evaluator(const mpt_job_objective *jo, const char *asked, const char *runs,
                                      const char *problem, mpt_error *err);
void mpt_job_objective_close(mpt_job_objective *jo);
void mpt_job_objective_see(mpt_job_objective *jo, const mpt_obs *o);
/* the objective's (first) term, NULL when jo is NULL or has none (then values are times in ms) */
const mpt_objective_term *mpt_job_objective_term(const mpt_job_objective *jo);
/* "VALUE UNIT" of a minimized objective value as measured (a maximized one negated back), with " (NAME[,
 * maximized])" after it when named and the objective is not the time to minimize */
void mpt_job_objective_format(const mpt_job_objective *jo, double minimized, int named, char *buf, size_t cap);
/* "INDENTLABEL: VALUE UNIT[ (NAME...)]NOTE" on f */
void mpt_job_objective_fprint(FILE *f, const mpt_job_objective *jo, const char *indent, const char *label,
                              double minimized, const char *note);
/* the default against the best on f: "INDENTspeed-up over default: 7.86xNOTE" for time, else "improvement over
 * default: 1.20x (NAME)NOTE" (higher is better either way); nothing when a value is not above 0 */
void mpt_job_objective_fprint_gain(FILE *f, const mpt_job_objective *jo, const char *indent, double best_min,
                                   double default_min, const char *note);
/* the one-class summary's lines: the two above on stdout, unindented, without a note */
void mpt_job_objective_print(const mpt_job_objective *jo, const char *label, double minimized);
void mpt_job_objective_print_gain(const mpt_job_objective *jo, double best_min, double default_min);
/* the best configuration's per-iteration times: median, standard deviation and relative spread */
void mpt_job_objective_print_spread(const mpt_job_objective *jo);
/* with several objectives: the Pareto front */
void mpt_job_objective_print_front(mpt_job_objective *jo);
/* the sample standard deviation of n times (NAN for n < 2) and their median */
double mpt_times_std(const double *t, int n);
double mpt_times_median(const double *t, int n);

#endif
