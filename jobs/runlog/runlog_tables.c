/* jobs/runlog/runlog_tables.c: the device and session tables of an open log (/devices, /sessions), row by row,
 * for readers of a log (mptune show, export --header): which worker, on which device, evaluated a record
 * (its session and rank), and when and where each session ran. */
#include "jobs/runlog/runlog_state.h"
#include <stdio.h>
#include <string.h>

int mpt_runlog_n_devices(const mpt_runlog *log) { return log ? log->n_devs : 0; }

int mpt_runlog_device(const mpt_runlog *log, int i, mpt_device_info *out, int32_t *session) {
  if (!log || i < 0 || i >= log->n_devs) return -1;
  const mpt_rl_dev *r = &log->devs[i];
  memset(out, 0, sizeof *out);
  out->rank = r->rank;
  out->index = r->index;
  out->memory_gib = r->memory_gib;
  snprintf(out->host, sizeof out->host, "%.*s", (int)sizeof r->host - 1, r->host);
  snprintf(out->vendor, sizeof out->vendor, "%.*s", (int)sizeof r->vendor - 1, r->vendor);
  snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof r->name - 1, r->name);
  snprintf(out->arch, sizeof out->arch, "%.*s", (int)sizeof r->arch - 1, r->arch);
  snprintf(out->evaluator, sizeof out->evaluator, "%.*s", (int)sizeof r->evaluator - 1, r->evaluator);
  if (session) *session = r->session;
  return 0;
}

int mpt_runlog_n_sessions(const mpt_runlog *log) { return log ? log->n_sess : 0; }

int mpt_runlog_session(const mpt_runlog *log, int i, mpt_runlog_session_info *out) {
  if (!log || i < 0 || i >= log->n_sess) return -1;
  const mpt_rl_session *s = &log->sess[i];
  memset(out, 0, sizeof *out);
  out->start_unix = s->start_unix;
  out->pid = s->pid;
  snprintf(out->start_time, sizeof out->start_time, "%.*s", (int)sizeof s->start_time - 1, s->start_time);
  snprintf(out->host, sizeof out->host, "%.*s", (int)sizeof s->host - 1, s->host);
  return 0;
}
