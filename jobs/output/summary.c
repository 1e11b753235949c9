/* jobs/output/summary.c: a run log at a glance (jobs/output/summary.h): the summary built in its phases (the
 * parameter values: summary_values.c; the records, counted and the best read, per device class:
 * summary_records.c with the classes of summary_classes.c; the speed-ups; the confirmation: summary_confirmed.c;
 * the classes' header names) and freed,
 * the objective a log records, the counts over every class. */
#include "jobs/output/summary.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/output/summary_priv.h"

int mpt_summary_build(mpt_runlog *log, int top, mpt_summary **out, mpt_error *err) {
  *out = NULL;
  mpt_error_clear(err);
  mpt_summary *s = calloc(1, sizeof *s);
  if (!s) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  s->log = log;
  int rc = mpt_summary_load_values(s, err);
  if (top < 1) top = 1;
  if (rc == 0) rc = mpt_summary_read_records(s, top > MPT_SUMMARY_CONFIRM_TOP ? top : MPT_SUMMARY_CONFIRM_TOP, err);
  if (rc == 0) mpt_summary_speedups(s);
  if (rc == 0) rc = mpt_summary_read_confirmations(s, err);
  if (rc < 0) {
    mpt_summary_free(s);
    return rc;
  }
  for (int c = 0; c < s->n_devices; c++) /* the best `top` shown */
    for (; s->devices[c].n_top > top; s->devices[c].n_top--) free(s->devices[c].top[s->devices[c].n_top - 1].config);
  mpt_summary_name_targets(s);
  *out = s;
  return 0;
}

void mpt_summary_free(mpt_summary *s) {
  if (!s) return;
  for (int c = 0; c < s->n_devices; c++) {
    mpt_summary_device *d = &s->devices[c];
    for (int t = 0; t < d->n_top; t++) free(d->top[t].config);
    free(d->top);
    for (int st = 0; st < MPT_STATUS_COUNT; st++)
      for (int i = 0; i < d->failures[st].n_reasons; i++) free(d->failures[st].reasons[i]);
  }
  free(s->devices);
  free(s->log_class_device);
  for (int p = 0; s->values && p < s->n_params; p++) {
    for (int i = 0; s->values[p] && i < s->n_values[p]; i++) mpt_value_free(&s->values[p][i]);
    free(s->values[p]);
  }
  free(s->values);
  free(s->n_values);
  free(s->names);
  free(s->default_config);
  free(s);
}

mpt_summary_objective mpt_summary_objective_of(mpt_runlog *log) {
  mpt_summary_objective o = {"time", MPT_SUMMARY_UNIT, 0};
  const char *spec = mpt_runlog_meta(log, "objective");
  if (!spec || !spec[0]) return o;
  size_t n = strcspn(spec, ":,");
  if (n == 0 || n >= sizeof o.name) return o;
  snprintf(o.name, sizeof o.name, "%.*s", (int)n, spec);
  o.maximized = strncmp(spec + n, ":max", 4) == 0;
  o.unit = strcmp(o.name, "time") == 0 ? MPT_SUMMARY_UNIT : strcmp(o.name, "energy") == 0 ? "J"
           : strcmp(o.name, "edp") == 0 ? "J*s" : "";
  return o;
}

mpt_summary_device mpt_summary_totals(const mpt_summary *s) {
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
