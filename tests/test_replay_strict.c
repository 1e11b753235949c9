/* tests/test_replay_strict.c: what the replay loader (evaluators/replay/replay.c, json_stream.c) refuses or
 * reports in files that look well-formed at first sight: text after the end of the JSON document
 * ("FILE:LINE:COL: malformed JSON: extra data ...", as Python's "Extra data"; whitespace is fine),
 * values followed by stray text ("12abc"), records marked valid without a usable objective (one
 * coverage line with their count and the first one's configuration; they count as failed, while
 * records that say they failed stay silent failures), what JSON forbids and cJSON accepts, and numbers
 * no double holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>
#include "evaluators/replay/replay.h"
#include "tests/conv_fixture.h"

static int setup(void **state) { return conv_fixture_setup(state, "replay_strict"); }
static int teardown(void **state) { return conv_fixture_teardown(state); }

/* writes n bytes of text (gzip-compressed when gz) to dir/name; path gets the file's path */
static void put(const fixture *f, const char *name, const char *text, size_t n, int gz, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s", f->tmpdir, name);
  if (gz) {
    gzFile z = gzopen(path, "wb");
    assert_non_null(z);
    assert_int_equal(gzwrite(z, text, (unsigned)n), (int)n);
    gzclose(z);
    return;
  }
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(text, 1, n, fp), n);
  fclose(fp);
}

/* loads path: 0 and the replay, or the error code with err.msg */
static int load(const fixture *f, const char *path, mpt_replay **r, mpt_error *err) {
  memset(err, 0, sizeof *err);
  *r = NULL;
  return mpt_replay_load(path, f->s, r, err);
}

/* the load of path fails with "path:LINE:COL: malformed JSON<what>" (what: NULL for any) */
static void expect_malformed(const fixture *f, const char *path, int line, int col, const char *what) {
  mpt_replay *r;
  mpt_error err;
  assert_int_equal(load(f, path, &r, &err), MPT_ERR_PARSE);
  assert_null(r);
  char want[700];
  snprintf(want, sizeof want, "%s:%d:%d: malformed JSON%s", path, line, col, what ? what : "");
  if (strncmp(err.msg, want, strlen(want)) != 0) fprintf(stderr, "got:  %s\nwant: %s...\n", err.msg, want);
  assert_true(strncmp(err.msg, want, strlen(want)) == 0);
}

#define CONF(tx, ty) "{\"block_size_x\": 16, \"block_size_y\": 1, \"tile_size_x\": " #tx ", \"tile_size_y\": " #ty \
  ", \"read_only\": 0, \"use_padding\": 0, \"use_shmem\": 0, \"use_cmem\": 1, \"filter_height\": 15, \"filter_width\": 15}"
/* a T4 record: invalidity, the measurements' array text, the objectives' */
#define T4REC(tx, ty, inv, meas, objs) "{\"configuration\": " CONF(tx, ty) ", \"times\": {\"runtimes\": [1.0]}, " \
  "\"invalidity\": \"" inv "\", \"correctness\": 1, \"measurements\": " meas ", \"objectives\": " objs "}"
#define MEAS(v) "[{\"name\": \"time\", \"value\": " v ", \"unit\": \"ms\"}]"
#define KEYS "\"tune_params_keys\": [\"block_size_x\", \"block_size_y\", \"tile_size_x\", \"tile_size_y\", " \
  "\"read_only\", \"use_padding\", \"use_shmem\", \"use_cmem\", \"filter_height\", \"filter_width\"]"

static const char t4_doc[] = "{\"results\": [\n" T4REC(1, 1, "correct", MEAS("1.5"), "[\"time\"]") "\n]}";
static const char kt_doc[] = "{" KEYS ",\n\"cache\": {\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1.5}}}";

/* the document followed by tail: an error at the tail's first non-whitespace byte (line, col), or a
 * load when the tail is whitespace (line 0) */
static void with_tail(const fixture *f, const char *doc, const char *tail, size_t tail_n, int gz, int line, int col) {
  char text[4096], path[600];
  size_t n = strlen(doc);
  assert_true(n + tail_n < sizeof text);
  memcpy(text, doc, n);
  memcpy(text + n, tail, tail_n);
  put(f, gz ? "tail.json.gz" : "tail.json", text, n + tail_n, gz, path, sizeof path);
  if (line > 0) {
    expect_malformed(f, path, line, col, ": extra data after the end of the document");
    return;
  }
  mpt_replay *r;
  mpt_error err;
  int rc = load(f, path, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_replay_count(r), 1);
  mpt_replay_free(r);
}

/* text after the document: T4 and Kernel Tuner, plain and gzip, streamed and (byte-order mark) parsed
 * whole; whitespace after it is fine, anything else (a NUL byte too) is an error at its place */
static void test_extra_data(void **state) {
  fixture *f = *state;
  int t4_lines = 3, kt_lines = 2; /* the line the documents end on */
  for (int gz = 0; gz <= 1; gz++) {
    with_tail(f, t4_doc, "\n", 1, gz, 0, 0);
    with_tail(f, t4_doc, " \t\r\n\n", 5, gz, 0, 0);
    with_tail(f, t4_doc, "} ]] trailing junk\n", 19, gz, t4_lines, 3);
    with_tail(f, t4_doc, "\n  x", 4, gz, t4_lines + 1, 3);
    with_tail(f, t4_doc, t4_doc, strlen(t4_doc), gz, t4_lines, 3); /* two documents */
    with_tail(f, t4_doc, "\n\0", 2, gz, t4_lines + 1, 1);
    with_tail(f, kt_doc, "\n", 1, gz, 0, 0);
    with_tail(f, kt_doc, "junk", 4, gz, kt_lines, (int)strlen(strchr(kt_doc, '\n')));
  }
  /* a byte-order mark: the document is parsed whole (json_stream.c does not walk it), the same checks */
  char bom[2048];
  snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", t4_doc);
  with_tail(f, bom, "\n", 1, 0, 0, 0);
  with_tail(f, bom, " ,", 2, 0, t4_lines, 4);
  /* an empty top-level object with something after it: extra data, not an unknown format */
  with_tail(f, "{}", "[]", 2, 0, 1, 3);
}

/* a value the scanner delimits but cJSON reads only in part ("12abc" as 12): an error at the stray
 * text, in a record and in a small top-level member */
static void test_stray_text_in_value(void **state) {
  fixture *f = *state;
  char path[600];
  static const char entry[] = "{" KEYS ",\n\"cache\": {\"16,1,1,1,0,0,0,1,15,15\": 12abc}}";
  put(f, "stray_cache.json", entry, strlen(entry), 0, path, sizeof path);
  expect_malformed(f, path, 2, (int)(strstr(entry, "abc") - strchr(entry, '\n')), " (byte");
  static const char member[] = "{\"device_name\": nullx, " KEYS ", \"cache\": {\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1.5}}}";
  put(f, "stray_member.json", member, strlen(member), 0, path, sizeof path);
  expect_malformed(f, path, 1, (int)(strstr(member, "nullx") - member) + 5, " (byte");
  mpt_replay *r;
  mpt_error err;
  assert_int_equal(load(f, path, &r, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "in device_name"));
}

/* id of the convolution configuration 16,1,tx,ty,0,0,0,1,15,15 */
static int64_t conv_id(const fixture *f, int tx, int ty) {
  const int vals[] = {16, 1, tx, ty, 0, 0, 0, 1, 15, 15};
  return conv_fixture_id(f, vals);
}

/* loads text as name: the status of 16,1,tx,ty,... for each of the n (tx, ty) pairs in want ({tx, ty,
 * status}), and the coverage line in cov */
static void check_statuses(const fixture *f, const char *name, const char *text, const int (*want)[3], int n,
                           char *cov, size_t cap) {
  char path[600];
  put(f, name, text, strlen(text), 0, path, sizeof path);
  mpt_replay *r;
  mpt_error err;
  int rc = load(f, path, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  for (int i = 0; i < n; i++) {
    mpt_obs buf;
    const mpt_obs *o = mpt_replay_get(r, conv_id(f, want[i][0], want[i][1]), &buf);
    assert_non_null(o);
    if (o->status != want[i][2]) fprintf(stderr, "%s: record %d: status %d, want %d\n", name, i, o->status, want[i][2]);
    assert_int_equal(o->status, want[i][2]);
    assert_int_equal(mpt_obs_valid(o), want[i][2] == MPT_STATUS_OK);
  }
  assert_int_equal(mpt_replay_coverage(r, "x", cov, cap), 1); /* the small files cover a few configurations */
  mpt_replay_free(r);
}

#define NO_OBJ(n, name, tx, ty) n " records marked valid have no usable objective '" name "' (the first: " \
  "block_size_x=16,block_size_y=1,tile_size_x=" #tx ",tile_size_y=" #ty ",read_only=0,use_padding=0,use_shmem=0," \
  "use_cmem=1,filter_height=15,filter_width=15); they count as failed evaluations"

/* T4 records marked correct without a finite objective: counted and said once; failures stay silent */
static void test_t4_no_objective(void **state) {
  fixture *f = *state;
  static const char text[] = "{\"results\": ["
      T4REC(1, 1, "correct", MEAS("1.5"), "[\"time\"]") ","
      T4REC(2, 1, "correct", "[]", "[\"time\"]") ","                            /* no measurement */
      T4REC(3, 1, "correct", MEAS("null"), "[\"time\"]") ","                    /* null */
      T4REC(4, 1, "correct", MEAS("Infinity"), "[\"time\"]") ","                /* not finite (Python's json) */
      T4REC(1, 2, "correct", MEAS("\"RuntimeFailedConfig\""), "[\"time\"]") "," /* a failure by its string */
      T4REC(2, 2, "runtime", "[]", "[\"time\"]") ","                            /* a failure */
      T4REC(3, 2, "compile", MEAS("null"), "[\"time\"]") "]}";
  const int want[][3] = {{1, 1, MPT_STATUS_OK}, {2, 1, MPT_STATUS_RUNTIME_ERROR}, {3, 1, MPT_STATUS_RUNTIME_ERROR},
                         {4, 1, MPT_STATUS_RUNTIME_ERROR}, {1, 2, MPT_STATUS_RUNTIME_ERROR},
                         {2, 2, MPT_STATUS_RUNTIME_ERROR}, {3, 2, MPT_STATUS_COMPILE_ERROR}};
  char cov[1024];
  check_statuses(f, "noobj_T4.json", text, want, 7, cov, sizeof cov);
  if (!strstr(cov, NO_OBJ("3", "time", 2, 1))) fprintf(stderr, "got: %s\n", cov);
  assert_non_null(strstr(cov, NO_OBJ("3", "time", 2, 1)));
  /* the objective is objectives[0]: a time measurement does not stand in for it */
  static const char other[] = "{\"results\": [" T4REC(1, 1, "correct", MEAS("1.5"), "[\"energy\"]") "]}";
  const int want1[][3] = {{1, 1, MPT_STATUS_RUNTIME_ERROR}};
  check_statuses(f, "energy_T4.json", other, want1, 1, cov, sizeof cov);
  assert_non_null(strstr(cov, NO_OBJ("1", "energy", 1, 1)));
  /* nothing to say without such records */
  check_statuses(f, "fine_T4.json", t4_doc, want, 1, cov, sizeof cov);
  assert_null(strstr(cov, "marked valid"));
}

/* Kernel Tuner entries with neither a time nor an error string: counted and said once; an error string
 * in the field of the cache's objective (not 'time') is a silent failure of its kind */
static void test_kt_no_objective(void **state) {
  fixture *f = *state;
  static const char text[] = "{" KEYS ", \"objective\": \"GFLOP/s\", \"cache\": {"
      "\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1.5, \"GFLOP/s\": 100},"
      "\"16,1,2,1,0,0,0,1,15,15\": {\"GFLOP/s\": 100},"                   /* no time */
      "\"16,1,3,1,0,0,0,1,15,15\": {\"time\": null},"                     /* null */
      "\"16,1,4,1,0,0,0,1,15,15\": {\"time\": \"InvalidConfig\"},"        /* a failure */
      "\"16,1,1,2,0,0,0,1,15,15\": {\"GFLOP/s\": \"CompilationFailedConfig\"}," /* a failure, in the objective */
      "\"16,1,2,2,0,0,0,1,15,15\": {\"time\": 2.5, \"GFLOP/s\": \"RuntimeFailedConfig\"}}}";
  const int want[][3] = {{1, 1, MPT_STATUS_OK}, {2, 1, MPT_STATUS_RUNTIME_ERROR}, {3, 1, MPT_STATUS_RUNTIME_ERROR},
                         {4, 1, MPT_STATUS_INVALID}, {1, 2, MPT_STATUS_COMPILE_ERROR}, {2, 2, MPT_STATUS_RUNTIME_ERROR}};
  char cov[1024];
  check_statuses(f, "noobj_cache.json", text, want, 6, cov, sizeof cov);
  if (!strstr(cov, NO_OBJ("2", "time", 2, 1))) fprintf(stderr, "got: %s\n", cov);
  assert_non_null(strstr(cov, NO_OBJ("2", "time", 2, 1)));
  check_statuses(f, "fine_cache.json", kt_doc, want, 1, cov, sizeof cov);
  assert_null(strstr(cov, "marked valid"));
}

/* the load of text (n bytes, gzip-compressed when gz) fails with code and "PATH:LINE:COL: <kind>what
 * (byte B[, in where])", LINE:COL and B those of text offset bad */
static void expect_error_at(const fixture *f, const char *name, const char *text, size_t n, int gz, size_t bad,
                            int code, const char *kind, const char *what, const char *where) {
  char path[600], want[1200];
  put(f, name, text, n, gz, path, sizeof path);
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < bad; i++)
    if (text[i] == '\n') line++, line_start = i + 1;
  snprintf(want, sizeof want, "%s:%d:%zu: %s%s (byte %zu%s%s)", path, line, bad - line_start + 1, kind, what, bad,
           where ? ", in " : "", where ? where : "");
  mpt_replay *r;
  mpt_error err;
  assert_int_equal(load(f, path, &r, &err), code);
  assert_null(r);
  if (strcmp(err.msg, want) != 0) fprintf(stderr, "got:  %s\nwant: %s\n", err.msg, want);
  assert_string_equal(err.msg, want);
}

/* the load of text fails with "PATH:LINE:COL: malformed JSON: what (byte B[, in where])" */
static void expect_fault(const fixture *f, const char *name, const char *text, size_t n, int gz, size_t bad,
                         const char *what, const char *where) {
  expect_error_at(f, name, text, n, gz, bad, MPT_ERR_PARSE, "malformed JSON: ", what, where);
}

#define R0 T4REC(1, 1, "correct", MEAS("1.5"), "[\"time\"]")
#define R1(meas, objs) T4REC(2, 1, "correct", meas, objs)

/* what cJSON accepts and JSON forbids (a T4 export of a run replaying it would not be JSON): invalid
 * UTF-8 and raw control characters in strings, raw control characters between values, leading zeros, nesting
 * beyond 1000 levels; at their line
 * and column, in the record that holds them; a syntax error before such a fault is the one reported */
static void test_json_faults(void **state) {
  fixture *f = *state;
  static const char utf8[] = "{\"results\": [\n" R0 ",\n" R1(MEAS("1.5"), "[\"time\", \"a\xff\"]") "\n]}";
  for (int gz = 0; gz < 2; gz++)
    expect_fault(f, gz ? "utf8.json.gz" : "utf8.json", utf8, strlen(utf8), gz, (size_t)(strchr(utf8, '\xff') - utf8),
                 "invalid UTF-8 in a string", "results[1]");
  static const char ctrl[] = "{\"results\": [\n" R0 ",\n" R1(MEAS("1.5"), "[\"time\", \"a\x01\"]") "\n]}";
  expect_fault(f, "ctrl.json", ctrl, strlen(ctrl), 0, (size_t)(strchr(ctrl, '\x01') - ctrl),
               "raw control character U+0001 in a string (escape it as \\u0001)", "results[1]");
  /* between values, where cJSON skips it as whitespace: the same, as JSON allows only space, tab, LF and CR */
  static const char ctrl_out[] = "{\"results\": [\n" R0 ",\n" R1(MEAS("1.5"), "[\"time\",\x0b \"a\"]") "\n]}";
  for (int gz = 0; gz < 2; gz++)
    expect_fault(f, gz ? "ctrl_out.json.gz" : "ctrl_out.json", ctrl_out, strlen(ctrl_out), gz,
                 (size_t)(strchr(ctrl_out, '\x0b') - ctrl_out),
                 "raw control character U+000B between values (JSON allows only space, tab, LF, CR)", "results[1]");
  static const char zero[] = "{\"results\": [\n" R0 ",\n" R1(MEAS("01.5"), "[\"time\"]") "\n]}";
  expect_fault(f, "zero.json", zero, strlen(zero), 0, (size_t)(strstr(zero, "01.5") - zero),
               "a number with a leading zero (JSON has none: 12, not 012)", "results[1]");
  static const char meta[] = "{\"metadata\": {\"note\": \"a\xff\"}, \"results\": [\n" R0 "\n]}";
  expect_fault(f, "meta.json", meta, strlen(meta), 0, (size_t)(strchr(meta, '\xff') - meta), "invalid UTF-8 in a string",
               NULL);
  /* in a member the reader interprets (the time unit), before or after the records: the fault, not "unknown
   * time unit 'milli\377seconds'" */
  static const char unit[] = "{\"metadata\": {\"timeunit\": \"milli\xffseconds\"}, \"results\": [\n" R0 "\n]}";
  expect_fault(f, "unit.json", unit, strlen(unit), 0, (size_t)(strchr(unit, '\xff') - unit), "invalid UTF-8 in a string",
               NULL);
  static const char unit2[] = "{\"results\": [\n" R0 "\n], \"metadata\": {\"timeunit\": \"milli\xffseconds\"}}";
  expect_fault(f, "unit2.json", unit2, strlen(unit2), 0, (size_t)(strchr(unit2, '\xff') - unit2),
               "invalid UTF-8 in a string", NULL);
  static const char cache[] = "{" KEYS ",\n\"cache\": {\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1.5, \"x\": \"\xc0\x80\"}}}";
  expect_fault(f, "cache.json", cache, strlen(cache), 0, (size_t)(strchr(cache, '\xc0') - cache),
               "invalid UTF-8 in a string", "the cache's entry 0");
  /* 1000 levels nested in results[1]'s objectives: the document, results and the record are three more */
  char deep[8192];
  int o = snprintf(deep, sizeof deep, "{\"results\": [\n" R0 ",\n{\"configuration\": " CONF(2, 1) ", \"objectives\": ");
  size_t opened = 0;
  for (int k = 0; k < 1000; k++) {
    if (k == 997) opened = (size_t)o; /* the 1001st level */
    deep[o++] = '[';
  }
  for (int k = 0; k < 1000; k++) deep[o++] = ']';
  o += snprintf(deep + o, sizeof deep - (size_t)o, "}\n]}");
  expect_fault(f, "deep.json", deep, (size_t)o, 0, opened, "nested too deeply (more than 1000 levels)", "results[1]");
  /* a syntax error in results[0] comes before the fault in results[1] */
  static const char first[] = "{\"results\": [\n" T4REC(1, 1, "correct", MEAS("1.5 x"), "[\"time\"]") ",\n"
      R1(MEAS("1.5"), "[\"time\", \"a\xff\"]") "\n]}";
  char path[600];
  put(f, "first.json", first, strlen(first), 0, path, sizeof path);
  mpt_replay *r;
  mpt_error err;
  assert_int_equal(load(f, path, &r, &err), MPT_ERR_PARSE);
  if (!strstr(err.msg, "malformed JSON (byte") || !strstr(err.msg, "in results[0])")) fprintf(stderr, "got: %s\n", err.msg);
  assert_non_null(strstr(err.msg, "malformed JSON (byte"));
  assert_non_null(strstr(err.msg, "in results[0])"));
  /* UTF-8 of 2 to 4 bytes and escapes load */
  static const char fine[] = "{\"metadata\": {\"note\": \"\xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80 \\t\"}, \"results\": [\n"
      R0 "\n]}";
  put(f, "fine.json", fine, strlen(fine), 0, path, sizeof path);
  int rc = load(f, path, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_replay_free(r);
}

#define RANGE "is out of range (not representable as a double)"

/* a number no double holds (cJSON read it as an infinity): refused at its line and column, in the record that
 * holds it, in T4 and Kernel Tuner files, plain and gzip; Python's json writes an infinite time as Infinity,
 * which is read (a failure where it stands for the objective). Numbers doubles do hold load: Kernel Tuner's
 * 1e20 failure time, DBL_MAX, and 1e-400 (zero, as strtod reads it). */
static void test_numbers_out_of_range(void **state) {
  fixture *f = *state;
  static const char t4[] = "{\"results\": [\n" R0 ",\n" R1(MEAS("1e999"), "[\"time\"]") "\n]}";
  for (int gz = 0; gz < 2; gz++)
    expect_error_at(f, gz ? "range.json.gz" : "range.json", t4, strlen(t4), gz, (size_t)(strstr(t4, "1e999") - t4),
                    MPT_ERR_VALUE, "", "number 1e999 " RANGE, "results[1]");
  static const char kt[] = "{" KEYS ",\n\"cache\": {\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1.5},\n"
      "\"16,1,2,1,0,0,0,1,15,15\": {\"time\": -1.5e400}}}";
  expect_error_at(f, "range_cache.json", kt, strlen(kt), 0, (size_t)(strstr(kt, "-1.5e400") - kt), MPT_ERR_VALUE, "",
                  "number -1.5e400 " RANGE, "the cache's entry 1");
  static const char meta[] = "{\"metadata\": {\"size\": 17976931348623159e292}, \"results\": [\n" R0 "\n]}";
  expect_error_at(f, "range_meta.json", meta, strlen(meta), 0, (size_t)(strstr(meta, "1797") - meta), MPT_ERR_VALUE,
                  "", "number 17976931348623159e292 " RANGE, NULL);
  static const char fine[] = "{" KEYS ", \"x\": [1.7976931348623157e308, 17976931348623158e292, 1e-400],\n"
      "\"cache\": {\"16,1,1,1,0,0,0,1,15,15\": {\"time\": 1e20}, \"16,1,2,1,0,0,0,1,15,15\": {\"time\": 2.5E+1}}}";
  char path[600];
  put(f, "fine_range.json", fine, strlen(fine), 0, path, sizeof path);
  mpt_replay *r;
  mpt_error err;
  int rc = load(f, path, &r, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_obs buf;
  const mpt_obs *o = mpt_replay_get(r, conv_id(f, 1, 1), &buf);
  assert_non_null(o);
  assert_true(o->objective == 1e20);
  o = mpt_replay_get(r, conv_id(f, 2, 1), &buf);
  assert_non_null(o);
  assert_true(o->objective == 25.0);
  mpt_replay_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_extra_data),
    cmocka_unit_test(test_stray_text_in_value),
    cmocka_unit_test(test_t4_no_objective),
    cmocka_unit_test(test_kt_no_objective),
    cmocka_unit_test(test_json_faults),
    cmocka_unit_test(test_numbers_out_of_range),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
