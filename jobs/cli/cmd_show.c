/* jobs/cli/cmd_show.c: `mptune show RUN.h5 [--top N] [--json] [--problem T1]`: a run log at a glance
 * (jobs/output/summary.h): the run (problem, strategy, budget and evaluations, how it finished, devices,
 * sessions), the best configurations with their times and speed-up over the default, and the failures by
 * status, per device class when several evaluated (a class's portability checks counted apart); --json the
 * same as one JSON document. Reads the log read-only without its lock, so also while a run writes it; with
 * --problem, a log HDF5 can not read is recovered from its records. Only rank 0 works when started under
 * mpiexec. */
#include <cjson/cJSON.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/cli/commands.h"
#include "jobs/output/summary.h"
#include "spaces/json/json_write.h"

#define SHOW_TOP_DEFAULT 10

static void show_usage(FILE *f) {
  fprintf(f, "usage: mptune show RUN.h5 [--top N] [--json] [--problem PROBLEM.json]\n"
             "  prints a run log at a glance: the problem, strategy, budget and evaluations, how the run\n"
             "  finished, its devices and sessions; the best configurations by objective (time in ms) with\n"
             "  every parameter, the median and standard deviation of their per-iteration times and the\n"
             "  speed-up over the default configuration; the failures by status with their first reasons;\n"
             "  per device class when several evaluated, each class's portability checks (other classes'\n"
             "  bests measured on it) counted apart. A log a run is writing is read as it stands.\n"
             "  --top N      the N best configurations (default %d)\n"
             "  --json       the same as one JSON document on standard output\n"
             "  --problem    the run's T1 file; needed only when RUN.h5 can not be read (damaged, or cut\n"
             "               short): its intact records are then recovered by their checksums\n",
             SHOW_TOP_DEFAULT);
}

static const char *meta_or(mpt_runlog *log, const char *key, const char *dflt) {
  const char *v = mpt_runlog_meta(log, key);
  return v && v[0] ? v : dflt;
}

/* what the stop_reason attribute means */
static const char *stop_text(const char *reason) {
  return strcmp(reason, "budget") == 0 ? "budget reached" : strcmp(reason, "exhausted") == 0 ? "space exhausted"
         : strcmp(reason, "time") == 0 ? "time budget reached" : reason;
}

/* "vendor name (arch)", the vendor left out where the name starts with it; with its workers */
static void device_label(const mpt_summary_device *d, char *buf, size_t cap) {
  size_t vl = strlen(d->vendor);
  int named = strcmp(d->vendor, "unknown") == 0 || (strncmp(d->name, d->vendor, vl) == 0 && d->name[vl] == ' ');
  int n = snprintf(buf, cap, "%s%s%s%s%s%s", named ? "" : d->vendor, named ? "" : " ", d->name, d->arch[0] ? " (" : "",
                   d->arch, d->arch[0] ? ")" : "");
  if (n < 0 || (size_t)n >= cap) return;
  if (d->workers) snprintf(buf + n, cap - (size_t)n, ", %d worker%s", d->workers, d->workers == 1 ? "" : "s");
  else snprintf(buf + n, cap - (size_t)n, " (workers not in the device table)");
}

/* the totals over every device class */
static mpt_summary_device totals(const mpt_summary *s) {
  mpt_summary_device t;
  memset(&t, 0, sizeof t);
  for (int c = 0; c < s->n_devices; c++) {
    t.evaluations += s->devices[c].evaluations;
    t.valid += s->devices[c].valid;
    t.failed += s->devices[c].failed;
    t.cancelled += s->devices[c].cancelled;
    t.cross_checks += s->devices[c].cross_checks;
  }
  return t;
}

/* ---- text ---- */

/* "N (V valid, F failed[, C cancelled])" */
static void print_counts(const mpt_summary_device *d) {
  printf("%lld (%lld valid, %lld failed", (long long)d->evaluations, (long long)d->valid, (long long)d->failed);
  if (d->cancelled) printf(", %lld cancelled", (long long)d->cancelled);
  printf(")");
}

/* ", +N portability checks" (other classes' best measured here: not counted among the evaluations) */
static void print_cross_checks(const mpt_summary_device *d) {
  if (d->cross_checks)
    printf(", +%lld portability check%s", (long long)d->cross_checks, d->cross_checks == 1 ? "" : "s");
}

/* what the tables say of the objective (set by print_run from the log): the objective column's heading ("time
 * (ms)" for a run that minimized the time), its name and unit */
static char objective_heading[96] = "time (" MPT_SUMMARY_UNIT ")";
static mpt_summary_objective shown = {"time", MPT_SUMMARY_UNIT, 0};

static void print_run(const char *path, const mpt_summary *s) {
  mpt_runlog *log = s->log;
  mpt_summary_device t = totals(s);
  printf("run log: %s\n", path);
  printf("problem: %s (%s)", meta_or(log, "problem_name", "(unknown)"), meta_or(log, "problem_path", "path unknown"));
  const char *size = mpt_runlog_meta(log, "space_size");
  if (size && size[0]) printf(", %s valid configurations", size);
  const char *opts = meta_or(log, "options", NULL), *sim = meta_or(log, "simulate", NULL);
  const char *eopts = meta_or(log, "evaluator_options", NULL); /* one a line */
  printf("\nrun: %s, strategy %s%s%s%s, seed %s, evaluator %s", meta_or(log, "mode", "(mode unknown)"),
         meta_or(log, "strategy", "(unknown)"), opts ? " (" : "", opts ? opts : "", opts ? ")" : "",
         meta_or(log, "seed", "(unknown)"), meta_or(log, "evaluator", "(unknown)"));
  for (const char *e = eopts; e && *e; e += strcspn(e, "\n"), e += *e == '\n')
    printf("%s%.*s", e == eopts ? " (" : ", ", (int)strcspn(e, "\n"), e);
  printf("%s%s%s\n", eopts ? ")" : "", sim ? " replaying " : "", sim ? sim : "");
  printf("evaluations: ");
  print_counts(&t);
  const char *budget = meta_or(log, "budget", NULL), *tb = meta_or(log, "time_budget", NULL);
  const char *classes = mpt_runlog_meta(log, "classes"), *nl = classes ? strchr(classes, '\n') : NULL;
  int per_class = nl && nl[1]; /* several device classes: a budget each (docs/RUNLOG.md, "classes") */
  if (budget) printf(" of a budget of %s%s", budget, per_class ? " per device class" : "");
  if (tb && atof(tb) > 0) printf(", time budget %g s", atof(tb));
  print_cross_checks(&t);
  printf("\n");
  const char *reason = meta_or(log, "stop_reason", "");
  if (mpt_runlog_is_finished(log))
    printf("finished: %s, at %s\n", reason[0] ? stop_text(reason) : "yes", meta_or(log, "finish_time", "(time unknown)"));
  else
    printf("finished: no (running, or stopped by its time budget or a signal: --resume continues it)\n");
  printf("devices:");
  for (int c = 0; c < s->n_devices; c++) {
    char label[256];
    device_label(&s->devices[c], label, sizeof label);
    printf("%s %s", c ? ";" : "", label);
  }
  printf("%s\n", s->n_devices ? "" : " (none recorded)");
  int n = mpt_runlog_n_sessions(log);
  printf("sessions: %d", n);
  for (int i = 0; i < n; i++) {
    mpt_runlog_session_info si;
    if (i == 3 && n > 5) { /* the first three and the last */
      printf(", ...");
      i = n - 1;
    }
    mpt_runlog_session(log, i, &si);
    printf("%s %s on %s (pid %d)", i ? "," : ":", si.start_time, si.host, (int)si.pid);
  }
  mpt_summary_objective ob = shown = mpt_summary_objective_of(log);
  if (strcmp(ob.name, "time") == 0 && !ob.maximized)
    printf("\nobjective: %s in %s, lower is better\n", MPT_SUMMARY_OBJECTIVE, MPT_SUMMARY_UNIT);
  else
    printf("\nobjective: %s%s%s, %s (the run's --objective %s)\n", ob.name, ob.unit[0] ? " in " : "", ob.unit,
           ob.maximized ? "higher is better: shown negated, as minimized" : "lower is better",
           meta_or(log, "objective", "time"));
  if (strcmp(ob.name, "time") != 0 || ob.maximized)
    snprintf(objective_heading, sizeof objective_heading, "%s%s%s%s%s", ob.maximized ? "-" : "", ob.name,
             ob.unit[0] ? " (" : "", ob.unit, ob.unit[0] ? ")" : "");
}

static void num_cell(char *buf, size_t cap, const char *fmt, double x) {
  if (isfinite(x)) snprintf(buf, cap, fmt, x);
  else snprintf(buf, cap, "-");
}

/* the cells of the top table: a header row, then one row per configuration */
typedef struct table {
  int rows, cols;
  char **cell; /* rows * cols strings */
} table;

static int table_set(table *t, int r, int c, const char *text) {
  return (t->cell[r * t->cols + c] = strdup(text)) ? 0 : -1;
}

static int fill_row(table *t, int r, const mpt_summary *s, const mpt_summary_device *d, const mpt_summary_top *top) {
  char b[512];
  int c = 0, bad = 0;
  snprintf(b, sizeof b, "%d", r);
  bad |= table_set(t, r, c++, b);
  for (int p = 0; p < s->n_params; p++) {
    mpt_summary_value_text(s, p, top->config[p], b, sizeof b);
    bad |= table_set(t, r, c++, b);
  }
  num_cell(b, sizeof b, "%.6g", top->objective);
  bad |= table_set(t, r, c++, b);
  num_cell(b, sizeof b, "%.6g", top->median);
  bad |= table_set(t, r, c++, b);
  num_cell(b, sizeof b, "%.3g", top->std);
  bad |= table_set(t, r, c++, b);
  snprintf(b, sizeof b, "%d", top->n_times);
  bad |= table_set(t, r, c++, b);
  if (isfinite(d->default_objective)) {
    num_cell(b, sizeof b, "%.2fx", top->speedup);
    bad |= table_set(t, r, c++, b);
  }
  return bad;
}

static int fill_table(table *t, const mpt_summary *s, const mpt_summary_device *d) {
  const char *stats[] = {objective_heading, "median (" MPT_SUMMARY_UNIT ")", "std (" MPT_SUMMARY_UNIT ")", "times",
                         "speed-up"};
  int c = 0, bad = table_set(t, 0, c++, "#");
  for (int p = 0; p < s->n_params; p++) bad |= table_set(t, 0, c++, s->names[p]);
  for (int k = 0; c < t->cols; k++) bad |= table_set(t, 0, c++, stats[k]);
  for (int r = 1; r < t->rows && !bad; r++) bad |= fill_row(t, r, s, d, &d->top[r - 1]);
  return bad;
}

static int print_table(const mpt_summary *s, const mpt_summary_device *d) {
  table t = {d->n_top + 1, 1 + s->n_params + 4 + (isfinite(d->default_objective) ? 1 : 0), NULL};
  int *width = calloc((size_t)t.cols, sizeof *width);
  t.cell = calloc((size_t)(t.rows * t.cols), sizeof *t.cell);
  int bad = !width || !t.cell || fill_table(&t, s, d);
  for (int r = 0; r < t.rows && !bad; r++)
    for (int c = 0; c < t.cols; c++) {
      int w = (int)strlen(t.cell[r * t.cols + c]);
      if (w > width[c]) width[c] = w;
    }
  for (int r = 0; r < t.rows && !bad; r++) {
    printf(" ");
    for (int c = 0; c < t.cols; c++)
      printf(" %-*s%s", c + 1 < t.cols ? width[c] : 0, t.cell[r * t.cols + c], c + 1 < t.cols ? " " : "\n");
  }
  for (int k = 0; t.cell && k < t.rows * t.cols; k++) free(t.cell[k]);
  free(t.cell);
  free(width);
  return bad ? -1 : 0;
}

static void print_config(const mpt_summary *s, const int32_t *config) {
  for (int p = 0; p < s->n_params; p++) {
    char b[512];
    mpt_summary_value_text(s, p, config[p], b, sizeof b);
    printf("%s%s=%s", p ? "," : "", s->names[p], b);
  }
}

static void print_default(const mpt_summary *s, const mpt_summary_device *d) {
  if (!s->default_config) {
    printf("default: unknown (the logged problem has no Default for every parameter): no speed-up\n");
    return;
  }
  printf("default: ");
  if (isfinite(d->default_objective)) printf("%.6g%s%s", d->default_objective, shown.unit[0] ? " " : "", shown.unit);
  else if (d->default_seen) printf("failed (%s): no speed-up", mpt_status_name(d->default_status));
  else printf("not measured: no speed-up");
  printf(" (");
  print_config(s, s->default_config);
  printf(")\n");
}

static void print_failures(const mpt_summary_device *d) {
  int width = 0, cwidth = 0;
  for (int st = 0; st < MPT_STATUS_COUNT; st++) {
    char count[32];
    if (!d->failures[st].count) continue;
    if ((int)strlen(mpt_status_name(st)) > width) width = (int)strlen(mpt_status_name(st));
    if (snprintf(count, sizeof count, "%lld", (long long)d->failures[st].count) > cwidth) cwidth = (int)strlen(count);
  }
  if (d->failed + d->cancelled == 0) {
    printf("failures: none\n");
    return;
  }
  printf("failures: %lld of %lld evaluations", (long long)d->failed, (long long)d->evaluations);
  if (d->cancelled) printf(", and %lld cancelled (in flight when the run stopped: --resume evaluates them again)",
                           (long long)d->cancelled);
  printf("\n");
  for (int st = 0; st < MPT_STATUS_COUNT; st++) {
    const mpt_summary_failure *f = &d->failures[st];
    if (!f->count) continue;
    char count[32];
    snprintf(count, sizeof count, "%lld", (long long)f->count);
    for (int i = 0; i < (f->n_reasons ? f->n_reasons : 1); i++)
      printf("  %-*s  %*s  %s\n", width, i ? "" : mpt_status_name(st), cwidth, i ? "" : count,
             f->n_reasons ? f->reasons[i] : "");
  }
}

static int print_device(const mpt_summary *s, const mpt_summary_device *d) {
  if (d->n_top == 0) {
    printf("best: none (no valid configuration among %lld evaluation%s)\n", (long long)d->evaluations,
           d->evaluations == 1 ? "" : "s");
  } else {
    printf("best %d of %lld valid configuration%s, by %s:\n", d->n_top, (long long)d->configs,
           d->configs == 1 ? "" : "s", shown.name);
    if (print_table(s, d) < 0) return -1;
  }
  print_default(s, d);
  print_failures(d);
  return 0;
}

static int print_text(const char *path, const mpt_summary *s) {
  print_run(path, s);
  int k = 0;
  for (int c = 0; c < s->n_devices; c++) {
    const mpt_summary_device *d = &s->devices[c];
    if (d->evaluations + d->cancelled + d->cross_checks == 0) continue;
    printf("\n");
    if (s->n_with_records > 1) {
      char label[256];
      device_label(d, label, sizeof label);
      printf("device %d of %d: %s: evaluations ", ++k, s->n_with_records, label);
      print_counts(d);
      print_cross_checks(d);
      printf("\n");
    }
    if (print_device(s, d) < 0) return -1;
  }
  if (s->n_with_records == 0) printf("\nno evaluations logged yet\n");
  return 0;
}

/* ---- JSON ---- */

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
  cJSON_AddItemToObject(o, "failures", json_failures(d));
  return o;
}

static void json_run(cJSON *o, const char *path, const mpt_summary *s) {
  mpt_runlog *log = s->log;
  mpt_summary_device t = totals(s);
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

static int print_json(const char *path, const mpt_summary *s) {
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

/* ---- the command ---- */

typedef struct show_args {
  const char *log, *problem;
  int64_t top;
  int json;
} show_args;

/* 0, 1 after --help (printed), or 2 after an error (printed) */
static int parse_show(int argc, char **argv, show_args *a) {
  static const char *const known[] = {"--help", "-h", "--top", "--json", "--problem", NULL};
  mpt_error err;
  mpt_error_clear(&err);
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (argv[i][0] == '-' && argv[i][1] && mpt_cmd_known("show", argv[i], known, &err) < 0) {
      fprintf(stderr, "mptune show: %s\n", err.msg);
      return 2;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      show_usage(stdout);
      return 1;
    } else if (strcmp(argv[i], "--json") == 0) {
      a->json = 1;
    } else if (strcmp(argv[i], "--top") == 0 || strcmp(argv[i], "--problem") == 0) {
      int top = strcmp(argv[i], "--top") == 0;
      const char *opt = argv[i];
      if (!(v = mpt_cmd_value(argc, argv, &i, &err)) || (top && mpt_cmd_parse_int(opt, v, 1, &a->top, &err) < 0)) {
        fprintf(stderr, "mptune show: %s\n", err.msg);
        return 2;
      }
      if (!top) a->problem = v;
    } else if (!a->log) {
      a->log = argv[i];
    } else {
      fprintf(stderr, "mptune show: more than one run log given ('%s', '%s')\n", a->log, argv[i]);
      return 2;
    }
  }
  if (!a->log) {
    fprintf(stderr, "mptune show: no run log given\n");
    show_usage(stderr);
    return 2;
  }
  return 0;
}

int mpt_cmd_show(int argc, char **argv) {
  show_args a = {NULL, NULL, SHOW_TOP_DEFAULT, 0};
  int rc = parse_show(argc, argv, &a);
  if (rc) return rc == 1 ? 0 : rc;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  mpt_error err;
  mpt_error_clear(&err);
  mpt_cmd_log l;
  mpt_summary *s = NULL;
  if ((rc = mpt_cmd_open_log("show", a.log, a.problem, &l, &err)) == 0) {
    mpt_cmd_warn_damaged("show", a.log, l.log, "shown");
    rc = mpt_summary_build(l.log, a.top > 1000000 ? 1000000 : (int)a.top, &s, &err);
  }
  if (rc == 0 && (a.json ? print_json(a.log, s) : print_text(a.log, s)) < 0)
    rc = mpt_error_set(&err, MPT_ERR_NOMEM, "out of memory");
  mpt_summary_free(s);
  mpt_cmd_close_log(&l);
  if (rc < 0) {
    fprintf(stderr, "mptune show: %s\n", err.msg);
    return 1;
  }
  return 0;
}
