/* tests/test_t1.c: reading T1 problem files (spaces/t1.c): the shared example files, lenient forms
 * (Values as a JSON array, Default as a one-element list), Parameters-list warnings, and every error
 * path with its message (bad JSON with line/column, syntax error with caret, unknown name, wrong Type,
 * values not fitting the Type, empty Values, missing file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "spaces/t1.h"

static void data_path(char *buf, size_t n, const char *file) {
  const char *dir = getenv("MPT_SHARED_DATA");
  assert_non_null(dir);
  snprintf(buf, n, "%s/t1/%s", dir, file);
}

static void test_hotspot(void **state) {
  (void)state;
  char path[1024];
  data_path(path, sizeof path, "paper_hotspot.json");
  mpt_problem *p = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_load(path, &p, &err), 0);
  assert_int_equal(p->n_params, 11);
  assert_int_equal(p->n_conditions, 5);
  int bx = mpt_problem_param_index(p, "block_size_x");
  assert_int_equal(bx, 2);
  assert_int_equal(p->params[bx].n_values, 37);
  assert_int_equal(p->params[bx].type, MPT_P_INT);
  assert_int_equal(p->params[bx].values[0].kind, MPT_V_INT);
  assert_int_equal(p->params[bx].values[0].u.i, 1);
  assert_int_equal(p->params[bx].values[36].u.i, 1024);
  assert_true(p->params[bx].numeric[5] == 32.0);
  assert_int_equal(p->params[bx].default_index, 12); /* 256 = 32*8 at index 5+7 */
  int by = mpt_problem_param_index(p, "block_size_y");
  assert_int_equal(p->params[by].n_values, 6);
  assert_int_equal(p->params[by].values[5].u.i, 32);
  assert_int_equal(mpt_problem_param_index(p, "nope"), -1);
  /* condition 3 reads 6 parameters, found from the expression */
  const mpt_condition *c = &p->conditions[3];
  assert_int_equal(c->n_params, 6);
  for (int k = 1; k < c->n_params; k++) assert_true(c->params[k] > c->params[k - 1]);
  assert_string_equal(p->name, "hotspot"); /* General.BenchmarkName */
  assert_non_null(p->json);
  assert_non_null(strstr(p->dir, "t1"));
  mpt_problem_free(p);
}

static void test_all_files_load(void **state) {
  (void)state;
  const char *files[] = {"convolution_milo.json", "dedispersion_milo.json", "gemm_milo.json",
                         "hotspot_milo.json", "paper_dedispersion.json", "paper_gemm.json",
                         "paper_hotspot.json", "paper_prl_2x2.json", "paper_prl_4x4.json",
                         "paper_prl_8x8.json"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[1024];
    data_path(path, sizeof path, files[i]);
    mpt_problem *p = NULL;
    mpt_error err = {0};
    int rc = mpt_problem_load(path, &p, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_true(p->n_params > 0);
    for (int k = 0; k < p->n_conditions; k++) assert_true(p->conditions[k].n_params >= 1);
    mpt_problem_free(p);
  }
}

static void test_gemm_milo_default_list(void **state) {
  (void)state;
  char path[1024];
  data_path(path, sizeof path, "gemm_milo.json");
  mpt_problem *p = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_load(path, &p, &err), 0);
  int g = mpt_problem_param_index(p, "GEMMK");
  assert_int_equal(p->params[g].default_index, 0); /* "Default": [0] */
  mpt_problem_free(p);
}

#define HEAD "{\"ConfigurationSpace\": {\"TuningParameters\": ["

static int parse(const char *text, mpt_problem **p, mpt_error *err) {
  mpt_error_clear(err);
  return mpt_problem_parse(text, "mem.json", p, err);
}

static void test_lenient_and_types(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_error err;
  const char *t = HEAD
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": [1, 2, 4], \"Default\": 2},"
      "{\"Name\": \"f\", \"Type\": \"float\", \"Values\": \"[0.5, 1, 2.25]\", \"Default\": 1.0},"
      "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": \"['x', 'y']\", \"Default\": \"y\"},"
      "{\"Name\": \"b\", \"Type\": \"bool\", \"Values\": \"[False, True]\"},"
      "{\"Name\": \"u\", \"Type\": \"uint\", \"Values\": \"list(range(3))\", \"Default\": 7}"
      "], \"Conditions\": [{\"Expression\": \"a * f < 5 and s != 'x'\", \"Parameters\": [\"a\", \"f\", \"s\"]},"
      "{\"Expression\": \"b or u > 0\", \"Parameters\": [\"b\"]}]}}";
  int rc = parse(t, &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(p->params[0].n_values, 3);
  assert_int_equal(p->params[0].default_index, 1);
  assert_int_equal(p->params[1].default_index, 1); /* 1.0 == 1 */
  assert_int_equal(p->params[2].values[1].kind, MPT_V_STR);
  assert_int_equal(p->params[2].default_index, 1);
  assert_true(p->params[2].numeric[1] == 1.0); /* strings: index */
  assert_int_equal(p->params[3].default_index, -1);
  assert_int_equal(p->params[4].default_index, -1);
  assert_string_equal(p->name, "mem");
  /* warnings: Default 7 not among u's values; condition 1 lists [b] but uses [b, u] */
  assert_int_equal(p->n_warnings, 2);
  assert_non_null(strstr(p->warnings[0], "Default"));
  assert_non_null(strstr(p->warnings[1], "Conditions[1]"));
  assert_non_null(strstr(p->warnings[1], "u"));
  assert_int_equal(p->conditions[1].n_params, 2);
  mpt_problem_free(p);
}

static void expect_error(const char *text, int code, const char *const *needles) {
  mpt_problem *p = NULL;
  mpt_error err;
  int rc = parse(text, &p, &err);
  if (rc != code) fprintf(stderr, "rc %d, expected %d: %s\n", rc, code, err.msg);
  assert_int_equal(rc, code);
  assert_null(p);
  for (int i = 0; needles[i]; i++) {
    if (!strstr(err.msg, needles[i])) fprintf(stderr, "message lacks '%s':\n%s\n", needles[i], err.msg);
    assert_non_null(strstr(err.msg, needles[i]));
  }
}

static void test_errors(void **state) {
  (void)state;
  /* malformed JSON: line 3, column of the stray token */
  expect_error("{\n  \"ConfigurationSpace\": {\n    \"TuningParameters\": [,]\n  }\n}", MPT_ERR_PARSE,
               (const char *[]){"mem.json:3:", "malformed JSON", NULL});
  /* syntax error in Values, with caret under the column */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2,, 3]\"}]}}", MPT_ERR_PARSE,
               (const char *[]){"mem.json", "TuningParameters[0].Values", "[1, 2,, 3]", "^", NULL});
  /* unknown name in a condition */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], \"Conditions\": "
                    "[{\"Expression\": \"a < bogus\", \"Parameters\": [\"a\"]}]}}",
               MPT_ERR_NAME, (const char *[]){"Conditions[0].Expression", "a < bogus", "^", NULL});
  /* the caret sits under column 4 */
  {
    mpt_problem *p = NULL;
    mpt_error err;
    parse(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], \"Conditions\": "
               "[{\"Expression\": \"a < bogus\"}]}}", &p, &err);
    const char *e = strstr(err.msg, "a < bogus\n");
    assert_non_null(e);
    const char *caret = strchr(e, '^');
    assert_non_null(caret);
    const char *nl = strchr(e, '\n');
    /* column check: caret offset within its line equals expression start offset within its line + 4 */
    const char *expr_line = e;
    while (expr_line > err.msg && expr_line[-1] != '\n') expr_line--;
    assert_int_equal((int)(caret - (nl + 1)), (int)(e - expr_line) + 4);
  }
  /* wrong Type */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"double\", \"Values\": \"[1, 2]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"TuningParameters[0].Type", "double", NULL});
  /* values that do not fit the Type */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2.5]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"TuningParameters[0].Values", "2.5", "int", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"uint\", \"Values\": \"[1, -2]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"-2", NULL});
  /* empty Values */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"TuningParameters[0].Values", "empty", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[i for i in range(0)]\"}]}}",
               MPT_ERR_VALUE, (const char *[]){"empty", NULL});
  /* Values not a list */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"3\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"not a list", NULL});
  /* duplicate name, missing parts */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\"},"
                    "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\"}]}}",
               MPT_ERR_VALUE, (const char *[]){"duplicate", NULL});
  expect_error("{\"KernelSpecification\": {}}", MPT_ERR_VALUE, (const char *[]){"ConfigurationSpace", NULL});
  expect_error(HEAD "]}}", MPT_ERR_VALUE, (const char *[]){"TuningParameters", NULL});
  expect_error("[1, 2]", MPT_ERR_VALUE, (const char *[]){"not a JSON object", NULL});
  /* missing file */
  mpt_problem *p = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_problem_load("/nonexistent/dir/x.json", &p, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/dir/x.json"));
  assert_null(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hotspot),
      cmocka_unit_test(test_all_files_load),
      cmocka_unit_test(test_gemm_milo_default_list),
      cmocka_unit_test(test_lenient_and_types),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
