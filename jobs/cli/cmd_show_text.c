/* jobs/cli/cmd_show_text.c: `mptune show` as text (jobs/cli/cmd_show.h): the run (problem, strategy, budget and
 * evaluations, how it finished, devices, sessions, objective), then per device class with records the table of
 * the best configurations (every parameter, the objective, the median and standard deviation of the
 * per-iteration times, the speed-up over the default), the default and the failures by status with their first
 * reasons. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/cli/cmd_show.h"
#include "jobs/output/summary.h"

static const char *meta_or(mpt_runlog *log, const char *key, const char *dflt) {
  const char *v = mpt_runlog_meta(log, key);
  return v && v[0] ? v : dflt;
}

/* what the stop_reason attribute means */
static const char *stop_text(const char *reason) {
  return strcmp(reason, "budget") == 0 ? "budget reached" : strcmp(reason, "exhausted") == 0 ? "space exhausted"
         : strcmp(reason, "time") == 0 ? "time budget reached" : reason;
}

/* "vendor name (arch)", the vendor left out where the name starts with it, after "class NAME on " where the log's
 * class has another name than its device's automatic key (mpi/device_class.h: "vendor name (arch)"); with its
 * workers */
static void device_label(const mpt_summary_device *d, char *buf, size_t cap) {
  size_t vl = strlen(d->vendor);
  int named = strcmp(d->vendor, "unknown") == 0 || (strncmp(d->name, d->vendor, vl) == 0 && d->name[vl] == ' ');
  char key[256];
  snprintf(key, sizeof key, "%s %s (%s)", d->vendor, d->name, d->arch[0] ? d->arch : "?");
  int own = d->class_name[0] && strcmp(d->class_name, key) != 0;
  int n = snprintf(buf, cap, "%s%s%s%s%s%s%s%s%s", own ? "class " : "", own ? d->class_name : "", own ? " on " : "",
                   named ? "" : d->vendor, named ? "" : " ", d->name, d->arch[0] ? " (" : "", d->arch,
                   d->arch[0] ? ")" : "");
  if (n < 0 || (size_t)n >= cap) return;
  if (d->workers) snprintf(buf + n, cap - (size_t)n, ", %d worker%s", d->workers, d->workers == 1 ? "" : "s");
  else snprintf(buf + n, cap - (size_t)n, " (workers not in the device table)");
}

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
  mpt_summary_device t = mpt_summary_totals(s);
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

/* the confirmation (--confirm): the best confirmed and the default confirmed, the speed-up of one over the other, and
 * a line when the best confirmed is not the search's best */
static void print_confirmation(const mpt_summary_device *d) {
  if (d->confirmations == 0) return;
  const char *sp = shown.unit[0] ? " " : "";
  printf("confirmed (%lld re-measurements): ", (long long)d->confirmations);
  if (d->confirmed_best_id < 0) {
    printf("no valid one of the finalists\n");
    return;
  }
  int rank = 0;
  for (int t = 0; t < d->n_top && !rank; t++)
    if (d->top[t].id == d->confirmed_best_id) rank = t + 1;
  if (rank) printf("best #%d at %.6g%s%s", rank, d->confirmed_best, sp, shown.unit);
  else printf("best config id %lld at %.6g%s%s", (long long)d->confirmed_best_id, d->confirmed_best, sp, shown.unit);
  if (isfinite(d->confirmed_speedup))
    printf(", default at %.6g%s%s: speed-up %.2fx over the default (both confirmed)\n", d->confirmed_default, sp,
           shown.unit, d->confirmed_speedup);
  else
    printf(" (the default was not measured again: no confirmed speed-up)\n");
  if (d->confirmed_rank > 1)
    printf("confirmation reorders the finalists: the search's #%d is the best confirmed\n", d->confirmed_rank);
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
  print_confirmation(d);
  print_failures(d);
  return 0;
}

int mpt_show_text(const char *path, const mpt_summary *s) {
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
