/* jobs/campaign/campaign_classes.c: a campaign's jobs against the device classes present at run time (see
 * jobs/campaign/campaign_file.h): the classes each job names, and its budget per class. */
#include <stdio.h>
#include <string.h>
#include "jobs/campaign/campaign_file.h"
#include "jobs/campaign/campaign_json.h"

static int present_in(const char *cls, const char *const *present, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(cls, present[i]) == 0) return 1;
  return 0;
}

/* "unknown device class 'X' (present: A, B)" at field */
static int unknown_class(const mpt_campaign *c, const char *field, const char *cls, const char *const *present, int n,
                         mpt_error *err) {
  char list[1024] = "";
  size_t len = 0;
  for (int i = 0; i < n && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "", present[i]);
  return camp_error(c, err, MPT_ERR_NAME, field, "unknown device class '%s' (present: %s)", cls, n ? list : "none");
}

int mpt_campaign_check_job_classes(const mpt_campaign *c, int i, const char *const *present, int n, mpt_error *err) {
  const mpt_campaign_job *j = &c->jobs[i];
  char f[400];
  for (int k = 0; k < j->n_classes; k++) {
    snprintf(f, sizeof f, "jobs[%d].classes[%d]", i, k);
    if (!present_in(j->classes[k], present, n)) return unknown_class(c, f, j->classes[k], present, n, err);
  }
  for (int k = 0; k < j->n_class_budgets; k++) {
    snprintf(f, sizeof f, "jobs[%d].budget.%s", i, j->class_budgets[k].device_class);
    if (!present_in(j->class_budgets[k].device_class, present, n))
      return unknown_class(c, f, j->class_budgets[k].device_class, present, n, err);
  }
  return 0;
}

int mpt_campaign_check_classes(const mpt_campaign *c, const char *const *present, int n, mpt_error *err) {
  for (int i = 0; i < c->n_jobs; i++) {
    int rc = mpt_campaign_check_job_classes(c, i, present, n, err);
    if (rc < 0) return rc;
  }
  return 0;
}

int mpt_campaign_sim_classes(const mpt_campaign *c, const char **names, int cap) {
  int n = 0;
  for (int i = 0; i < c->n_sims && n < cap; i++) names[n++] = c->sims[i].device_class;
  return n;
}

int64_t mpt_campaign_job_budget(const mpt_campaign_job *j, const char *cls) {
  int runs = j->all_classes;
  for (int k = 0; !runs && k < j->n_classes; k++) runs = strcmp(j->classes[k], cls) == 0;
  if (!runs) return -1;
  for (int k = 0; k < j->n_class_budgets; k++)
    if (strcmp(j->class_budgets[k].device_class, cls) == 0) return j->class_budgets[k].budget;
  return j->opts.budget > 0 ? j->opts.budget : 0;
}

int mpt_campaign_job_options(const mpt_campaign *c, const mpt_campaign_job *j, const char *cls,
                             mpt_job_options *out) {
  int64_t b = mpt_campaign_job_budget(j, cls);
  if (b < 0) return -1;
  *out = j->opts;
  out->budget = b > 0 ? b : -1;
  for (int i = 0; i < c->n_sims; i++)
    if (strcmp(c->sims[i].device_class, cls) == 0) {
      out->simulate = c->sims[i].path;
      if (!out->evaluator) out->evaluator = "sim";
    }
  return 0;
}
