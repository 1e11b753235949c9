/* jobs/campaign/campaign_plan.c: the plan of a campaign, what `mptune campaign FILE --check` prints without
 * running anything (see jobs/campaign/campaign_plan.h): each job's problem read and its space built, the
 * strategy and budget its problem's Search and Budget blocks give where the campaign file does not, its
 * classes and budget per class, its seed and log. */
#include "jobs/campaign/campaign_plan.h"
#include <stdio.h>
#include <string.h>
#include "jobs/campaign/campaign_json.h"
#include "jobs/job_t1.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "strategies/strategy.h"

/* "A100: 500, MI250X: 220" for the classes present, or "220 per class" / "A100: 500, other classes: 220" */
static void budget_text(const mpt_campaign_job *j, const mpt_job_options *o, const char *const *classes, int n,
                        char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  if (n > 0) {
    int64_t total = 0;
    for (int i = 0; i < n && len < cap; i++) {
      int64_t b = mpt_campaign_job_budget(j, classes[i]);
      if (b == 0) b = o->budget > 0 ? o->budget : 0; /* 0: the time budget alone bounds it */
      if (b < 0) continue;
      total += b;
      if (b > 0) len += (size_t)snprintf(out + len, cap - len, "%s%s: %lld", len ? ", " : "", classes[i], (long long)b);
      else len += (size_t)snprintf(out + len, cap - len, "%s%s: the time budget", len ? ", " : "", classes[i]);
    }
    if (len == 0) snprintf(out, cap, "no class present runs it");
    else if (total > 0 && len < cap) snprintf(out + len, cap - len, " (%lld evaluations in all)", (long long)total);
    return;
  }
  for (int k = 0; k < j->n_class_budgets && len < cap; k++)
    len += (size_t)snprintf(out + len, cap - len, "%s%s: %lld", k ? ", " : "", j->class_budgets[k].device_class,
                            (long long)j->class_budgets[k].budget);
  if (len < cap && o->budget > 0)
    snprintf(out + len, cap - len, len ? ", other classes: %lld" : "%lld per class", (long long)o->budget);
}

/* the job's options against the strategy the problem's Search block (or the default) chose (one the campaign
 * file names checked them as they were read) */
static int check_options(const mpt_campaign *c, const mpt_campaign_job *j, const char *strategy, mpt_error *err) {
  const mpt_strategy_type *t = mpt_strategy_find(strategy);
  for (int k = 0; t && !j->opts.strategy_given && k < j->opts.n_opts; k++) {
    mpt_error why;
    mpt_error_clear(&why);
    if (mpt_strategy_check_option(t, j->opts.opts[k], &why) == 0) continue;
    char f[400];
    snprintf(f, sizeof f, "jobs[%d].options.%.*s", j->index, (int)strcspn(j->opts.opts[k], "="), j->opts.opts[k]);
    return camp_error(c, err, why.code, f, "%s (strategy %s, from the problem's Search block or the default)", why.msg,
                      strategy);
  }
  return 0;
}

/* the job's resolved options: the problem's Search and Budget blocks where the campaign file says nothing */
static int resolve(const mpt_campaign *c, const mpt_campaign_job *j, const mpt_problem *p, const mpt_space *s,
                   mpt_job_options *o, char *note, size_t cap, mpt_error *err) {
  *o = j->opts;
  char budget[512];
  int rc = mpt_job_t1_search(o, p, note, cap, err);
  if (rc < 0) return rc;
  if (!o->strategy) o->strategy = "random";
  if ((rc = check_options(c, j, o->strategy, err)) < 0) return rc;
  if (j->n_class_budgets == 0) {
    mpt_job_t1_budget(o, p, mpt_space_size(s), budget, sizeof budget);
    size_t len = strlen(note);
    if (budget[0] && len < cap) snprintf(note + len, cap - len, "%s%s", len ? "; " : "", budget);
  }
  if (j->n_class_budgets == 0 && !mpt_job_t1_has_budget(o, p)) {
    char f[64];
    snprintf(f, sizeof f, "jobs[%d]", j->index);
    return camp_error(c, err, MPT_ERR_VALUE, f, "job '%s' has no budget: give \"budget\" or \"time\", or a Budget "
                      "block in %s", j->name, j->opts.problem);
  }
  return 0;
}

static void print_job(FILE *f, const mpt_campaign_job *j, const mpt_job_options *o, const mpt_problem *p,
                      const mpt_space *s, const char *note, const char *const *classes, int n) {
  char budget[1024], opts[1024] = "";
  size_t len = 0;
  for (int i = 0; i < o->n_opts && len < sizeof opts; i++)
    len += (size_t)snprintf(opts + len, sizeof opts - len, "%s%s", i ? "," : " (options ", o->opts[i]);
  if (len && len < sizeof opts) snprintf(opts + len, sizeof opts - len, ")");
  budget_text(j, o, classes, n, budget, sizeof budget);
  fprintf(f, "job %s: %s (%s), %lld valid configurations\n", j->name, o->problem, p->name, (long long)mpt_space_size(s));
  if (note[0]) fprintf(f, "  %s\n", note);
  fprintf(f, "  strategy %s%s, seed %llu, log %s\n", o->strategy, opts, (unsigned long long)o->seed, o->log);
  fprintf(f, "  classes: ");
  for (int k = 0; k < j->n_classes; k++) fprintf(f, "%s%s", k ? ", " : "", j->classes[k]);
  fprintf(f, "%s\n", j->all_classes ? "all" : "");
  fprintf(f, "  budget: %s%s", budget[0] ? budget : "(none: the time budget)", o->time_budget > 0 ? "" : "\n");
  if (o->time_budget > 0) fprintf(f, "; time %g s per class\n", o->time_budget);
}

static int plan_job(const mpt_campaign *c, const mpt_campaign_job *j, const char *const *classes, int n, FILE *f,
                    mpt_error *err) {
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  int rc = mpt_problem_load(j->opts.problem, &p, err);
  if (rc == 0) rc = mpt_space_build(p, &s, err);
  if (rc < 0 && strncmp(err->msg, j->opts.problem, strlen(j->opts.problem)) != 0)
    mpt_error_prefix(err, "%s", j->opts.problem);
  if (rc == 0 && mpt_space_size(s) == 0)
    rc = mpt_error_set(err, MPT_ERR_VALUE, "%s: the search space has no valid configuration", j->opts.problem);
  mpt_job_options o;
  char note[1024] = "";
  if (rc == 0) rc = resolve(c, j, p, s, &o, note, sizeof note, err);
  if (rc == 0) print_job(f, j, &o, p, s, note, classes, n);
  if (rc < 0) {
    char at[96];
    snprintf(at, sizeof at, "job '%s' (jobs[%d])", j->name, j->index);
    if (!strstr(err->msg, "jobs[")) mpt_error_prefix(err, "%s", at);
  }
  mpt_space_free(s);
  mpt_problem_free(p);
  return rc;
}

int mpt_campaign_plan(const mpt_campaign *c, const char *const *classes, int n, FILE *f, mpt_error *err) {
  int rc = n > 0 ? mpt_campaign_check_classes(c, classes, n, err) : 0;
  if (rc < 0) return rc;
  fprintf(f, "campaign %s (%s): %d job%s, logs in %s%s", c->name, c->path, c->n_jobs, c->n_jobs == 1 ? "" : "s",
          c->log_dir, c->seed_given ? "" : "\n");
  if (c->seed_given) fprintf(f, ", seed %llu\n", (unsigned long long)c->seed);
  fprintf(f, "classes: ");
  for (int i = 0; i < n; i++) fprintf(f, "%s%s", i ? ", " : "", classes[i]);
  fprintf(f, "%s\n", n ? "" : "those of the workers at run time (not checked: give --classes to check them)");
  for (int i = 0; i < c->n_sims; i++) fprintf(f, "simulated class %s: %s\n", c->sims[i].device_class, c->sims[i].path);
  for (int i = 0; i < c->n_jobs && rc == 0; i++) rc = plan_job(c, &c->jobs[i], classes, n, f, err);
  return rc;
}
