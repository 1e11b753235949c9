/* evaluators/replay/replay.c: loads a brute-forced space (T4 results file or Kernel Tuner cache file, plain
 * or gzip-compressed, told apart by their bytes, not their names) and maps every record onto the
 * config ids of a space by parameter values. Used by the `sim` evaluator and by `mptune bench`. */
#include "evaluators/replay/replay.h"
#include "evaluators/replay/json_stream.h"
#include "evaluators/replay/replay_store.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

struct mpt_replay {
  const mpt_space *space;
  int64_t *slot;       /* per config id: index into store, or -1 */
  replay_store store;  /* one record per matched config */
  int64_t n_records;   /* records in the file */
  int64_t n_unmatched; /* records whose configuration is not a valid config of the space */
  char device[128];
  char path[1024];
  char first_miss[512]; /* why the first unmatched record did not match */
  int64_t n_no_objective;    /* records of the space marked valid without a usable objective (failed) */
  char no_objective[64];     /* the objective's name, of the first of them */
  char first_no_objective[320]; /* the first one's configuration */
  int64_t n_repeated;        /* records of a configuration recorded before (the later one is used) */
  char first_repeated[320];  /* the first such configuration */
  char objective_note[320];  /* how an objective other than a time was read (T4), said once */
  char in_progress[1400];    /* a Kernel Tuner cache that ends before its closing braces: what was read */
};

/* counts a record (value indices idx) marked valid whose objective is missing or no finite number:
 * it counts as failed, and mpt_replay_coverage says so once */
static void note_no_objective(mpt_replay *r, const int *idx, const char *objname) {
  int64_t id = mpt_space_lookup(r->space, idx);
  if (id < 0) return; /* not a configuration of the space: skipped anyway */
  if (r->n_no_objective++ > 0) return;
  snprintf(r->no_objective, sizeof r->no_objective, "%s", objname);
  mpt_space_format(r->space, id, r->first_no_objective, (int)sizeof r->first_no_objective);
}

/* remembers why the first unmatched record did not match */
static void note_value_miss(mpt_replay *r, const char *where, const char *param, const cJSON *v) {
  if (r->first_miss[0]) return;
  char *txt = cJSON_PrintUnformatted(v);
  snprintf(r->first_miss, sizeof r->first_miss, "%s: %s = %s is not one of the parameter's values", where, param,
           txt ? txt : "?");
  free(txt);
}

/* ---- matching values ---- */

/* value index of JSON item v for parameter p, or -1 */
static int match_value(const mpt_param *p, const cJSON *v) {
  double d;
  if (cJSON_IsBool(v)) {
    d = cJSON_IsTrue(v) ? 1.0 : 0.0;
  } else if (cJSON_IsNumber(v)) {
    d = v->valuedouble;
  } else if (cJSON_IsString(v)) {
    const char *s = v->valuestring;
    for (int i = 0; i < p->n_values; i++)
      if (p->values[i].kind == MPT_V_STR && strcmp(p->values[i].u.s, s) == 0) return i;
    if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0) d = 1.0;
    else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0) d = 0.0;
    else {
      char *end;
      errno = 0;
      d = strtod(s, &end);
      if (end == s || *end != '\0' || errno) return -1;
    }
  } else {
    return -1;
  }
  /* an exact match first; else the one float value within a relative 1e-12 (a value printed with
   * fewer digits); integers match only exactly (1000000000000 is not 1000000000001) */
  int near = -1, n_near = 0;
  for (int i = 0; i < p->n_values; i++) {
    int ok = 0;
    double x = mpt_value_as_double(&p->values[i], &ok);
    if (!ok) continue;
    if (x == d) return i;
    if (p->values[i].kind == MPT_V_FLOAT && fabs(x - d) <= 1e-12 * fmax(fabs(x), fabs(d))) {
      near = i;
      n_near++;
    }
  }
  return n_near == 1 ? near : -1;
}

/* Checks that `names` (n of them, read at `where` in the file: "results[0].configuration") are exactly the
 * problem's parameters. */
static int check_names(const char *path, const char *where, const mpt_problem *pr, const char *const *names, int n,
                       mpt_error *err) {
  char msg[1536] = "";
  size_t len = 0;
  int bad = 0;
  for (int i = 0; i < pr->n_params; i++) {
    int found = 0;
    for (int j = 0; j < n && !found; j++) found = strcmp(names[j], pr->params[i].name) == 0;
    if (!found) {
      snprintf(msg + len, sizeof msg - len, "%smissing parameter '%s'", bad++ ? ", " : "", pr->params[i].name);
      len = strlen(msg);
    }
  }
  for (int j = 0; j < n; j++) {
    int dup = 0;
    for (int k = 0; k < j; k++) dup |= strcmp(names[k], names[j]) == 0;
    if (dup) {
      snprintf(msg + len, sizeof msg - len, "%sparameter '%s' given twice", bad++ ? ", " : "", names[j]);
    } else if (mpt_problem_param_index(pr, names[j]) < 0) {
      snprintf(msg + len, sizeof msg - len, "%sextra parameter '%s'", bad++ ? ", " : "", names[j]);
    }
    len = strlen(msg);
  }
  if (bad)
    return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s does not match problem %s: %s (in %s)", path,
                         pr->path ? pr->path : (pr->name ? pr->name : "?"), msg, where);
  return 0;
}

static double num_or(const cJSON *obj, const char *key, double dflt) {
  const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* fills o->times / n_times / median from a JSON array of numbers (scaled); returns the sum */
static double fill_times(mpt_obs *o, const cJSON *arr, double scale) {
  double sum = 0;
  int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
  if (n <= 0) return 0;
  double *all = malloc(sizeof(double) * (size_t)n);
  int k = 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, arr) {
    if (!cJSON_IsNumber(t)) continue;
    double x = t->valuedouble * scale;
    sum += x;
    if (all) all[k] = x;
    if (o->n_times < MPT_OBS_MAX_TIMES) o->times[o->n_times++] = x;
    k++;
  }
  if (all && k > 0) {
    qsort(all, (size_t)k, sizeof(double), cmp_double);
    o->median = (k % 2) ? all[k / 2] : 0.5 * (all[k / 2 - 1] + all[k / 2]);
  }
  free(all);
  return sum;
}

/* Kernel Tuner's error strings (also used as measurement values in T4 files) */
static int status_from_kt_string(const char *s) {
  if (strcmp(s, "CompilationFailedConfig") == 0) return MPT_STATUS_COMPILE_ERROR;
  if (strcmp(s, "RuntimeFailedConfig") == 0) return MPT_STATUS_RUNTIME_ERROR;
  if (strcmp(s, "InvalidConfig") == 0) return MPT_STATUS_INVALID;
  return -1;
}

/* stores o for the configuration idx (the record at `where`: "results[3]"); a configuration recorded twice:
 * the later record wins, and mpt_replay_coverage says how many did. -1: out of memory */
static int add_record(mpt_replay *r, const int *idx, const mpt_obs *o, const char *where) {
  int64_t id = mpt_space_lookup(r->space, idx);
  if (id < 0) {
    if (!r->first_miss[0]) {
      char cfg[400] = "";
      const mpt_problem *pr = mpt_space_problem(r->space);
      for (int p = 0; p < pr->n_params; p++) {
        char v[64] = "?";
        if (idx[p] >= 0 && idx[p] < pr->params[p].n_values) mpt_value_str_repr(&pr->params[p].values[idx[p]], v, sizeof v);
        size_t len = strlen(cfg);
        snprintf(cfg + len, sizeof cfg - len, "%s%s=%s", p ? "," : "", pr->params[p].name, v);
      }
      snprintf(r->first_miss, sizeof r->first_miss, "%.100s: %s violates the problem's constraints", where, cfg);
    }
    r->n_unmatched++;
    return 0;
  }
  if (r->slot[id] >= 0 && r->n_repeated++ == 0)
    mpt_space_format(r->space, id, r->first_repeated, (int)sizeof r->first_repeated);
  /* at most one record per config id */
  int64_t at = replay_store_put(&r->store, r->slot[id], o, mpt_space_size(r->space));
  if (at < 0) return -1;
  r->slot[id] = at;
  return 0;
}

/* ---- T4 results ---- */

/* milliseconds per unit of a time unit's name, any case (T1's "Seconds", "s", "usec", Kernel Tuner's
 * "miliseconds"); 0 when the name is no time unit */
static double ms_per_unit(const char *u) {
  static const struct { const char *name; double ms; } units[] = {
      {"ns", 1e-6},   {"nsec", 1e-6},       {"nanosecond", 1e-6},   {"nanoseconds", 1e-6},
      {"us", 1e-3},   {"usec", 1e-3},       {"\xc2\xb5s", 1e-3},    {"microsecond", 1e-3},  {"microseconds", 1e-3},
      {"ms", 1},      {"msec", 1},          {"millisecond", 1},     {"milliseconds", 1},    {"milisecond", 1},
      {"miliseconds", 1}, {"s", 1e3},       {"sec", 1e3},           {"second", 1e3},        {"seconds", 1e3}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcasecmp(u, units[i].name) == 0) return units[i].ms;
  return 0;
}

/* the measurement named `name` of a record's measurements (any case when fold), or NULL */
static const cJSON *measurement(const cJSON *meas, const char *name, int fold) {
  const cJSON *m;
  cJSON_ArrayForEach(m, meas) {
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(m, "name");
    if (cJSON_IsString(mn) && (fold ? strcasecmp(mn->valuestring, name) : strcmp(mn->valuestring, name)) == 0) return m;
  }
  return NULL;
}

/* the unit of measurement m: 1 a time unit (*ms its milliseconds per unit), 0 none (*ms = scale, the
 * file's), -1 a unit of no time; *u the unit ("" for none) */
static int unit_ms(const cJSON *m, double scale, double *ms, const char **u) {
  const cJSON *unit = cJSON_GetObjectItemCaseSensitive(m, "unit");
  *u = cJSON_IsString(unit) ? unit->valuestring : "";
  *ms = (*u)[0] ? ms_per_unit(*u) : scale;
  return !(*u)[0] ? 0 : *ms > 0 ? 1 : -1;
}

/* The measurement replayed as the objective of a T4 record (*out), and its milliseconds per unit (*ms). mptune
 * minimizes a time: objectives[0] when it is one (named "time", or with a time unit, or without a
 * unit: then in the file's time unit `scale`); else the record's "time" measurement (noted once);
 * NULL when there is none of either (a record without its objective: it fails, noted by the caller).
 * A time whose own unit is no time unit is an error (-1). */
static int t4_objective(mpt_replay *r, const cJSON *rec, double scale, const cJSON **out, double *ms,
                        const char **objname, const char *path, int ri, mpt_error *err) {
  const cJSON *objs = cJSON_GetObjectItemCaseSensitive(rec, "objectives");
  const cJSON *o0 = cJSON_GetArrayItem(objs, 0);
  const char *name = cJSON_IsString(o0) ? o0->valuestring : "time";
  const cJSON *meas = cJSON_GetObjectItemCaseSensitive(rec, "measurements");
  const cJSON *m = measurement(meas, name, 0);
  int is_time = strcasecmp(name, "time") == 0;
  *objname = name;
  *ms = scale;
  *out = m;
  if (!m) return 0; /* the objective is not measured: the record fails (noted by the caller) */
  const char *u;
  int timed = unit_ms(m, scale, ms, &u);
  if (timed > 0 || (timed == 0 && (is_time || !measurement(meas, "time", 1)))) {
    if (timed == 0 && !is_time && !r->objective_note[0])
      snprintf(r->objective_note, sizeof r->objective_note,
               "the objective '%.80s' has no unit: it is read as a time (in the file's time unit) and minimized", name);
    return 0;
  }
  if (is_time)
    return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s: results[%d].measurements: the objective '%s' has unit '%s', which is no time unit (ns, us, ms, s)",
                         path, ri, name, u);
  /* an objective other than a time (say GFLOP/s, which is maximized): its record's time instead */
  const cJSON *t = measurement(meas, "time", 1);
  *out = t;
  *ms = scale;
  if (!t) return 0;
  if (!r->objective_note[0])
    snprintf(r->objective_note, sizeof r->objective_note,
             "the objective '%.80s' (unit '%.40s') is no time: mptune minimizes time, so the records' 'time' measurement is replayed", name, u);
  *objname = "time";
  if (unit_ms(t, scale, ms, &u) < 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s: results[%d].measurements: 'time' has unit '%s', which is no time unit (ns, us, ms, s)",
                         path, ri, u);
  return 0;
}

/* the status and reason of a T4 record of the configuration idx, or -1 with err set for an unknown
 * invalidity; a record marked correct without a finite objective fails and is noted (note_no_objective) */
static int t4_record(mpt_replay *r, const int *idx, const cJSON *rec, double scale, mpt_obs *o, const char *path,
                     int ri, mpt_error *err) {
  mpt_obs_init(o, -1);
  const cJSON *inv = cJSON_GetObjectItemCaseSensitive(rec, "invalidity");
  const char *invs = cJSON_IsString(inv) ? inv->valuestring : "correct";
  if (strcmp(invs, "correct") == 0) o->status = MPT_STATUS_OK;
  else if (strcmp(invs, "compile") == 0) o->status = MPT_STATUS_COMPILE_ERROR;
  else if (strcmp(invs, "runtime") == 0) o->status = MPT_STATUS_RUNTIME_ERROR;
  else if (strcmp(invs, "timeout") == 0) o->status = MPT_STATUS_TIMEOUT;
  else if (strcmp(invs, "correctness") == 0) o->status = MPT_STATUS_WRONG_RESULT;
  else if (strcmp(invs, "constraints") == 0) o->status = MPT_STATUS_INVALID;
  else return mpt_error_set(err, MPT_ERR_PARSE, "replay file %s: results[%d].invalidity: unknown value '%s'", path, ri, invs);
  const cJSON *times = cJSON_GetObjectItemCaseSensitive(rec, "times");
  double sum = fill_times(o, times ? cJSON_GetObjectItemCaseSensitive(times, "runtimes") : NULL, scale);
  o->compile_ms = num_or(times, "compilation", num_or(times, "compilation_time", 0)) * scale;
  o->framework_ms = num_or(times, "framework", 0) * scale;
  o->benchmark_ms = num_or(times, "benchmark", sum / scale) * scale;
  /* the objective: a time, in ms */
  const char *objname;
  double ms;
  const cJSON *m;
  if (t4_objective(r, rec, scale, &m, &ms, &objname, path, ri, err) < 0) return -1;
  const cJSON *val = m ? cJSON_GetObjectItemCaseSensitive(m, "value") : NULL;
  if (o->status == MPT_STATUS_OK) {
    if (cJSON_IsNumber(val)) o->objective = val->valuedouble * ms;
    if (cJSON_IsString(val)) {
      /* a failure by Kernel Tuner's error string */
      int st = status_from_kt_string(val->valuestring);
      o->status = st >= 0 ? st : MPT_STATUS_RUNTIME_ERROR;
      snprintf(o->reason, sizeof o->reason, "%s", val->valuestring);
    } else if (!(isfinite(o->objective) && o->objective >= 0)) { /* a negative time: no time at all */
      o->status = MPT_STATUS_RUNTIME_ERROR;
      o->objective = NAN;
      snprintf(o->reason, sizeof o->reason, "%s", val ? "the objective's measurement is no finite time >= 0" : "no measurement of the objective");
      note_no_objective(r, idx, objname);
    }
  } else {
    snprintf(o->reason, sizeof o->reason, "%s", cJSON_IsString(val) ? val->valuestring : invs);
  }
  return 0;
}

/* the record's configuration as value indices (idx), 1 if every value is one of the problem's, 0 if
 * not (noted), or an error */
static int t4_config(mpt_replay *r, const cJSON *rec, int ri, int *idx, const char *path, mpt_error *err) {
  const mpt_problem *pr = mpt_space_problem(r->space);
  const cJSON *conf = cJSON_GetObjectItemCaseSensitive(rec, "configuration"), *c;
  if (ri == 0) {
    /* parameter names from the first record */
    if (!cJSON_IsObject(conf))
      return mpt_error_set(err, MPT_ERR_PARSE, "replay file %s: results[0].configuration is missing", path);
    int nn = cJSON_GetArraySize(conf), k = 0;
    const char **names = calloc((size_t)nn + 1, sizeof *names);
    if (!names) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    cJSON_ArrayForEach(c, conf) names[k++] = c->string;
    int rc = check_names(path, "results[0].configuration", pr, names, nn, err);
    free(names);
    if (rc < 0) return rc;
  }
  if (!cJSON_IsObject(conf) || cJSON_GetArraySize(conf) != pr->n_params)
    return mpt_error_set(err, MPT_ERR_PARSE, "replay file %s: results[%d].configuration does not have the %d parameters of results[0]",
                         path, ri, pr->n_params);
  int matched = 1;
  for (int p = 0; p < pr->n_params; p++) idx[p] = -1;
  cJSON_ArrayForEach(c, conf) {
    int p = mpt_problem_param_index(pr, c->string);
    if (p < 0)
      return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s: results[%d].configuration: extra parameter '%s'", path, ri, c->string);
    idx[p] = match_value(&pr->params[p], c);
    if (idx[p] < 0) {
      char where[64];
      snprintf(where, sizeof where, "results[%d]", ri);
      note_value_miss(r, where, c->string, c);
      matched = 0;
    }
  }
  return matched;
}

/* malformed JSON at text offset `offset`, as "FILE:LINE:COL: malformed JSON[: what] (byte B[, in where])"
 * (the project's style; without LINE:COL when the file cannot be read that far again). what: what is
 * wrong when known, else NULL; where: the record or member being read ("results[17]") or NULL. A fault
 * the reader's check found (src->check: invalid UTF-8, a leading zero, too deep, a number out of range) at
 * or before offset is the first one in the text: it is reported instead (a number out of range, which is
 * JSON, as "FILE:LINE:COL: number 1e999 is out of range (...) (byte B[, in where])"). */
static int stream_error(const mpt_json_src *src, const char *path, long long offset, const char *what,
                        const char *where, mpt_error *err) {
  int range = 0;
  if (src && src->check.bad_at >= 0 && src->check.bad_at <= offset) {
    offset = src->check.bad_at;
    what = src->check.what;
    range = src->check.out_of_range;
  }
  long long line, col;
  char in[96] = "", at[64] = "";
  if (where) snprintf(in, sizeof in, ", in %s", where);
  if (mpt_json_line_col(path, offset, &line, &col) == 0) snprintf(at, sizeof at, "%lld:%lld:", line, col);
  if (range)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s:%s %s (%sbyte %lld%s)", path, at, what, at[0] ? "" : "near ", offset,
                         in);
  return mpt_error_set(err, MPT_ERR_PARSE, "%s:%s malformed JSON%s%s (%sbyte %lld%s)", path, at, what ? ": " : "",
                       what ? what : "", at[0] ? "" : "near ", offset, in);
}

/* the document ends before the text does (Python: "Extra data") */
static int extra_data(const mpt_json_src *src, const char *path, long long offset, mpt_error *err) {
  return stream_error(src, path, offset, "extra data after the end of the document", NULL, err);
}

/* the file could not be read (corrupt or truncated gzip data, an unreadable file) */
static int read_error(const mpt_json_src *src, const char *path, mpt_error *err) {
  return mpt_error_set(err, MPT_ERR_IO, "cannot read replay file %s: %s", path, src->msg);
}

/* a failed read of the next record: the file's data, else its text */
static int iter_error(const mpt_json_iter *it, const char *path, long long at, mpt_error *err) {
  if (it->src && it->src->err) return read_error(it->src, path, err);
  char where[64];
  snprintf(where, sizeof where, it->close == ']' ? "results[%d]" : "the cache's entry %d", it->count);
  return stream_error(it->src, path, at, NULL, where, err);
}

/* doc: the file's other top-level members (metadata); it: the records of 'results' */
static int load_t4(mpt_replay *r, const cJSON *doc, mpt_json_iter *it, const char *path, mpt_error *err) {
  const mpt_problem *pr = mpt_space_problem(r->space);
  double scale = 1.0; /* ms per unit of the file's times (T4's metadata.timeunit; ms without one) */
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
  const cJSON *tu = meta ? cJSON_GetObjectItemCaseSensitive(meta, "timeunit") : NULL;
  if (cJSON_IsString(tu) && tu->valuestring[0] && (scale = ms_per_unit(tu->valuestring)) <= 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s: metadata.timeunit: unknown time unit '%s' (known: ns, us, ms, s, their names in any case)",
                         path, tu->valuestring);
  if (tu && !cJSON_IsString(tu) && !cJSON_IsNull(tu))
    return mpt_error_set(err, MPT_ERR_VALUE, "replay file %s: metadata.timeunit is not a string", path);
  int *idx = malloc(sizeof(int) * (size_t)(pr->n_params > 0 ? pr->n_params : 1));
  if (!idx) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory loading %s", path);
  int ri = 0, rc = 0, got;
  cJSON *rec;
  long long at = 0;
  mpt_obs o;
  while (rc == 0 && (got = mpt_json_iter_next(it, &rec, &at)) == 1) {
    int matched = t4_config(r, rec, ri, idx, path, err);
    if (matched < 0) rc = matched;
    else r->n_records++;
    if (matched == 0) r->n_unmatched++;
    char where[32];
    snprintf(where, sizeof where, "results[%d]", ri);
    if (matched == 1 && (rc = t4_record(r, idx, rec, scale, &o, path, ri, err)) == 0 && add_record(r, idx, &o, where) < 0)
      rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory loading %s", path);
    cJSON_Delete(rec);
    ri++;
  }
  free(idx);
  if (rc < 0) return rc;
  if (got < 0) return iter_error(it, path, at, err);
  if (ri == 0) return mpt_error_set(err, MPT_ERR_PARSE, "replay file %s: 'results' is empty", path);
  return 0;
}

/* ---- Kernel Tuner cache ---- */

/* the status and objective of the cache entry e of the configuration idx. Kernel Tuner marks a failure
 * with an error string in the field of its objective (objname, the cache's 'objective'); the value is
 * 'time' (ms) whatever the objective: the file does not say which way another one is better. An entry
 * with neither an error string nor a finite time fails and is noted (note_no_objective). */
static void kt_record(mpt_replay *r, const int *idx, const cJSON *e, const char *objname, mpt_obs *o) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "time");
  const cJSON *obj = cJSON_GetObjectItemCaseSensitive(e, objname);
  const cJSON *mark = cJSON_IsString(obj) ? obj : cJSON_IsString(t) ? t : NULL;
  if (mark) {
    int st = status_from_kt_string(mark->valuestring);
    o->status = st >= 0 ? st : MPT_STATUS_RUNTIME_ERROR;
    snprintf(o->reason, sizeof o->reason, "%s", mark->valuestring);
  } else if (cJSON_IsNumber(t) && isfinite(t->valuedouble) && t->valuedouble >= 0) {
    o->status = MPT_STATUS_OK;
    o->objective = t->valuedouble;
  } else {
    o->status = MPT_STATUS_RUNTIME_ERROR;
    snprintf(o->reason, sizeof o->reason, "%s", t ? "its 'time' is no finite number >= 0" : "no 'time' recorded");
    note_no_objective(r, idx, "time");
  }
}

/* doc: the file's other top-level members (tune_params_keys, tune_params, device_name); it: the
 * entries of 'cache' */
static int load_kt(mpt_replay *r, const cJSON *doc, mpt_json_iter *it, const char *path, mpt_error *err) {
  const mpt_problem *pr = mpt_space_problem(r->space);
  const cJSON *keys = cJSON_GetObjectItemCaseSensitive(doc, "tune_params_keys");
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(doc, "device_name");
  const cJSON *objective = cJSON_GetObjectItemCaseSensitive(doc, "objective");
  const char *objname = cJSON_IsString(objective) ? objective->valuestring : "time";
  if (cJSON_IsString(dev) && dev->valuestring[0]) snprintf(r->device, sizeof r->device, "%s", dev->valuestring);
  int nk;
  const char **names;
  if (cJSON_IsArray(keys)) {
    nk = cJSON_GetArraySize(keys);
    names = calloc((size_t)nk + 1, sizeof *names);
    if (!names) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, keys) {
      if (!cJSON_IsString(c)) { free(names); return mpt_error_set(err, MPT_ERR_PARSE, "replay file %s: tune_params_keys[%d] is not a string", path, k); }
      names[k++] = c->valuestring;
    }
  } else {
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(doc, "tune_params");
    if (!cJSON_IsObject(tp)) return mpt_error_set(err, MPT_ERR_PARSE, "replay file %s: Kernel Tuner cache without 'tune_params_keys' or 'tune_params'", path);
    nk = cJSON_GetArraySize(tp);
    names = calloc((size_t)nk + 1, sizeof *names);
    if (!names) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, tp) names[k++] = c->string;
  }
  int rc = check_names(path, cJSON_IsArray(keys) ? "tune_params_keys" : "tune_params", pr, names, nk, err);
  if (rc < 0) { free(names); return rc; }
  int *idx = malloc(sizeof(int) * (size_t)(pr->n_params > 0 ? pr->n_params : 1));
  int *map = malloc(sizeof(int) * (size_t)(nk > 0 ? nk : 1));
  if (!idx || !map) { free(names); free(idx); free(map); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory loading %s", path); }
  for (int j = 0; j < nk; j++) map[j] = mpt_problem_param_index(pr, names[j]);
  cJSON *e;
  long long at = 0;
  mpt_obs o;
  int got;
  while ((got = mpt_json_iter_next(it, &e, &at)) == 1) {
    r->n_records++;
    int matched = 1;
    /* values from the entry's fields, or else from the comma-separated key */
    const char *key = e->string ? e->string : "";
    const char *kp = key;
    char where[300];
    snprintf(where, sizeof where, "cache[\"%.250s\"]", key);
    for (int j = 0; j < nk; j++) {
      const char *comma = strchr(kp, ',');
      size_t tl = comma ? (size_t)(comma - kp) : strlen(kp);
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, names[j]);
      int p = map[j];
      if (v) {
        idx[p] = match_value(&pr->params[p], v);
        if (idx[p] < 0) note_value_miss(r, where, names[j], v);
      } else {
        char tok[256];
        snprintf(tok, sizeof tok, "%.*s", (int)(tl < 255 ? tl : 255), kp);
        cJSON *sv = cJSON_CreateString(tok);
        idx[p] = sv ? match_value(&pr->params[p], sv) : -1;
        if (idx[p] < 0 && sv) note_value_miss(r, where, names[j], sv);
        cJSON_Delete(sv);
      }
      if (idx[p] < 0) matched = 0;
      kp = comma ? comma + 1 : kp + tl;
    }
    if (!matched) {
      r->n_unmatched++;
      cJSON_Delete(e);
      continue;
    }
    mpt_obs_init(&o, -1);
    double sum = fill_times(&o, cJSON_GetObjectItemCaseSensitive(e, "times"), 1.0);
    kt_record(r, idx, e, objname, &o);
    o.compile_ms = num_or(e, "compile_time", 0);
    o.benchmark_ms = num_or(e, "benchmark_time", sum);
    o.framework_ms = num_or(e, "framework_time", 0);
    cJSON_Delete(e);
    if (add_record(r, idx, &o, where) < 0) { free(names); free(idx); free(map); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory loading %s", path); }
  }
  free(names);
  free(idx);
  free(map);
  if (got < 0) return iter_error(it, path, at, err);
  if (it->open_end) /* the document is unterminated, in the cache or after it */
    snprintf(r->in_progress, sizeof r->in_progress, "%s: the cache ends before its closing braces (a Kernel Tuner run "
             "still in progress?): read %d complete records, the rest ignored", path, it->count);
  return 0;
}

/* The file is read twice through a small window (json_stream.c): once for its top-level members, once
 * for its records, each parsed on its own. Text the scanner cannot delimit is read and parsed whole
 * instead, for cJSON's verdict (and for what cJSON accepts and the scanner does not: a byte-order mark). */
int mpt_replay_load(const char *path, const mpt_space *space, mpt_replay **out, mpt_error *err) {
  *out = NULL;
  if (!path || !*path) return mpt_error_set(err, MPT_ERR_IO, "no replay file given");
  mpt_json_src src;
  if (mpt_json_src_open(&src, path) < 0)
    return mpt_error_set(err, MPT_ERR_IO, "cannot open replay file %s: %s", path, strerror(errno));
  static const char *const keys[] = {"results", "cache", "metadata", "tune_params_keys", "tune_params", "device_name",
                                     "objective"};
  static const int big[] = {1, 1, 0, 0, 0, 0, 0};
  enum { K_RESULTS, K_CACHE, K_SMALL, K_N = 7 };
  char *text[K_N], first[K_N];
  long long at[K_N], err_at = 0;
  const char *endp = NULL;
  cJSON *doc = NULL, *records = NULL;
  mpt_json_iter it;
  memset(&it, 0, sizeof it);
  int rc = 0, cut = -1;
  int members = mpt_json_members(&src, keys, K_N, big, text, at, first, &err_at, &cut);
  /* a Kernel Tuner cache still being written (its records appended one by one, the braces closed at the end):
   * read up to its last complete record; a document cut anywhere else is malformed */
  int in_progress = members == 1 && cut == K_CACHE && first[K_CACHE] == '{';
  if (members == 1 && !in_progress) members = -1;
  if (members == 0 && mpt_json_src_end(&src, &err_at) < 0) {
    rc = src.err ? read_error(&src, path, err) : extra_data(&src, path, err_at, err);
  } else if (members == 0 || in_progress) {
    /* the small members as one cJSON object, the records streamed */
    doc = cJSON_CreateObject();
    for (int i = K_SMALL; doc && rc == 0 && i < K_N; i++) {
      if (!text[i]) continue;
      const char *bad = NULL;
      mpt_json_nonfinite(text[i], strlen(text[i]));
      cJSON *x = cJSON_ParseWithOpts(text[i], &bad, 1);
      if (!x) rc = stream_error(&src, path, at[i] + (bad ? (long long)(bad - text[i]) : 0), NULL, keys[i], err);
      else cJSON_AddItemToObject(doc, keys[i], x);
    }
    /* a fault of the JSON check (the first pass saw the whole document) inside a member read here: said
     * before that member is interpreted, so that an invalid UTF-8 byte in the time unit is reported as
     * such, not as an "unknown time unit" */
    for (int i = K_SMALL; rc == 0 && i < K_N; i++)
      if (text[i] && src.check.bad_at >= at[i] && src.check.bad_at < at[i] + (long long)strlen(text[i]))
        rc = stream_error(&src, path, src.check.bad_at, NULL, NULL, err);
    int pick = in_progress ? K_CACHE : first[K_RESULTS] == '[' ? K_RESULTS : first[K_CACHE] == '{' ? K_CACHE : -1;
    if (rc == 0 && pick >= 0 && mpt_json_iter_open(&it, &src, at[pick]) < 0)
      rc = src.err ? read_error(&src, path, err) : stream_error(&src, path, at[pick], NULL, keys[pick], err);
    it.open_end = in_progress;
  } else if (src.err) {
    rc = read_error(&src, path, err);
  } else {
    const char *text0;
    size_t len = 0;
    if (mpt_json_src_whole(&src, &text0, &len) < 0) {
      rc = read_error(&src, path, err);
    } else {
      doc = cJSON_ParseWithLengthOpts(text0, len, &endp, 0);
      if (!doc) rc = stream_error(&src, path, endp ? (long long)(endp - text0) : -1, NULL, NULL, err);
      src.pos = doc ? (size_t)(endp - text0) : 0;
      if (doc && mpt_json_src_end(&src, &err_at) < 0) rc = src.err ? read_error(&src, path, err) : extra_data(&src, path, err_at, err);
    }
    /* T4 results (an array), else a Kernel Tuner cache (an object), as in the streamed case */
    records = cJSON_GetObjectItemCaseSensitive(doc, "results");
    if (!cJSON_IsArray(records)) records = cJSON_GetObjectItemCaseSensitive(doc, "cache");
    if (cJSON_IsArray(records) ? records == cJSON_GetObjectItemCaseSensitive(doc, "results") : cJSON_IsObject(records))
      mpt_json_iter_tree(&it, records);
  }
  for (int i = 0; i < K_N; i++) free(text[i]);
  mpt_replay *r = rc ? NULL : calloc(1, sizeof *r);
  int64_t size = mpt_space_size(space);
  if (r) r->slot = malloc(sizeof(int64_t) * (size_t)(size > 0 ? size : 1));
  if (!rc && (!doc || !r || !r->slot)) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory loading %s", path);
  if (rc == 0) {
    for (int64_t i = 0; i < size; i++) r->slot[i] = -1;
    r->space = space;
    snprintf(r->path, sizeof r->path, "%s", path);
    /* device name: Kernel Tuner's device_name, else the file's base name */
    const char *base = strrchr(path, '/');
    snprintf(r->device, sizeof r->device, "%s", base ? base + 1 : path);
    if (it.tree && src.check.bad_at >= 0) /* cJSON read the whole text: the check's fault is the first */
      rc = stream_error(&src, path, src.check.bad_at, NULL, NULL, err);
    else if (it.close == ']')
      rc = load_t4(r, doc, &it, path, err);
    else if (it.close == '}')
      rc = load_kt(r, doc, &it, path, err);
    else
      rc = mpt_error_set(err, MPT_ERR_PARSE,
                         "replay file %s: unknown format (neither T4 results with 'results' nor a Kernel Tuner cache with 'cache')", path);
  }
  if (rc == 0 && src.check.bad_at >= 0) /* outside the records (which report their own) */
    rc = stream_error(&src, path, src.check.bad_at, NULL, NULL, err);
  cJSON_Delete(doc);
  mpt_json_src_close(&src);
  if (rc == 0 && r->store.n == 0)
    rc = mpt_error_set(err, MPT_ERR_VALUE, "replay file %s has no configuration of the space of %s (%lld records%s%s)",
                       path, mpt_space_problem(space)->path ? mpt_space_problem(space)->path : "the problem",
                       (long long)r->n_records, r->first_miss[0] ? "; the first: " : "", r->first_miss);
  if (rc < 0) {
    mpt_replay_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

void mpt_replay_free(mpt_replay *r) {
  if (!r) return;
  free(r->slot);
  replay_store_free(&r->store);
  free(r);
}

const mpt_obs *mpt_replay_get(const mpt_replay *r, int64_t id, mpt_obs *buf) {
  if (!r || id < 0 || id >= mpt_space_size(r->space) || r->slot[id] < 0) return NULL;
  replay_store_get(&r->store, r->slot[id], id, buf);
  return buf;
}

void mpt_replay_obs(const mpt_replay *r, int64_t id, mpt_obs *out) {
  if (!mpt_replay_get(r, id, out)) {
    mpt_obs_init(out, id);
    out->status = MPT_STATUS_RUNTIME_ERROR;
    snprintf(out->reason, sizeof out->reason, "no record in the replay file");
  }
  out->id = id;
}

int mpt_replay_valid(const mpt_replay *r, int64_t id, double *objective) {
  if (!r || id < 0 || id >= mpt_space_size(r->space) || r->slot[id] < 0) return 0;
  return replay_store_valid(&r->store, r->slot[id], objective);
}

int64_t mpt_replay_count(const mpt_replay *r) { return r ? r->store.n : 0; }

double mpt_replay_optimum(const mpt_replay *r) {
  double best = NAN, y;
  for (int64_t i = 0; r && i < r->store.n; i++)
    if (replay_store_valid(&r->store, i, &y) && !(y >= best)) best = y;
  return best;
}

const char *mpt_replay_device_name(const mpt_replay *r) { return r ? r->device : NULL; }

int64_t mpt_replay_unmatched(const mpt_replay *r) { return r ? r->n_unmatched : 0; }

const char *mpt_replay_in_progress(const mpt_replay *r) { return r ? r->in_progress : ""; }

int mpt_replay_coverage(const mpt_replay *r, const char *missing_note, char *msg, size_t cap) {
  if (cap) msg[0] = '\0';
  if (!r) return 0;
  int64_t n = mpt_space_size(r->space), missing = n - r->store.n;
  if (missing <= 0 && r->n_unmatched == 0 && r->n_no_objective == 0 && r->n_repeated == 0 && !r->objective_note[0])
    return 0;
  size_t len = 0;
  if (missing > 0)
    len = (size_t)snprintf(msg, cap, "%lld of the space's %lld valid configurations have no record (%s)", (long long)missing,
                           (long long)n, missing_note);
  if (r->n_unmatched > 0 && len < cap)
    len += (size_t)snprintf(msg + len, cap - len, "%s%lld of the file's %lld records are not valid configurations of the space and are skipped (the first: %s)",
                            len ? "; " : "", (long long)r->n_unmatched, (long long)r->n_records, r->first_miss);
  if (r->n_no_objective > 0 && len < cap)
    len += (size_t)snprintf(msg + len, cap - len, "%s%lld records marked valid have no usable objective '%s' (the first: %s); they count as failed evaluations",
                            len ? "; " : "", (long long)r->n_no_objective, r->no_objective, r->first_no_objective);
  if (r->n_repeated > 0 && len < cap)
    len += (size_t)snprintf(msg + len, cap - len, "%s%lld records repeat a configuration recorded before them (the first: %s); the later record is used",
                            len ? "; " : "", (long long)r->n_repeated, r->first_repeated);
  if (r->objective_note[0] && len < cap) snprintf(msg + len, cap - len, "%s%s", len ? "; " : "", r->objective_note);
  return 1;
}
