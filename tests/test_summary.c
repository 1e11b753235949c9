/* tests/test_summary.c: a run log at a glance (jobs/output/summary.c) and its best configuration as a C header
 * (jobs/output/header.c), on logs written through the run-log API: records grouped by the device class of the
 * worker (its session and rank in the device table), each configuration's best record, the default's last
 * record and the speed-ups over it, failures by status with their first distinct reasons, and the header's
 * defines equal to those the evaluators give the kernel (evaluators/kernel_launch.c) for every value type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/kernel_spec.h"
#include "jobs/output/summary.h"
#include "jobs/runlog/runlog.h"
#include "spaces/space.h"
#include "tests/slurp.h"

static char tmpdir[256];

/* string, float, bool and int parameters with a Default each; a C kernel, so that the evaluators' defines
 * for a configuration can be computed (mpt_kspec_launch) */
static const char T1_FMT[] =
    "{\"General\": {\"BenchmarkName\": \"mixed\"}, \"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"method\", \"Type\": \"string\", \"Values\": \"['fast', 'exact', 'x y']\", \"Default\": \"fast\"},"
    "{\"Name\": \"scale\", \"Type\": \"float\", \"Values\": \"[0.5, 1.0, 2.25, 1e-07]\", \"Default\": 1.0},"
    "{\"Name\": \"flag\", \"Type\": \"bool\", \"Values\": \"[True, False]\", \"Default\": true},"
    "{\"Name\": \"n\", \"Type\": \"int\", \"Values\": \"[1, 2, 3]\", \"Default\": 2}], \"Conditions\": []},"
    "\"KernelSpecification\": {\"Language\": \"C\", \"KernelName\": \"k\", \"KernelFile\": \"%s/k.c\","
    " \"LocalSize\": {\"X\": \"1\"}, \"GlobalSize\": {\"X\": \"1\"}, \"ProblemSize\": [4], \"Arguments\": ["
    "{\"Name\": \"out\", \"Type\": \"float\", \"MemoryType\": \"Vector\", \"AccessType\": \"WriteOnly\","
    " \"Size\": \"ProblemSize[0]\", \"FillType\": \"Constant\", \"FillValue\": 0, \"Output\": 1}]}}";

typedef struct world {
  mpt_problem *p;
  mpt_space *s;
  mpt_kernel_spec *ks;
  char text[4096];
} world;

static int setup(void **state) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/mpt_test_summary_XXXXXX");
  if (!mkdtemp(tmpdir)) return -1;
  char path[512];
  snprintf(path, sizeof path, "%s/k.c", tmpdir);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs("void k(float *out) { out[0] = n; }\n", f);
  fclose(f);
  world *w = calloc(1, sizeof *w);
  mpt_error err;
  snprintf(w->text, sizeof w->text, T1_FMT, tmpdir);
  if (mpt_problem_parse(w->text, "mixed.json", &w->p, &err) || mpt_space_build(w->p, &w->s, &err) ||
      mpt_kspec_load(w->p, &w->ks, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  *state = w;
  return 0;
}

static int teardown(void **state) {
  world *w = *state;
  mpt_kspec_free(w->ks);
  mpt_space_free(w->s);
  mpt_problem_free(w->p);
  free(w);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

/* the id of the configuration with these value indices (method, scale, flag, n) */
static int64_t id_of(const world *w, int m, int sc, int fl, int n) {
  int idx[4] = {m, sc, fl, n};
  int64_t id = mpt_space_lookup(w->s, idx);
  assert_true(id >= 0);
  return id;
}

static mpt_device_info device(int rank, const char *vendor, const char *name, const char *arch) {
  mpt_device_info d;
  memset(&d, 0, sizeof d);
  d.rank = rank;
  snprintf(d.host, sizeof d.host, "node%d", rank);
  snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
  snprintf(d.name, sizeof d.name, "%s", name);
  snprintf(d.arch, sizeof d.arch, "%s", arch);
  snprintf(d.evaluator, sizeof d.evaluator, "cuda");
  return d;
}

static void append(mpt_runlog *log, int64_t id, int rank, int status, double objective, const char *reason) {
  mpt_obs o;
  mpt_error err;
  mpt_obs_init(&o, id);
  o.status = status;
  o.rank = rank;
  o.objective = status == MPT_STATUS_OK ? objective : NAN;
  snprintf(o.reason, sizeof o.reason, "%s", reason ? reason : "");
  assert_int_equal(mpt_runlog_append(log, &o, 1, &err), 0);
}

static mpt_runlog *new_log(const world *w, const char *name, int with_problem) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  mpt_run_meta m = {0};
  m.mode = "tune", m.problem_path = "mixed.json", m.problem_text = with_problem ? w->text : ""; /* "": none kept */
  m.strategy = "random", m.evaluator = "cuda", m.budget = 100;
  mpt_runlog *log;
  mpt_error err;
  int rc = mpt_runlog_create(path, w->s, &m, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  return log;
}

static mpt_runlog *reopen(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  mpt_runlog *log;
  mpt_error err;
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  return log;
}

/* Session 0: ranks 1 and 3 on one A100 class, rank 2 on an MI250X, rank 4 on a device whose name reads the
 * same once sanitized but of another architecture; session 1: rank 1 on an MI250X. */
static void write_classes_log(const world *w) {
  mpt_runlog *log = new_log(w, "classes.h5", 1);
  mpt_error err;
  mpt_device_info s0[4] = {device(1, "NVIDIA", "NVIDIA A100-SXM4-80GB", "sm_80"),
                           device(2, "AMD", "AMD Instinct MI250X", "gfx90a"),
                           device(3, "NVIDIA", "NVIDIA A100-SXM4-80GB", "sm_80"),
                           device(4, "NVIDIA", "NVIDIA A100 SXM4 80GB", "sm_90")};
  assert_int_equal(mpt_runlog_set_devices(log, s0, 4, &err), 0);
  int64_t dflt = id_of(w, 0, 1, 0, 1), x = id_of(w, 2, 3, 1, 2), y = id_of(w, 1, 0, 0, 0), z = id_of(w, 0, 2, 1, 0);
  append(log, dflt, 1, MPT_STATUS_OK, 8.0, NULL);
  append(log, x, 1, MPT_STATUS_OK, 3.0, NULL);
  append(log, x, 3, MPT_STATUS_OK, 2.0, NULL); /* the same configuration again, better: it counts */
  mpt_obs o;
  mpt_obs_init(&o, y);
  o.rank = 3, o.objective = 2.5, o.n_times = 4;
  o.times[0] = 2.4, o.times[1] = 2.7, o.times[2] = 2.5, o.times[3] = 2.6;
  assert_int_equal(mpt_runlog_append(log, &o, 1, &err), 0);
  append(log, z, 1, MPT_STATUS_OK, 4.0, NULL);
  append(log, dflt, 3, MPT_STATUS_OK, 5.0, NULL); /* the default's last record counts */
  const char *compile[] = {"  \n\terr A  \nthe rest", "err A\nother lines", "err B", "err C", "err D"};
  for (int i = 0; i < 5; i++) append(log, id_of(w, 1, 1, 1, i % 3), 1, MPT_STATUS_COMPILE_ERROR, 0, compile[i]);
  append(log, id_of(w, 1, 2, 1, 1), 3, MPT_STATUS_OK, NAN, NULL); /* ok without an objective: a failure */
  append(log, id_of(w, 2, 2, 1, 1), 1, MPT_STATUS_CANCELLED, 0, "cancelled: the run stopped");
  append(log, id_of(w, 2, 0, 0, 0), 2, MPT_STATUS_OK, 1.5, NULL);
  append(log, id_of(w, 2, 1, 0, 0), 4, MPT_STATUS_TIMEOUT, 0, "no result after 2 s");
  append(log, id_of(w, 2, 1, 1, 0), 9, MPT_STATUS_OK, 0.5, NULL); /* a rank the device table does not name */
  mpt_runlog_close(log);
  char path[512];
  snprintf(path, sizeof path, "%s/classes.h5", tmpdir);
  assert_int_equal(mpt_runlog_open(path, w->s, &log, &err), 0);
  mpt_device_info s1 = device(1, "AMD", "AMD Instinct MI250X", "gfx90a");
  assert_int_equal(mpt_runlog_set_devices(log, &s1, 1, &err), 0);
  append(log, id_of(w, 0, 0, 0, 2), 1, MPT_STATUS_OK, 1.25, NULL); /* rank 1 in session 1: the MI250X */
  mpt_runlog_close(log);
}

static void test_device_classes(void **state) {
  world *w = *state;
  write_classes_log(w);
  mpt_runlog *log = reopen("classes.h5");
  mpt_summary *s;
  mpt_error err;
  assert_int_equal(mpt_summary_build(log, 2, &s, &err), 0);
  assert_int_equal(s->records, 17);
  assert_int_equal(s->n_devices, 4);
  assert_int_equal(s->n_with_records, 4);
  const mpt_summary_device *a100 = &s->devices[0], *mi = &s->devices[1], *sm90 = &s->devices[2], *unk = &s->devices[3];
  assert_string_equal(a100->name, "NVIDIA A100-SXM4-80GB");
  assert_string_equal(a100->target, "TARGET_NVIDIA_A100_SXM4_80GB");
  assert_string_equal(mi->target, "TARGET_AMD_Instinct_MI250X");
  assert_string_equal(sm90->target, "TARGET_NVIDIA_A100_SXM4_80GB_sm_90"); /* the same name once sanitized */
  assert_string_equal(unk->vendor, "unknown");
  assert_int_equal(a100->workers, 2);
  assert_int_equal(mi->workers, 2); /* rank 2, then rank 1 in session 1 */
  assert_int_equal(sm90->workers, 1);
  /* the A100: x (best 2.0 of two records), y (2.5, with times), z, the default (last record 5.0) */
  assert_int_equal(a100->evaluations, 12);
  assert_int_equal(a100->valid, 6);
  assert_int_equal(a100->failed, 6);
  assert_int_equal(a100->cancelled, 1);
  assert_int_equal(a100->configs, 4);
  assert_int_equal(a100->n_top, 2);
  assert_int_equal(a100->top[0].id, id_of(w, 2, 3, 1, 2));
  assert_true(a100->top[0].objective == 2.0);
  assert_int_equal(a100->top[0].record, 2);
  assert_int_equal(a100->top[0].n_times, 0);
  assert_true(isnan(a100->top[0].median));
  assert_true(a100->top[0].speedup == 2.5);
  assert_int_equal(a100->top[1].id, id_of(w, 1, 0, 0, 0));
  assert_int_equal(a100->top[1].config[0], 1);
  assert_int_equal(a100->top[1].n_times, 4);
  assert_true(fabs(a100->top[1].median - 2.55) < 1e-12);
  assert_true(fabs(a100->top[1].std - sqrt(0.05 / 3)) < 1e-12);
  assert_true(a100->top[1].min == 2.4 && a100->top[1].max == 2.7);
  assert_true(a100->top[1].speedup == 2.0);
  assert_true(a100->default_seen && a100->default_objective == 5.0);
  /* failures: five compile errors with their first three distinct first lines; the ok record without an
   * objective as a runtime error; the cancelled one on its own */
  const mpt_summary_failure *ce = &a100->failures[MPT_STATUS_COMPILE_ERROR];
  assert_int_equal(ce->count, 5);
  assert_int_equal(ce->n_reasons, 3);
  assert_string_equal(ce->reasons[0], "err A");
  assert_string_equal(ce->reasons[1], "err B");
  assert_string_equal(ce->reasons[2], "err C");
  assert_int_equal(a100->failures[MPT_STATUS_RUNTIME_ERROR].count, 1);
  assert_string_equal(a100->failures[MPT_STATUS_RUNTIME_ERROR].reasons[0], "logged as ok without a finite objective");
  assert_int_equal(a100->failures[MPT_STATUS_CANCELLED].count, 1);
  assert_string_equal(a100->failures[MPT_STATUS_CANCELLED].reasons[0], "cancelled: the run stopped");
  /* the MI250X: rank 2 in session 0 and rank 1 in session 1; its default never measured */
  assert_int_equal(mi->evaluations, 2);
  assert_int_equal(mi->n_top, 2);
  assert_true(mi->top[0].objective == 1.25 && mi->top[1].objective == 1.5);
  assert_false(mi->default_seen);
  assert_true(isnan(mi->top[0].speedup));
  assert_int_equal(sm90->n_top, 0);
  assert_int_equal(sm90->failures[MPT_STATUS_TIMEOUT].count, 1);
  assert_int_equal(unk->evaluations, 1);
  assert_true(unk->top[0].objective == 0.5);
  mpt_summary_free(s);
  mpt_runlog_close(log);
}

/* the "#define NAME VALUE" lines of the block after the line `after` in header text h, as "NAME=VALUE" */
static int block_defines(const char *h, const char *after, char out[][256], int max) {
  const char *at = strstr(h, after);
  assert_non_null(at);
  at = strchr(at, '\n') + 1;
  while (*at == '\n') at++;
  int n = 0;
  while (strncmp(at, "#define ", 8) == 0 && n < max) {
    const char *e = strchr(at, '\n'), *sp = strchr(at + 8, ' ');
    snprintf(out[n++], 256, "%.*s=%.*s", (int)(sp - at - 8), at + 8, (int)(e - sp - 1), sp + 1);
    at = e + 1;
  }
  return n;
}

/* the defines of configuration id as the evaluators give them to the kernel: one per parameter first */
static void assert_defines_as_kernel(const world *w, const char *h, const char *after, int64_t id) {
  char got[8][256];
  int idx[4];
  mpt_space_config(w->s, id, idx);
  mpt_launch l;
  mpt_error err;
  assert_int_equal(mpt_kspec_launch(w->ks, idx, &l, &err), 0);
  assert_int_equal(block_defines(h, after, got, 8), 4);
  for (int p = 0; p < 4; p++) assert_string_equal(got[p], l.defines[p]);
  mpt_launch_free(&l);
}

static void test_header_targets(void **state) {
  world *w = *state;
  mpt_runlog *log = reopen("classes.h5"); /* written by test_device_classes */
  mpt_summary *s;
  mpt_error err;
  assert_int_equal(mpt_summary_build(log, 1, &s, &err), 0);
  char path[512];
  snprintf(path, sizeof path, "%s/best.h", tmpdir);
  assert_int_equal(mpt_summary_write_header(s, "classes.h5", path, &err), 0);
  char *h = test_slurp(path, NULL);
  /* one block per class with a valid record, in the device table's order, the first as the default */
  const char *a = strstr(h, "#if defined(TARGET_NVIDIA_A100_SXM4_80GB)\n"),
             *b = strstr(h, "#elif defined(TARGET_AMD_Instinct_MI250X)\n"), *c = strstr(h, "#elif defined(TARGET_unknown_device)\n"),
             *d = strstr(h, "#else /* default: the configuration of NVIDIA A100-SXM4-80GB (sm_80) */\n");
  assert_true(a && b && c && d && a < b && b < c && c < d);
  assert_null(strstr(h, "defined(TARGET_NVIDIA_A100_SXM4_80GB_sm_90)")); /* no valid record there */
  assert_non_null(strstr(h, "#ifndef MPTUNE_BEST_H\n#define MPTUNE_BEST_H\n#ifndef kernel_tuner"));
  assert_non_null(strstr(h, "TARGET_NVIDIA_A100_SXM4_80GB: NVIDIA A100-SXM4-80GB (sm_80): time 2 ms"));
  /* 'x y', 1e-07, False, 3: as the kernel gets them ("x y", "1e-07", "0", "3") */
  assert_non_null(strstr(h, "#define method x y\n#define scale 1e-07\n#define flag 0\n#define n 3\n"));
  assert_defines_as_kernel(w, h, "#if defined(TARGET_NVIDIA_A100_SXM4_80GB)", id_of(w, 2, 3, 1, 2));
  assert_defines_as_kernel(w, h, "#elif defined(TARGET_AMD_Instinct_MI250X)", id_of(w, 0, 0, 0, 2));
  assert_defines_as_kernel(w, h, "#else", id_of(w, 2, 3, 1, 2));
  free(h);
  mpt_summary_free(s);
  mpt_runlog_close(log);
}

/* a log without its problem text: the values come from its parameter tables, defined the same way; no
 * default known, so no speed-up */
static void test_values_from_tables(void **state) {
  world *w = *state;
  mpt_runlog *log = new_log(w, "bare.h5", 0);
  mpt_error err;
  int64_t id = id_of(w, 2, 3, 0, 1);
  append(log, id, 0, MPT_STATUS_OK, 1.0, NULL);
  mpt_runlog_close(log);
  log = reopen("bare.h5");
  mpt_summary *s;
  assert_int_equal(mpt_summary_build(log, 10, &s, &err), 0);
  assert_null(s->default_config);
  assert_int_equal(s->n_devices, 1); /* no device table: one unknown device */
  assert_true(isnan(s->devices[0].top[0].speedup));
  char path[512];
  snprintf(path, sizeof path, "%s/bare.h", tmpdir);
  assert_int_equal(mpt_summary_write_header(s, "bare.h5", path, &err), 0);
  char *h = test_slurp(path, NULL);
  assert_defines_as_kernel(w, h, "#ifndef kernel_tuner", id);
  free(h);
  mpt_summary_free(s);
  mpt_runlog_close(log);
}

static void test_header_without_valid(void **state) {
  world *w = *state;
  mpt_runlog *log = new_log(w, "failed.h5", 1);
  mpt_error err;
  append(log, id_of(w, 0, 0, 0, 0), 0, MPT_STATUS_COMPILE_ERROR, 0, "error: no");
  append(log, id_of(w, 0, 0, 0, 1), 0, MPT_STATUS_CRASH, 0, "killed by SIGSEGV");
  mpt_runlog_close(log);
  log = reopen("failed.h5");
  mpt_summary *s;
  assert_int_equal(mpt_summary_build(log, 10, &s, &err), 0);
  assert_int_equal(s->devices[0].n_top, 0);
  char path[512];
  snprintf(path, sizeof path, "%s/none.h", tmpdir);
  assert_int_equal(mpt_summary_write_header(s, "failed.h5", path, &err), MPT_ERR_STATE);
  assert_non_null(strstr(err.msg, "failed.h5 has no valid observation (2 evaluations, none valid)"));
  assert_int_equal(access(path, F_OK), -1); /* nothing written */
  mpt_summary_free(s);
  mpt_runlog_close(log);
}

static void test_reason_line(void **state) {
  (void)state;
  char b[MPT_SUMMARY_REASON_LEN + 1], long_reason[400];
  mpt_summary_reason_line("\n  first line \t\nsecond", b, sizeof b);
  assert_string_equal(b, "first line");
  mpt_summary_reason_line("", b, sizeof b);
  assert_string_equal(b, "");
  /* 196 bytes, then a 3-byte character across the cut: cut before it, "..." added */
  memset(long_reason, 'a', 196);
  strcpy(long_reason + 196, "\xe2\x82\xac and more text");
  mpt_summary_reason_line(long_reason, b, sizeof b);
  assert_int_equal(strlen(b), 196 + 3);
  assert_string_equal(b + 196, "...");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_device_classes),
    cmocka_unit_test(test_header_targets),
    cmocka_unit_test(test_values_from_tables),
    cmocka_unit_test(test_header_without_valid),
    cmocka_unit_test(test_reason_line),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
