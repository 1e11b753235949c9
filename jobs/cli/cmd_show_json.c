/* jobs/cli/cmd_show_json.c: `mptune show --json` (jobs/cli/cmd_show.h): the run's attributes, counts, sessions,
 * objective and parameter names, then per device class its counts, the best configurations (each with its
 * configuration, objective, time statistics and speed-up), the default and the failures, as one JSON document
 * (numbers exact: spaces/json/json_write.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/cli/cmd_show.h"
#include "jobs/output/summary.h"
#include "spaces/json/json_write.h"

static cJSON *json_num(double x) { return mpt_json_exact_number(x); }
static cJSON *json_int(long long x) { return mpt_json_exact_int(x); }

/* an attribute holding an integer as it is (an unsigned seed past 2**63 too), null when absent or not one */
static cJSON *json_int_text(const char *text) {
  if (!text || !text[0] || strspn(text + (text[0] == '-'), "0123456789") != strlen(text + (text[0] == '-')) ||
      !text[text[0] == '-'])
    return cJSON_CreateNull();
  return cJSON_CreateRaw(text);
}

static cJSON *json_text(const char *text) { return text && text[0] ? cJSON_CreateString(text) : cJSON_CreateNull(); }

static cJSON *json_value(const mpt_summary *s, int p, int i) {
  if (i < 0 || i >= s->n_values[p]) return cJSON_CreateNull();
  const mpt_value *v = &s->values[p][i];
  switch (v->kind) {
    case MPT_V_INT: return json_int((long long)v->u.i);
    case MPT_V_FLOAT: return json_num(v->u.f);
    case MPT_V_BOOL: return cJSON_CreateBool(v->u.i != 0);
    default: {
      char b[1024];
      mpt_summary_value_text(s, p, i, b, sizeof b);
      return cJSON_CreateString(b);
    }
  }
}

static cJSON *json_config(const mpt_summary *s, const int32_t *config) {
  cJSON *o = cJSON_CreateObject();
  for (int p = 0; o && p < s->n_params; p++) cJSON_AddItemToObject(o, s->names[p], json_value(s, p, config[p]));
  return o;
}

static cJSON *json_top(const mpt_summary *s, const mpt_summary_top *t, int rank) {
  cJSON *o = cJSON_CreateObject(), *times = NULL;
  if (!o) return NULL;
  cJSON_AddItemToObject(o, "rank", json_int(rank));
  cJSON_AddItemToObject(o, "id", json_int((long long)t->id));
  cJSON_AddItemToObject(o, "record", json_int((long long)t->record));
  cJSON_AddItemToObject(o, "configuration", json_config(s, t->config));
  cJSON_AddItemToObject(o, "objective", json_num(t->objective));
  if (t->n_times > 0 && (times = cJSON_AddObjectToObject(o, "times"))) {
    cJSON_AddItemToObject(times, "n", json_int(t->n_times));
    cJSON_AddItemToObject(times, "median", json_num(t->median));
    cJSON_AddItemToObject(times, "std", json_num(t->std));
    cJSON_AddItemToObject(times, "min", json_num(t->min));
    cJSON_AddItemToObject(times, "max", json_num(t->max));
  } else {
    cJSON_AddNullToObject(o, "times");
  }
  cJSON_AddItemToObject(o, "speedup", json_num(t->speedup));
  return o;
}

static cJSON *json_default(const mpt_summary *s, const mpt_summary_device *d) {
  if (!s->default_config) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddItemToObject(o, "configuration", json_config(s, s->default_config));
  cJSON_AddBoolToObject(o, "measured", d->default_seen);
  cJSON_AddItemToObject(o, "status", d->default_seen ? cJSON_CreateString(mpt_status_name(d->default_status))
                                                     : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "objective", json_num(d->default_objective));
  return o;
}

/* the confirmation (--confirm): null without one */
static cJSON *json_confirmation(const mpt_summary_device *d) {
  if (d->confirmations == 0) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddItemToObject(o, "remeasurements", json_int((long long)d->confirmations));
  cJSON_AddItemToObject(o, "best_id", d->confirmed_best_id >= 0 ? json_int((long long)d->confirmed_best_id)
                                                                 : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "best", json_num(d->confirmed_best));
  cJSON_AddItemToObject(o, "default", json_num(d->confirmed_default));
  cJSON_AddItemToObject(o, "speedup", json_num(d->confirmed_speedup));
  /* the best confirmed's place in the search (null: none valid, or not among the best kept) and whether it is not
   * the search's best */
  cJSON_AddItemToObject(o, "search_rank", d->confirmed_rank > 0 ? json_int(d->confirmed_rank) : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "reordered", d->confirmed_best_id >= 0 ? cJSON_CreateBool(d->confirmed_rank != 1)
                                                                  : cJSON_CreateNull());
  return o;
}

static cJSON *json_failures(const mpt_summary_device *d) {
  cJSON *a = cJSON_CreateArray();
  for (int st = 0; a && st < MPT_STATUS_COUNT; st++) {
    const mpt_summary_failure *f = &d->failures[st];
    if (!f->count) continue;
    cJSON *o = cJSON_CreateObject(), *r;
    if (!o) continue;
    cJSON_AddStringToObject(o, "status", mpt_status_name(st));
    cJSON_AddItemToObject(o, "count", json_int((long long)f->count));
    r = cJSON_AddArrayToObject(o, "reasons");
    for (int i = 0; r && i < f->n_reasons; i++) cJSON_AddItemToArray(r, cJSON_CreateString(f->reasons[i]));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *json_device(const mpt_summary *s, const mpt_summary_device *d) {
  cJSON *o = cJSON_CreateObject(), *top;
  if (!o) return NULL;
  /* the log's class (a log of several classes; null: one class, its records grouped by device) */
  cJSON_AddItemToObject(o, "class", d->class_name[0] ? cJSON_CreateString(d->class_name) : cJSON_CreateNull());
  cJSON_AddStringToObject(o, "vendor", d->vendor);
  cJSON_AddStringToObject(o, "name", d->name);
  cJSON_AddStringToObject(o, "arch", d->arch);
  cJSON_AddStringToObject(o, "target", d->target);
  cJSON_AddItemToObject(o, "workers", json_int(d->workers));
  cJSON_AddItemToObject(o, "evaluations", json_int((long long)d->evaluations));
  cJSON_AddItemToObject(o, "valid", json_int((long long)d->valid));
  cJSON_AddItemToObject(o, "failed", json_int((long long)d->failed));
  cJSON_AddItemToObject(o, "cancelled", json_int((long long)d->cancelled));
  cJSON_AddItemToObject(o, "portability_checks", json_int((long long)d->cross_checks));
  cJSON_AddItemToObject(o, "configurations", json_int((long long)d->configs));
  if ((top = cJSON_AddArrayToObject(o, "top")))
    for (int t = 0; t < d->n_top; t++) cJSON_AddItemToArray(top, json_top(s, &d->top[t], t + 1));
  cJSON_AddItemToObject(o, "default", json_default(s, d));
  cJSON_AddItemToObject(o, "confirmation", json_confirmation(d));
  cJSON_AddItemToObject(o, "failures", json_failures(d));
  return o;
}

static void json_run(cJSON *o, const char *path, const mpt_summary *s) {
  mpt_runlog *log = s->log;
  mpt_summary_device t = mpt_summary_totals(s);
  cJSON_AddStringToObject(o, "log", path);
  cJSON *pr = cJSON_AddObjectToObject(o, "problem");
  if (pr) {
    cJSON_AddItemToObject(pr, "name", json_text(mpt_runlog_meta(log, "problem_name")));
    cJSON_AddItemToObject(pr, "path", json_text(mpt_runlog_meta(log, "problem_path")));
    cJSON_AddItemToObject(pr, "space_size", json_int_text(mpt_runlog_meta(log, "space_size")));
  }
  static const char *texts[] = {"mode", "strategy", "options", "evaluator", "simulate"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    cJSON_AddItemToObject(o, texts[i], json_text(mpt_runlog_meta(log, texts[i])));
  const char *eopts = mpt_runlog_meta(log, "evaluator_options"); /* one a line; absent in older logs: null */
  cJSON *ea = eopts ? cJSON_AddArrayToObject(o, "evaluator_options") : NULL;
  for (const char *e = eopts; ea && *e; e += strcspn(e, "\n"), e += *e == '\n') {
    char kv[1024];
    snprintf(kv, sizeof kv, "%.*s", (int)strcspn(e, "\n"), e);
    cJSON_AddItemToArray(ea, cJSON_CreateString(kv));
  }
  if (!eopts) cJSON_AddNullToObject(o, "evaluator_options");
  cJSON_AddItemToObject(o, "seed", json_int_text(mpt_runlog_meta(log, "seed")));
  cJSON_AddItemToObject(o, "budget", json_int_text(mpt_runlog_meta(log, "budget")));
  const char *tb = mpt_runlog_meta(log, "time_budget");
  cJSON_AddItemToObject(o, "time_budget", tb && tb[0] ? json_num(atof(tb)) : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "records", json_int((long long)s->records));
  cJSON_AddItemToObject(o, "evaluations", json_int((long long)t.evaluations));
  cJSON_AddItemToObject(o, "valid", json_int((long long)t.valid));
  cJSON_AddItemToObject(o, "failed", json_int((long long)t.failed));
  cJSON_AddItemToObject(o, "cancelled", json_int((long long)t.cancelled));
  cJSON_AddItemToObject(o, "portability_checks", json_int((long long)t.cross_checks));
  cJSON_AddBoolToObject(o, "finished", mpt_runlog_is_finished(log));
  cJSON_AddItemToObject(o, "stop_reason", json_text(mpt_runlog_meta(log, "stop_reason")));
  cJSON_AddItemToObject(o, "finish_time", json_text(mpt_runlog_meta(log, "finish_time")));
  cJSON_AddItemToObject(o, "damaged_records", json_int((long long)mpt_runlog_damaged(log)));
  cJSON_AddItemToObject(o, "recovered", json_text(mpt_runlog_recovered(log)));
  cJSON *ss = cJSON_AddArrayToObject(o, "sessions");
  for (int i = 0; ss && i < mpt_runlog_n_sessions(log); i++) {
    mpt_runlog_session_info si;
    cJSON *e = cJSON_CreateObject();
    if (!e || mpt_runlog_session(log, i, &si) < 0) { cJSON_Delete(e); continue; }
    cJSON_AddStringToObject(e, "start_time", si.start_time);
    cJSON_AddStringToObject(e, "host", si.host);
    cJSON_AddItemToObject(e, "pid", json_int(si.pid));
    cJSON_AddItemToArray(ss, e);
  }
  cJSON *obj = cJSON_AddObjectToObject(o, "objective");
  if (obj) {
    mpt_summary_objective ob = mpt_summary_objective_of(log); /* the logged values: minimized, lower is better */
    cJSON_AddStringToObject(obj, "name", strcmp(ob.name, "time") == 0 && !ob.maximized ? MPT_SUMMARY_OBJECTIVE : ob.name);
    cJSON_AddStringToObject(obj, "unit", ob.unit);
    cJSON_AddBoolToObject(obj, "lower_is_better", 1);
    if (ob.maximized) cJSON_AddBoolToObject(obj, "negated", 1);
  }
  cJSON *names = cJSON_AddArrayToObject(o, "parameters");
  for (int p = 0; names && p < s->n_params; p++) cJSON_AddItemToArray(names, cJSON_CreateString(s->names[p]));
}

int mpt_show_json(const char *path, const mpt_summary *s) {
  cJSON *o = cJSON_CreateObject(), *devs;
  if (!o) return -1;
  json_run(o, path, s);
  if ((devs = cJSON_AddArrayToObject(o, "devices")))
    for (int c = 0; c < s->n_devices; c++) cJSON_AddItemToArray(devs, json_device(s, &s->devices[c]));
  char *text = cJSON_Print(o);
  cJSON_Delete(o);
  if (!text) return -1;
  printf("%s\n", text);
  free(text);
  return 0;
}
