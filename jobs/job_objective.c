/* jobs/job_objective.c: the objective as rank 0 of a job sees it (see job_objective.h). */
#include "jobs/job_objective.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpt_job_objective_open(mpt_job_objective *jo, const char *spec, const mpt_problem *p, const mpt_space *s,
                           mpt_error *err) {
  memset(jo, 0, sizeof *jo);
  jo->space = s;
  int rc = mpt_objective_parse(spec, p, &jo->obj, err);
  mpt_pareto_init(&jo->front, &jo->obj);
  return rc;
}

int mpt_job_objective_check_evaluator(const mpt_job_objective *jo, const char *asked, const char *runs,
                                      const char *problem, mpt_error *err) {
  if (!jo->obj.needs_energy || strcmp(runs, "cuda") == 0 || strcmp(runs, "hip") == 0 || strcmp(runs, "auto") == 0)
    return 0;
  char spec[256], picked[1200] = "";
  mpt_objective_describe(&jo->obj, spec, sizeof spec);
  if (strcmp(asked, runs) != 0)
    snprintf(picked, sizeof picked, " (--evaluator %s picks it for %s%s)", asked,
             strcmp(runs, "sim") == 0 ? "a replayed file, --simulate" : "the kernel of ", strcmp(runs, "sim") == 0 ? "" : problem);
  return mpt_error_set(err, MPT_ERR_VALUE, "--objective %s needs the energy of each launch: the %s evaluator%s has no "
                       "power observer (the cuda and hip evaluators have, through NVML and ROCm SMI)", spec, runs,
                       picked);
}

void mpt_job_objective_close(mpt_job_objective *jo) {
  mpt_pareto_free(&jo->front);
  mpt_objective_free(&jo->obj);
}

void mpt_job_objective_see(mpt_job_objective *jo, const mpt_obs *o) {
  if (!mpt_obs_valid(o) || jo->obj.n == 0) return;
  if (!jo->have_best || o->objective < jo->best.objective) {
    jo->best = *o;
    jo->have_best = 1;
  }
  if (jo->obj.n > 1) mpt_pareto_add(&jo->front, jo->space, o);
}

const mpt_objective_term *mpt_job_objective_term(const mpt_job_objective *jo) {
  return jo && jo->obj.n > 0 ? &jo->obj.t[0] : NULL;
}

void mpt_job_objective_format(const mpt_job_objective *jo, double minimized, int named, char *buf, size_t cap) {
  const mpt_objective_term *t = mpt_job_objective_term(jo);
  if (!t) {
    snprintf(buf, cap, "%.6g ms", minimized);
    return;
  }
  int n = snprintf(buf, cap, "%.6g%s%s", mpt_objective_minimized(t, minimized), t->unit[0] ? " " : "", t->unit);
  if (n >= 0 && (size_t)n < cap && named && (t->kind != MPT_OBJ_TIME || t->maximize))
    snprintf(buf + n, cap - (size_t)n, " (%s%s)", t->name, t->maximize ? ", maximized" : "");
}

void mpt_job_objective_fprint(FILE *f, const mpt_job_objective *jo, const char *indent, const char *label,
                              double minimized, const char *note) {
  char v[160];
  mpt_job_objective_format(jo, minimized, 1, v, sizeof v);
  fprintf(f, "%s%s: %s%s\n", indent, label, v, note);
}

void mpt_job_objective_fprint_gain(FILE *f, const mpt_job_objective *jo, const char *indent, double best_min,
                                   double default_min, const char *note) {
  const mpt_objective_term *t = mpt_job_objective_term(jo);
  double b = t ? mpt_objective_minimized(t, best_min) : best_min;
  double d = t ? mpt_objective_minimized(t, default_min) : default_min;
  if (!(b > 0) || !(d > 0)) return;
  if (!t || (t->kind == MPT_OBJ_TIME && !t->maximize)) fprintf(f, "%sspeed-up over default: %.2fx%s\n", indent, d / b, note);
  else fprintf(f, "%simprovement over default: %.2fx (%s)%s\n", indent, t->maximize ? b / d : d / b, t->name, note);
}

void mpt_job_objective_print(const mpt_job_objective *jo, const char *label, double minimized) {
  mpt_job_objective_fprint(stdout, jo, "", label, minimized, "");
}

void mpt_job_objective_print_gain(const mpt_job_objective *jo, double best_min, double default_min) {
  mpt_job_objective_fprint_gain(stdout, jo, "", best_min, default_min, "");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double mpt_times_median(const double *t, int n) {
  if (n <= 0) return NAN;
  double s[MPT_OBS_MAX_TIMES];
  memcpy(s, t, sizeof *s * (size_t)n);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double mpt_times_std(const double *t, int n) {
  if (n < 2) return NAN;
  double mean = 0, ss = 0;
  for (int i = 0; i < n; i++) mean += t[i];
  mean /= n;
  for (int i = 0; i < n; i++) ss += (t[i] - mean) * (t[i] - mean);
  return sqrt(ss / (n - 1));
}

void mpt_job_objective_print_spread(const mpt_job_objective *jo) {
  const mpt_obs *o = &jo->best;
  if (!jo->have_best || o->n_times < 2) return;
  double med = mpt_times_median(o->times, o->n_times), sd = mpt_times_std(o->times, o->n_times);
  printf("spread of the best: median %.6g ms, std %.3g ms (%.2f %% of the median) over %d timed runs\n", med, sd,
         med > 0 ? 100 * sd / med : 0.0, o->n_times);
  if (o->n_power > 0)
    printf("power of the best: %.4g W, %.4g J per launch, SM clock %.0f MHz, %.0f C (%d samples)\n", o->power_w,
           o->energy_j, o->clock_mhz, o->temp_c, o->n_power);
}

void mpt_job_objective_print_front(mpt_job_objective *jo) {
  if (jo->obj.n > 1) mpt_pareto_print(&jo->front, jo->space, stdout);
}
