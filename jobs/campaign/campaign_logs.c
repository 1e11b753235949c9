/* jobs/campaign/campaign_logs.c: a campaign's job logs before anything opens (jobs/campaign/campaign_logs.h):
 * each read-only, its class table and its search evaluations per class counted, a finished one left finished or
 * reopened by the file's budgets per class, and the classes each job names checked against those present and
 * those its log knows. */
#include "jobs/campaign/campaign_logs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "jobs/runlog/runlog.h"

int64_t mpt_camp_largest_budget(const mpt_campaign *c, const mpt_campaign_job *j) {
  int64_t most = j->opts.budget > 0 ? j->opts.budget : -1;
  for (int k = 0; k < c->n_sims; k++) {
    int64_t b = mpt_campaign_job_budget(j, c->sims[k].device_class);
    if (b > most) most = b;
  }
  for (int k = 0; k < j->n_class_budgets; k++)
    if (j->class_budgets[k].budget > most) most = j->class_budgets[k].budget;
  return most;
}

/* the names of the log's class table (its "classes" attribute: "name<TAB>vendor<TAB>device<TAB>arch" a line) */
static void logged_classes(mpt_runlog *rl, mpt_camp_log *l) {
  const char *t = mpt_runlog_meta(rl, "classes");
  l->n_classes = 0;
  for (const char *p = t; p && *p && l->n_classes < MPT_JOB_MAX_CLASSES;) {
    size_t len = strcspn(p, "\t\n");
    snprintf(l->classes[l->n_classes++], sizeof l->classes[0], "%.*s", (int)len, p);
    p = strchr(p, '\n');
    p = p ? p + 1 : NULL;
  }
}

/* each class's search evaluations (no portability evaluation, nothing cancelled or missing), by class index */
static int count_one(void *ctx, const mpt_obs *o, const int32_t *config) {
  (void)config;
  int64_t *n = ctx;
  if (o->cross_from == 0 && o->status != MPT_STATUS_CANCELLED && o->status != MPT_STATUS_MISSING &&
      o->device_class >= 0 && o->device_class < MPT_JOB_MAX_CLASSES)
    n[o->device_class]++;
  return 0;
}

static int logged_index(const mpt_camp_log *l, const char *cls) {
  for (int k = 0; k < l->n_classes; k++)
    if (strcmp(l->classes[k], cls) == 0) return k;
  return -1;
}

/* the text of the classes with budget left ("A100 4 of 10, ...") */
typedef struct left_text {
  char s[1024];
  size_t len;
  int n;
} left_text;

/* class cls of job j, when it runs the job and the file's budget for it (else the logged budget) is above the
 * evaluations it holds: added to t */
static void budget_left(const mpt_campaign_job *j, mpt_runlog *rl, const mpt_camp_log *l, const int64_t *n,
                        const char *cls, left_text *t) {
  int64_t b = mpt_campaign_job_budget(j, cls);
  if (b == 0) { /* the file gives none: the log's (the problem's Budget block it started with) */
    const char *logged = mpt_runlog_meta(rl, "budget");
    b = logged ? strtoll(logged, NULL, 10) : 0;
  }
  int k = logged_index(l, cls);
  int64_t have = k >= 0 ? n[k] : 0;
  if (b <= 0 || have >= b) return;
  if (t->len < sizeof t->s)
    t->len += (size_t)snprintf(t->s + t->len, sizeof t->s - t->len, "%s%s %lld of %lld", t->n ? ", " : "", cls,
                               (long long)have, (long long)b);
  t->n++;
}

/* a log finished by its budget or its time budget: reopened when a class the job runs (one of the log's, the
 * campaign's simulated ones, those the job names) has budget left, or when its largest budget is above the most
 * a class holds (a class new to it); said with the classes that have budget left */
static int reopens(const mpt_campaign *c, const mpt_campaign_job *j, mpt_runlog *rl, const mpt_camp_log *l) {
  const char *why = mpt_runlog_meta(rl, "stop_reason");
  if (!why || (strcmp(why, "budget") != 0 && strcmp(why, "time") != 0)) return 0;
  int64_t n[MPT_JOB_MAX_CLASSES] = {0};
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_runlog_each(rl, count_one, n, &err) < 0) return 0; /* unreadable records: the open says why */
  left_text t = {"", 0, 0};
  for (int k = 0; k < l->n_classes; k++) budget_left(j, rl, l, n, l->classes[k], &t);
  for (int k = 0; k < c->n_sims; k++)
    if (logged_index(l, c->sims[k].device_class) < 0) budget_left(j, rl, l, n, c->sims[k].device_class, &t);
  for (int k = 0; k < j->n_classes; k++)
    if (logged_index(l, j->classes[k]) < 0) budget_left(j, rl, l, n, j->classes[k], &t);
  int more = mpt_camp_largest_budget(c, j) > mpt_runlog_measured_class(rl);
  if (t.n > 0 && !more) /* (else the job's resume says it is extended to its larger budget) */
    printf("job %s: %s is finished; reopened for the classes with budget left (evaluations of their budget): %s\n",
           j->name, j->opts.log, t.s);
  return t.n > 0 || more;
}

void mpt_camp_read_logs(const mpt_campaign *c, mpt_camp_log *logs) {
  for (int j = 0; j < c->n_jobs; j++) {
    const mpt_campaign_job *cj = &c->jobs[j];
    mpt_camp_log *l = &logs[j];
    memset(l, 0, sizeof *l);
    struct stat sb;
    l->state = stat(cj->opts.log, &sb) == 0 ? MPT_CAMP_LOG_RESUME : MPT_CAMP_LOG_NEW;
    mpt_runlog *rl = NULL;
    mpt_error ignored;
    mpt_error_clear(&ignored);
    if (l->state != MPT_CAMP_LOG_RESUME || mpt_runlog_open_readonly(cj->opts.log, &rl, &ignored) != 0) continue;
    logged_classes(rl, l);
    if (mpt_runlog_is_finished(rl)) {
      l->reopen = reopens(c, cj, rl, l);
      if (!l->reopen) {
        l->state = MPT_CAMP_LOG_FINISHED;
        printf("job %s: finished (%s, %lld evaluations); not run again\n", cj->name, cj->opts.log,
               (long long)mpt_runlog_measured(rl));
      }
    }
    mpt_runlog_close(rl);
  }
}

int mpt_camp_check_job_classes(const mpt_campaign *c, const mpt_camp_log *logs, const char *const *present, int n,
                               mpt_error *err) {
  for (int j = 0; j < c->n_jobs; j++) {
    if (logs[j].state == MPT_CAMP_LOG_FINISHED) continue;
    const char *known[2 * MPT_JOB_MAX_CLASSES];
    int m = 0;
    for (int k = 0; k < n && m < MPT_JOB_MAX_CLASSES; k++) known[m++] = present[k];
    for (int k = 0; k < logs[j].n_classes; k++) {
      int dup = 0;
      for (int i = 0; i < m && !dup; i++) dup = strcmp(known[i], logs[j].classes[k]) == 0;
      if (!dup) known[m++] = logs[j].classes[k];
    }
    int rc = mpt_campaign_check_job_classes(c, j, known, m, err);
    if (rc < 0) return rc;
  }
  return 0;
}
