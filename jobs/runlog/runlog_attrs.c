/* jobs/runlog/runlog_attrs.c: a run log's root attributes (docs/RUNLOG.md, "Root attributes"): their table
 * and HDF5 types, their values as text in the log object (set, read, written), and what a new log, a run's
 * settings and a finished run put there. */
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_h5.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the root attributes, their HDF5 types, in the order written */
typedef enum { A_STR, A_I32, A_I64, A_U64, A_F64 } attr_kind;
static const struct { const char *key; attr_kind kind; } ATTRS[] = {
  {"mptune_format", A_STR}, {"format_version", A_I32}, {"mptune_version", A_STR}, {"mode", A_STR},
  {"problem_path", A_STR}, {"problem_name", A_STR}, {"problem_text", A_STR}, {"strategy", A_STR},
  {"options", A_STR}, {"evaluator", A_STR}, {"simulate", A_STR}, {"seed", A_U64}, {"budget", A_I64},
  {"time_budget", A_F64}, {"command_line", A_STR}, {"start_time", A_STR}, {"start_unix", A_F64},
  {"host", A_STR}, {"space_size", A_I64}, {"finished", A_I32}, {"stop_reason", A_STR},
  {"finish_time", A_STR}, {"t4", A_STR}, {"objective", A_STR}, {"classes", A_STR}, {"priors", A_STR},
  {"evaluator_options", A_STR},
};
_Static_assert(sizeof ATTRS / sizeof ATTRS[0] == MPT_RL_N_ATTRS, "runlog_state.h: MPT_RL_N_ATTRS");

static int attr_index(const char *key) {
  for (int i = 0; i < MPT_RL_N_ATTRS; i++)
    if (strcmp(ATTRS[i].key, key) == 0) return i;
  return -1;
}

int mpt_rl_set_attr(mpt_runlog *log, const char *key, const char *value) {
  int i = attr_index(key);
  if (i < 0) return -1;
  char *v = strdup(value ? value : "");
  if (!v) return -1;
  free(log->attr[i]);
  log->attr[i] = v;
  return 0;
}

int mpt_rl_set_attr_num(mpt_runlog *log, const char *key, const char *fmt, ...) {
  char b[64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  return mpt_rl_set_attr(log, key, b);
}

const char *mpt_rl_get_attr(const mpt_runlog *log, const char *key) {
  int i = attr_index(key);
  return i < 0 ? NULL : log->attr[i];
}

const char *mpt_runlog_meta(mpt_runlog *log, const char *key) { return mpt_rl_get_attr(log, key); }

const char *const *mpt_rl_attr_keys(void) {
  static const char *keys[MPT_RL_N_ATTRS];
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) keys[i] = ATTRS[i].key;
  return keys;
}

void mpt_rl_copy_keys(const char *keys[MPT_RL_COPY_KEYS]) {
  memcpy(keys, mpt_rl_attr_keys(), sizeof(char *) * MPT_RL_N_ATTRS);
  keys[MPT_RL_N_ATTRS] = "parameter_tables_crc";
}

int mpt_rl_attr_is_text(int i) { return ATTRS[i].kind == A_STR; }

int mpt_rl_attrs_write(const mpt_runlog *log, hid_t f) {
  int bad = 0;
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) {
    const char *v = log->attr[i];
    if (!v) continue; /* lost (a recovered log): absent until a run gives it (mpt_runlog_adopt_meta) */
    switch (ATTRS[i].kind) {
      case A_STR: bad |= mpt_h5_attr_write_str(f, ATTRS[i].key, v); break;
      case A_I32: { int32_t x = (int32_t)strtol(v, NULL, 10); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_INT32, &x); break; }
      case A_I64: { long long x = strtoll(v, NULL, 10); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_LLONG, &x); break; }
      case A_U64: { unsigned long long x = strtoull(v, NULL, 10); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_ULLONG, &x); break; }
      case A_F64: { double x = strtod(v, NULL); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_DOUBLE, &x); break; }
    }
  }
  return bad;
}

void mpt_rl_attrs_read(mpt_runlog *log) {
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) log->attr[i] = mpt_h5_attr_read_text(log->file, ATTRS[i].key);
}

int mpt_rl_set_run_attrs(mpt_runlog *log, const mpt_run_meta *meta, int missing_only) {
  char seed[32], budget[32], time_budget[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)meta->seed);
  snprintf(budget, sizeof budget, "%lld", (long long)meta->budget);
  snprintf(time_budget, sizeof time_budget, "%.17g", meta->time_budget);
  const char *kv[][2] = {{"mode", meta->mode ? meta->mode : "tune"}, {"strategy", meta->strategy},
                         {"options", meta->options}, {"evaluator", meta->evaluator}, {"simulate", meta->simulate},
                         {"seed", seed}, {"budget", budget}, {"time_budget", time_budget},
                         {"command_line", meta->command_line}, {"t4", meta->t4},
                         {"objective", meta->objective && meta->objective[0] ? meta->objective : "time"},
                         {"priors", meta->priors}, {"evaluator_options", meta->evaluator_options}};
  static const char *const replaceable[] = {"strategy", "options", "evaluator_options", "seed", "budget",
                                            "time_budget", "t4", "priors"};
  int bad = 0;
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
    int set = !missing_only || !log->attr[attr_index(kv[i][0])];
    for (size_t r = 0; missing_only == 2 && !set && r < sizeof replaceable / sizeof replaceable[0]; r++)
      set = strcmp(kv[i][0], replaceable[r]) == 0;
    if (set) bad |= mpt_rl_set_attr(log, kv[i][0], kv[i][1]);
  }
  return bad;
}

int mpt_rl_set_log_attrs(mpt_runlog *log, const mpt_space *space, const char *problem_path, const char *problem_text) {
  const mpt_problem *pr = mpt_space_problem(space);
  int bad = mpt_rl_set_attr(log, "mptune_format", MPT_RL_FORMAT_NAME);
  bad |= mpt_rl_set_attr_num(log, "format_version", "%d", MPT_RL_FORMAT_VERSION);
  bad |= mpt_rl_set_attr(log, "mptune_version", MPT_VERSION);
  bad |= mpt_rl_set_attr(log, "problem_path", problem_path ? problem_path : pr->path);
  bad |= mpt_rl_set_attr(log, "problem_name", pr->name);
  bad |= mpt_rl_set_attr(log, "problem_text", problem_text ? problem_text : pr->text);
  bad |= mpt_rl_set_attr_num(log, "space_size", "%lld", (long long)mpt_space_size(space));
  bad |= mpt_rl_set_attr(log, "finished", "0");
  return bad;
}

int mpt_rl_set_finished(mpt_runlog *log, const char *reason, const char *when) {
  return mpt_rl_set_attr(log, "finished", reason ? "1" : "0") || mpt_rl_set_attr(log, "stop_reason", reason) ||
         mpt_rl_set_attr(log, "finish_time", reason ? when : "");
}

void mpt_rl_iso_time(double t, char *buf, size_t cap) {
  time_t s = (time_t)t;
  struct tm tm;
  gmtime_r(&s, &tm);
  char b[32];
  strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf, cap, "%s.%06dZ", b, (int)((t - (double)s) * 1e6));
}
