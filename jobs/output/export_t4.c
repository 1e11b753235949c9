/* jobs/output/export_t4.c: mpt_runlog_export_t4 / mpt_runlog_write_t4: write a run log as a T4 results file (schema T4-results 1.0.0,
 * structured like the brute-forced *_T4 files), evaluations in the order they finished (append order).
 * The output is written to a new FILE.tmp.XXXXXX (jobs/output/outfile.c) and renamed, so a partial file never passes for a
 * finished one.
 * Reading the export back with mpt_replay_load gives the same statuses and objectives. Every record's
 * measurements hold its time (ms) and, where a power observer measured it, its energy per launch (J), power
 * (W), SM clock (MHz) and temperature (C), and a metric or edp the run optimized; its `objectives` name the
 * run's (the log's "objective": "time", "time,energy", "gflops:max" ...). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "jobs/output/outfile.h"
#include "jobs/runlog/runlog_priv.h"
#include "spaces/json/json_write.h"
#include "evaluators/objective.h"

/* the log's objectives as names, ":max" dropped ("time" for a log without one) */
typedef struct t4_objectives {
  int n;
  char name[MPT_OBJECTIVE_MAX_TERMS][64];
  int maximize0; /* the first one is maximized: the logged objective is its negation */
} t4_objectives;

static void read_objectives(const mpt_runlog *log, t4_objectives *to) {
  const char *spec = mpt_runlog_meta((mpt_runlog *)log, "objective");
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec && spec[0] ? spec : "time");
  memset(to, 0, sizeof *to);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t && to->n < MPT_OBJECTIVE_MAX_TERMS; t = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(t, ':');
    if (to->n == 0) to->maximize0 = colon && strcmp(colon, ":max") == 0;
    if (colon) *colon = 0;
    snprintf(to->name[to->n++], sizeof to->name[0], "%s", t);
  }
}

/* T4 invalidity and the measurement value recorded for a failure (Kernel Tuner's error strings) */
static const char *t4_invalidity(int status, const char **value) {
  switch (status) {
    case MPT_STATUS_OK: *value = NULL; return "correct";
    case MPT_STATUS_COMPILE_ERROR: *value = "CompilationFailedConfig"; return "compile";
    case MPT_STATUS_TIMEOUT: *value = "TimeoutConfig"; return "timeout";
    case MPT_STATUS_WRONG_RESULT: *value = "WrongResultConfig"; return "correctness";
    case MPT_STATUS_INVALID: *value = "InvalidConfig"; return "constraints";
    case MPT_STATUS_LAUNCH_ERROR:
    case MPT_STATUS_RUNTIME_ERROR:
    case MPT_STATUS_CRASH:
    default: *value = "RuntimeFailedConfig"; return "runtime";
  }
}

static double finite_or0(double x) { return isfinite(x) ? x : 0.0; }

static cJSON *num_json(double x) { return mpt_json_exact_number(x); }

static void add_num(cJSON *obj, const char *key, double x) { cJSON_AddItemToObject(obj, key, num_json(x)); }

static void t4_timestamp(double t, char *buf, size_t cap) {
  if (!(t > 0)) t = 0;
  time_t s = (time_t)t;
  struct tm tm;
  gmtime_r(&s, &tm);
  char b[32];
  strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm);
  int us = (int)((t - (double)s) * 1e6);
  if (us > 999999) us = 999999;
  snprintf(buf, cap, "%s.%06d+00:00", b, us);
}

static cJSON *config_json(const mpt_runlog *log, const int32_t *cfg) {
  cJSON *c = cJSON_CreateObject();
  if (!c) return NULL;
  for (int p = 0; p < mpt_runlog_n_params(log); p++) {
    const char *name = mpt_runlog_param_name(log, p);
    int i = cfg[p];
    cJSON *v;
    if (i < 0 || i >= mpt_runlog_param_n_values(log, p)) v = cJSON_CreateNull();
    else switch (mpt_runlog_param_kind(log, p)) {
      case MPT_RL_BOOL: v = cJSON_CreateBool(mpt_runlog_param_number(log, p, i) != 0); break;
      case MPT_RL_STRING: v = cJSON_CreateString(mpt_runlog_param_string(log, p, i)); break;
      case MPT_RL_INT: {
        int64_t x;
        if (mpt_runlog_param_int(log, p, i, &x) < 0) { v = num_json(mpt_runlog_param_number(log, p, i)); break; }
        v = mpt_json_exact_int((long long)x);
        break;
      }
      default: v = num_json(mpt_runlog_param_number(log, p, i)); break;
    }
    if (!v || !cJSON_AddItemToObject(c, name, v)) { cJSON_Delete(v); cJSON_Delete(c); return NULL; }
  }
  return c;
}

static void add_measurement(cJSON *meas, const char *name, double value, const char *unit) {
  cJSON *m = cJSON_CreateObject();
  if (!m) return;
  cJSON_AddStringToObject(m, "name", name);
  add_num(m, "value", value);
  cJSON_AddStringToObject(m, "unit", unit);
  cJSON_AddItemToArray(meas, m);
}

/* a valid record's measurements besides its time: the power observer's, and the first objective when it is
 * no quantity measured (a metric, edp) */
static void add_power_measurements(cJSON *meas, const t4_objectives *to, const mpt_obs *o, double time_ms) {
  if (o->n_power > 0) {
    if (isfinite(o->energy_j)) add_measurement(meas, "energy", o->energy_j, "J");
    if (isfinite(o->power_w)) add_measurement(meas, "power", o->power_w, "W");
    if (isfinite(o->clock_mhz)) add_measurement(meas, "clock", o->clock_mhz, "MHz");
    if (isfinite(o->temp_c)) add_measurement(meas, "temperature", o->temp_c, "C");
  }
  const char *first = to->name[0];
  if (strcmp(first, "edp") == 0 && isfinite(o->energy_j)) add_measurement(meas, "edp", o->energy_j * time_ms * 1e-3, "J*s");
  else if (strcmp(first, "time") && strcmp(first, "energy") && strcmp(first, "edp"))
    add_measurement(meas, first, to->maximize0 ? -o->objective : o->objective, "");
}

static cJSON *record_json(const mpt_runlog *log, const t4_objectives *to, const mpt_obs *o, const int32_t *cfg) {
  cJSON *r = cJSON_CreateObject();
  if (!r) return NULL;
  char ts[64];
  t4_timestamp(o->t_end, ts, sizeof ts);
  cJSON_AddStringToObject(r, "timestamp", ts);
  cJSON *conf = config_json(log, cfg);
  if (!conf) { cJSON_Delete(r); return NULL; }
  cJSON_AddItemToObject(r, "configuration", conf);
  cJSON *times = cJSON_AddObjectToObject(r, "times");
  if (!times) { cJSON_Delete(r); return NULL; }
  add_num(times, "compilation", finite_or0(o->compile_ms));
  add_num(times, "framework", finite_or0(o->framework_ms));
  cJSON_AddNumberToObject(times, "search_algorithm", 0);
  cJSON_AddNumberToObject(times, "validation", 0);
  if (o->n_times > 0) {
    cJSON *rt = cJSON_AddArrayToObject(times, "runtimes");
    for (int i = 0; rt && i < o->n_times && i < MPT_OBS_MAX_TIMES; i++)
      cJSON_AddItemToArray(rt, num_json(finite_or0(o->times[i])));
  }
  const char *fail = NULL;
  int ok = mpt_obs_valid(o);
  const char *inv = ok ? "correct" : t4_invalidity(o->status == MPT_STATUS_OK ? MPT_STATUS_RUNTIME_ERROR : o->status, &fail);
  cJSON_AddStringToObject(r, "invalidity", inv);
  cJSON_AddNumberToObject(r, "correctness", ok ? 1 : 0);
  cJSON *meas = cJSON_AddArrayToObject(r, "measurements");
  cJSON *m = cJSON_CreateObject();
  if (!meas || !m) { cJSON_Delete(m); cJSON_Delete(r); return NULL; }
  /* the logged objective is the time unless the run optimized something else */
  int by_time = strcmp(to->name[0], "time") == 0 && !to->maximize0;
  double time_ms = by_time ? o->objective : mpt_objective_time_ms(o);
  cJSON_AddStringToObject(m, "name", "time");
  if (ok) add_num(m, "value", time_ms);
  else cJSON_AddStringToObject(m, "value", fail);
  cJSON_AddStringToObject(m, "unit", "ms");
  cJSON_AddItemToArray(meas, m);
  if (ok) add_power_measurements(meas, to, o, time_ms);
  cJSON *objs = cJSON_AddArrayToObject(r, "objectives");
  for (int k = 0; objs && k < to->n; k++) cJSON_AddItemToArray(objs, cJSON_CreateString(to->name[k]));
  return r;
}

/* The file is written as it goes, one record at a time (memory independent of the log's length), laid
 * out exactly as cJSON_Print lays out the whole document: each record printed on its own, its lines
 * indented two levels, records joined by ", ". */
typedef struct export_ctx {
  const mpt_runlog *log;
  t4_objectives objectives;
  FILE *f;
  int64_t written;
  mpt_error *err;
  const char *path;
  int32_t device_class;  /* the records of this class only (-1: all) */
} export_ctx;

static int write_record(void *ctx, const mpt_obs *o, const int32_t *config) {
  export_ctx *e = ctx;
  /* in flight at a stop, or lacking from a replayed file: not a measurement */
  if (o->status == MPT_STATUS_CANCELLED || o->status == MPT_STATUS_MISSING) return 0;
  if (e->device_class >= 0 && o->device_class != e->device_class) return 0;
  if (o->cross_from > 0) return 0; /* a portability evaluation: no part of its class's search */
  cJSON *r = record_json(e->log, &e->objectives, o, config);
  char *text = r ? cJSON_Print(r) : NULL;
  cJSON_Delete(r);
  if (!text) return mpt_error_set(e->err, MPT_ERR_NOMEM, "out of memory writing %s", e->path);
  if (e->written++) fputs(", ", e->f);
  for (const char *c = text, *nl; *c; c = nl + 1) {
    if (!(nl = strchr(c, '\n'))) {
      fputs(c, e->f);
      break;
    }
    fwrite(c, 1, (size_t)(nl - c + 1), e->f);
    fputs("\t\t", e->f);
  }
  free(text);
  return ferror(e->f) ? mpt_error_set(e->err, MPT_ERR_IO, "cannot write %s: %s", e->path, strerror(errno)) : 0;
}

int mpt_runlog_write_t4(mpt_runlog *log, const char *t4_path, mpt_error *err) {
  return mpt_runlog_write_t4_class(log, t4_path, -1, err);
}

int mpt_runlog_write_t4_class(mpt_runlog *log, const char *t4_path, int device_class, mpt_error *err) {
  FILE *f = mpt_outfile_open(t4_path, err);
  if (!f) return err->code;
  /* sic "miliseconds": as Kernel Tuner writes it */
  fputs("{\n\t\"metadata\":\t{\n\t\t\"timeunit\":\t\"miliseconds\"\n\t},\n\t\"results\":\t[", f);
  export_ctx e = {log, {0}, f, 0, err, t4_path, device_class};
  read_objectives(log, &e.objectives);
  int rc = mpt_runlog_each(log, write_record, &e, err);
  if (rc == 0) fputs("],\n\t\"schema_version\":\t\"1.0.0\"\n}\n", f);
  int closed = mpt_outfile_close(f, t4_path, rc == 0, err);
  return rc < 0 ? rc : closed;
}

int mpt_runlog_export_t4(const char *log_path, const char *t4_path, mpt_error *err) {
  mpt_runlog *log;
  int rc = mpt_runlog_open_readonly(log_path, &log, err);
  if (rc < 0) return rc;
  rc = mpt_runlog_write_t4(log, t4_path, err);
  mpt_runlog_close(log);
  return rc;
}
