/* tests/test_runlog.c: the HDF5 run log (jobs/runlog/runlog.c) and the T4 export (jobs/output/export_t4.c): round trip
 * of every field, metadata, devices, finish/resume rules, clear messages for files that are not logs or
 * belong to another problem, SIGKILL at random moments during appends (the file opens and holds every
 * record acknowledged before the kill, and the run resumes), and export -> mpt_replay_load round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <hdf5.h>
#include <zlib.h>
#include "evaluators/evaluator.h"
#include "evaluators/replay/replay.h"
#include "jobs/runlog/runlog.h"
#include "jobs/runlog/runlog_records.h"
#include "spaces/sys/rng.h"

#include "tests/conv_fixture.h"
#include "tests/slurp.h"

static int setup(void **state) { return conv_fixture_setup(state, "runlog"); }
static int teardown(void **state) { return conv_fixture_teardown(state); }

static mpt_run_meta test_meta(const mpt_problem *p) {
  mpt_run_meta m = {0};
  m.mode = "tune";
  m.problem_path = p->path;
  m.problem_text = p->text;
  m.strategy = "random";
  m.options = "popsize=20,mutation=0.1";
  m.evaluator = "sim";
  m.simulate = "some_T4.json.gz";
  m.seed = 12345678901234ULL;
  m.budget = 220;
  m.time_budget = 3600;
  m.command_line = "mptune tune convolution_milo.json --strategy random --budget 220";
  return m;
}

/* a new log NAME in the scratch directory (its path in path), with test_meta's metadata, open */
static mpt_runlog *create_test_log(const fixture *f, const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s", f->tmpdir, name);
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log = NULL;
  mpt_error err;
  int rc = mpt_runlog_create(path, f->s, &m, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  return log;
}

/* a deterministic observation for id, so any record can be checked after a crash */
static void synth_obs(mpt_obs *o, int64_t id) {
  mpt_obs_init(o, id);
  o->status = id % 7 == 3 ? MPT_STATUS_COMPILE_ERROR : MPT_STATUS_OK;
  o->objective = o->status == MPT_STATUS_OK ? 1.0 + 0.001 * (double)id : NAN;
  o->n_times = (int)(id % 5);
  for (int i = 0; i < o->n_times; i++) o->times[i] = (double)id + 0.25 * i;
  o->median = o->n_times ? o->times[o->n_times / 2] : NAN;
  o->compile_ms = 10.0 + (double)id;
  o->benchmark_ms = 2.0 * (double)id;
  o->framework_ms = 0.5;
  o->rank = 1 + (int)(id % 4);
  o->device = (int)(id % 2);
  o->t_start = 1.7e9 + (double)id;
  o->t_end = o->t_start + 0.125;
  if (o->status == MPT_STATUS_OK) o->reason[0] = '\0';
  else snprintf(o->reason, sizeof o->reason, "error: variant %lld does not compile", (long long)id);
}

static void assert_obs_equal(const mpt_obs *a, const mpt_obs *b) {
  assert_int_equal(a->id, b->id);
  assert_int_equal(a->status, b->status);
  assert_int_equal(a->rank, b->rank);
  assert_int_equal(a->device, b->device);
  assert_int_equal(a->n_times, b->n_times);
  assert_true((isnan(a->objective) && isnan(b->objective)) || a->objective == b->objective);
  assert_true((isnan(a->median) && isnan(b->median)) || a->median == b->median);
  for (int i = 0; i < a->n_times; i++) assert_true(a->times[i] == b->times[i]);
  assert_true(a->compile_ms == b->compile_ms);
  assert_true(a->benchmark_ms == b->benchmark_ms);
  assert_true(a->framework_ms == b->framework_ms);
  assert_true(a->t_start == b->t_start);
  assert_true(a->t_end == b->t_end);
  assert_int_equal(a->device_class, b->device_class);
  assert_int_equal(a->cross_from, b->cross_from);
  assert_string_equal(a->reason, b->reason);
}

/* the log's records are exactly want[0..n), in order */
static void assert_records(mpt_runlog *log, const mpt_obs *want, int64_t n) {
  mpt_obs *got;
  int64_t ng;
  mpt_error err;
  assert_int_equal(mpt_runlog_read(log, &got, &ng, &err), 0);
  assert_int_equal(ng, n);
  for (int64_t i = 0; i < n; i++) assert_obs_equal(&got[i], &want[i]);
  free(got);
}

static void test_create_append_read(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/run.h5", f->tmpdir);
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  mpt_error err;
  int rc = mpt_runlog_create(path, f->s, &m, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_device_info devs[2];
  memset(devs, 0, sizeof devs);
  for (int i = 0; i < 2; i++) {
    devs[i].rank = i + 1;
    devs[i].index = i;
    snprintf(devs[i].host, sizeof devs[i].host, "node%d", i);
    snprintf(devs[i].vendor, sizeof devs[i].vendor, "replay");
    snprintf(devs[i].name, sizeof devs[i].name, "NVIDIA A100-PCIE-40GB");
    snprintf(devs[i].evaluator, sizeof devs[i].evaluator, "sim");
  }
  assert_int_equal(mpt_runlog_set_devices(log, devs, 2, &err), 0);
  /* ids in a shuffled order, appended in batches of 1..5 */
  int64_t n = 300;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)mpt_space_size(f->s));
  for (int64_t i = 0; i < mpt_space_size(f->s); i++) ids[i] = i;
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  mpt_rng_shuffle(&rng, ids, mpt_space_size(f->s));
  mpt_obs *want = calloc((size_t)n, sizeof(mpt_obs));
  for (int64_t i = 0; i < n; i++) {
    synth_obs(&want[i], ids[i]);
    want[i].device_class = (int)(i % 3); /* the class table index each record keeps */
    want[i].cross_from = i % 11 == 5 ? 1 + (int)(i % 2) : 0; /* now and then a portability evaluation */
  }
  want[5].status = MPT_STATUS_CANCELLED;
  for (int64_t i = 0; i < n;) {
    int k = 1 + (int)(i % 5);
    if (i + k > n) k = (int)(n - i);
    assert_int_equal(mpt_runlog_append(log, want + i, k, &err), 0);
    i += k;
    assert_int_equal(mpt_runlog_count(log), i);
  }
  assert_records(log, want, n);
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "random");
  assert_false(mpt_runlog_is_finished(log));
  mpt_runlog_close(log);

  /* read-only: the same records and metadata */
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), n);
  assert_records(log, want, n);
  assert_string_equal(mpt_runlog_meta(log, "mode"), "tune");
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "random");
  assert_string_equal(mpt_runlog_meta(log, "options"), "popsize=20,mutation=0.1");
  assert_string_equal(mpt_runlog_meta(log, "evaluator"), "sim");
  assert_string_equal(mpt_runlog_meta(log, "simulate"), "some_T4.json.gz");
  assert_string_equal(mpt_runlog_meta(log, "seed"), "12345678901234");
  assert_string_equal(mpt_runlog_meta(log, "budget"), "220");
  assert_string_equal(mpt_runlog_meta(log, "mptune_version"), MPT_VERSION);
  assert_string_equal(mpt_runlog_meta(log, "problem_text"), f->p->text);
  assert_string_equal(mpt_runlog_meta(log, "command_line"), m.command_line);
  assert_non_null(mpt_runlog_meta(log, "start_time"));
  assert_null(mpt_runlog_meta(log, "no_such_key"));
  mpt_runlog_close(log);
  free(want);
  free(ids);
  /* nothing left open in HDF5 */
  assert_int_equal(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

/* a run of two device classes finished by its budget (per class: 6 each, and two portability evaluations) is
 * extended by a budget larger than one class's measurements, not than the records */
static void test_finish_classes(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/classes.h5", f->tmpdir);
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  mpt_error err;
  mpt_obs o[14];
  for (int i = 0; i < 14; i++) {
    synth_obs(&o[i], 200 + i);
    o[i].device_class = i % 2;
    o[i].cross_from = i >= 12 ? 1 + (i + 1) % 2 : 0; /* the other class's best */
  }
  assert_int_equal(mpt_runlog_create(path, f->s, &m, &log, &err), 0);
  assert_int_equal(mpt_runlog_set_classes(log, "A\treplay\ta.json\treplay\nB\treplay\tb.json\treplay\n", &err), 0);
  assert_int_equal(mpt_runlog_append(log, o, 14, &err), 0);
  assert_int_equal(mpt_runlog_finish(log, "budget", &err), 0);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_measured(log), 14);
  assert_int_equal(mpt_runlog_measured_class(log), 6);
  assert_string_equal(mpt_runlog_meta(log, "classes"), "A\treplay\ta.json\treplay\nB\treplay\tb.json\treplay\n");
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_to(path, f->s, 6, &log, &err), MPT_ERR_STATE);
  assert_non_null(strstr(err.msg, "with 6 evaluations; a budget of 6 does not extend it"));
  assert_int_equal(mpt_runlog_open_to(path, f->s, 7, &log, &err), 0);
  assert_true(mpt_runlog_extended(log));
  mpt_runlog_close(log);
}

static void test_finish_and_resume(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/resume.h5", f->tmpdir);
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  mpt_error err;
  mpt_obs o[20];
  for (int i = 0; i < 20; i++) synth_obs(&o[i], 100 + i);
  assert_int_equal(mpt_runlog_create(path, f->s, &m, &log, &err), 0);
  assert_int_equal(mpt_runlog_append(log, o, 10, &err), 0);
  assert_int_equal(mpt_runlog_finish(log, "signal", &err), 0); /* stopped, not finished */
  assert_false(mpt_runlog_is_finished(log));
  mpt_runlog_close(log);

  int rc = mpt_runlog_open(path, f->s, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_runlog_count(log), 10);
  assert_int_equal(mpt_runlog_append(log, o + 10, 10, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 20);
  assert_int_equal(mpt_runlog_finish(log, "budget", &err), 0);
  assert_true(mpt_runlog_is_finished(log));
  mpt_runlog_close(log);

  /* a finished run can not be resumed */
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), MPT_ERR_STATE);
  char want[600];
  snprintf(want, sizeof want, "%s is finished (budget reached); nothing to resume (a larger budget extends it)", path);
  assert_string_equal(err.msg, want);
  assert_int_equal(mpt_runlog_open_to(path, f->s, 20, &log, &err), MPT_ERR_STATE); /* no more than it holds */
  snprintf(want, sizeof want, "%s is finished (budget reached) with 20 evaluations; a budget of 20 does not extend it", path);
  assert_string_equal(err.msg, want);
  /* but it can be read */
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_true(mpt_runlog_is_finished(log));
  assert_int_equal(mpt_runlog_measured_class(log), 20); /* one class */
  assert_string_equal(mpt_runlog_meta(log, "stop_reason"), "budget");
  assert_records(log, o, 20);
  mpt_runlog_close(log);
  /* a larger budget reopens it: not finished until it is finished again, its records kept */
  mpt_obs more[5];
  for (int i = 0; i < 5; i++) synth_obs(&more[i], 120 + i);
  assert_int_equal(mpt_runlog_open_to(path, f->s, 25, &log, &err), 0);
  assert_true(mpt_runlog_extended(log));
  assert_false(mpt_runlog_is_finished(log));
  assert_string_equal(mpt_runlog_meta(log, "stop_reason"), "");
  assert_int_equal(mpt_runlog_append(log, more, 5, &err), 0);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_false(mpt_runlog_is_finished(log)); /* closed before its new budget: resumable */
  mpt_obs all[25];
  memcpy(all, o, sizeof o);
  memcpy(all + 20, more, sizeof more);
  assert_records(log, all, 25);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  assert_false(mpt_runlog_extended(log));
  assert_int_equal(mpt_runlog_finish(log, "budget", &err), 0);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_to(path, f->s, 25, &log, &err), MPT_ERR_STATE);
}

/* a log named through a symbolic link is written at the link's target: creating and resuming it (both
 * rewrite the file and rename it into place) leave the link a link */
static void test_log_through_link(void **state) {
  fixture *f = *state;
  char target[400], link_path[400];
  snprintf(target, sizeof target, "%s/linked_target.h5", f->tmpdir);
  snprintf(link_path, sizeof link_path, "%s/linked.h5", f->tmpdir);
  assert_int_equal(symlink("linked_target.h5", link_path), 0); /* dangling until the log is created */
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  mpt_error err;
  mpt_obs o[12];
  for (int i = 0; i < 12; i++) synth_obs(&o[i], 300 + i);
  assert_int_equal(mpt_runlog_create(link_path, f->s, &m, &log, &err), 0);
  assert_int_equal(mpt_runlog_append(log, o, 6, &err), 0);
  assert_int_equal(mpt_runlog_finish(log, "signal", &err), 0);
  mpt_runlog_close(log);
  struct stat sb;
  assert_int_equal(lstat(link_path, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  int rc = mpt_runlog_open(link_path, f->s, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_runlog_append(log, o + 6, 6, &err), 0);
  mpt_runlog_close(log);
  assert_int_equal(lstat(link_path, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  assert_int_equal(mpt_runlog_open_readonly(target, &log, &err), 0);
  assert_records(log, o, 12);
  mpt_runlog_close(log);
}

static void test_not_a_log(void **state) {
  fixture *f = *state;
  mpt_runlog *log = NULL;
  mpt_error err;
  char path[400], want[600];
  /* missing */
  snprintf(path, sizeof path, "%s/missing.h5", f->tmpdir);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, path));
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), MPT_ERR_IO);
  /* a text file */
  snprintf(path, sizeof path, "%s/text.h5", f->tmpdir);
  FILE *fp = fopen(path, "w");
  fputs("hello\n", fp);
  fclose(fp);
  snprintf(want, sizeof want, "%s is not an mptune run log", path);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), MPT_ERR_STATE);
  assert_string_equal(err.msg, want);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), MPT_ERR_STATE);
  assert_string_equal(err.msg, want);
  /* an HDF5 file that is not ours */
  snprintf(path, sizeof path, "%s/other.h5", f->tmpdir);
  hid_t h = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(h >= 0);
  hid_t g = H5Gcreate2(h, "evaluations", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(g);
  H5Fclose(h);
  snprintf(want, sizeof want, "%s is not an mptune run log", path);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), MPT_ERR_STATE);
  assert_string_equal(err.msg, want);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), MPT_ERR_STATE);
  assert_string_equal(err.msg, want);
  char t4[400];
  snprintf(t4, sizeof t4, "%s/other_T4.json", f->tmpdir);
  assert_int_equal(mpt_runlog_export_t4(path, t4, &err), MPT_ERR_STATE);
  assert_string_equal(err.msg, want);
  assert_int_equal(access(t4, F_OK), -1);
  assert_null(log);
  /* a log in a directory that does not exist: the system's reason */
  snprintf(path, sizeof path, "%s/no/such/dir/run.h5", f->tmpdir);
  mpt_run_meta m = test_meta(f->p);
  assert_int_equal(mpt_runlog_create(path, f->s, &m, &log, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "no/such/dir"));
  assert_non_null(strstr(err.msg, "No such file or directory"));
  /* a pipe (or a device) is neither read (the reader would block) nor replaced by a new log */
  snprintf(path, sizeof path, "%s/pipe.h5", f->tmpdir);
  assert_int_equal(mkfifo(path, 0644), 0);
  snprintf(want, sizeof want, "run log %s is not a regular file", path);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), MPT_ERR_IO);
  assert_string_equal(err.msg, want);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), MPT_ERR_IO);
  assert_string_equal(err.msg, want);
  assert_int_equal(mpt_runlog_create(path, f->s, &m, &log, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "not a regular file"));
  struct stat sb;
  assert_true(stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode));
}

static void test_other_problem(void **state) {
  fixture *f = *state;
  char path[400], t1[1200];
  mpt_runlog *log = create_test_log(f, "conv.h5", path, sizeof path);
  mpt_error err;
  mpt_runlog_close(log);
  snprintf(t1, sizeof t1, "%s/t1/dedispersion_milo.json", f->dir);
  mpt_problem *p2;
  mpt_space *s2;
  assert_int_equal(mpt_problem_load(t1, &p2, &err), 0);
  assert_int_equal(mpt_space_build(p2, &s2, &err), 0);
  assert_int_equal(mpt_runlog_open(path, s2, &log, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "belongs to another problem"));
  assert_non_null(strstr(err.msg, "block_size_x")); /* names a parameter */
  mpt_space_free(s2);
  mpt_problem_free(p2);
}

/* a small problem, a in 1..4 and b in 1..2, with the condition cond, and its space */
static void small_problem(const char *cond, mpt_problem **p, mpt_space **s) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": "
           "\"[1, 2, 3, 4]\"}, {\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], "
           "\"Conditions\": [{\"Expression\": \"%s\"}]}}", cond);
  mpt_error err;
  assert_int_equal(mpt_problem_parse(text, "small.json", p, &err), 0);
  assert_int_equal(mpt_space_build(*p, s, &err), 0);
}

/* the same parameters but other Conditions: the ids of the log name other configurations, so a resume is
 * refused, whether the valid set has another size or the same size; the same set written otherwise is
 * fine */
static void test_other_conditions(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/conds.h5", f->tmpdir);
  mpt_problem *p;
  mpt_space *s;
  small_problem("a != 4", &p, &s); /* 6 valid */
  mpt_run_meta m = test_meta(p);
  mpt_runlog *log;
  mpt_error err;
  assert_int_equal(mpt_runlog_create(path, s, &m, &log, &err), 0);
  mpt_obs o[6];
  for (int i = 0; i < 6; i++) synth_obs(&o[i], 5 - i);
  assert_int_equal(mpt_runlog_append(log, o, 6, &err), 0);
  assert_int_equal(mpt_runlog_finish(log, "signal", &err), 0);
  mpt_runlog_close(log);
  static const struct { const char *cond; const char *msg; } cases[] = {
    {"a != 4 and b != 2", "its space has 6 valid configurations, this problem's 3"},
    {"a != 1", "its record 0 is configuration 5, a=3,b=2, but configuration 5 of this problem is a=4,b=2"},
  };
  for (int k = 0; k < 2; k++) {
    mpt_problem *p2;
    mpt_space *s2;
    small_problem(cases[k].cond, &p2, &s2);
    assert_int_equal(mpt_runlog_open(path, s2, &log, &err), MPT_ERR_VALUE);
    if (!strstr(err.msg, cases[k].msg)) fprintf(stderr, "expected '%s' in %s\n", cases[k].msg, err.msg);
    assert_non_null(strstr(err.msg, cases[k].msg));
    mpt_space_free(s2);
    mpt_problem_free(p2);
  }
  mpt_problem *p3;
  mpt_space *s3;
  small_problem("not a == 4", &p3, &s3);
  int rc = mpt_runlog_open(path, s3, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_runlog_count(log), 6);
  mpt_runlog_close(log);
  mpt_space_free(s3);
  mpt_problem_free(p3);
  mpt_space_free(s);
  mpt_problem_free(p);
}

/* opens the log read-only (as a reader beside a writer, or after a kill) and checks that it holds at
 * least min records, record i the synthetic one of id i % size; returns how many it holds */
static int64_t check_synth_log(const char *path, int64_t min, int64_t size, const char *when, int round) {
  mpt_error err;
  mpt_runlog *r;
  int rc = mpt_runlog_open_readonly(path, &r, &err);
  if (rc) fprintf(stderr, "%s, round %d: %s\n", when, round, err.msg);
  assert_int_equal(rc, 0);
  mpt_obs *got;
  int64_t n;
  assert_int_equal(mpt_runlog_read(r, &got, &n, &err), 0);
  assert_true(n >= min);
  for (int64_t i = 0; i < n; i++) {
    mpt_obs want;
    synth_obs(&want, i % size);
    assert_obs_equal(&got[i], &want);
  }
  free(got);
  mpt_runlog_close(r);
  return n;
}

/* forks a child with a pipe from it to the parent: the child writes fds[1] (fds[0] closed), the parent
 * reads fds[0] once it has closed fds[1] */
static pid_t fork_with_pipe(int fds[2]) {
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) close(fds[0]);
  return pid;
}

/* in a child: what another process may do with a log `path` that this test's process writes: read it,
 * but neither resume it nor create a new log over it (both refused, naming the writer's pid); exit 0 */
static int second_writer_child(const fixture *f, const char *path, pid_t writer) {
  mpt_runlog *log;
  mpt_error err = {0};
  char pid[32];
  snprintf(pid, sizeof pid, "pid %ld on ", (long)writer);
  if (mpt_runlog_open(path, f->s, &log, &err) != MPT_ERR_STATE || !strstr(err.msg, "being written by another mptune") ||
      !strstr(err.msg, pid) || !strstr(err.msg, path))
    return 1;
  mpt_run_meta m = test_meta(f->p);
  if (mpt_runlog_create(path, f->s, &m, &log, &err) != MPT_ERR_STATE || !strstr(err.msg, pid)) return 2;
  if (mpt_runlog_open_readonly(path, &log, &err) != 0 || mpt_runlog_count(log) != 3) return 3;
  mpt_runlog_close(log);
  return 0;
}

/* One writer per log: while a log is written (created or resumed), another process can read it but not
 * resume it or replace it (--force): each would rename its own copy over the log, and the other's
 * appends would go to a file no longer there. The lock file names the writer and goes with it. */
static void test_one_writer(void **state) {
  fixture *f = *state;
  char path[400], lock[420];
  mpt_runlog *log = create_test_log(f, "locked.h5", path, sizeof path);
  snprintf(lock, sizeof lock, "%s.lock", path);
  mpt_error err;
  mpt_obs o[3];
  for (int i = 0; i < 3; i++) synth_obs(&o[i], 5 * i);
  assert_int_equal(mpt_runlog_append(log, o, 3, &err), 0);
  assert_int_equal(access(lock, F_OK), 0);
  for (int round = 0; round < 2; round++) { /* created, then resumed */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(second_writer_child(f, path, getppid()));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    mpt_runlog *again;
    assert_int_equal(mpt_runlog_open(path, f->s, &again, &err), MPT_ERR_STATE); /* a second open in this process too */
    mpt_runlog_close(log);
    assert_int_equal(access(lock, F_OK), -1); /* released and removed */
    assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
    assert_int_equal(access(lock, F_OK), 0);
  }
  mpt_runlog_close(log);
  /* the lock file is 0666 less the umask: with umask 002 (a shared project directory) the group's other
   * writers can open it and are refused while it is held; before, it was 0644 and their open failed */
  mode_t old_mask = umask(002);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  umask(old_mask);
  struct stat sb;
  assert_int_equal(stat(lock, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0664);
  mpt_runlog_close(log);
  /* a lock file that cannot be opened in a writable directory (here a directory of that name; another
   * user's lock file in a shared one) refuses the log: it was written unlocked before */
  assert_int_equal(mkdir(lock, 0755), 0);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), MPT_ERR_STATE);
  assert_non_null(strstr(err.msg, "cannot open its lock file"));
  assert_non_null(strstr(err.msg, lock));
  assert_int_equal(rmdir(lock), 0);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  mpt_runlog_close(log);
}

/* SIGKILL at random moments while a child appends: the file always opens, holds every record the child
 * was told was appended (in order, intact), and the next child resumes it. */
static void test_sigkill(void **state) {
  fixture *f = *state;
  char path[400];
  mpt_runlog *log = create_test_log(f, "kill.h5", path, sizeof path);
  mpt_error err;
  mpt_runlog_close(log);
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  int64_t size = mpt_space_size(f->s), have = 0, acked_all = 0;
  int rounds = 30;
  for (int round = 0; round < rounds; round++) {
    int fds[2];
    pid_t pid = fork_with_pipe(fds);
    if (pid == 0) {
      mpt_runlog *w;
      mpt_error e;
      if (mpt_runlog_open(path, f->s, &w, &e) < 0) {
        fprintf(stderr, "child: %s\n", e.msg);
        _exit(3);
      }
      int64_t c = mpt_runlog_count(w);
      unsigned seed = (unsigned)getpid();
      for (;;) {
        mpt_obs o[3];
        int k = 1 + (int)(rand_r(&seed) % 3);
        for (int i = 0; i < k; i++) synth_obs(&o[i], (c + i) % size);
        if (mpt_runlog_append(w, o, k, &e) < 0) {
          fprintf(stderr, "child: %s\n", e.msg);
          _exit(4);
        }
        c += k;
        if (write(fds[1], &c, sizeof c) != sizeof c) _exit(5);
      }
    }
    close(fds[1]);
    /* let it run 2..60 ms, then kill it */
    struct timespec ts = {0, (long)(2 + rand() % 58) * 1000000L};
    nanosleep(&ts, NULL);
    if (round % 2) {
      /* a reader while the writer appends: no lock keeps it out, and what it sees is intact */
      check_synth_log(path, have, size, "live read", round);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status)); /* it was still appending, not failed */
    /* acknowledged: appends that returned, in this round or an earlier one (complete records whose append
     * did not return may be there too, beyond /count) */
    int64_t acked = acked_all, v;
    while (read(fds[0], &v, sizeof v) == sizeof v) acked = v;
    acked_all = acked;
    close(fds[0]);
    /* the file opens read-only and holds every acknowledged record */
    int64_t n = check_synth_log(path, acked > have ? acked : have, size, "after the kill", round);
    /* other tools open it too (plain HDF5 open, as h5py and h5dump do), and its /count never claims a
     * record that is not there */
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(h >= 0);
    hid_t cd = H5Dopen2(h, "count", H5P_DEFAULT);
    int64_t cnt = -1;
    assert_true(cd >= 0);
    assert_true(H5Dread(cd, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &cnt) >= 0);
    H5Dclose(cd);
    H5Fclose(h);
    if (!(cnt >= acked && cnt <= n)) fprintf(stderr, "round %d: count %lld acked %lld n %lld have %lld\n", round, (long long)cnt, (long long)acked, (long long)n, (long long)have);
    assert_true(cnt >= acked && cnt <= n);
    have = n;
  }
  assert_true(have > 0);
  /* after all that, a normal resume and finish */
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), have);
  assert_int_equal(mpt_runlog_finish(log, "budget", &err), 0);
  mpt_runlog_close(log);
}

/* where /evaluations starts in the file, and the size of one record */
static haddr_t evals_offset(const char *path, size_t *rec_size) {
  hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(h, "evaluations", H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  *rec_size = H5Tget_size(t);
  haddr_t base = H5Dget_offset(d);
  H5Tclose(t);
  H5Dclose(d);
  H5Fclose(h);
  assert_true(base != HADDR_UNDEF);
  return base;
}

/* writes the first n bytes of b as the file path */
static void test_spit(const char *path, const unsigned char *b, size_t n) {
  FILE *fp = fopen(path, "wb");
  assert_true(fp && fwrite(b, 1, n, fp) == n);
  assert_int_equal(fclose(fp), 0);
}

/* rows and byte offset of a 1-D dataset of the log at path (its raw bytes; HADDR_UNDEF if none) */
static haddr_t dataset_rows(const char *path, const char *name, hsize_t *rows) {
  hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(h >= 0);
  hid_t d = H5Dopen2(h, name, H5P_DEFAULT);
  assert_true(d >= 0);
  hid_t sp = H5Dget_space(d);
  assert_int_equal(H5Sget_simple_extent_dims(sp, rows, NULL), 1);
  haddr_t at = H5Dget_offset(d);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(h);
  return at;
}

/* a record torn by a kill (only its first bytes written, or all but its last page) is not taken */
static void test_torn_record(void **state) {
  fixture *f = *state;
  char path[400];
  mpt_runlog *log = create_test_log(f, "torn.h5", path, sizeof path);
  mpt_error err;
  mpt_obs o[6];
  for (int i = 0; i < 6; i++) synth_obs(&o[i], 40 + i);
  assert_int_equal(mpt_runlog_append(log, o, 5, &err), 0);
  mpt_runlog_close(log);
  /* where record 5 (the next one) lives in the file, how big a record is, and record 4's bytes as written
   * (the file type is the memory type) */
  size_t rs;
  haddr_t base = evals_offset(path, &rs);
  assert_true(rs > 1024);
  unsigned char *rec = malloc(rs), *good = malloc(rs);
  FILE *fp = fopen(path, "r+b");
  assert_non_null(fp);
  assert_int_equal(fseek(fp, (long)(base + 4 * rs), SEEK_SET), 0);
  assert_int_equal(fread(good, 1, rs, fp), rs);
  /* (a) the first half of a record: its id (last) still reads as the fill value */
  memcpy(rec, good, rs);
  assert_int_equal(fseek(fp, (long)(base + 5 * rs), SEEK_SET), 0);
  assert_int_equal(fwrite(rec, 1, rs / 2, fp), rs / 2);
  fflush(fp);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 5);
  mpt_runlog_close(log);
  /* (b) a whole record whose middle is stale: the CRC rejects it */
  rec[rs / 3] ^= 0x5a;
  assert_int_equal(fseek(fp, (long)(base + 5 * rs), SEEK_SET), 0);
  assert_int_equal(fwrite(rec, 1, rs, fp), rs);
  fclose(fp);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 5);
  mpt_runlog_close(log);
  /* resuming drops it and appends after the 5 good records */
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 5);
  assert_int_equal(mpt_runlog_append(log, &o[5], 1, &err), 0);
  assert_records(log, o, 6);
  mpt_runlog_close(log);
  free(rec);
  free(good);
}

static void flip_byte(const char *path, long at) {
  FILE *fp = fopen(path, "r+b");
  assert_non_null(fp);
  assert_int_equal(fseek(fp, at, SEEK_SET), 0);
  int c = fgetc(fp);
  assert_int_equal(fseek(fp, at, SEEK_SET), 0);
  fputc(c ^ 0x21, fp);
  fclose(fp);
}

/* records damaged in the file (not a torn tail): skipped with a count, the valid ones after them kept;
 * a resume rewrites the log without them and keeps the damaged file beside it */
static void test_damaged_records(void **state) {
  fixture *f = *state;
  char path[400], copy[420];
  snprintf(path, sizeof path, "%s/damaged.h5", f->tmpdir);
  snprintf(copy, sizeof copy, "%s.damaged", path);
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  mpt_error err;
  assert_int_equal(mpt_runlog_create(path, f->s, &m, &log, &err), 0);
  enum { N = 30 };
  mpt_obs o[N + 1];
  for (int i = 0; i <= N; i++) synth_obs(&o[i], 100 + i);
  assert_int_equal(mpt_runlog_append(log, o, N, &err), 0);
  mpt_runlog_close(log);
  size_t rs;
  haddr_t base = evals_offset(path, &rs);
  flip_byte(path, (long)(base + 5 * rs + 100)); /* record 5: a time */
  flip_byte(path, (long)(base + 6 * rs + rs - 3)); /* record 6: its id */
  /* read-only: 28 records, 2 damaged (before /count: not a torn tail, test_torn_record), in order */
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), N - 2);
  assert_int_equal(mpt_runlog_damaged(log), 2);
  assert_null(mpt_runlog_damaged_copy(log));
  mpt_obs *got;
  int64_t n;
  assert_int_equal(mpt_runlog_read(log, &got, &n, &err), 0);
  assert_int_equal(n, N - 2);
  for (int64_t i = 0, j = 0; j < N; j++)
    if (j != 5 && j != 6) assert_obs_equal(&got[i++], &o[j]);
  free(got);
  mpt_runlog_close(log);
  /* /count damaged too: claiming 10 more records than were written (the never-written ones are not
   * counted as damaged), or out of range (no record known settled: the records after the damaged ones
   * are still read, the damaged ones counted; they were taken for a torn tail, and every later record
   * dropped), or in range but short of the damaged records (0, 5: a written invalid record past /count
   * is a torn tail only when no valid record follows it; the 23 after them were dropped) */
  const int64_t wrong_counts[] = {N + 10, (int64_t)1 << 40, -7, 0, 5};
  for (int k = 0; k < 5; k++) {
    hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t cd = H5Dopen2(h, "count", H5P_DEFAULT);
    assert_true(h >= 0 && cd >= 0 && H5Dwrite(cd, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &wrong_counts[k]) >= 0);
    H5Dclose(cd);
    H5Fclose(h);
    assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
    assert_int_equal(mpt_runlog_count(log), N - 2);
    assert_int_equal(mpt_runlog_damaged(log), 2);
    mpt_runlog_close(log);
  }
  FILE *fp = fopen(path, "rb");
  fseek(fp, 0, SEEK_END);
  long size = ftell(fp);
  fclose(fp);
  /* resume: the damaged file is kept as it was, the log rewritten with the 28 and appended to */
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_damaged(log), 2);
  assert_non_null(mpt_runlog_damaged_copy(log));
  assert_string_equal(mpt_runlog_damaged_copy(log), copy);
  assert_int_equal(mpt_runlog_count(log), N - 2);
  assert_int_equal(mpt_runlog_append(log, &o[N], 1, &err), 0);
  mpt_runlog_close(log);
  fp = fopen(copy, "rb");
  assert_non_null(fp);
  fseek(fp, 0, SEEK_END);
  assert_int_equal(ftell(fp), size);
  fclose(fp);
  assert_int_equal(mpt_runlog_open_readonly(copy, &log, &err), 0); /* still the damaged one */
  assert_int_equal(mpt_runlog_damaged(log), 2);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_damaged(log), 0);
  assert_int_equal(mpt_runlog_read(log, &got, &n, &err), 0);
  assert_int_equal(n, N - 1);
  assert_obs_equal(&got[4], &o[4]);
  assert_obs_equal(&got[5], &o[7]);
  assert_obs_equal(&got[N - 2], &o[N]);
  free(got);
  mpt_runlog_close(log);
  /* a second damaged resume does not overwrite the first copy */
  base = evals_offset(path, &rs);
  flip_byte(path, (long)(base + 2 * rs + 100));
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_damaged(log), 1);
  snprintf(copy, sizeof copy, "%s.damaged.2", path);
  assert_string_equal(mpt_runlog_damaged_copy(log), copy);
  assert_int_equal(mpt_runlog_count(log), N - 2);
  mpt_runlog_close(log);
}

/* Damage HDF5 does not see (the raw data of /parameters has no checksum): found by comparing with the
 * log's checksummed metadata copy. The log reads as damaged (it was read with wrong values, exported
 * with wrong configurations, and refused on resume as another problem's), and is recovered from its
 * records and the copy: export given the problem, resume by itself (keeping the file as it was). */
static void test_damaged_parameter_table(void **state) {
  fixture *f = *state;
  char path[400], copy[420];
  mpt_runlog *log = create_test_log(f, "params.h5", path, sizeof path);
  snprintf(copy, sizeof copy, "%s.damaged", path);
  mpt_error err;
  mpt_obs o[12];
  for (int i = 0; i < 12; i++) synth_obs(&o[i], 40 + 3 * i);
  assert_int_equal(mpt_runlog_append(log, o, 12, &err), 0);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0); /* intact: reads as it is */
  mpt_runlog_close(log);
  hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  char name[300];
  snprintf(name, sizeof name, "parameters/%s", f->p->params[0].name);
  hid_t d = H5Dopen2(h, name, H5P_DEFAULT);
  assert_true(h >= 0 && d >= 0);
  haddr_t at = H5Dget_offset(d);
  H5Dclose(d);
  H5Fclose(h);
  assert_true(at != HADDR_UNDEF);
  flip_byte(path, (long)at + 8); /* the second value of the first parameter */
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), MPT_ERR_STATE);
  assert_non_null(strstr(err.msg, "its parameter tables (/parameters) differ from its checksummed metadata copy"));
  assert_int_equal(mpt_runlog_recover(path, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 12);
  assert_records(log, o, 12);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open(path, f->s, &log, &err), 0);
  assert_string_equal(mpt_runlog_damaged_copy(log), copy);
  assert_int_equal(mpt_runlog_count(log), 12);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0); /* rewritten whole */
  assert_records(log, o, 12);
  mpt_runlog_close(log);
  /* the metadata copy damaged itself: the tables cannot be checked, so the log reads as damaged (with the
   * tables damaged too it exported wrong configurations), and is recovered from its records */
  hsize_t meta_size;
  haddr_t meta_at = dataset_rows(path, "metadata_copy", &meta_size);
  assert_true(meta_at != HADDR_UNDEF && meta_size > 64);
  flip_byte(path, (long)(meta_at + meta_size / 2));
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), MPT_ERR_STATE);
  assert_non_null(strstr(err.msg, "its metadata copy (/metadata_copy) is damaged itself"));
  assert_int_equal(mpt_runlog_recover(path, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 12);
  assert_records(log, o, 12);
  mpt_runlog_close(log);
}

/* A log HDF5 can not read keeps its records: cut short (an interrupted copy) or with its root object
 * header damaged, mpt_runlog_recover finds them by their checksums (export), and a resume recovers them and
 * keeps the file as it was. Its settings and device and session tables come back from its metadata copy
 * (/metadata_copy, before the records); with that copy damaged too they are lost and the resume takes the
 * new run's settings. Only the records of the given problem's configurations are taken; a readable log is
 * not "recovered". */
static void test_recover(void **state) {
  fixture *f = *state;
  char path[400], cut[420], bare[420], hdr[420], kept[440];
  mpt_runlog *log = create_test_log(f, "whole.h5", path, sizeof path);
  mpt_error err;
  enum { N = 50 };
  mpt_obs o[N];
  for (int i = 0; i < N; i++) synth_obs(&o[i], 11 * i);
  mpt_device_info dev = {0};
  dev.rank = 1;
  dev.memory_gib = 63.98;
  snprintf(dev.host, sizeof dev.host, "gpu-node-07");
  snprintf(dev.vendor, sizeof dev.vendor, "AMD");
  snprintf(dev.name, sizeof dev.name, "AMD Instinct MI250X");
  snprintf(dev.arch, sizeof dev.arch, "gfx90a");
  snprintf(dev.evaluator, sizeof dev.evaluator, "hip");
  assert_int_equal(mpt_runlog_set_devices(log, &dev, 1, &err), 0);
  assert_int_equal(mpt_runlog_append(log, o, N, &err), 0);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_recover(path, f->s, &log, &err), MPT_ERR_STATE); /* readable as it is */
  assert_non_null(strstr(err.msg, "nothing to recover"));
  size_t rs, size;
  haddr_t base = evals_offset(path, &rs);
  hsize_t meta_size;
  haddr_t meta_at = dataset_rows(path, "metadata_copy", &meta_size);
  assert_true(meta_at != HADDR_UNDEF && meta_at + meta_size <= base); /* survives a cut in the records */
  unsigned char *bytes = (unsigned char *)test_slurp(path, &size);
  assert_non_null(bytes);
  /* cut short in the middle of record 31: records 0..30 are recovered, exactly, and the settings */
  size_t cut_at = base + 31 * rs + rs / 2;
  snprintf(cut, sizeof cut, "%s/cut.h5", f->tmpdir);
  test_spit(cut, bytes, cut_at);
  assert_int_not_equal(mpt_runlog_open_readonly(cut, &log, &err), 0);
  assert_int_equal(mpt_runlog_recover(cut, f->s, &log, &err), 0);
  assert_non_null(mpt_runlog_recovered(log));
  assert_non_null(strstr(mpt_runlog_recovered(log), cut));
  assert_true(mpt_runlog_recovered_meta(log));
  mpt_run_meta m0 = test_meta(f->p);
  assert_string_equal(mpt_runlog_meta(log, "strategy"), m0.strategy);
  assert_string_equal(mpt_runlog_meta(log, "options"), m0.options);
  assert_string_equal(mpt_runlog_meta(log, "seed"), "12345678901234");
  assert_string_equal(mpt_runlog_meta(log, "budget"), "220");
  assert_string_equal(mpt_runlog_meta(log, "command_line"), m0.command_line);
  assert_non_null(mpt_runlog_meta(log, "start_time"));
  assert_records(log, o, 31);
  mpt_runlog_close(log);
  /* another problem's configurations are not in it: the reason it could not be read, and that */
  char t1[1200];
  snprintf(t1, sizeof t1, "%s/t1/dedispersion_milo.json", f->dir);
  mpt_problem *p2;
  mpt_space *s2;
  assert_int_equal(mpt_problem_load(t1, &p2, &err), 0);
  assert_int_equal(mpt_space_build(p2, &s2, &err), 0);
  assert_int_not_equal(mpt_runlog_recover(cut, s2, &log, &err), 0);
  assert_non_null(strstr(err.msg, cut));
  assert_non_null(strstr(err.msg, "no intact record of problem"));
  mpt_space_free(s2);
  mpt_problem_free(p2);
  /* the run's problem edited (a value added, a condition changed): a record may still look right by
   * chance, but the logged problem says otherwise */
  static const char *const edits[][3] = {
    {"\"[1, 2, 4, 8, 16]\"", "\"[1, 2, 3, 4, 8, 16]\"", "belongs to another problem: the values of parameter 'block_size_y' differ"},
    {"block_size_x*block_size_y<=1024", "block_size_x*block_size_y<=512", "its space has 4362 valid configurations"},
  };
  for (int e = 0; e < 2; e++) {
    const char *at = strstr(f->p->text, edits[e][0]);
    assert_non_null(at);
    size_t pre = (size_t)(at - f->p->text), n = strlen(f->p->text) + 64;
    char *t = malloc(n);
    assert_non_null(t);
    snprintf(t, n, "%.*s%s%s", (int)pre, f->p->text, edits[e][1], at + strlen(edits[e][0]));
    assert_int_equal(mpt_problem_parse(t, "edited.json", &p2, &err), 0);
    assert_int_equal(mpt_space_build(p2, &s2, &err), 0);
    assert_int_equal(mpt_runlog_recover(cut, s2, &log, &err), MPT_ERR_VALUE);
    if (!strstr(err.msg, edits[e][2])) fprintf(stderr, "expected '%s' in %s\n", edits[e][2], err.msg);
    assert_non_null(strstr(err.msg, edits[e][2]));
    mpt_space_free(s2);
    mpt_problem_free(p2);
    free(t);
  }
  /* resume of the cut copy: its settings, its device and its session kept, a session added */
  assert_int_equal(mpt_runlog_open(cut, f->s, &log, &err), 0);
  assert_true(mpt_runlog_recovered(log) && mpt_runlog_recovered_meta(log));
  assert_int_equal(mpt_runlog_count(log), 31);
  mpt_run_meta m = test_meta(f->p);
  m.strategy = "bo";
  m.budget = 80;
  assert_int_equal(mpt_runlog_adopt_meta(log, &m, &err), 0); /* it has its own */
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "random");
  assert_int_equal(mpt_runlog_append(log, &o[31], N - 31, &err), 0);
  mpt_runlog_close(log);
  hsize_t rows;
  dataset_rows(cut, "sessions", &rows);
  assert_int_equal(rows, 2);
  dataset_rows(cut, "devices", &rows);
  assert_int_equal(rows, 1);
  {
    hid_t h = H5Fopen(cut, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(h, "devices", H5P_DEFAULT);
    hid_t t = mpt_rl_dev_type();
    mpt_rl_dev got;
    assert_true(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &got) >= 0);
    assert_string_equal(got.name, "AMD Instinct MI250X");
    assert_string_equal(got.host, "gpu-node-07");
    assert_true(got.rank == 1 && got.session == 0 && got.memory_gib == 63.98);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(h);
  }
  assert_int_equal(mpt_runlog_open_readonly(cut, &log, &err), 0);
  assert_null(mpt_runlog_recovered(log));
  assert_string_equal(mpt_runlog_meta(log, "budget"), "220");
  assert_records(log, o, N);
  mpt_runlog_close(log);
  /* the same cut with its metadata copy damaged too: the settings are lost, the resume takes the new run's */
  bytes[meta_at + meta_size / 2] ^= 0x21;
  snprintf(bare, sizeof bare, "%s/bare.h5", f->tmpdir);
  test_spit(bare, bytes, cut_at);
  assert_int_equal(mpt_runlog_recover(bare, f->s, &log, &err), 0);
  assert_false(mpt_runlog_recovered_meta(log));
  assert_null(mpt_runlog_meta(log, "strategy")); /* lost */
  assert_records(log, o, 31);
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_open(bare, f->s, &log, &err), 0);
  assert_non_null(mpt_runlog_recovered(log));
  assert_int_equal(mpt_runlog_count(log), 31);
  snprintf(kept, sizeof kept, "%s.damaged", bare);
  assert_string_equal(mpt_runlog_damaged_copy(log), kept);
  assert_null(mpt_runlog_meta(log, "budget"));
  assert_int_equal(mpt_runlog_adopt_meta(log, &m, &err), 0);
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "bo");
  assert_int_equal(mpt_runlog_append(log, &o[31], N - 31, &err), 0);
  assert_int_equal(mpt_runlog_set_devices(log, &dev, 1, &err), 0); /* a rewrite: the settings are stored */
  mpt_runlog_close(log);
  size_t kept_size;
  unsigned char *kb = (unsigned char *)test_slurp(kept, &kept_size);
  assert_true(kb && kept_size == cut_at && memcmp(kb, bytes, kept_size) == 0);
  free(kb);
  assert_int_equal(mpt_runlog_open_readonly(bare, &log, &err), 0);
  assert_null(mpt_runlog_recovered(log));
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "bo");
  assert_string_equal(mpt_runlog_meta(log, "budget"), "80");
  assert_records(log, o, N);
  mpt_runlog_close(log);
  /* a resumed log keeps its own settings */
  assert_int_equal(mpt_runlog_open(bare, f->s, &log, &err), 0);
  m.strategy = "ga";
  assert_int_equal(mpt_runlog_adopt_meta(log, &m, &err), 0);
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "bo");
  mpt_runlog_close(log);
  bytes[meta_at + meta_size / 2] ^= 0x21;
  /* the root object header damaged (its attributes): every record recovered, and the settings */
  snprintf(hdr, sizeof hdr, "%s/header.h5", f->tmpdir);
  uint64_t root;
  memcpy(&root, bytes + 36, sizeof root); /* superblock version 2: the root object header's address */
  assert_memory_equal(bytes + root, "OHDR", 4);
  bytes[root + 40] ^= 0x5a;
  test_spit(hdr, bytes, size);
  assert_int_not_equal(mpt_runlog_open_readonly(hdr, &log, &err), 0);
  assert_int_equal(mpt_runlog_recover(hdr, f->s, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), N);
  assert_true(mpt_runlog_recovered_meta(log));
  assert_string_equal(mpt_runlog_meta(log, "options"), m0.options);
  assert_records(log, o, N);
  mpt_runlog_close(log);
  free(bytes);
}

/* A log that HDF5 can not read, recovered from its records (mpt_runlog_recover), then resumed: 4 when every
 * record recovered is one of the n original ones (`orig`), in their order, and the resume keeps them all
 * and the file as it was (PATH.damaged); 1 when nothing is recovered, with a message naming the file
 * (written to fd); 2 when a record is wrong or lost. */
static int recover_damaged_log(const fixture *f, const char *path, const mpt_obs *orig, int64_t n, int fd) {
  mpt_runlog *log;
  mpt_error err = {0};
  mpt_obs *got = NULL, *again = NULL;
  int64_t k = 0, m = 0;
  if (mpt_runlog_recover(path, f->s, &log, &err) != 0) {
    if (!strstr(err.msg, path) || write(fd, err.msg, strlen(err.msg)) < 0) return 2;
    return 1;
  }
  if (!mpt_runlog_recovered(log) || mpt_runlog_read(log, &got, &k, &err) != 0 || k < 1) return 2;
  int with_meta = mpt_runlog_recovered_meta(log);
  if (with_meta) { /* its settings as they were written, never damaged ones */
    mpt_run_meta m = test_meta(f->p);
    const char *st = mpt_runlog_meta(log, "strategy"), *cl = mpt_runlog_meta(log, "command_line");
    const char *seed = mpt_runlog_meta(log, "seed"), *tx = mpt_runlog_meta(log, "problem_text");
    if (!st || !cl || !seed || !tx || strcmp(st, m.strategy) != 0 || strcmp(cl, m.command_line) != 0 ||
        strcmp(seed, "12345678901234") != 0 || strcmp(tx, m.problem_text) != 0)
      return 2;
  }
  mpt_runlog_close(log);
  for (int64_t i = 0, j = 0; i < k; i++, j++) { /* a subsequence of the originals, each record exact */
    while (j < n && memcmp(&got[i], &orig[j], sizeof got[i]) != 0) j++;
    if (j == n) return 2;
  }
  char kept[440];
  snprintf(kept, sizeof kept, "%s.damaged", path);
  if (mpt_runlog_open(path, f->s, &log, &err) != 0 || !mpt_runlog_recovered(log) || mpt_runlog_count(log) != k) return 2;
  mpt_runlog_close(log);
  if (access(kept, F_OK) != 0 || mpt_runlog_open_readonly(path, &log, &err) != 0) return 2;
  if (mpt_runlog_recovered(log) || mpt_runlog_read(log, &again, &m, &err) != 0 || m != k ||
      memcmp(again, got, sizeof *got * (size_t)k) != 0)
    return 2;
  mpt_runlog_close(log);
  free(got);
  free(again);
  return with_meta ? 5 : 4;
}

/* What a child does with one damaged copy of a log (test_damaged_logs): 0 when it reads, exports and
 * resumes it keeping every record the read-only view showed; 3 the same but the resume is refused (a
 * damaged parameter table or `finished` mark) with a message naming the file, the file unchanged; when
 * mptune can not read it, recover_damaged_log's 4 (its records recovered), 5 (and its settings) or 1
 * (refused with a message naming the file, written to fd); 2 when something read is lost or wrong. */
static int use_damaged_log(const fixture *f, const char *path, const mpt_obs *orig, int64_t n_orig, int fd) {
  char t4[440];
  snprintf(t4, sizeof t4, "%s.json", path);
  mpt_runlog *log;
  mpt_error err = {0};
  mpt_obs *got = NULL, *again = NULL;
  int64_t n = 0, m = 0;
  int rc = mpt_runlog_open_readonly(path, &log, &err);
  if (rc == 0) {
    rc = mpt_runlog_read(log, &got, &n, &err);
    mpt_runlog_close(log);
  }
  if (rc == 0) rc = mpt_runlog_export_t4(path, t4, &err);
  if (rc == 0) { /* resumed or not, the log keeps everything the read-only view showed */
    int resumed = mpt_runlog_open(path, f->s, &log, &err) == 0;
    if (resumed) mpt_runlog_close(log);
    else if (!strstr(err.msg, path) || write(fd, err.msg, strlen(err.msg)) < 0) return 2;
    if (mpt_runlog_open_readonly(path, &log, &err) != 0) return 2;
    if ((resumed && mpt_runlog_damaged(log) != 0) || mpt_runlog_read(log, &again, &m, &err) != 0 || m != n) return 2;
    for (int64_t i = 0; i < n; i++)
      if (again[i].id != got[i].id || again[i].status != got[i].status) return 2;
    mpt_runlog_close(log);
    return resumed ? 0 : 3;
  }
  return recover_damaged_log(f, path, orig, n_orig, fd);
}

/* 300 damaged copies of a log (changed bytes anywhere, or cut short; fixed by a seed): each one is read
 * (and resumed without losing what was read), or recovered from its records, or refused with one message
 * naming it; none crashes or hangs mptune (each runs in a child, with a time limit). */
static void test_damaged_logs(void **state) {
  fixture *f = *state;
  char base[400], path[420];
  mpt_runlog *log = create_test_log(f, "undamaged.h5", base, sizeof base);
  mpt_error err;
  mpt_obs o[40];
  for (int i = 0; i < 40; i++) synth_obs(&o[i], 7 * i);
  assert_int_equal(mpt_runlog_append(log, o, 40, &err), 0);
  mpt_runlog_close(log);
  mpt_obs *recs;
  int64_t n_recs;
  assert_int_equal(mpt_runlog_open_readonly(base, &log, &err), 0);
  assert_int_equal(mpt_runlog_read(log, &recs, &n_recs, &err), 0);
  mpt_runlog_close(log);
  FILE *fp = fopen(base, "rb");
  assert_non_null(fp);
  fseek(fp, 0, SEEK_END);
  size_t size = (size_t)ftell(fp);
  rewind(fp);
  unsigned char *orig = malloc(size), *b = malloc(size);
  assert_true(orig && b && fread(orig, 1, size, fp) == size);
  fclose(fp);
  mpt_rng rng;
  mpt_rng_seed(&rng, 20261122);
  int outcome[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 300; i++) {
    memcpy(b, orig, size);
    size_t n = size;
    if (mpt_rng_below(&rng, 7) == 0) n = (size_t)mpt_rng_below(&rng, size);
    else {
      static const int changes[] = {1, 2, 5, 20, 100};
      for (int k = changes[mpt_rng_below(&rng, 5)]; k > 0; k--) b[mpt_rng_below(&rng, size)] = (unsigned char)mpt_rng_below(&rng, 256);
    }
    snprintf(path, sizeof path, "%s/damaged_%d.h5", f->tmpdir, i);
    fp = fopen(path, "wb");
    assert_true(fp && fwrite(b, 1, n, fp) == n);
    fclose(fp);
    int fds[2];
    pid_t pid = fork_with_pipe(fds);
    if (pid == 0) {
      alarm(20);
      _exit(use_damaged_log(f, path, recs, n_recs, fds[1]));
    }
    close(fds[1]);
    char msg[1200] = "";
    ssize_t got = 0, r;
    while ((r = read(fds[0], msg + got, sizeof msg - 1 - (size_t)got)) > 0) got += r;
    msg[got] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 2 || (WEXITSTATUS(status) == 1 && !strstr(msg, path)))
      fprintf(stderr, "damaged copy %d: %s %d, message '%s'\n", i, WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg);
    assert_true(WIFEXITED(status));
    assert_true(WEXITSTATUS(status) != 2 && WEXITSTATUS(status) <= 5);
    if (WEXITSTATUS(status) == 1) assert_non_null(strstr(msg, path));
    outcome[WEXITSTATUS(status)]++;
    unlink(path);
    static const char *const left[] = {".json", ".damaged"};
    for (int k = 0; k < 2; k++) {
      char other[440];
      snprintf(other, sizeof other, "%s%s", path, left[k]);
      unlink(other);
    }
  }
  fprintf(stderr, "damaged logs: %d read and resumed, %d read but not resumed, %d unreadable but recovered from their "
          "records and resumed (%d with their settings and tables from the metadata copy), %d refused with a message\n",
          outcome[0], outcome[3], outcome[4] + outcome[5], outcome[5], outcome[1]);
  assert_true(outcome[0] > 0 && outcome[5] > 0 && outcome[1] > 0);
  free(recs);
  free(orig);
  free(b);
}

/* in a child whose files may not grow past a limit (RLIMIT_FSIZE: as a full disk or a quota, writes
 * fail): a rewrite that fails (here: for the device table, a copy as large as the log) is an error with
 * HDF5's reason, the log
 * keeps its records, and the process exits normally (a failed HDF5 close used to crash it at exit); a
 * new log too large for the limit is an error too. Exit status 0 when all of that held. */
static void full_disk_child(const fixture *f, const char *path, const char *big) {
  signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead of killing the process */
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  mpt_error err;
  if (mpt_runlog_create(path, f->s, &m, &log, &err) != 0) exit(10);
  mpt_obs o[50];
  for (int i = 0; i < 50; i++) synth_obs(&o[i], 3 * i);
  if (mpt_runlog_append(log, o, 50, &err) != 0) exit(11);
  FILE *fp = fopen(path, "rb");
  fseek(fp, 0, SEEK_END);
  long size = ftell(fp);
  fclose(fp);
  struct rlimit lim = {(rlim_t)size / 2, (rlim_t)size / 2};
  if (setrlimit(RLIMIT_FSIZE, &lim) != 0) exit(12);
  mpt_device_info dev = {.rank = 1, .index = 0, .host = "node7", .vendor = "CPU", .name = "cpu", .evaluator = "cpu"};
  if (mpt_runlog_set_devices(log, &dev, 1, &err) != MPT_ERR_IO || !strstr(err.msg, path) || !strstr(err.msg, "File too large")) {
    fprintf(stderr, "devices: %s\n", err.msg);
    exit(13);
  }
  if (mpt_runlog_append(log, &o[0], 1, &err) != 0) exit(14); /* still the open, intact log */
  mpt_runlog_close(log);
  m.budget = 4000; /* a new log needs room for 4000 records at once */
  if (mpt_runlog_create(big, f->s, &m, &log, &err) != MPT_ERR_IO || !strstr(err.msg, "File too large")) {
    fprintf(stderr, "create: %s\n", err.msg);
    exit(15);
  }
  exit(0); /* not _exit: HDF5 closes down at exit, as in mptune */
}

static void test_full_disk(void **state) {
  fixture *f = *state;
  char path[400], big[400], tmp[420];
  snprintf(path, sizeof path, "%s/full.h5", f->tmpdir);
  snprintf(big, sizeof big, "%s/big.h5", f->tmpdir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) full_disk_child(f, path, big);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status)) fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* the log holds its 51 records (no device row), is not finished, and no copy is left behind */
  mpt_runlog *log;
  mpt_error err;
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_int_equal(mpt_runlog_count(log), 51);
  assert_false(mpt_runlog_is_finished(log));
  mpt_runlog_close(log);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  assert_int_equal(access(tmp, F_OK), -1);
  snprintf(tmp, sizeof tmp, "%s.tmp", big);
  assert_int_equal(access(tmp, F_OK), -1);
  assert_int_equal(access(big, F_OK), -1);
}

/* a replayed run exported as T4 and loaded back gives the same statuses and objectives */
static void test_export_roundtrip(void **state) {
  fixture *f = *state;
  char replay[1200], path[400], t4[400];
  snprintf(replay, sizeof replay, "%s/brute-forced/convolution_W7800_T4.json.gz", f->dir);
  snprintf(path, sizeof path, "%s/replayed.h5", f->tmpdir);
  snprintf(t4, sizeof t4, "%s/replayed_T4.json", f->tmpdir);
  mpt_eval_settings set = {0};
  set.simulate_path = replay;
  mpt_evaluator *ev;
  mpt_error err;
  assert_int_equal(mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err), 0);
  mpt_run_meta m = test_meta(f->p);
  mpt_runlog *log;
  assert_int_equal(mpt_runlog_create(path, f->s, &m, &log, &err), 0);
  assert_int_equal(mpt_runlog_set_devices(log, &ev->device, 1, &err), 0);
  int64_t size = mpt_space_size(f->s);
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)size);
  for (int64_t i = 0; i < size; i++) ids[i] = i;
  mpt_rng rng;
  mpt_rng_seed(&rng, 11);
  mpt_rng_shuffle(&rng, ids, size);
  int64_t n = 1500;
  mpt_obs o;
  for (int64_t i = 0; i < n; i++) {
    assert_int_equal(mpt_evaluator_evaluate(ev, ids[i], &o, &err), 0);
    assert_int_equal(mpt_runlog_append(log, &o, 1, &err), 0);
  }
  /* one cancelled evaluation: not a measurement, not exported */
  mpt_obs_init(&o, ids[n]);
  o.status = MPT_STATUS_CANCELLED;
  assert_int_equal(mpt_runlog_append(log, &o, 1, &err), 0);
  assert_int_equal(mpt_runlog_finish(log, "budget", &err), 0);
  mpt_runlog_close(log);

  int rc = mpt_runlog_export_t4(path, t4, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  /* no temporary file (replayed_T4.json.tmp.XXXXXX) is left beside it */
  DIR *dir = opendir(f->tmpdir);
  assert_non_null(dir);
  for (struct dirent *de; (de = readdir(dir)) != NULL;) assert_null(strstr(de->d_name, "_T4.json.tmp"));
  closedir(dir);
  mpt_replay *orig, *back;
  assert_int_equal(mpt_replay_load(replay, f->s, &orig, &err), 0);
  rc = mpt_replay_load(t4, f->s, &back, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(back), n);
  int64_t failed = 0;
  for (int64_t i = 0; i < size; i++) {
    mpt_obs ba, bb;
    const mpt_obs *a = mpt_replay_get(orig, ids[i], &ba), *b = mpt_replay_get(back, ids[i], &bb);
    if (i >= n) { assert_null(b); continue; }
    assert_non_null(b);
    assert_int_equal(a->status, b->status);
    failed += a->status != MPT_STATUS_OK;
    if (a->status == MPT_STATUS_OK) assert_true(a->objective == b->objective);
    assert_int_equal(a->n_times, b->n_times);
    for (int k = 0; k < a->n_times; k++) assert_true(a->times[k] == b->times[k]);
    assert_true(a->compile_ms == b->compile_ms);
    if (a->framework_ms > 0) assert_true(a->framework_ms == b->framework_ms);
  }
  assert_true(failed > 0); /* the W7800 file has failures: both kinds of record went through */
  mpt_replay_free(orig);
  mpt_replay_free(back);
  mpt_evaluator_close(ev);
  free(ids);
  assert_int_equal(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);

  /* an unwritable output: an error, nothing left behind */
  char bad[500];
  snprintf(bad, sizeof bad, "%s/no/such/dir/out.json", f->tmpdir);
  assert_int_equal(mpt_runlog_export_t4(path, bad, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "no/such/dir"));
}

/* string, float, bool and int parameters: replay matching, the log's parameter tables, the T4 export's
 * JSON types, and the round trip */
/* a problem with a parameter of every type (string values with a space too) */
static const char MIXED_T1[] =
    "{\"General\": {\"BenchmarkName\": \"mixed\"}, \"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"method\", \"Type\": \"string\", \"Values\": \"['fast', 'exact', 'x y']\"},"
    "{\"Name\": \"scale\", \"Type\": \"float\", \"Values\": \"[0.5, 1.0, 2.25]\"},"
    "{\"Name\": \"flag\", \"Type\": \"bool\", \"Values\": \"[True, False]\"},"
    "{\"Name\": \"n\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}],"
    "\"Conditions\": [{\"Expression\": \"n == 1 or method == 'fast'\", \"Parameters\": [\"n\", \"method\"]}]}}";

static void test_mixed_types(void **state) {
  fixture *f = *state;
  const char *t1 = MIXED_T1;
  mpt_problem *p;
  mpt_space *s;
  mpt_error err;
  int rc = mpt_problem_parse(t1, "mixed.json", &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  assert_int_equal(mpt_space_size(s), 3 * 3 * 2 * 1 + 1 * 3 * 2 * 1); /* n=1: all; n=2: only fast */
  /* a Kernel Tuner cache with all of them, values as Kernel Tuner writes them */
  char path[400], log_path[400], t4[400];
  snprintf(path, sizeof path, "%s/mixed_cache.json", f->tmpdir);
  FILE *fp = fopen(path, "w");
  fprintf(fp, "{\"tune_params_keys\": [\"method\", \"scale\", \"flag\", \"n\"], \"cache\": {");
  int k = 0;
  for (int64_t id = 0; id < mpt_space_size(s); id++) {
    int idx[4];
    mpt_space_config(s, id, idx);
    const mpt_param *pp = p->params;
    fprintf(fp, "%s\"%lld\": {\"method\": \"%s\", \"scale\": %s, \"flag\": %s, \"n\": %d, \"time\": %s, \"compile_time\": 1.5}",
            k++ ? "," : "", (long long)id, pp[0].values[idx[0]].u.s, idx[1] == 0 ? "0.5" : idx[1] == 1 ? "1" : "2.25",
            idx[2] == 0 ? "true" : "false", (int)pp[3].values[idx[3]].u.i,
            id % 4 == 1 ? "\"CompilationFailedConfig\"" : (id == 2 ? "0.125" : "3.5"));
  }
  fprintf(fp, "}}");
  fclose(fp);
  mpt_replay *r, *back;
  rc = mpt_replay_load(path, s, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(r), mpt_space_size(s));
  assert_true(mpt_replay_optimum(r) == 0.125);
  /* log every record, export, load the export */
  snprintf(log_path, sizeof log_path, "%s/mixed.h5", f->tmpdir);
  snprintf(t4, sizeof t4, "%s/mixed_T4.json", f->tmpdir);
  mpt_run_meta m = test_meta(p);
  mpt_runlog *log;
  assert_int_equal(mpt_runlog_create(log_path, s, &m, &log, &err), 0);
  for (int64_t id = mpt_space_size(s) - 1; id >= 0; id--) {
    mpt_obs o;
    assert_non_null(mpt_replay_get(r, id, &o));
    assert_int_equal(mpt_runlog_append(log, &o, 1, &err), 0);
  }
  mpt_runlog_close(log);
  assert_int_equal(mpt_runlog_export_t4(log_path, t4, &err), 0);
  rc = mpt_replay_load(t4, s, &back, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(back), mpt_space_size(s));
  for (int64_t id = 0; id < mpt_space_size(s); id++) {
    mpt_obs ba, bb;
    const mpt_obs *a = mpt_replay_get(r, id, &ba), *b = mpt_replay_get(back, id, &bb);
    assert_int_equal(a->status, b->status);
    if (a->status == MPT_STATUS_OK) assert_true(a->objective == b->objective);
  }
  /* the export writes strings as strings, floats and ints as numbers, bools as booleans */
  char *buf = test_slurp(t4, NULL);
  assert_non_null(strstr(buf, "\"method\":\t\"x y\""));
  assert_non_null(strstr(buf, "\"scale\":\t2.25"));
  assert_non_null(strstr(buf, "\"flag\":\ttrue"));
  assert_non_null(strstr(buf, "\"n\":\t2"));
  free(buf);
  mpt_replay_free(r);
  mpt_replay_free(back);
  /* the stored tables match the problem: a resume is accepted */
  assert_int_equal(mpt_runlog_open(log_path, s, &log, &err), 0);
  mpt_runlog_close(log);
  mpt_space_free(s);
  mpt_problem_free(p);
}

/* 1 if the dataset or attribute `name` of the log's group `group` stores variable-length strings */
static int stored_as_vlen(const char *path, const char *group, const char *name, int is_attr) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  hid_t o = is_attr ? H5Aopen(g, name, H5P_DEFAULT) : H5Dopen2(g, name, H5P_DEFAULT);
  assert_true(g >= 0 && o >= 0);
  hid_t t = is_attr ? H5Aget_type(o) : H5Dget_type(o);
  int v = H5Tis_variable_str(t) > 0;
  H5Tclose(t);
  if (is_attr) H5Aclose(o); else H5Dclose(o);
  H5Gclose(g);
  H5Fclose(f);
  return v;
}

/* A log written by mptune's format 2 (variable-length strings; tests/data/runlog_format2.h5.gz, made by
 * test_mixed_types's writer at commit 6650e39 with one device row and budget 0): it is read, exported and
 * resumed, and the resume rewrites it in format 3 (fixed-length strings) with every record kept. */
static void test_format2_log(void **state) {
  fixture *f = *state;
  char src[1200], path[400], t4[400];
  const char *srcdir = getenv("MPT_SOURCE_DIR");
  assert_non_null(srcdir);
  snprintf(src, sizeof src, "%s/tests/data/runlog_format2.h5.gz", srcdir);
  snprintf(path, sizeof path, "%s/format2.h5", f->tmpdir);
  snprintf(t4, sizeof t4, "%s/format2_T4.json", f->tmpdir);
  gzFile in = gzopen(src, "rb");
  assert_non_null(in);
  FILE *out = fopen(path, "wb");
  assert_non_null(out);
  char buf[8192];
  int len;
  while ((len = gzread(in, buf, sizeof buf)) > 0) assert_int_equal(fwrite(buf, 1, (size_t)len, out), (size_t)len);
  assert_int_equal(len, 0);
  gzclose(in);
  fclose(out);
  assert_true(stored_as_vlen(path, "/", "strategy", 1));
  assert_true(stored_as_vlen(path, "/parameters", "method", 0));
  assert_true(stored_as_vlen(path, "/parameters", "names", 1));

  mpt_problem *p;
  mpt_space *s;
  mpt_error err;
  assert_int_equal(mpt_problem_parse(MIXED_T1, "mixed.json", &p, &err), 0);
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  const int64_t n_space = mpt_space_size(s);
  /* read as it is: metadata, and the records as written (ids from the last to 0; every 4th compile error) */
  mpt_runlog *log;
  int rc = mpt_runlog_open_readonly(path, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_string_equal(mpt_runlog_meta(log, "format_version"), "2");
  assert_string_equal(mpt_runlog_meta(log, "strategy"), "random");
  assert_string_equal(mpt_runlog_meta(log, "options"), "popsize=20,mutation=0.1");
  assert_string_equal(mpt_runlog_meta(log, "problem_text"), MIXED_T1);
  mpt_obs *obs;
  int64_t n;
  assert_int_equal(mpt_runlog_read(log, &obs, &n, &err), 0);
  assert_int_equal(n, n_space);
  for (int64_t i = 0; i < n; i++) {
    int64_t id = n_space - 1 - i;
    assert_int_equal(obs[i].id, id);
    assert_int_equal(obs[i].status, id % 4 == 1 ? MPT_STATUS_COMPILE_ERROR : MPT_STATUS_OK);
    if (id % 4 != 1) assert_true(obs[i].objective == (id == 2 ? 0.125 : 3.5));
  }
  mpt_runlog_close(log);
  /* exported with its string values */
  assert_int_equal(mpt_runlog_export_t4(path, t4, &err), 0);
  char *text = test_slurp(t4, NULL);
  assert_non_null(strstr(text, "\"method\":\t\"x y\""));
  assert_non_null(strstr(text, "\"method\":\t\"exact\""));
  free(text);
  /* resumed: the tables match the problem; the new session rewrites the file in format 4 (each record's
   * device class: 0 for the old records, converted with their checksums) */
  rc = mpt_runlog_open(path, s, &log, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_obs extra;
  synth_obs(&extra, 2);
  extra.device_class = 2;
  assert_int_equal(mpt_runlog_append(log, &extra, 1, &err), 0);
  mpt_runlog_close(log);
  assert_false(stored_as_vlen(path, "/", "strategy", 1));
  assert_false(stored_as_vlen(path, "/parameters", "method", 0));
  assert_false(stored_as_vlen(path, "/parameters", "names", 1));
  assert_int_equal(mpt_runlog_open_readonly(path, &log, &err), 0);
  assert_string_equal(mpt_runlog_meta(log, "format_version"), "4");
  assert_string_equal(mpt_runlog_meta(log, "problem_text"), MIXED_T1);
  mpt_obs *again;
  int64_t m;
  assert_int_equal(mpt_runlog_read(log, &again, &m, &err), 0);
  assert_int_equal(m, n_space + 1);
  for (int64_t i = 0; i < n; i++) assert_obs_equal(&again[i], &obs[i]);
  assert_obs_equal(&again[n], &extra);
  mpt_runlog_close(log);
  free(obs);
  free(again);
  /* and the rewritten tables still match the problem */
  assert_int_equal(mpt_runlog_open(path, s, &log, &err), 0);
  mpt_runlog_close(log);
  mpt_space_free(s);
  mpt_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_create_append_read),
    cmocka_unit_test(test_finish_and_resume),
    cmocka_unit_test(test_finish_classes),
    cmocka_unit_test(test_log_through_link),
    cmocka_unit_test(test_other_conditions),
    cmocka_unit_test(test_not_a_log),
    cmocka_unit_test(test_other_problem),
    cmocka_unit_test(test_sigkill),
    cmocka_unit_test(test_one_writer),
    cmocka_unit_test(test_torn_record),
    cmocka_unit_test(test_damaged_records),
    cmocka_unit_test(test_damaged_parameter_table),
    cmocka_unit_test(test_damaged_logs),
    cmocka_unit_test(test_recover),
    cmocka_unit_test(test_full_disk),
    cmocka_unit_test(test_export_roundtrip),
    cmocka_unit_test(test_mixed_types),
    cmocka_unit_test(test_format2_log),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
