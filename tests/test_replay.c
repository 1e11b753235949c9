/* tests/test_replay.c: the replay loader (evaluators/replay/replay.c) and the `sim` evaluator on the real
 * brute-forced convolution spaces: T4 and Kernel Tuner files (gzip and plain, told apart by bytes),
 * status/objective/time mapping, parameter mismatch and bad-file messages (malformed JSON at its line
 * and column, 600 damaged files), Kernel Tuner caches of runs still in progress (read up to their last
 * complete record), missing records, and the --simulate-delay sleep (real time, no busy wait). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "evaluators/evaluator.h"
#include "evaluators/replay/replay.h"
#include "evaluators/replay/replay_store.h"

#include "tests/conv_fixture.h"
#include "spaces/sys/clock.h"

static int setup(void **state) { return conv_fixture_setup(state, "replay"); }
static int teardown(void **state) { return conv_fixture_teardown(state); }

static void data_path(fixture *f, const char *name, char *out, size_t cap) {
  snprintf(out, cap, "%s/brute-forced/%s", f->dir, name);
}

static void write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
}

/* id of a convolution configuration given as the 10 values (all of them among their parameter's) */
static int64_t conv_id(fixture *f, const int *vals) {
  int64_t id = conv_fixture_id(f, vals);
  assert_true(id >= 0);
  return id;
}

static void count_statuses(const mpt_replay *r, const mpt_space *s, int64_t *counts) {
  memset(counts, 0, sizeof(int64_t) * MPT_STATUS_COUNT);
  for (int64_t id = 0; id < mpt_space_size(s); id++) {
    mpt_obs buf;
    const mpt_obs *o = mpt_replay_get(r, id, &buf);
    assert_non_null(o);
    assert_true(o->status >= 0 && o->status < MPT_STATUS_COUNT);
    counts[o->status]++;
  }
}

static void test_t4_gzip(void **state) {
  fixture *f = *state;
  char path[1200];
  data_path(f, "convolution_A100_T4.json.gz", path, sizeof path);
  mpt_replay *r;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = mpt_replay_load(path, f->s, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_space_size(f->s), 4362);
  assert_int_equal(mpt_replay_count(r), 4362);
  assert_int_equal(mpt_replay_unmatched(r), 0);
  char cov[512] = "x";
  assert_int_equal(mpt_replay_coverage(r, "they count as failed evaluations", cov, sizeof cov), 0); /* every valid configuration, nothing else */
  assert_string_equal(cov, "");
  int64_t c[MPT_STATUS_COUNT];
  count_statuses(r, f->s, c);
  assert_int_equal(c[MPT_STATUS_OK], 4201);
  assert_int_equal(c[MPT_STATUS_RUNTIME_ERROR], 155);
  assert_int_equal(c[MPT_STATUS_COMPILE_ERROR], 6);
  double opt = mpt_replay_optimum(r);
  assert_true(fabs(opt - 0.5536) < 1e-4);
  /* the first record of the file */
  int v0[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  int64_t id = conv_id(f, v0);
  assert_true(id >= 0);
  mpt_obs buf;
  const mpt_obs *o = mpt_replay_get(r, id, &buf);
  assert_non_null(o);
  assert_int_equal(o->status, MPT_STATUS_OK);
  assert_true(o->objective == 3.8753279224038124);
  assert_int_equal(o->n_times, 32);
  assert_true(o->times[0] == 3.976191997528076);
  assert_true(fabs(o->compile_ms - 918.5990339610726) < 1e-9);
  assert_true(fabs(o->framework_ms - 105.24242906831205) < 1e-9);
  double sum = 0;
  for (int i = 0; i < o->n_times; i++) sum += o->times[i];
  assert_true(fabs(o->benchmark_ms - sum) < 1e-9); /* T4 has no benchmark time: sum of runtimes */
  assert_true(o->median > 3.87 && o->median < 3.88);
  /* a runtime failure */
  int vf[10] = {32, 16, 2, 4, 1, 0, 0, 1, 15, 15};
  o = mpt_replay_get(r, conv_id(f, vf), &buf);
  assert_non_null(o);
  assert_int_equal(o->status, MPT_STATUS_RUNTIME_ERROR);
  assert_false(mpt_obs_valid(o));
  assert_string_equal(o->reason, "RuntimeFailedConfig");
  assert_true(fabs(o->compile_ms - 3055.960983969271) < 1e-9);
  assert_string_equal(mpt_replay_device_name(r), "convolution_A100_T4.json.gz");
  mpt_replay_free(r);
}

static void test_kt_matches_t4(void **state) {
  fixture *f = *state;
  char p1[1200], p2[1200];
  data_path(f, "convolution_A100_T4.json.gz", p1, sizeof p1);
  data_path(f, "convolution_A100_kerneltuner.json.gz", p2, sizeof p2);
  mpt_replay *a, *b;
  mpt_error err;
  assert_int_equal(mpt_replay_load(p1, f->s, &a, &err), 0);
  int rc = mpt_replay_load(p2, f->s, &b, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(b), 4362);
  assert_string_equal(mpt_replay_device_name(b), "NVIDIA A100-PCIE-40GB");
  for (int64_t id = 0; id < mpt_space_size(f->s); id++) {
    mpt_obs bx, by;
    const mpt_obs *x = mpt_replay_get(a, id, &bx), *y = mpt_replay_get(b, id, &by);
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(x->status, y->status);
    if (x->status == MPT_STATUS_OK) assert_true(x->objective == y->objective);
    assert_true(fabs(x->compile_ms - y->compile_ms) < 1e-9);
    assert_int_equal(x->n_times, y->n_times);
  }
  /* KT's recorded benchmark_time of the first record */
  int v0[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  mpt_obs bx;
  assert_true(fabs(mpt_replay_get(b, conv_id(f, v0), &bx)->benchmark_ms - 126.3829180970788) < 1e-9);
  mpt_replay_free(a);
  mpt_replay_free(b);
}

/* every brute-forced file loads and covers the whole space; failures as in the data README */
static void test_all_files(void **state) {
  fixture *f = *state;
  const char *files[] = {"convolution_A4000_T4.json.gz", "convolution_A6000_T4.json.gz", "convolution_MI250X_T4.json.gz",
                         "convolution_MI250X_kerneltuner.json.gz", "convolution_W6600_T4.json.gz",
                         "convolution_W7800_T4.json.gz"};
  const int64_t failed[] = {161, 473, 0, 0, 0, 116};
  const double optimum[] = {1.0212, 0.6030, 0.6588, 0.6588, 1.7276, 0.8161};
  for (int i = 0; i < 6; i++) {
    char path[1200];
    data_path(f, files[i], path, sizeof path);
    mpt_replay *r;
    mpt_error err;
    int rc = mpt_replay_load(path, f->s, &r, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(mpt_replay_count(r), 4362);
    int64_t c[MPT_STATUS_COUNT];
    count_statuses(r, f->s, c);
    assert_int_equal(4362 - c[MPT_STATUS_OK], failed[i]);
    assert_true(fabs(mpt_replay_optimum(r) - optimum[i]) < 1e-4);
    mpt_replay_free(r);
  }
}

/* format detection by bytes: a plain file named .gz, a gzip file named .json */
static void test_magic_not_name(void **state) {
  fixture *f = *state;
  char src[1200], plain[400], gz[400];
  data_path(f, "convolution_A100_T4.json.gz", src, sizeof src);
  snprintf(plain, sizeof plain, "%s/plain.json.gz", f->tmpdir);
  snprintf(gz, sizeof gz, "%s/compressed.json", f->tmpdir);
  gzFile in = gzopen(src, "rb");
  FILE *out = fopen(plain, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char buf[65536];
  int n;
  while ((n = gzread(in, buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)n, out);
  gzclose(in);
  fclose(out);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, gz);
  assert_int_equal(system(cmd), 0);
  mpt_replay *a, *b;
  mpt_error err;
  assert_int_equal(mpt_replay_load(plain, f->s, &a, &err), 0);
  assert_int_equal(mpt_replay_load(gz, f->s, &b, &err), 0);
  assert_int_equal(mpt_replay_count(a), 4362);
  assert_int_equal(mpt_replay_count(b), 4362);
  mpt_obs bx, by;
  for (int64_t id = 0; id < 4362; id += 97)
    assert_int_equal(mpt_replay_get(a, id, &bx)->status, mpt_replay_get(b, id, &by)->status);
  mpt_replay_free(a);
  mpt_replay_free(b);
  /* a truncated gzip file is an error, not a crash */
  char trunc[400];
  snprintf(trunc, sizeof trunc, "%s/truncated.json.gz", f->tmpdir);
  snprintf(cmd, sizeof cmd, "head -c 200000 '%s' > '%s'", src, trunc);
  assert_int_equal(system(cmd), 0);
  assert_true(mpt_replay_load(trunc, f->s, &a, &err) < 0);
  assert_non_null(strstr(err.msg, trunc));
  /* the file is read through a window (json_stream.c): the records of the 200 kB that survive are
   * read before the cut is found, which is then an error of the data, not of the JSON */
  assert_int_equal(err.code, MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "corrupt or truncated"));
}

#define CONF(tx, ty) "{\"block_size_x\": 16, \"block_size_y\": 1, \"tile_size_x\": " #tx ", \"tile_size_y\": " #ty \
  ", \"read_only\": 0, \"use_padding\": 0, \"use_shmem\": 0, \"use_cmem\": 1, \"filter_height\": 15, \"filter_width\": 15.0}"
#define REC(tx, ty, inv, val) "{\"configuration\": " CONF(tx, ty) ", \"times\": {\"compilation\": 100, \"framework\": 1, \"runtimes\": [1.5, 2.5, 2.0]}, " \
  "\"invalidity\": \"" inv "\", \"correctness\": 1, \"measurements\": [{\"name\": \"time\", \"value\": " val ", \"unit\": \"s\"}], \"objectives\": [\"time\"]}"

/* every T4 invalidity kind, in seconds */
static const char small_t4[] =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"seconds\"}, \"results\": ["
    REC(1, 1, "correct", "0.002") "," REC(2, 1, "compile", "\"CompilationFailedConfig\"") ","
    REC(3, 1, "runtime", "\"RuntimeFailedConfig\"") "," REC(4, 1, "timeout", "\"x\"") ","
    REC(1, 2, "correctness", "\"x\"") "," REC(2, 2, "constraints", "\"InvalidConfig\"") "]}";

/* a hand-written Kernel Tuner cache with its error strings (the last entry's filter_width is no value
 * of the problem) */
static const char small_cache[] =
    "{\"device_name\": \"Test GPU\", \"tune_params_keys\": [\"block_size_x\", \"block_size_y\", \"tile_size_x\", "
    "\"tile_size_y\", \"read_only\", \"use_padding\", \"use_shmem\", \"use_cmem\", \"filter_height\", \"filter_width\"],"
    "\"cache\": {"
    "\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1.25, \"times\": [1.0, 1.5], \"compile_time\": 50, \"benchmark_time\": 3, \"framework_time\": 2},"
    "\"16,1,2,1,0,0,0,1,15,15\": {\"block_size_x\": 16, \"time\": \"CompilationFailedConfig\", \"compile_time\": 5},"
    "\"16,1,3,1,0,0,0,1,15,15\": {\"time\": \"RuntimeFailedConfig\"},"
    "\"16,1,4,1,0,0,0,1,15,15\": {\"time\": \"InvalidConfig\"},"
    "\"16,1,4,4,0,0,0,1,15,15\": {\"time\": 7},"
    "\"16,1,4,2,0,0,0,1,15,99\": {\"time\": 7}"
    "}}";

/* all T4 invalidity kinds and a hand-written Kernel Tuner cache with its error strings */
static void test_status_mapping(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/small_T4.json", f->tmpdir);
  write_file(path, small_t4);
  mpt_replay *r;
  mpt_error err;
  int rc = mpt_replay_load(path, f->s, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(r), 6);
  int want[6][3] = {{1, 1, MPT_STATUS_OK}, {2, 1, MPT_STATUS_COMPILE_ERROR}, {3, 1, MPT_STATUS_RUNTIME_ERROR},
                    {4, 1, MPT_STATUS_TIMEOUT}, {1, 2, MPT_STATUS_WRONG_RESULT}, {2, 2, MPT_STATUS_INVALID}};
  for (int i = 0; i < 6; i++) {
    int v[10] = {16, 1, want[i][0], want[i][1], 0, 0, 0, 1, 15, 15};
    mpt_obs buf;
    const mpt_obs *o = mpt_replay_get(r, conv_id(f, v), &buf);
    assert_non_null(o);
    assert_int_equal(o->status, want[i][2]);
    /* seconds -> ms */
    assert_true(fabs(o->compile_ms - 100000.0) < 1e-6);
    assert_true(fabs(o->benchmark_ms - 6000.0) < 1e-6);
    assert_true(fabs(o->median - 2000.0) < 1e-6);
  }
  int v1[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  mpt_obs buf;
  assert_true(fabs(mpt_replay_get(r, conv_id(f, v1), &buf)->objective - 2.0) < 1e-9);
  int v2[10] = {16, 1, 3, 3, 0, 0, 0, 1, 15, 15};
  assert_null(mpt_replay_get(r, conv_id(f, v2), &buf)); /* not in the file */
  mpt_replay_free(r);

  snprintf(path, sizeof path, "%s/small_cache.json", f->tmpdir);
  write_file(path, small_cache);
  rc = mpt_replay_load(path, f->s, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(r), 5);
  assert_int_equal(mpt_replay_unmatched(r), 1); /* filter_width 99 is not a value of the problem */
  char cov[512];
  assert_int_equal(mpt_replay_coverage(r, "they count as failed evaluations", cov, sizeof cov), 1);
  assert_non_null(strstr(cov, "4357 of the space's 4362 valid configurations have no record"));
  assert_non_null(strstr(cov, "1 of the file's 6 records are not valid configurations"));
  assert_non_null(strstr(cov, "filter_width"));
  assert_string_equal(mpt_replay_device_name(r), "Test GPU");
  const mpt_obs *o = mpt_replay_get(r, conv_id(f, v1), &buf);
  assert_int_equal(o->status, MPT_STATUS_OK);
  assert_true(o->objective == 1.25);
  assert_true(o->benchmark_ms == 3 && o->compile_ms == 50 && o->framework_ms == 2);
  assert_int_equal(o->n_times, 2);
  int st[3] = {MPT_STATUS_COMPILE_ERROR, MPT_STATUS_RUNTIME_ERROR, MPT_STATUS_INVALID};
  for (int t = 2; t <= 4; t++) {
    int v[10] = {16, 1, t, 1, 0, 0, 0, 1, 15, 15};
    assert_int_equal(mpt_replay_get(r, conv_id(f, v), &buf)->status, st[t - 2]);
  }
  assert_true(mpt_replay_optimum(r) == 1.25);
  mpt_replay_free(r);
}

/* a one-record T4 file of configuration tile_size_x = tx (the rest as in CONF) at path: metadata `meta`,
 * then the record's measurements and objectives as given; loads it and returns the objective of tx (NAN
 * for a failure), or -1e300 when the load fails (err set) */
static double load_one(fixture *f, const char *path, const char *meta, const char *meas, const char *objs, mpt_error *err,
                       char *cov, size_t cap) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"metadata\": {%s}, \"results\": [{\"configuration\": " CONF(1, 1) ", \"times\": {\"runtimes\": [1]}, "
           "\"invalidity\": \"correct\", \"measurements\": [%s], \"objectives\": [%s]}]}",
           meta, meas, objs);
  write_file(path, text);
  mpt_replay *r;
  if (mpt_replay_load(path, f->s, &r, err) < 0) return -1e300;
  int v[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  mpt_obs buf;
  const mpt_obs *o = mpt_replay_get(r, conv_id(f, v), &buf);
  double y = o && o->status == MPT_STATUS_OK ? o->objective : NAN;
  if (cov) mpt_replay_coverage(r, "x", cov, cap);
  mpt_replay_free(r);
  return y;
}

/* time units (the file's, a measurement's own, any case, Kernel Tuner's "miliseconds"), an unknown unit
 * refused, an objective that is no time (its record's time replayed, said once), NaN and Infinity as
 * Python writes them, a configuration recorded twice (the later wins, said), integers matched exactly */
static void test_units_and_objectives(void **state) {
  fixture *f = *state;
  char path[400], cov[2048];
  mpt_error err;
  snprintf(path, sizeof path, "%s/units_T4.json", f->tmpdir);
  const char *tm = "{\"name\": \"time\", \"value\": 2}";
  struct { const char *meta; double want; } units[] = {
      {"", 2}, {"\"timeunit\": \"miliseconds\"", 2}, {"\"timeunit\": \"Seconds\"", 2000}, {"\"timeunit\": \"s\"", 2000},
      {"\"timeunit\": \"Nanoseconds\"", 2e-6}, {"\"timeunit\": \"us\"", 2e-3}, {"\"timeunit\": \"MICROSECONDS\"", 2e-3},
      {"\"timeunit\": \"\"", 2}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    double y = load_one(f, path, units[i].meta, tm, "\"time\"", &err, NULL, 0);
    if (y == -1e300) fprintf(stderr, "%s\n", err.msg);
    assert_true(fabs(y - units[i].want) <= 1e-12 * units[i].want);
  }
  /* a unit of no time: one message naming the file and the field */
  assert_true(load_one(f, path, "\"timeunit\": \"minutes\"", tm, "\"time\"", &err, NULL, 0) == -1e300);
  assert_non_null(strstr(err.msg, "metadata.timeunit: unknown time unit 'minutes'"));
  assert_non_null(strstr(err.msg, path));
  assert_true(load_one(f, path, "", "{\"name\": \"time\", \"value\": 2, \"unit\": \"GFLOP/s\"}", "\"time\"", &err, NULL, 0) == -1e300);
  assert_non_null(strstr(err.msg, "results[0].measurements: the objective 'time' has unit 'GFLOP/s'"));
  /* the measurement's own unit over the file's */
  assert_true(load_one(f, path, "\"timeunit\": \"seconds\"", "{\"name\": \"time\", \"value\": 2, \"unit\": \"ms\"}", "\"time\"",
                       &err, NULL, 0) == 2);
  /* an objective with a time unit under another name; an objective that is no time: the time instead */
  assert_true(load_one(f, path, "", "{\"name\": \"kernel\", \"value\": 3, \"unit\": \"us\"}", "\"kernel\"", &err, NULL, 0) == 3e-3);
  double y = load_one(f, path, "\"timeunit\": \"s\"",
                      "{\"name\": \"GFLOP/s\", \"value\": 500, \"unit\": \"GFLOP/s\"}, {\"name\": \"time\", \"value\": 0.004}",
                      "\"GFLOP/s\"", &err, cov, sizeof cov);
  assert_true(fabs(y - 4) < 1e-12);
  assert_non_null(strstr(cov, "the objective 'GFLOP/s' (unit 'GFLOP/s') is no time"));
  /* no time at all: the record fails (noted), the file loads */
  assert_true(isnan(load_one(f, path, "", "{\"name\": \"GFLOP/s\", \"value\": 500, \"unit\": \"GFLOP/s\"}", "\"GFLOP/s\"", &err,
                             cov, sizeof cov)));
  assert_non_null(strstr(cov, "no usable objective"));
  /* a negative time is no time: the record fails (noted) */
  assert_true(isnan(load_one(f, path, "", "{\"name\": \"time\", \"value\": -2}", "\"time\"", &err, cov, sizeof cov)));
  assert_non_null(strstr(cov, "no usable objective 'time'"));
  /* Python's NaN and Infinity: a failure each, wherever they stand; strings holding the words are kept */
  assert_true(isnan(load_one(f, path, "\"note\": \"NaN Infinity\"", "{\"name\": \"time\", \"value\": NaN}", "\"time\"", &err, NULL, 0)));
  assert_true(isnan(load_one(f, path, "", "{\"name\": \"time\", \"value\": Infinity}", "\"time\"", &err, NULL, 0)));
  y = load_one(f, path, "", "{\"name\": \"power\", \"value\": -Infinity}, {\"name\": \"GFLOP/s\", \"value\": NaN}, " "{\"name\": \"time\", \"value\": 2}",
               "\"time\"", &err, NULL, 0);
  if (y == -1e300) fprintf(stderr, "%s\n", err.msg);
  assert_true(y == 2);

  /* a configuration recorded twice: the later record is used, and the coverage note says so */
  char text[4096];
  snprintf(text, sizeof text, "{\"results\": [%s, %s, %s]}", REC(1, 1, "correct", "5"), REC(1, 1, "correct", "0.007"),
           REC(2, 1, "correct", "0.009"));
  write_file(path, text);
  mpt_replay *r;
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
  assert_int_equal(mpt_replay_count(r), 2);
  int v[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  mpt_obs buf;
  assert_true(fabs(mpt_replay_get(r, conv_id(f, v), &buf)->objective - 7) < 1e-9);
  assert_int_equal(mpt_replay_coverage(r, "x", cov, sizeof cov), 1);
  assert_non_null(strstr(cov, "1 records repeat a configuration recorded before them (the first: block_size_x=16,block_size_y=1,tile_size_x=1,"));
  mpt_replay_free(r);
}

static void test_bad_files(void **state) {
  fixture *f = *state;
  mpt_replay *r = NULL;
  mpt_error err;
  char path[400];
  /* missing */
  snprintf(path, sizeof path, "%s/does_not_exist.json", f->tmpdir);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, path));
  assert_null(r);
  /* a directory: opens, but can not be read */
  assert_int_equal(mpt_replay_load(f->tmpdir, f->s, &r, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, f->tmpdir));
  assert_null(r);
  /* empty */
  snprintf(path, sizeof path, "%s/empty.json", f->tmpdir);
  write_file(path, "");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, path));
  /* not JSON */
  snprintf(path, sizeof path, "%s/garbage.json", f->tmpdir);
  write_file(path, "this is not json");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  /* JSON of another kind */
  snprintf(path, sizeof path, "%s/other.json", f->tmpdir);
  write_file(path, "{\"hello\": 1}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "unknown format"));
  /* parameters that do not match: one missing, one extra */
  snprintf(path, sizeof path, "%s/mismatch_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [{\"configuration\": {\"block_size_x\": 16, \"block_size_y\": 1, \"tile_size_x\": 1, "
                   "\"tile_size_y\": 1, \"read_only\": 0, \"use_padding\": 0, \"use_shmem\": 0, \"use_cmem\": 1, "
                   "\"filter_height\": 15, \"loop_unroll\": 1}, \"times\": {}, \"invalidity\": \"correct\", \"correctness\": 1, "
                   "\"measurements\": [{\"name\": \"time\", \"value\": 1.0}], \"objectives\": [\"time\"]}]}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "does not match problem"));
  assert_non_null(strstr(err.msg, "missing parameter 'filter_width'"));
  assert_non_null(strstr(err.msg, "extra parameter 'loop_unroll'"));
  assert_non_null(strstr(err.msg, "convolution_milo.json"));
  assert_non_null(strstr(err.msg, " (in results[0].configuration)")); /* where the names were read */
  /* a Kernel Tuner cache of another problem */
  snprintf(path, sizeof path, "%s/mismatch_cache.json", f->tmpdir);
  write_file(path, "{\"tune_params_keys\": [\"block_size_x\", \"nope\"], \"cache\": {}}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "extra parameter 'nope'"));
  assert_non_null(strstr(err.msg, "missing parameter 'tile_size_x'"));
  assert_non_null(strstr(err.msg, " (in tune_params_keys)"));
  /* no record matches a configuration of the space: says why for the first one */
  snprintf(path, sizeof path, "%s/nomatch_cache.json", f->tmpdir);
  write_file(path, "{\"tune_params_keys\": [\"block_size_x\", \"block_size_y\", \"tile_size_x\", \"tile_size_y\", "
                   "\"read_only\", \"use_padding\", \"use_shmem\", \"use_cmem\", \"filter_height\", \"filter_width\"], "
                   "\"cache\": {\"16,1,1,1,0,0,0,1,15,99\": {\"time\": 1.0}}}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "has no configuration of the space"));
  assert_non_null(strstr(err.msg, "filter_width = \"99\" is not one of the parameter's values"));
  snprintf(path, sizeof path, "%s/violates_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [{\"configuration\": {\"block_size_x\": 256, \"block_size_y\": 16, \"tile_size_x\": 1, "
                   "\"tile_size_y\": 1, \"read_only\": 0, \"use_padding\": 0, \"use_shmem\": 0, \"use_cmem\": 1, "
                   "\"filter_height\": 15, \"filter_width\": 15}, \"times\": {}, \"invalidity\": \"correct\", \"correctness\": 1, "
                   "\"measurements\": [{\"name\": \"time\", \"value\": 1.0}], \"objectives\": [\"time\"]}]}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "results[0]: block_size_x=256,block_size_y=16"));
  assert_non_null(strstr(err.msg, "violates the problem's constraints"));
  /* the same record after a valid one: the coverage note names it by its index */
  snprintf(path, sizeof path, "%s/violates2_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [" REC(1, 1, "correct", "1.0") ", {\"configuration\": {\"block_size_x\": 256, "
                   "\"block_size_y\": 16, \"tile_size_x\": 1, \"tile_size_y\": 1, \"read_only\": 0, \"use_padding\": 0, "
                   "\"use_shmem\": 0, \"use_cmem\": 1, \"filter_height\": 15, \"filter_width\": 15}, \"times\": {}, "
                   "\"invalidity\": \"correct\", \"measurements\": [{\"name\": \"time\", \"value\": 1.0}]}]}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
  char cov[2048];
  assert_int_equal(mpt_replay_coverage(r, "x", cov, sizeof cov), 1);
  if (!strstr(cov, "(the first: results[1]: block_size_x=256,")) fprintf(stderr, "coverage: %s\n", cov);
  assert_non_null(strstr(cov, "(the first: results[1]: block_size_x=256,"));
  mpt_replay_free(r);
  r = NULL;
  /* an unknown invalidity */
  snprintf(path, sizeof path, "%s/badinv_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [" REC(1, 1, "exploded", "1.0") "]}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "results[0].invalidity"));
  assert_null(r);
}

/* records are parsed one at a time (json_stream.c): malformed text between or inside them is still
 * "FILE:LINE:COL: malformed JSON", at the line and column of the error and naming the record, escaped
 * keys are unescaped, and a file the scanner cannot walk (a top-level array) gets cJSON's whole-document verdict */
static void test_streamed_records(void **state) {
  fixture *f = *state;
  mpt_replay *r = NULL;
  mpt_error err;
  char path[400];
  snprintf(path, sizeof path, "%s/stream_T4.json", f->tmpdir);
  /* a missing comma between two records: the error is at the second record (line, column and byte of
   * its '{', and which record) */
  const char *head = "{\"results\": [\n" REC(1, 1, "correct", "1.0") "\n  ";
  char text[4096];
  snprintf(text, sizeof text, "%s%s]}", head, REC(1, 2, "correct", "2.0"));
  write_file(path, text);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_null(r);
  char want[600];
  snprintf(want, sizeof want, "%s:3:3: malformed JSON (byte %ld, in results[1])", path, (long)strlen(head));
  if (!strstr(err.msg, want)) fprintf(stderr, "got: %s\nwant: %s\n", err.msg, want);
  assert_non_null(strstr(err.msg, want));
  /* the same text gzip-compressed: the same place in the inflated text */
  char gzp[420];
  snprintf(gzp, sizeof gzp, "%s.gz", path);
  gzFile gz = gzopen(gzp, "wb");
  assert_non_null(gz);
  assert_int_equal(gzputs(gz, text), (int)strlen(text));
  gzclose(gz);
  assert_int_equal(mpt_replay_load(gzp, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, want + strlen(path))); /* the same place, another file name */
  assert_non_null(strstr(err.msg, gzp));
  /* a bad number inside the second record */
  snprintf(text, sizeof text, "{\"results\": [%s, %s]}", REC(1, 1, "correct", "1.0"), REC(1, 2, "correct", "2.0.0"));
  write_file(path, text);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  /* an unterminated results array */
  snprintf(text, sizeof text, "{\"results\": [%s, ", REC(1, 1, "correct", "1.0"));
  write_file(path, text);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  /* a malformed small member (metadata) */
  snprintf(text, sizeof text, "{\"metadata\": {\"timeunit\": seconds}, \"results\": [%s]}", REC(1, 1, "correct", "1.0"));
  write_file(path, text);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  /* a top-level array: parsed whole, valid JSON of an unknown format */
  write_file(path, "[1, 2, 3]");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "unknown format"));
  /* escaped member names, metadata after the records, in seconds: the same records, scaled */
  snprintf(text, sizeof text, "{\"res\\u0075lts\": [%s, %s], \"metadata\": {\"timeunit\": \"seconds\"}}",
           REC(1, 1, "correct", "0.002"), REC(1, 2, "runtime", "\"RuntimeFailedConfig\""));
  write_file(path, text);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
  assert_int_equal(mpt_replay_count(r), 2);
  int v1[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15}, v2[10] = {16, 1, 1, 2, 0, 0, 0, 1, 15, 15};
  mpt_obs buf;
  assert_true(fabs(mpt_replay_get(r, conv_id(f, v1), &buf)->objective - 2.0) < 1e-12);
  assert_int_equal(mpt_replay_get(r, conv_id(f, v2), &buf)->status, MPT_STATUS_RUNTIME_ERROR);
  mpt_replay_free(r);
  /* a record larger than the reading window (64 KiB): 16,000 runtimes, then another record */
  {
    size_t cap = 200000, len = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    len += (size_t)snprintf(big + len, cap - len, "{\"results\": [{\"configuration\": " CONF(1, 1) ", \"times\": {\"runtimes\": [");
    for (int i = 0; i < 16000; i++) len += (size_t)snprintf(big + len, cap - len, "%s%d.5", i ? ", " : "", i % 7);
    len += (size_t)snprintf(big + len, cap - len, "]}, \"invalidity\": \"correct\", \"measurements\": [{\"name\": \"time\", "
                            "\"value\": 4.25}], \"objectives\": [\"time\"]}, %s]}", REC(1, 2, "correct", "3.0"));
    assert_true(len > 65536 && len < cap);
    write_file(path, big);
    free(big);
    assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
    assert_int_equal(mpt_replay_count(r), 2);
    const mpt_obs *o = mpt_replay_get(r, conv_id(f, v1), &buf);
    assert_true(o->objective == 4.25);
    assert_int_equal(o->n_times, MPT_OBS_MAX_TIMES); /* the first 32 of them */
    assert_true(o->times[8] == 1.5 && o->median == 3.5);
    assert_true(mpt_replay_get(r, conv_id(f, v2), &buf)->objective == 3000.0); /* REC's unit: s */
    mpt_replay_free(r);
  }
  /* a UTF-8 byte-order mark: not walked by the scanner, parsed whole by cJSON (which skips it), the
   * same records */
  snprintf(text, sizeof text, "\xEF\xBB\xBF{\"results\": [%s, %s], \"metadata\": {\"timeunit\": \"seconds\"}}",
           REC(1, 1, "correct", "0.002"), REC(1, 2, "runtime", "\"RuntimeFailedConfig\""));
  write_file(path, text);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
  assert_int_equal(mpt_replay_count(r), 2);
  assert_true(fabs(mpt_replay_get(r, conv_id(f, v1), &buf)->objective - 2.0) < 1e-12);
  assert_int_equal(mpt_replay_get(r, conv_id(f, v2), &buf)->status, MPT_STATUS_RUNTIME_ERROR);
  assert_string_equal(buf.reason, "RuntimeFailedConfig");
  mpt_replay_free(r);
  /* a Kernel Tuner cache whose keys have escapes: the key is unescaped before its values are read */
  snprintf(path, sizeof path, "%s/stream_cache.json", f->tmpdir);
  write_file(path, "{\"cache\": {\"16,1,1,1,0,0,0,1,15,1\\u0035\": {\"time\": 3.5}, \"16,1,1,1,0,0,0,1,15,99\": {\"time\": 1}}, "
                   "\"tune_params_keys\": [\"block_size_x\", \"block_size_y\", \"tile_size_x\", \"tile_size_y\", "
                   "\"read_only\", \"use_padding\", \"use_shmem\", \"use_cmem\", \"filter_height\", \"filter_width\"]}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
  assert_int_equal(mpt_replay_count(r), 1);
  assert_int_equal(mpt_replay_unmatched(r), 1);
  assert_true(mpt_replay_get(r, conv_id(f, v1), &buf)->objective == 3.5);
  mpt_replay_free(r);
  /* a missing colon in a cache entry */
  write_file(path, "{\"tune_params_keys\": [\"block_size_x\", \"block_size_y\", \"tile_size_x\", \"tile_size_y\", "
                   "\"read_only\", \"use_padding\", \"use_shmem\", \"use_cmem\", \"filter_height\", \"filter_width\"], "
                   "\"cache\": {\"16,1,1,1,0,0,0,1,15,15\" {\"time\": 1}}}");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  assert_null(r);
}

/* the compact record store: every field comes back, reasons are kept once (through two rehashes),
 * an overwritten record takes its new times and reason */
static void test_store_roundtrip(void **state) {
  (void)state;
  replay_store st;
  memset(&st, 0, sizeof st);
  mpt_obs o, back;
  for (int i = 0; i < 300; i++) {
    mpt_obs_init(&o, -1);
    o.status = i % 3 ? MPT_STATUS_OK : MPT_STATUS_COMPILE_ERROR;
    o.objective = i % 3 ? 0.5 * i : NAN;
    o.median = 0.25 * i;
    o.compile_ms = i, o.benchmark_ms = 2.0 * i, o.framework_ms = 3.0 * i;
    o.n_times = i % 5;
    for (int k = 0; k < o.n_times; k++) o.times[k] = i + 0.1 * k;
    if (i % 3 == 0) snprintf(o.reason, sizeof o.reason, "reason %d", i % 100);
    assert_int_equal(replay_store_put(&st, -1, &o, 1000), i);
  }
  assert_int_equal(st.n_reasons, 100); /* i = 0, 3, ..., 297: every i % 100 occurs, each kept once */
  mpt_obs_init(&o, -1);
  o.objective = 7.0, o.n_times = 2, o.times[0] = 1.5, o.times[1] = 2.5;
  snprintf(o.reason, sizeof o.reason, "%s", "overwritten");
  assert_int_equal(replay_store_put(&st, 3, &o, 1000), 3);
  for (int i = 0; i < 300; i++) {
    replay_store_get(&st, i, 1000 + i, &back);
    assert_int_equal(back.id, 1000 + i);
    double y = 0;
    if (i == 3) {
      assert_true(back.status == MPT_STATUS_OK && back.objective == 7.0 && back.n_times == 2 && back.times[1] == 2.5);
      assert_string_equal(back.reason, "overwritten");
      assert_true(replay_store_valid(&st, i, &y) && y == 7.0);
      continue;
    }
    assert_int_equal(back.status, i % 3 ? MPT_STATUS_OK : MPT_STATUS_COMPILE_ERROR);
    assert_int_equal(replay_store_valid(&st, i, &y), i % 3 != 0);
    if (i % 3) assert_true(back.objective == 0.5 * i && y == 0.5 * i);
    assert_true(back.median == 0.25 * i && back.compile_ms == i && back.benchmark_ms == 2.0 * i && back.framework_ms == 3.0 * i);
    assert_int_equal(back.n_times, i % 5);
    for (int k = 0; k < back.n_times; k++) assert_true(back.times[k] == i + 0.1 * k);
    char want[32] = "";
    if (i % 3 == 0) snprintf(want, sizeof want, "reason %d", i % 100);
    assert_string_equal(back.reason, want);
  }
  /* at most max_records */
  assert_int_equal(replay_store_put(&st, -1, &o, 300), -1);
  replay_store_free(&st);
}

static void test_sim_evaluator(void **state) {
  fixture *f = *state;
  char path[1200];
  data_path(f, "convolution_MI250X_kerneltuner.json.gz", path, sizeof path);
  mpt_eval_settings set = {0};
  set.simulate_path = path;
  set.rank = 3;
  set.local_rank = 1;
  mpt_evaluator *ev;
  mpt_error err;
  int rc = mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_string_equal(ev->device.vendor, "replay");
  assert_non_null(strstr(ev->device.name, "MI250X"));
  assert_string_equal(ev->device.evaluator, "sim");
  assert_int_equal(ev->device.rank, 3);
  assert_true(ev->device.host[0] != '\0');
  mpt_replay *r;
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), 0);
  for (int64_t id = 0; id < mpt_space_size(f->s); id += 17) {
    mpt_obs o;
    double t = (double)time(NULL);
    assert_int_equal(mpt_evaluator_evaluate(ev, id, &o, &err), 0);
    mpt_obs wbuf;
    const mpt_obs *want = mpt_replay_get(r, id, &wbuf);
    assert_int_equal(o.id, id);
    assert_int_equal(o.status, want->status);
    assert_true(o.status != MPT_STATUS_OK || o.objective == want->objective);
    assert_true(o.compile_ms == want->compile_ms);
    assert_int_equal(o.rank, 3);
    assert_int_equal(o.device, 1);
    assert_true(o.t_start >= t - 1 && o.t_end >= o.t_start);
  }
  /* an id outside the space */
  mpt_obs o;
  assert_true(mpt_evaluator_evaluate(ev, mpt_space_size(f->s), &o, &err) < 0);
  mpt_evaluator_close(ev);
  mpt_replay_free(r);

  /* no replay file */
  set.simulate_path = NULL;
  assert_true(mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err) < 0);
  assert_non_null(strstr(err.msg, "--simulate"));
  /* unknown evaluator */
  assert_int_equal(mpt_evaluator_open("no-such-evaluator", f->p, f->s, &set, &ev, &err), MPT_ERR_NAME);
  assert_non_null(strstr(err.msg, "sim"));
}

/* a configuration the file lacks: an error naming it as name=value pairs */
static void test_sim_missing_record(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/partial_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [" REC(1, 1, "correct", "0.002") "]}");
  mpt_eval_settings set = {0};
  set.simulate_path = path;
  mpt_evaluator *ev;
  mpt_error err;
  assert_int_equal(mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err), 0);
  assert_string_equal(ev->device.name, "partial_T4.json");
  int v1[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15}, v2[10] = {16, 1, 3, 3, 0, 0, 0, 1, 15, 15};
  mpt_obs o;
  assert_int_equal(mpt_evaluator_evaluate(ev, conv_id(f, v1), &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  /* a log must not claim a failure never measured: the run ends there (bench counts it failed instead) */
  assert_true(mpt_evaluator_evaluate(ev, conv_id(f, v2), &o, &err) < 0);
  assert_non_null(strstr(err.msg, "no record of configuration"));
  assert_non_null(strstr(err.msg, "tile_size_x=3"));
  assert_non_null(strstr(err.msg, "tile_size_y=3"));
  assert_non_null(strstr(err.msg, path));
  mpt_evaluator_close(ev);
}

/* --simulate-delay: the evaluation takes F * (compile + benchmark) of real time, asleep */
static void test_sim_delay(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/delay_T4.json", f->tmpdir);
  /* compile 100 ms + runtimes 1.5+2.5+2.0 = 106 ms recorded */
  write_file(path, "{\"results\": [" REC(1, 1, "correct", "2.0") "]}");
  mpt_eval_settings set = {0};
  set.simulate_path = path;
  set.simulate_delay = 2.0;
  mpt_evaluator *ev;
  mpt_error err;
  assert_int_equal(mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err), 0);
  int v1[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  mpt_obs o;
  double w0 = mpt_clock_mono_s(), c0 = mpt_clock_process_cpu_s();
  assert_int_equal(mpt_evaluator_evaluate(ev, conv_id(f, v1), &o, &err), 0);
  double w = mpt_clock_mono_s() - w0, c = mpt_clock_process_cpu_s() - c0;
  assert_true(w >= 0.212 - 1e-3);  /* 2 x 106 ms */
  assert_true(w < 2.0);
  assert_true(c < 0.05);           /* asleep, not spinning */
  assert_true(o.t_end - o.t_start >= 0.2);
  mpt_evaluator_close(ev);
  set.simulate_delay = -1;
  assert_true(mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err) < 0);
}

/* a watch that counts its calls and says stop from call stop_at on (0: never) */
typedef struct watch_count {
  int calls;
  int stop_at;
} watch_count;

static int count_calls(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  watch_count *w = ctx;
  w->calls++;
  return w->stop_at > 0 && w->calls >= w->stop_at;
}

/* the watch of an evaluator's evaluations is its own (mpt_eval_settings.watch): never asked while it opens,
 * asked between the slices of a simulated delay, and once it says stop the evaluation is cancelled; another
 * evaluator's evaluations neither ask it nor are cancelled by it. A watch of one evaluation's own
 * (mpt_evaluator_evaluate_watched) is asked in the same waits, for that evaluation only. */
static void test_sim_watch(void **state) {
  fixture *f = *state;
  char path[400];
  snprintf(path, sizeof path, "%s/watch_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [" REC(1, 1, "correct", "2.0") "]}"); /* 106 ms recorded: 3 slices of the delay */
  watch_count stopping = {0, 2}, going = {0, 0}, once = {0, 0};
  mpt_eval_settings set = {0};
  set.simulate_path = path;
  set.simulate_delay = 1.0;
  mpt_evaluator *stopped_ev, *going_ev;
  mpt_error err;
  set.watch = (mpt_watch){count_calls, &stopping};
  assert_int_equal(mpt_evaluator_open("sim", f->p, f->s, &set, &stopped_ev, &err), 0);
  set.watch = (mpt_watch){count_calls, &going};
  assert_int_equal(mpt_evaluator_open("sim", f->p, f->s, &set, &going_ev, &err), 0);
  assert_int_equal(stopping.calls + going.calls, 0);
  int v1[10] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
  int64_t id = conv_id(f, v1);
  mpt_obs o;
  assert_int_equal(mpt_evaluator_evaluate(stopped_ev, id, &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_CANCELLED);
  assert_non_null(strstr(o.reason, "cancelled during the simulated delay"));
  assert_int_equal(stopping.calls, 2);
  assert_int_equal(going.calls, 0);
  assert_int_equal(mpt_evaluator_evaluate(going_ev, id, &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  int per_evaluation = going.calls;
  assert_true(per_evaluation >= 2);
  assert_int_equal(stopping.calls, 2);
  const mpt_watch also = {count_calls, &once};
  assert_int_equal(mpt_evaluator_evaluate_watched(going_ev, id, &also, &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  assert_int_equal(once.calls, per_evaluation);
  assert_int_equal(going.calls, 2 * per_evaluation);
  assert_int_equal(mpt_evaluator_evaluate(going_ev, id, &o, &err), 0);
  assert_int_equal(once.calls, per_evaluation);
  assert_int_equal(going.calls, 3 * per_evaluation);
  mpt_evaluator_close(stopped_ev);
  mpt_evaluator_close(going_ev);
}

/* the shared Kernel Tuner cache, inflated, in a malloc'ed NUL-terminated buffer (*len bytes) */
static char *inflated_cache(fixture *f, size_t *len) {
  char path[1200];
  data_path(f, "convolution_A100_kerneltuner.json.gz", path, sizeof path);
  gzFile z = gzopen(path, "rb");
  assert_non_null(z);
  size_t cap = 1 << 24, n = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  int got;
  while ((got = gzread(z, text + n, (unsigned)(cap - 1 - n))) > 0) {
    n += (size_t)got;
    if (cap - 1 - n < (1 << 20)) assert_non_null(text = realloc(text, cap *= 2));
  }
  gzclose(z);
  text[n] = '\0';
  *len = n;
  return text;
}

/* the first len bytes of text to path (gzip-compressed when gz) */
static void write_prefix(const char *path, const char *text, size_t len, int gz) {
  if (gz) {
    gzFile z = gzopen(path, "wb");
    assert_non_null(z);
    assert_int_equal(gzwrite(z, text, (unsigned)len), (int)len);
    gzclose(z);
    return;
  }
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(text, 1, len, fp), len);
  fclose(fp);
}

/* records of the cache (one a line, `"key": {...},`) complete in the first cut bytes of text */
static int complete_records(const char *text, size_t cut) {
  const char *p = strstr(text, "\"cache\": {");
  assert_non_null(p);
  int n = 0;
  for (const char *line = strchr(p, '\n') + 1; line && (size_t)(line - text) < cut;) {
    const char *end = strchr(line, '\n');
    size_t stop = end ? (size_t)(end - text) : strlen(text);
    if (line[0] == '"' && stop <= cut) n++;                               /* the whole line */
    else if (line[0] == '"' && stop == cut + 1 && text[cut - 1] == ',') n++; /* up to its comma */
    line = end ? end + 1 : NULL;
  }
  return n;
}

/* A Kernel Tuner cache of a run still in progress (unterminated: Kernel Tuner closes the braces at the end) is
 * read up to its last complete record, with a note: cut in the middle of a record, right after a record's
 * comma, after the cache's last '}' (the document's own not yet written), plain and gzip-compressed; each
 * record read as the whole file reads it. A cut anywhere else (in a record before the last, in a member
 * before the cache, in a T4 file) is still malformed JSON; a cut right after the cache opened leaves no
 * record. */
static void test_kt_in_progress(void **state) {
  fixture *f = *state;
  size_t len;
  char *text = inflated_cache(f, &len);
  char full_path[1200], path[400], want[700];
  data_path(f, "convolution_A100_kerneltuner.json.gz", full_path, sizeof full_path);
  mpt_replay *full = NULL, *r = NULL;
  mpt_error err;
  assert_int_equal(mpt_replay_load(full_path, f->s, &full, &err), 0);
  assert_string_equal(mpt_replay_in_progress(full), "");
  /* the cuts: in the middle of record ~2000 (the middle of its line), right after the comma of the record
   * at 40 % of the text, after the comma and the newline, after the cache's closing brace */
  size_t mid = len / 2, comma = (size_t)(strstr(text + len * 2 / 5, "},\n") - text) + 2;
  while (text[mid] != '\n') mid++;
  mid -= 300; /* inside the line */
  size_t cuts[] = {mid, comma, comma + 1, (size_t)(strrchr(text, '}') - text)};
  for (int k = 0; k < 8; k++) {
    size_t cut = cuts[k / 2];
    int gz = k % 2, n = complete_records(text, cut);
    if (k == 6 || k == 7) n = 4362;
    snprintf(path, sizeof path, "%s/in_progress_%d.json%s", f->tmpdir, k, gz ? ".gz" : "");
    write_prefix(path, text, cut, gz);
    int rc = mpt_replay_load(path, f->s, &r, &err);
    if (rc) fprintf(stderr, "cut %d at %zu: %s\n", k, cut, err.msg);
    assert_int_equal(rc, 0);
    snprintf(want, sizeof want, "%s: the cache ends before its closing braces (a Kernel Tuner run still in progress?): "
             "read %d complete records, the rest ignored", path, n);
    assert_string_equal(mpt_replay_in_progress(r), want);
    assert_int_equal(mpt_replay_count(r), n);
    assert_true(n > 1000);
    for (int64_t id = 0; id < mpt_space_size(f->s); id++) {
      mpt_obs bx, by;
      const mpt_obs *x = mpt_replay_get(r, id, &bx), *y = mpt_replay_get(full, id, &by);
      if (!x) continue;
      assert_int_equal(x->status, y->status);
      assert_true(x->status != MPT_STATUS_OK || x->objective == y->objective);
      assert_int_equal(x->n_times, y->n_times);
    }
    mpt_replay_free(r);
    r = NULL;
  }
  /* a record before the last one malformed (its closing brace removed): still an error, at that record */
  snprintf(path, sizeof path, "%s/in_progress_bad.json", f->tmpdir);
  char *bad = malloc(len);
  assert_non_null(bad);
  size_t brace = comma - 2;
  memcpy(bad, text, brace);
  memcpy(bad + brace, text + brace + 1, mid - brace - 1);
  write_prefix(path, bad, mid - 1, 0);
  free(bad);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  assert_null(r);
  /* cut inside a member before the cache, and right after the cache opened */
  size_t in_params = (size_t)(strstr(text, "\"tune_params\": {") - text) + 40;
  size_t opened = (size_t)(strstr(text, "\"cache\": {") - text) + 11;
  write_prefix(path, text, in_params, 0);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  write_prefix(path, text, opened, 0);
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "has no configuration of the space"));
  free(text);
  /* a T4 file cut after a record: malformed, as before */
  snprintf(path, sizeof path, "%s/cut_T4.json", f->tmpdir);
  write_file(path, "{\"results\": [" REC(1, 1, "correct", "1.0") ",\n");
  assert_int_equal(mpt_replay_load(path, f->s, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "malformed JSON"));
  mpt_replay_free(full);
}

/* 600 damaged copies of the two small files above (bytes changed, cut out, JSON tokens inserted, slices
 * repeated, the end cut off; a third of them gzip-compressed, some of those cut too), fixed by a seed:
 * each loads or fails with one message naming the file, never crashes (ASan/UBSan build: no invalid
 * access; leaks too when run with ASAN_OPTIONS=detect_leaks=1, which CI leaves off for MPICH's sake),
 * and a loaded one answers for every configuration */
static void test_damaged_files(void **state) {
  fixture *f = *state;
  static const char *const tokens[] = {"{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "1e999", "-",
                                       "NaN", "\xef\xbb\xbf", "\"results\"", "\"cache\"", "\"metadata\"",
                                       "\\u0000", "\\ud800", "0.0", "\"time\"", "\"times\"", "\n"};
  const char *bases[2] = {small_t4, small_cache};
  mpt_rng rng;
  mpt_rng_seed(&rng, 20261122);
  char path[420];
  size_t cap = 2 * sizeof small_cache + 4096;
  char *b = malloc(cap);
  assert_non_null(b);
  int loaded = 0, failed = 0;
  for (int i = 0; i < 600; i++) {
    const char *base = bases[i % 2];
    size_t n = strlen(base);
    memcpy(b, base, n);
    for (int m = 1 + (int)mpt_rng_below(&rng, 4); m > 0 && n > 0; m--) {
      size_t p = (size_t)mpt_rng_below(&rng, n), k;
      switch (mpt_rng_below(&rng, 5)) {
      case 0: b[p] = (char)mpt_rng_below(&rng, 256); break;
      case 1: /* cut out up to 40 bytes */
        k = 1 + (size_t)mpt_rng_below(&rng, 40);
        if (k > n - p) k = n - p;
        memmove(b + p, b + p + k, n - p - k);
        n -= k;
        break;
      case 2: { /* insert a token */
        const char *t = tokens[mpt_rng_below(&rng, sizeof tokens / sizeof *tokens)];
        k = strlen(t);
        if (n + k > cap) break;
        memmove(b + p + k, b + p, n - p);
        memcpy(b + p, t, k);
        n += k;
        break;
      }
      case 3: n = p; break; /* cut the end */
      default: { /* repeat a slice */
        size_t q = (size_t)mpt_rng_below(&rng, n);
        k = 1 + (size_t)mpt_rng_below(&rng, 200);
        if (k > n - q) k = n - q;
        if (n + k > cap) break;
        char slice[200];
        memcpy(slice, b + q, k);
        memmove(b + p + k, b + p, n - p);
        memcpy(b + p, slice, k);
        n += k;
      }
      }
    }
    int gz = i % 3 == 2;
    snprintf(path, sizeof path, "%s/damaged_%d.json%s", f->tmpdir, i, gz ? ".gz" : "");
    if (gz) {
      gzFile z = gzopen(path, "wb");
      assert_non_null(z);
      if (n > 0) assert_int_equal(gzwrite(z, b, (unsigned)n), (int)n);
      gzclose(z);
      if (mpt_rng_below(&rng, 4) == 0) { /* the compressed file cut */
        FILE *fp = fopen(path, "rb+");
        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        long len = ftell(fp);
        assert_int_equal(ftruncate(fileno(fp), (off_t)mpt_rng_below(&rng, (uint64_t)len)), 0);
        fclose(fp);
      }
    } else {
      FILE *fp = fopen(path, "wb");
      assert_non_null(fp);
      if (n > 0) assert_int_equal(fwrite(b, 1, n, fp), n);
      fclose(fp);
    }
    mpt_replay *r = NULL;
    mpt_error err;
    memset(&err, 0, sizeof err);
    int rc = mpt_replay_load(path, f->s, &r, &err);
    if (rc == 0) {
      assert_non_null(r);
      int64_t valid = 0;
      for (int64_t id = 0; id < mpt_space_size(f->s); id++) {
        double y;
        valid += mpt_replay_valid(r, id, &y) == 1;
      }
      assert_true(valid <= mpt_replay_count(r));
      mpt_replay_free(r);
      loaded++;
    } else {
      assert_true(rc < 0);
      assert_null(r);
      if (!strstr(err.msg, path)) fprintf(stderr, "damaged file %d: %s\n", i, err.msg);
      assert_non_null(strstr(err.msg, path));
      failed++;
    }
    unlink(path);
  }
  free(b);
  /* both outcomes occur: the damage is neither always fatal nor always harmless (17 of the 600 load: a
   * random byte in a string is mostly invalid UTF-8 or a control character, which are refused) */
  assert_true(loaded > 10 && failed > 200);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_t4_gzip),
    cmocka_unit_test(test_kt_matches_t4),
    cmocka_unit_test(test_all_files),
    cmocka_unit_test(test_magic_not_name),
    cmocka_unit_test(test_status_mapping),
    cmocka_unit_test(test_units_and_objectives),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_streamed_records),
    cmocka_unit_test(test_kt_in_progress),
    cmocka_unit_test(test_damaged_files),
    cmocka_unit_test(test_store_roundtrip),
    cmocka_unit_test(test_sim_evaluator),
    cmocka_unit_test(test_sim_missing_record),
    cmocka_unit_test(test_sim_delay),
    cmocka_unit_test(test_sim_watch),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
