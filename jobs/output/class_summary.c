/* jobs/output/class_summary.c: the per-class summary of a run, confirmed or not (jobs/output/class_summary.h). */
#include "jobs/output/class_summary.h"
#include <math.h>
#include <stdlib.h>

/* "  LABEL: name=value,..." of configuration id, however long */
static void print_config(FILE *f, const char *label, const mpt_space *space, int64_t id) {
  char small[1024], *cfg = small;
  int need = mpt_space_format(space, id, small, (int)sizeof small);
  if (need >= (int)sizeof small && (cfg = malloc((size_t)need + 1)) != NULL) mpt_space_format(space, id, cfg, need + 1);
  fprintf(f, "  %s: %s\n", label, cfg ? cfg : small);
  if (cfg != small) free(cfg);
}

/* "VALUE UNIT" of a minimized objective value as measured (a maximized one negated back), with "(NAME[,
 * maximized])" (named) for another objective than the time, as the one-class summary words it (jobs/job_objective.h) */
static void value_text(const mpt_job_objective *jo, double minimized, int named, char *buf, size_t cap) {
  const mpt_objective_term *t = jo && jo->obj.n > 0 ? &jo->obj.t[0] : NULL;
  if (!t) {
    snprintf(buf, cap, "%.6g ms", minimized);
    return;
  }
  int n = snprintf(buf, cap, "%.6g%s%s", mpt_objective_minimized(t, minimized), t->unit[0] ? " " : "", t->unit);
  if (n >= 0 && (size_t)n < cap && named && (t->kind != MPT_OBJ_TIME || t->maximize))
    snprintf(buf + n, cap - (size_t)n, " (%s%s)", t->name, t->maximize ? ", maximized" : "");
}

/* "  LABEL: VALUE UNIT[ (NAME...)]NOTE" */
static void print_value(FILE *f, const mpt_job_objective *jo, const char *label, double minimized, const char *note) {
  char v[160];
  value_text(jo, minimized, 1, v, sizeof v);
  fprintf(f, "  %s: %s%s\n", label, v, note);
}

/* the best against the default (both minimized): "speed-up over default: 7.86x" for the time, else "improvement
 * over default: 1.20x (NAME)" (higher is better either way); then note */
static void print_gain(FILE *f, const mpt_job_objective *jo, double best_min, double default_min, const char *note) {
  const mpt_objective_term *t = jo && jo->obj.n > 0 ? &jo->obj.t[0] : NULL;
  double b = t ? mpt_objective_minimized(t, best_min) : best_min;
  double d = t ? mpt_objective_minimized(t, default_min) : default_min;
  if (!(b > 0) || !(d > 0)) return;
  if (!t || (t->kind == MPT_OBJ_TIME && !t->maximize)) fprintf(f, "  speed-up over default: %.2fx%s\n", d / b, note);
  else fprintf(f, "  improvement over default: %.2fx (%s)%s\n", t->maximize ? b / d : d / b, t->name, note);
}

/* the default's measurement on this class, and the gain of the best (its objective: best) over it */
static void print_default(FILE *f, const mpt_coord_result *r, double best, const mpt_job_objective *jo) {
  if (r->default_seen && isfinite(r->default_objective)) {
    print_value(f, jo, "default objective", r->default_objective, "");
    print_gain(f, jo, best, r->default_objective, "");
  } else if (r->default_seen) {
    fprintf(f, "  default: failed (no valid measurement of the default configuration)\n");
  } else if (r->default_missing) {
    fprintf(f, "  default: not in the replayed file (skipped: no speed-up reported)\n");
  }
}

/* the class's confirmation, when it has one: its table, the best confirmed and the speed-up over its default
 * confirmed in the same rounds (else over the search's); 1 when printed */
static int print_confirmed(FILE *f, const mpt_space *space, const mpt_coord_search *s, mpt_job_confirm *confirm,
                           const mpt_job_objective *objective) {
  mpt_job_confirm *jc = confirm ? mpt_job_confirm_of(confirm, s->device_class) : NULL;
  int reordered = 0;
  const mpt_job_finalist *best = jc && mpt_job_confirm_any(jc) ? mpt_job_confirm_best(jc, &reordered) : NULL;
  if (!best) return 0;
  mpt_job_confirm_print(f, jc, objective, space, jc->made, "  ");
  print_config(f, "best", space, best->id);
  char note[160], searched[160];
  snprintf(note, sizeof note, " (the best confirmed: the median of its %d re-measurements)", best->n_conf);
  print_value(f, objective, "objective", best->confirmed, note);
  int n_def = 0;
  double def = mpt_job_confirm_default(jc, &n_def);
  const mpt_coord_result *r = &s->res;
  if (!(r->default_seen && isfinite(r->default_objective) && isfinite(def))) {
    print_default(f, r, best->confirmed, objective);
    return 1;
  }
  value_text(objective, r->default_objective, 0, searched, sizeof searched);
  snprintf(note, sizeof note, " (confirmed; the search measured it at %s)", searched);
  print_value(f, objective, "default objective", def, note);
  snprintf(note, sizeof note, " (both confirmed in the same rounds: the default's median of its %d re-measurements)",
           n_def);
  print_gain(f, objective, best->confirmed, def, note);
  return 1;
}

void mpt_class_summary_print(FILE *f, const mpt_space *space, const mpt_coord_search *searches, int n,
                             mpt_job_confirm *confirm, const mpt_job_objective *objective) {
  for (int k = 0; k < n; k++) {
    const mpt_coord_search *s = &searches[k];
    const mpt_coord_result *r = &s->res;
    fprintf(f, "class %d %s: %lld evaluations (%lld valid, %lld failed) of a budget of %lld, %lld in this session%s\n",
            (int)s->device_class, s->name, (long long)r->done, (long long)r->valid, (long long)r->failed,
            (long long)s->budget, (long long)r->new_evals, s->n_workers ? "" : " (no workers in this session: waiting)");
    if (r->best_id < 0) {
      fprintf(f, "  best: none (no valid configuration)\n");
      continue;
    }
    if (print_confirmed(f, space, s, confirm, objective)) continue;
    print_config(f, "best", space, r->best_id);
    print_value(f, objective, "objective", r->best, "");
    print_default(f, r, r->best, objective);
  }
}
