/* jobs/output/header.c: `mptune export --header`: the best configuration of a run log as a C header of
 * preprocessor defines, as Kernel Tuner's store_results/create_device_targets write them: `#define NAME VALUE`
 * per tuning parameter (values as the evaluators define them for the kernel), under a header guard and
 * `#ifndef kernel_tuner` (mptune and Kernel Tuner define kernel_tuner while they tune: the tuned values win
 * then); with several device classes one `#if defined(TARGET_<device>)`/`#elif` block each and the first
 * class's configuration under `#else`. Written whole or not at all (jobs/output/outfile.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "jobs/output/outfile.h"
#include "jobs/output/summary.h"

/* text inside a C comment: line breaks as spaces, and no comment end */
static void put_comment_text(FILE *f, const char *text) {
  for (const char *c = text; *c; c++) {
    if (*c == '\n' || *c == '\r') fputc(' ', f);
    else if (*c == '*' && c[1] == '/') fputs("* ", f);
    else fputc(*c, f);
  }
}

/* "vendor name (arch)", the vendor left out where the name starts with it */
static void put_device(FILE *f, const mpt_summary_device *d) {
  size_t vl = strlen(d->vendor);
  if (strcmp(d->vendor, "unknown") != 0 && !(strncmp(d->name, d->vendor, vl) == 0 && d->name[vl] == ' ')) {
    put_comment_text(f, d->vendor);
    fputc(' ', f);
  }
  put_comment_text(f, d->name);
  if (d->arch[0]) {
    fputs(" (", f);
    put_comment_text(f, d->arch);
    fputc(')', f);
  }
}

/* "the best of N valid evaluations (M in all)" for class d */
static void put_best_of(FILE *f, const mpt_summary *s, const mpt_summary_device *d) {
  mpt_summary_objective o = mpt_summary_objective_of(s->log);
  double v = o.maximized ? -d->top[0].objective : d->top[0].objective; /* as measured */
  fprintf(f, "%s %.6g%s%s, the best of %lld valid evaluation%s (%lld in all)", o.name, v, o.unit[0] ? " " : "",
          o.unit, (long long)d->valid, d->valid == 1 ? "" : "s", (long long)d->evaluations);
}

/* 1 when name can be #defined: a C identifier (UTF-8 letters allowed, as GCC and Clang take them) */
static int define_name_ok(const char *name) {
  if (!name[0] || isdigit((unsigned char)name[0])) return 0;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    if (!isalnum(*c) && *c != '_' && *c < 0x80) return 0;
  return 1;
}

/* every parameter and its value in the best configuration of d, checked before anything is written */
static int check_defines(const mpt_summary *s, const mpt_summary_device *d, mpt_error *err) {
  for (int p = 0; p < s->n_params; p++) {
    char v[1024];
    if (!define_name_ok(s->names[p]))
      return mpt_error_set(err, MPT_ERR_VALUE, "parameter '%s' is no C identifier: it can not be #defined", s->names[p]);
    if (mpt_summary_value_define(s, p, d->top[0].config[p], v, sizeof v) >= (int)sizeof v || strpbrk(v, "\r\n"))
      return mpt_error_set(err, MPT_ERR_VALUE, "the value of parameter '%s' in the best configuration %s: it can not "
                           "be #defined", s->names[p], strpbrk(v, "\r\n") ? "holds a line break" : "is too long");
  }
  return 0;
}

static void put_defines(FILE *f, const mpt_summary *s, const mpt_summary_device *d) {
  for (int p = 0; p < s->n_params; p++) {
    char v[1024];
    mpt_summary_value_define(s, p, d->top[0].config[p], v, sizeof v);
    fprintf(f, "#define %s %s\n", s->names[p], v);
  }
}

/* MPTUNE_ and the upper-cased letters and digits of path's file name: the header guard */
static void guard_name(const char *path, char *out, size_t cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = (size_t)snprintf(out, cap, "MPTUNE_"), start = n;
  for (const unsigned char *c = (const unsigned char *)base; *c && n + 2 < cap; c++) {
    if (isalnum(*c) && *c < 0x80) out[n++] = (char)toupper(*c);
    else if (n > start && out[n - 1] != '_') out[n++] = '_';
  }
  out[n] = '\0';
  if (n == start) snprintf(out, cap, "MPTUNE_BEST_CONFIGURATION_H");
}

static void put_intro(FILE *f, const mpt_summary *s, const char *log_path, const char *path, int n_with) {
  const char *name = mpt_runlog_meta(s->log, "problem_name"), *ppath = mpt_runlog_meta(s->log, "problem_path");
  const char *mode = mpt_runlog_meta(s->log, "mode");
  fputs("/* ", f);
  put_comment_text(f, mpt_outfile_is_stdout(path) ? "header" : path);
  fprintf(f, ": the best configuration of the %s run logged in ", mode && !strcmp(mode, "collect") ? "collect" : "tuning");
  put_comment_text(f, log_path);
  fputs(", written by mptune export --header\n * problem: ", f);
  put_comment_text(f, name && name[0] ? name : "(unknown)");
  if (ppath && ppath[0]) {
    fputs(" (", f);
    put_comment_text(f, ppath);
    fputc(')', f);
  }
  if (n_with == 1) {
    for (int c = 0; c < s->n_devices; c++)
      if (s->devices[c].n_top > 0) {
        fputs("\n * device: ", f);
        put_device(f, &s->devices[c]);
        fputs("\n * objective: ", f);
        put_best_of(f, s, &s->devices[c]);
      }
    fprintf(f, "; %s is better\n */\n", mpt_summary_objective_of(s->log).maximized ? "higher" : "lower");
    return;
  }
  mpt_summary_objective ob = mpt_summary_objective_of(s->log);
  fprintf(f, "\n * objective: %s%s%s, %s is better\n * devices (compile with -D and one of these macros to pick"
             " its configuration; without one, the first's):\n", ob.name, ob.unit[0] ? " in " : "", ob.unit,
          ob.maximized ? "higher" : "lower");
  for (int c = 0; c < s->n_devices; c++) {
    const mpt_summary_device *d = &s->devices[c];
    if (d->n_top == 0) continue;
    fprintf(f, " *   %s: ", d->target);
    put_device(f, d);
    fputs(": ", f);
    put_best_of(f, s, d);
    fputc('\n', f);
  }
  fputs(" */\n", f);
}

static void put_targets(FILE *f, const mpt_summary *s) {
  const mpt_summary_device *first = NULL;
  for (int c = 0; c < s->n_devices; c++) {
    const mpt_summary_device *d = &s->devices[c];
    if (d->n_top == 0) continue;
    fprintf(f, "#%s defined(%s)\n", first ? "elif" : "if", d->target);
    put_defines(f, s, d);
    if (!first) first = d;
  }
  fputs("#else /* default: the configuration of ", f);
  put_device(f, first);
  fputs(" */\n", f);
  put_defines(f, s, first);
  fputs("#endif /* device targets */\n", f);
}

int mpt_summary_write_header(const mpt_summary *s, const char *log_path, const char *path, mpt_error *err) {
  int n_with = 0, rc = 0;
  int64_t records = 0;
  for (int c = 0; c < s->n_devices; c++) {
    n_with += s->devices[c].n_top > 0;
    records += s->devices[c].evaluations;
    if (s->devices[c].n_top > 0 && (rc = check_defines(s, &s->devices[c], err)) < 0)
      return mpt_error_prefix(err, "%s", log_path);
  }
  if (n_with == 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s has no valid observation (%lld evaluation%s, none valid): there is no "
                         "best configuration to write", log_path, (long long)records, records == 1 ? "" : "s");
  char guard[200];
  guard_name(path, guard, sizeof guard);
  FILE *f = mpt_outfile_open(path, err);
  if (!f) return err->code;
  put_intro(f, s, log_path, path, n_with);
  fprintf(f, "#ifndef %s\n#define %s\n#ifndef kernel_tuner /* only when not tuning: a tuner defines the parameters "
             "itself */\n\n", guard, guard);
  if (n_with == 1) {
    for (int c = 0; c < s->n_devices; c++)
      if (s->devices[c].n_top > 0) put_defines(f, s, &s->devices[c]);
  } else {
    put_targets(f, s);
  }
  fprintf(f, "\n#endif /* kernel_tuner */\n#endif /* %s */\n", guard);
  if (ferror(f)) rc = mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  int closed = mpt_outfile_close(f, path, rc == 0, err);
  return rc < 0 ? rc : closed;
}
