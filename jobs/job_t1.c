/* jobs/job_t1.c: a T1 problem's Search and Budget blocks applied to a tune job where the command line does
 * not say otherwise (jobs/job_t1.h): the strategy by its name (ours or Kernel Tuner's), its Attributes as
 * --option key=value, checked against the strategy at their line and column; ConfigurationCount and
 * ConfigurationFraction as --budget, TuningDuration as --time. */
#include "jobs/job_t1.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "spaces/json/json_keys.h"
#include "strategies/strategy.h"

int mpt_job_t1_has_budget(const mpt_job_options *o, const mpt_problem *p) {
  const mpt_t1_budget *b = &p->budget;
  return o->budget > 0 || o->time_budget > 0 || b->count_at >= 0 || b->fraction_at >= 0 || b->seconds_at >= 0;
}

/* "FILE:LINE:COL: FIELD: " of field in p's file, into out */
static void field_at(const mpt_problem *p, const char *field, char *out, size_t cap) {
  char at[600];
  mpt_json_locate(p->path, p->text, field, -1, at, sizeof at);
  snprintf(out, cap, "%s: %s", at, field);
}

/* the Name of Search.Attributes[i] as the file gives it ("?" when it cannot be found) */
static const char *attribute_name(const mpt_problem *p, int i) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(p->json, "Search");
  const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "Attributes"), i);
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "Name");
  return cJSON_IsString(n) ? n->valuestring : "?";
}

/* every Attribute of the Search block an option strategy t takes, else the first that is not, at its place */
static int check_attributes(const mpt_strategy_type *t, const mpt_problem *p, mpt_error *err) {
  for (int i = 0; i < p->search.n_attributes; i++) {
    char field[64], at[700];
    const char *name = attribute_name(p, i);
    if (!p->search.options[i]) {
      snprintf(field, sizeof field, "Search.Attributes[%d].Value", i);
      field_at(p, field, at, sizeof at);
      return mpt_error_set(err, MPT_ERR_VALUE, "%s (%s): %s cannot be an option of strategy '%s' (--option key=value "
                           "takes a number, a string or a bool)", at, name, p->search.why[i], t->name);
    }
    mpt_error why;
    mpt_error_clear(&why);
    if (mpt_strategy_check_option(t, p->search.options[i], &why) != 0) {
      snprintf(field, sizeof field, "Search.Attributes[%d].Name", i);
      field_at(p, field, at, sizeof at);
      return mpt_error_set(err, why.code, "%s (%s): %s", at, name, why.msg);
    }
  }
  return 0;
}

/* "strategy: bo, from FILE's Search.Name 'bayes_opt' (Attributes: popsize=20, method=ei)" */
static void search_note(const mpt_job_options *o, const mpt_problem *p, char *note, size_t cap) {
  size_t len = (size_t)snprintf(note, cap, "strategy: %s, from %s's Search.Name '%s'", o->strategy, o->problem,
                                p->search.name);
  for (int i = 0; i < p->search.n_attributes && len < cap; i++)
    len += (size_t)snprintf(note + len, cap - len, "%s%s", i ? ", " : " (Attributes: ", p->search.options[i]);
  if (p->search.n_attributes > 0 && len < cap) snprintf(note + len, cap - len, ")");
}

int mpt_job_t1_search(mpt_job_options *o, const mpt_problem *p, char *note, size_t cap, mpt_error *err) {
  if (cap) note[0] = '\0';
  if (o->strategy_given || !p->search.name) return 0;
  const mpt_strategy_type *t = mpt_strategy_find(p->search.name);
  char at[700];
  if (!t) {
    char names[1024];
    mpt_strategy_names(names, sizeof names);
    field_at(p, "Search.Name", at, sizeof at);
    return mpt_error_set(err, MPT_ERR_NAME, "%s: unknown strategy '%s'; known strategies: %s (or give --strategy NAME)",
                         at, p->search.name, names);
  }
  int rc = check_attributes(t, p, err), n = p->search.n_attributes;
  if (rc) return rc;
  if (o->n_opts + n > MPT_JOB_MAX_OPTS)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: Search.Attributes and --option: too many options (max %d)", o->problem,
                         MPT_JOB_MAX_OPTS);
  memmove(o->opts + n, o->opts, sizeof o->opts[0] * (size_t)o->n_opts);
  for (int i = 0; i < n; i++) o->opts[i] = p->search.options[i];
  o->n_opts += n;
  o->strategy = t->name;
  search_note(o, p, note, cap);
  return 0;
}

void mpt_job_t1_budget(mpt_job_options *o, const mpt_problem *p, int64_t space_size, char *note, size_t cap) {
  const mpt_t1_budget *b = &p->budget;
  size_t len = 0;
  if (cap) note[0] = '\0';
  if (o->budget < 0 && b->count_at >= 0) {
    o->budget = b->count;
    len += (size_t)snprintf(note, cap, "budget: %lld evaluations, from %s's Budget[%d] (ConfigurationCount)",
                            (long long)o->budget, o->problem, b->count_at);
  } else if (o->budget < 0 && b->fraction_at >= 0) {
    double n = ceil(b->fraction * (double)space_size);
    o->budget = n < 1 ? 1 : (int64_t)n;
    len += (size_t)snprintf(note, cap, "budget: %lld evaluations, from %s's Budget[%d] (ConfigurationFraction %g of the "
                            "%lld valid configurations)", (long long)o->budget, o->problem, b->fraction_at, b->fraction,
                            (long long)space_size);
  }
  if (o->time_budget <= 0 && b->seconds_at >= 0 && len < cap) {
    o->time_budget = b->seconds;
    snprintf(note + len, cap - len, "%stime budget: %g s, from %s's Budget[%d] (TuningDuration)", len ? "\n" : "",
             o->time_budget, o->problem, b->seconds_at);
  }
}
