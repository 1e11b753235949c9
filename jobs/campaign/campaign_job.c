/* jobs/campaign/campaign_job.c: one entry of a campaign file's "jobs" read into an mpt_campaign_job: its name,
 * problem, strategy and options (checked against the strategy), budget (one for every class, or per class),
 * time budget, classes, seed and log. Private to jobs/campaign/ (campaign_file.c calls it). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/campaign/campaign_job.h"
#include "jobs/campaign/campaign_json.h"
#include "strategies/strategy.h"

static const char *const job_keys[] = {"name", "problem", "strategy", "options", "budget", "time",
                                       "classes", "seed", "log", NULL};

/* a name a log file can carry: letters, digits, '_', '-', '.' (not starting with '.') */
static int good_name(const char *s) {
  if (s[0] == '.') return 0;
  for (; *s; s++)
    if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') && !strchr("_-.", *s)) return 0;
  return 1;
}

static int read_name(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  char f[96];
  snprintf(f, sizeof f, "%s.name", at);
  int rc = camp_string(c, o, at, "name", &j->name, err);
  if (rc == 1) return camp_error(c, err, MPT_ERR_VALUE, at, "a job needs a \"name\"");
  if (rc < 0) return rc;
  if (!good_name(j->name))
    return camp_error(c, err, MPT_ERR_VALUE, f, "'%s': a job's name is its log's name: letters, digits, '_', '-' "
                      "and '.' (not first)", j->name);
  for (int i = 0; i < j->index; i++)
    if (strcmp(c->jobs[i].name, j->name) == 0)
      return camp_error(c, err, MPT_ERR_VALUE, f, "duplicate job name '%s' (also jobs[%d])", j->name, i);
  return 0;
}

static int read_problem(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  char f[96];
  snprintf(f, sizeof f, "%s.problem", at);
  const char *p = NULL;
  int rc = camp_string(c, o, at, "problem", &p, err);
  if (rc == 1) return camp_error(c, err, MPT_ERR_VALUE, at, "job '%s' needs a \"problem\" (a T1 file)", j->name);
  if (rc < 0) return rc;
  if (!(j->opts.problem = camp_path(c, p))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  return camp_file(c, j->opts.problem, f, "the problem", err);
}

/* "key=value" of one option value (a string, number or bool) */
static int option_text(const cJSON *v, const char *key, char *out, size_t cap) {
  if (cJSON_IsString(v)) return snprintf(out, cap, "%s=%s", key, v->valuestring) > 0;
  if (cJSON_IsBool(v)) return snprintf(out, cap, "%s=%s", key, cJSON_IsTrue(v) ? "true" : "false") > 0;
  if (cJSON_IsNumber(v)) { /* the shortest text that reads back as the number (0.1, not 0.10000000000000001) */
    for (int digits = 15; digits <= 17; digits++) {
      snprintf(out, cap, "%s=%.*g", key, digits, v->valuedouble);
      if (strtod(out + strlen(key) + 1, NULL) == v->valuedouble) break;
    }
    return 1;
  }
  return 0;
}

static int read_options(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  const cJSON *opts = cJSON_GetObjectItemCaseSensitive(o, "options");
  if (!opts) return 0;
  char f[160];
  snprintf(f, sizeof f, "%s.options", at);
  if (!cJSON_IsObject(opts)) return camp_error(c, err, MPT_ERR_VALUE, f, "expected an object of option: value");
  const mpt_strategy_type *t = j->opts.strategy ? mpt_strategy_find(j->opts.strategy) : NULL;
  for (const cJSON *v = opts->child; v; v = v->next) {
    char kv[512], fk[300];
    snprintf(fk, sizeof fk, "%s.%s", f, v->string);
    for (const cJSON *o2 = opts->child; o2 != v; o2 = o2->next)
      if (strcmp(o2->string, v->string) == 0) return camp_error(c, err, MPT_ERR_VALUE, fk, "key given twice in one object");
    if (!option_text(v, v->string, kv, sizeof kv))
      return camp_error(c, err, MPT_ERR_VALUE, fk, "an option's value is a string, a number or a bool");
    if (j->opts.n_opts >= MPT_JOB_MAX_OPTS) return camp_error(c, err, MPT_ERR_VALUE, fk, "more than %d options", MPT_JOB_MAX_OPTS);
    mpt_error why;
    mpt_error_clear(&why);
    if (t && mpt_strategy_check_option(t, kv, &why) != 0) return camp_error(c, err, why.code, fk, "%s", why.msg);
    if (!(j->opts.opts[j->opts.n_opts++] = camp_keep(c, kv))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return 0;
}

static int read_strategy(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  char f[96];
  snprintf(f, sizeof f, "%s.strategy", at);
  int rc = camp_string(c, o, at, "strategy", &j->opts.strategy, err);
  if (rc != 0) return rc < 0 ? rc : 0;
  const mpt_strategy_type *t = mpt_strategy_find(j->opts.strategy);
  if (!t) {
    char names[1024];
    mpt_strategy_names(names, sizeof names);
    return camp_error(c, err, MPT_ERR_NAME, f, "unknown strategy '%s'; known strategies: %s", j->opts.strategy, names);
  }
  j->opts.strategy = t->name; /* ours where Kernel Tuner's name was given */
  j->opts.strategy_given = 1;
  return 0;
}

/* "budget": N (every class), or {"CLASS": N, ..., "*": N (every other class)} */
static int read_budget(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "budget");
  char f[160];
  snprintf(f, sizeof f, "%s.budget", at);
  if (!b) return 0;
  if (!cJSON_IsObject(b)) return camp_int(c, b, f, 1, &j->opts.budget, err);
  int n = cJSON_GetArraySize(b);
  if (n == 0) return camp_error(c, err, MPT_ERR_VALUE, f, "expected an integer or an object of class: integer");
  if (!(j->class_budgets = calloc((size_t)n, sizeof *j->class_budgets))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (const cJSON *v = b->child; v; v = v->next) {
    char fk[300];
    snprintf(fk, sizeof fk, "%s.%s", f, v->string);
    int64_t n_evals;
    int rc = camp_int(c, v, fk, 1, &n_evals, err);
    if (rc < 0) return rc;
    for (int k = 0; k < j->n_class_budgets; k++)
      if (strcmp(j->class_budgets[k].device_class, v->string) == 0)
        return camp_error(c, err, MPT_ERR_VALUE, fk, "key given twice in one object");
    if (strcmp(v->string, "*") == 0) {
      j->opts.budget = n_evals;
      continue;
    }
    j->class_budgets[j->n_class_budgets++] = (mpt_campaign_budget){v->string, n_evals};
  }
  return 0;
}

/* "classes": "all" (the default) or a list of class names, each once */
static int read_classes(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(o, "classes");
  char f[160];
  snprintf(f, sizeof f, "%s.classes", at);
  j->all_classes = 1;
  if (!cl || (cJSON_IsString(cl) && strcmp(cl->valuestring, "all") == 0)) return 0;
  int n = cJSON_IsArray(cl) ? cJSON_GetArraySize(cl) : 0;
  if (n == 0) return camp_error(c, err, MPT_ERR_VALUE, f, "expected \"all\" or a non-empty list of device classes");
  if (!(j->classes = calloc((size_t)n, sizeof *j->classes))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  j->all_classes = 0;
  for (const cJSON *v = cl->child; v; v = v->next) {
    char fk[300];
    snprintf(fk, sizeof fk, "%s[%d]", f, j->n_classes);
    if (!cJSON_IsString(v) || !v->valuestring[0]) return camp_error(c, err, MPT_ERR_VALUE, fk, "expected a device class name");
    for (int k = 0; k < j->n_classes; k++)
      if (strcmp(j->classes[k], v->valuestring) == 0)
        return camp_error(c, err, MPT_ERR_VALUE, fk, "class '%s' named twice", v->valuestring);
    j->classes[j->n_classes++] = v->valuestring;
  }
  return 0;
}

/* a per-class budget for a class the job does not run is a mistake */
static int check_budget_classes(mpt_campaign *c, const mpt_campaign_job *j, const char *at, mpt_error *err) {
  for (int k = 0; !j->all_classes && k < j->n_class_budgets; k++) {
    int named = 0;
    for (int i = 0; i < j->n_classes; i++) named |= strcmp(j->classes[i], j->class_budgets[k].device_class) == 0;
    char fk[300];
    snprintf(fk, sizeof fk, "%s.budget.%s", at, j->class_budgets[k].device_class);
    if (!named) return camp_error(c, err, MPT_ERR_VALUE, fk, "a budget for class '%s', which is not among the job's "
                                  "\"classes\"", j->class_budgets[k].device_class);
  }
  return 0;
}

/* the seed (the job's, else the campaign's + the job's index) and the log (the job's, else LOG_DIR/NAME.h5) */
static int read_seed_log(mpt_campaign *c, mpt_campaign_job *j, const cJSON *o, const char *at, mpt_error *err) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "seed");
  char f[160];
  snprintf(f, sizeof f, "%s.seed", at);
  int64_t seed = (int64_t)c->seed + j->index;
  int rc = s ? camp_int(c, s, f, 0, &seed, err) : 0;
  if (rc < 0) return rc;
  j->opts.seed = (uint64_t)seed;
  j->opts.seed_given = s != NULL || c->seed_given;
  const char *log = NULL;
  if ((rc = camp_string(c, o, at, "log", &log, err)) < 0) return rc;
  char def[4096];
  snprintf(def, sizeof def, "%s/%s.h5", c->log_dir, j->name);
  j->opts.log = log ? camp_path(c, log) : camp_keep(c, def);
  return j->opts.log ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
}

/* the shared settings every job's options start from */
static void job_defaults(const mpt_campaign *c, mpt_campaign_job *j) {
  mpt_job_options *o = &j->opts;
  o->budget = -1;
  o->time_budget = c->time_budget;
  o->grace_s = c->grace_s;
  o->evaluator = c->evaluator;
  o->simulate_delay = c->simulate_delay;
  o->lookahead = -1; /* as tune's: the worker's compile jobs (0 for a replayed file) */
  o->progress = MPT_PROGRESS_AUTO;
}

int camp_read_job(mpt_campaign *c, int index, const cJSON *o, mpt_error *err) {
  mpt_campaign_job *j = &c->jobs[index];
  j->index = index;
  job_defaults(c, j);
  char at[64];
  snprintf(at, sizeof at, "jobs[%d]", index);
  if (!cJSON_IsObject(o)) return camp_error(c, err, MPT_ERR_VALUE, at, "a job is an object");
  int rc = camp_check_keys(c, o, at, job_keys, err);
  if (rc == 0) rc = read_name(c, j, o, at, err);
  if (rc == 0) rc = read_problem(c, j, o, at, err);
  if (rc == 0) rc = read_strategy(c, j, o, at, err);
  if (rc == 0) rc = read_options(c, j, o, at, err);
  if (rc == 0) rc = read_budget(c, j, o, at, err);
  if (rc == 0 && (rc = camp_number(c, o, at, "time", 0, 1, &j->opts.time_budget, err)) == 1) rc = 0;
  if (rc == 0) rc = read_classes(c, j, o, at, err);
  if (rc == 0) rc = check_budget_classes(c, j, at, err);
  if (rc == 0) rc = read_seed_log(c, j, o, at, err);
  return rc;
}
