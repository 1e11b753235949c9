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

/* the default's measurement on this class, and the gain of the best (its objective: best) over it */
static void print_default(FILE *f, const mpt_coord_result *r, double best, const mpt_job_objective *jo) {
  if (r->default_seen && isfinite(r->default_objective)) {
    mpt_job_objective_fprint(f, jo, "  ", "default objective", r->default_objective, "");
    mpt_job_objective_fprint_gain(f, jo, "  ", best, r->default_objective, "");
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
  mpt_job_objective_fprint(f, objective, "  ", "objective", best->confirmed, note);
  int n_def = 0;
  double def = mpt_job_confirm_default(jc, &n_def);
  const mpt_coord_result *r = &s->res;
  if (!(r->default_seen && isfinite(r->default_objective) && isfinite(def))) {
    print_default(f, r, best->confirmed, objective);
    return 1;
  }
  mpt_job_objective_format(objective, r->default_objective, 0, searched, sizeof searched);
  snprintf(note, sizeof note, " (confirmed; the search measured it at %s)", searched);
  mpt_job_objective_fprint(f, objective, "  ", "default objective", def, note);
  snprintf(note, sizeof note, " (both confirmed in the same rounds: the default's median of its %d re-measurements)",
           n_def);
  mpt_job_objective_fprint_gain(f, objective, "  ", best->confirmed, def, note);
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
    mpt_job_objective_fprint(f, objective, "  ", "objective", r->best, "");
    print_default(f, r, r->best, objective);
  }
}
