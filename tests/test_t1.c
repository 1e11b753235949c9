/* tests/test_t1.c: reading T1 problem files (spaces/t1.c): the shared example files, lenient forms
 * (Values as a JSON array, Default as a one-element list), Parameters-list warnings, and every error
 * path with its message (bad JSON with line/column, syntax error with caret, unknown name, wrong Type,
 * values not fitting the Type, empty Values, missing file), and 1000 damaged copies of the shared files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "spaces/t1.h"
#include "spaces/json/json_keys.h"
#include "spaces/sys/rng.h"
#include "spaces/space.h"
#include "tests/slurp.h"

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
  /* a value listed twice (True == 1 == 1.0, as in Python): every configuration with it would be there twice */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[4, 1, 2, 8, 2, 1]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"TuningParameters[0].Values (a): value 2 is listed twice (items 2 and 4)", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"float\", \"Values\": [0.5, 1, true, 1.0]}]}}", MPT_ERR_VALUE,
               (const char *[]){"is listed twice (items 1 and 2)", NULL});
  expect_error(HEAD "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": \"['x', 'y', 'x']\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"value 'x' is listed twice (items 0 and 2)", NULL});
  /* what a Values expression that is not a list gives is named */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"5\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"the expression '5' gives an int, not a list", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"string\", \"Values\": \"'abc'\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"gives a str, not a list", NULL});
  /* data after the document (Python: "Extra data"); whitespace after it is fine */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\"}]}}\n\n  {\"x\": 1}\n", MPT_ERR_PARSE,
               (const char *[]){"mem.json:3:3: malformed JSON: data after the end of the document, near '{\"x\": 1}'", NULL});
  {
    mpt_problem *p = NULL;
    mpt_error e;
    assert_int_equal(parse(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\"}]}} \n\t\r\n", &p, &e), 0);
    mpt_problem_free(p);
  }
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
  /* a directory or a pipe instead of a file: refused before opening (opening a pipe would wait for a writer) */
  char dir[] = "/tmp/mpt_t1_XXXXXX", fifo[64];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(mpt_problem_load(dir, &p, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "is a directory, not a problem file"));
  snprintf(fifo, sizeof fifo, "%s/p.json", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(mpt_problem_load(fifo, &p, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "is not a regular file"));
  unlink(fifo);
  rmdir(dir);
}

/* every message about a field starts "FILE:LINE:COL: FIELD:", the position that of the field's value in the
 * file, of the offending character inside an expression (escapes before it counted as in the file), or of
 * the object a missing field belongs in; warnings too */
/* values and text read exactly as Python's json and eval would (each found by review): JSON
 * integers past 2**53 (cJSON reads doubles), duplicates among big ints and beside a NaN, a \u0000 escape
 * (it cut the string: "x > 1\u0000 or True" ran as "x > 1"), a number literal longer than the lexer's
 * buffer (it was cut), a parameter that hides a builtin (it was called as the builtin), and a Condition
 * split at "and" inside a non-ASCII name */
static void test_exact_reading(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_error err;
  int rc = parse(HEAD "{\"Name\": \"x\", \"Type\": \"int\", \"Values\": [9007199254740993, 9223372036854775807, -9007199254740995]}]}}",
                 &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_true(p->params[0].values[0].u.i == 9007199254740993LL);
  assert_true(p->params[0].values[1].u.i == INT64_MAX);
  assert_true(p->params[0].values[2].u.i == -9007199254740995LL);
  mpt_problem_free(p);
  expect_error(HEAD "{\"Name\": \"x\", \"Type\": \"int\", \"Values\": [9223372036854775808]}]}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:1:", "Values[0] (x)", "9223372036854775808 does not fit a 64-bit int", NULL});
  expect_error(HEAD "{\"Name\": \"x\", \"Type\": \"int\", \"Values\": \"[2**53, 2**53+1, 2**53]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"value 9007199254740992 is listed twice (items 0 and 2)", NULL});
  expect_error(HEAD "{\"Name\": \"x\", \"Type\": \"float\", \"Values\": \"[1, float('nan'), 2, 1]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"value 1 is listed twice (items 0 and 3)", NULL});
  expect_error(HEAD "{\"Name\": \"x\", \"Type\": \"int\", \"Values\": [1, 2]}], \"Conditions\": [\"x > 1\\u0000 or True\"]}}",
               MPT_ERR_PARSE, (const char *[]){"mem.json:1:116:", "\\u0000 (a NUL character)", NULL});
  char longlit[1200];
  snprintf(longlit, sizeof longlit, HEAD "{\"Name\": \"x\", \"Type\": \"float\", \"Values\": \"[1.%0520d5]\"}]}}", 0);
  expect_error(longlit, MPT_ERR_PARSE, (const char *[]){"a number literal longer than mptune reads", NULL});
  expect_error(HEAD "{\"Name\": \"max\", \"Type\": \"int\", \"Values\": [1, 2]}], \"Conditions\": [\"max(1, 2) > 1\"]}}",
               MPT_ERR_PARSE, (const char *[]){"'max' is a tuning parameter here, not the builtin function", NULL});
  /* "\u00e9and\u00e9 == 1" is one comparison (a name of three UTF-8 letters and "and"), not é and é == 1 */
  rc = parse(HEAD "{\"Name\": \"\u00e9\", \"Type\": \"int\", \"Values\": [0, 1]},"
             "{\"Name\": \"\u00e9and\u00e9\", \"Type\": \"int\", \"Values\": [0, 1]}], \"Conditions\": [\"\u00e9and\u00e9 == 1\"]}}",
             &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_space *sp = NULL;
  assert_int_equal(mpt_space_build(p, &sp, &err), 0);
  assert_int_equal(mpt_space_size(sp), 2);
  for (int64_t id = 0; id < 2; id++) {
    int idx[2];
    mpt_space_config(sp, id, idx);
    assert_int_equal(idx[1], 1);
  }
  mpt_space_free(sp);
  mpt_problem_free(p);
}

#define PARAM_A "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}]}"

/* the Search block (a strategy's name, its Attributes as key=value options, numbers as written) and the
 * Budget block (each kind once, in range), and their faults at their line and column, naming the field */
static void test_search_and_budget(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_error err;
  assert_int_equal(parse(PARAM_A "}", &p, &err), 0);
  assert_null(p->search.name);
  assert_int_equal(p->budget.count_at, -1);
  assert_int_equal(p->budget.fraction_at, -1);
  assert_int_equal(p->budget.seconds_at, -1);
  mpt_problem_free(p);
  const char *t = PARAM_A ",\n\"Search\": {\"Name\": \"bayes_opt\", \"Attributes\": [{\"Name\": \"popsize\", \"Value\": 2e1},"
                  " {\"Name\": \"method\", \"Value\": \"ei\"}, {\"Name\": \"fit\", \"Value\": true},"
                  " {\"Name\": \"methodparams\", \"Value\": {\"zeta\": 1}}, {\"Name\": \"x\", \"Value\": 0.1}]},\n"
                  "\"Budget\": [{\"Type\": \"TuningDuration\", \"BudgetValue\": 90.5}, {\"Type\": \"ConfigurationCount\", \"BudgetValue\": 100}]}";
  assert_int_equal(parse(t, &p, &err), 0);
  assert_string_equal(p->search.name, "bayes_opt");
  assert_int_equal(p->search.n_attributes, 5);
  assert_string_equal(p->search.options[0], "popsize=2e1");
  assert_string_equal(p->search.options[1], "method=ei");
  assert_string_equal(p->search.options[2], "fit=true");
  assert_null(p->search.options[3]);
  assert_string_equal(p->search.why[3], "an object");
  assert_string_equal(p->search.options[4], "x=0.1");
  assert_int_equal(p->budget.count, 100);
  assert_int_equal(p->budget.count_at, 1);
  assert_true(p->budget.seconds == 90.5);
  assert_int_equal(p->budget.seconds_at, 0);
  assert_int_equal(p->budget.fraction_at, -1);
  mpt_problem_free(p);
  assert_int_equal(parse(PARAM_A ", \"Budget\": [{\"Type\": \"ConfigurationFraction\", \"BudgetValue\": 0.25}]}", &p, &err), 0);
  assert_true(p->budget.fraction == 0.25);
  assert_int_equal(p->budget.fraction_at, 0);
  mpt_problem_free(p);
  expect_error(PARAM_A ",\n\"Search\": {\"Nmae\": \"bo\"}}", MPT_ERR_NAME,
               (const char *[]){"mem.json:2:12: Search.Nmae: unknown key; did you mean 'Name'?", NULL});
  expect_error(PARAM_A ",\n\"Search\": {\"Attributes\": []}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:11: Search.Name: missing or not a non-empty string", NULL});
  expect_error(PARAM_A ",\n\"Search\": {\"Name\": \"bo\", \"Attributes\": {\"popsize\": 3}}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:40: Search.Attributes: not a list", NULL});
  expect_error(PARAM_A ",\n\"Search\": {\"Name\": \"bo\", \"Attributes\": [{\"Name\": \"a=b\", \"Value\": 3}]}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:50: Search.Attributes[0].Name: missing, or not a non-empty string without '='", NULL});
  expect_error(PARAM_A ",\n\"Search\": {\"Name\": \"bo\", \"Attributes\": [{\"Name\": \"a\", \"Vaule\": 3}]}}", MPT_ERR_NAME,
               (const char *[]){"Search.Attributes[0].Vaule: unknown key; did you mean 'Value'?", NULL});
  expect_error(PARAM_A ",\n\"Budget\": {\"Type\": \"TuningDuration\", \"BudgetValue\": 60}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:11: Budget: not a list", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"Evaluations\", \"BudgetValue\": 60}]}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:21: Budget[0].Type: unknown type 'Evaluations' (expected ConfigurationCount, "
                                "ConfigurationFraction or TuningDuration)", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"ConfigurationCount\", \"BudgetValue\": 12.5}]}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:58: Budget[0].BudgetValue (ConfigurationCount): 12.5 is not a whole number of "
                                "evaluations >= 1", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"ConfigurationFraction\", \"BudgetValue\": 1.5}]}", MPT_ERR_VALUE,
               (const char *[]){"Budget[0].BudgetValue (ConfigurationFraction): 1.5 is not a fraction", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"TuningDuration\", \"BudgetValue\": -3}]}", MPT_ERR_VALUE,
               (const char *[]){"Budget[0].BudgetValue (TuningDuration): -3 is not a number of seconds", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"TuningDuration\", \"BudgetValue\": \"60\"}]}", MPT_ERR_VALUE,
               (const char *[]){"Budget[0].BudgetValue: missing or not a number", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"TuningDuration\", \"BudgetValue\": 6},\n"
                         "{\"Type\": \"TuningDuration\", \"BudgetValue\": 9}]}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:3:10: Budget[1].Type: TuningDuration given twice (Budget[0] too)", NULL});
  expect_error(PARAM_A ",\n\"Budget\": [{\"Type\": \"ConfigurationCount\", \"BudgetValue\": 6},\n"
                         "{\"Type\": \"ConfigurationFraction\", \"BudgetValue\": 0.5}]}", MPT_ERR_VALUE,
               (const char *[]){"Budget[1].Type: ConfigurationFraction and ConfigurationCount (Budget[0]) both give an "
                                "evaluation budget; give one", NULL});
}

static void test_error_positions(void **state) {
  (void)state;
  /* Values of the second parameter: the stray ',' is line 3, column 49 ("Values": "[1, 2,, 3]") */
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "  {\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\"},\n"
               "  {\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2,, 3]\"}]}}",
               MPT_ERR_PARSE,
               (const char *[]){"mem.json:3:49: ConfigurationSpace.TuningParameters[1].Values (b): ", "[1, 2,, 3]", NULL});
  /* an expression with escapes before the error: \" and \u0041 are one character each in the expression,
   * six and two in the file; 'bogus' starts at byte 17 of the expression, column 39 + 6 - 2 + 17 */
  expect_error(HEAD "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": \"['A', 'x']\"}],\n"
                    "\"Conditions\": [\"s == \\\"\\u0041\\\" and bogus\"]}}",
               MPT_ERR_NAME,
               (const char *[]){"mem.json:2:37: ConfigurationSpace.Conditions[0]: unknown name 'bogus'", NULL});
  /* a Type that is not one: the position of its value */
  expect_error(HEAD "\n{\"Name\": \"a\", \"Type\": \"double\", \"Values\": \"[1, 2]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:23: ConfigurationSpace.TuningParameters[0].Type (a): unknown type 'double'", NULL});
  /* a missing Name: the position of the object it belongs in */
  expect_error(HEAD "\n  {\"Type\": \"int\", \"Values\": \"[1, 2]\"}]}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:3: ConfigurationSpace.TuningParameters[0].Name: missing", NULL});
  /* a missing ConfigurationSpace: the position of the document, the object it is missing from */
  expect_error("\n  {\"General\": {\"BenchmarkName\": \"x\"}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:3: ConfigurationSpace: missing or not an object", NULL});
  /* a JSON array item of the wrong kind: the item's own position */
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": [1,\n {}]}]}}", MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:2: ConfigurationSpace.TuningParameters[0].Values[1] (a): not a number", NULL});
  /* the same key earlier in another object does not mislead the position */
  expect_error("{\"Notes\": {\"Type\": \"x\"}, \"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "{\"Name\": \"a\", \"Type\": \"double\", \"Values\": \"[1, 2]\"}]}}",
               MPT_ERR_VALUE, (const char *[]){"mem.json:2:23: ConfigurationSpace.TuningParameters[0].Type (a)", NULL});
  /* warnings */
  mpt_problem *p = NULL;
  mpt_error err;
  int rc = parse(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\",\n \"Default\": 7}]}}", &p, &err);
  assert_int_equal(rc, 0);
  assert_int_equal(p->n_warnings, 1);
  assert_string_equal(p->warnings[0], "mem.json:2:13: ConfigurationSpace.TuningParameters[0].Default (a): 7 is not among the values");
  mpt_problem_free(p);
  /* a Parameters list that leaves out a parameter of one value (a constant): no warning; one of two: a warning */
  static const char *const lists[] = {"[\"a\"]", "[\"c\"]"};
  for (int k = 0; k < 2; k++) {
    char t[512];
    snprintf(t, sizeof t, HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}, {\"Name\": \"c\", "
             "\"Type\": \"int\", \"Values\": \"[15]\"}], \"Conditions\": [{\"Expression\": \"a * c < 20\", \"Parameters\": %s}]}}",
             lists[k]);
    assert_int_equal(parse(t, &p, &err), 0);
    assert_int_equal(p->n_warnings, k);
    mpt_problem_free(p);
  }
}

/* what cJSON accepts and JSON forbids is refused at its line and column: invalid UTF-8 and raw control
 * characters in strings (a T4 export would copy them into invalid JSON), leading zeros in numbers, and
 * nesting beyond 1000 levels (cJSON's limit, which gave no reason); a syntax error before such a fault
 * is reported first */
#define ONE_PARAM(name_json, default_json) \
  HEAD "{\"Name\": " name_json ", \"Type\": \"int\", \"Values\": \"[1, 12]\", \"Default\": " default_json "}]}}"
static void test_json_hygiene(void **state) {
  (void)state;
  static const char *const bad_utf8[] = {"\"a\xff\"", "\"a\xc0\x80\"", "\"a\xed\xa0\x80\"", "\"a\xe2\x82\"",
                                         "\"a\xf4\x90\x80\x80\"", "\"a\x80\""};
  for (size_t i = 0; i < sizeof bad_utf8 / sizeof *bad_utf8; i++) {
    char t[512];
    snprintf(t, sizeof t, ONE_PARAM("%s", "1"), bad_utf8[i]);
    expect_error(t, MPT_ERR_PARSE, (const char *[]){"mem.json:1:57: malformed JSON: invalid UTF-8 in a string", NULL});
  }
  expect_error(ONE_PARAM("\"a\tb\"", "1"), MPT_ERR_PARSE,
               (const char *[]){"mem.json:1:57: malformed JSON: raw control character U+0009 in a string "
                                "(escape it as \\u0009)", NULL});
  expect_error(ONE_PARAM("\"a\"", "\n 012"), MPT_ERR_PARSE,
               (const char *[]){"mem.json:2:2: malformed JSON: a number with a leading zero", NULL});
  expect_error(ONE_PARAM("\"a\"", "-01"), MPT_ERR_PARSE,
               (const char *[]){"mem.json:1:108: malformed JSON: a number with a leading zero", NULL});
  /* raw control characters between values, which cJSON skips as whitespace: only tab, LF and CR may stand there */
  expect_error(ONE_PARAM("\"a\"", "\n\x01 1"), MPT_ERR_PARSE,
               (const char *[]){"mem.json:2:1: malformed JSON: raw control character U+0001 between values "
                                "(JSON allows only space, tab, LF, CR)", NULL});
  expect_error(ONE_PARAM("\"a\"", "1\x0c"), MPT_ERR_PARSE,
               (const char *[]){"mem.json:1:108: malformed JSON: raw control character U+000C between values", NULL});
  expect_error("\x1f" ONE_PARAM("\"a\"", "1"), MPT_ERR_PARSE,
               (const char *[]){"mem.json:1:1: malformed JSON: raw control character U+001F between values", NULL});
  /* after the document such a byte is data after its end, as any other */
  expect_error(ONE_PARAM("\"a\"", "1") "\n\x01", MPT_ERR_PARSE,
               (const char *[]){"mem.json:2:1: malformed JSON: data after the end of the document, near '\\x01'", NULL});
  expect_error(ONE_PARAM("\"a\"", "1") " \x1b[2J", MPT_ERR_PARSE,
               (const char *[]){"data after the end of the document, near '\\x1B[2J'", NULL});
  /* a syntax error before the fault is the one reported */
  expect_error(HEAD ",{\"Name\": \"a\xff\"}]}}", MPT_ERR_PARSE, (const char *[]){"mem.json:1:46: malformed JSON near ',{", NULL});
  /* what JSON allows passes: UTF-8 of 2, 3 and 4 bytes, escapes, 0, 0.5, 1e05, -0, tab, CR and LF between values */
  static const char *const good[] = {ONE_PARAM("\"\xc2\xb5s\xe2\x82\xac\xf0\x9f\x98\x80\"", "1"),
                                     ONE_PARAM("\"a\\u00e9\"", "1"), ONE_PARAM("\"a\"", "0.5e01"),
                                     ONE_PARAM("\"a\"", "\t\r\n 1\r\n\t"),
                                     HEAD "{\"Name\": \"a\", \"Type\": \"float\", \"Values\": [0, 0.5, 1e05, -0.25]}]}}"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    mpt_problem *p = NULL;
    mpt_error err;
    int rc = parse(good[i], &p, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    mpt_problem_free(p);
  }
  /* nesting: 1000 levels in all pass, 1001 are refused at the bracket that opens the 1001st */
  for (int extra = 0; extra < 2; extra++) {
    int levels = 999 + extra; /* arrays, inside the document object */
    char *t = malloc(4096);
    assert_non_null(t);
    int o = snprintf(t, 4096, "{\"X\": ");
    for (int k = 0; k < levels; k++) t[o++] = '[';
    for (int k = 0; k < levels; k++) t[o++] = ']';
    snprintf(t + o, 4096 - (size_t)o, ", \"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": "
             "\"int\", \"Values\": \"[1]\"}]}}");
    mpt_problem *p = NULL;
    mpt_error err;
    int rc = parse(t, &p, &err);
    if (extra == 0) {
      if (rc) fprintf(stderr, "%s\n", err.msg);
      assert_int_equal(rc, 0);
      mpt_problem_free(p);
    } else {
      assert_int_equal(rc, MPT_ERR_PARSE);
      assert_string_equal(err.msg, "mem.json:1:1006: malformed JSON: nested too deeply (more than 1000 levels)");
    }
    free(t);
  }
}

/* a parameter no expression can refer to (a keyword, a name with a space or starting with a digit) is
 * refused at its Name, with why; names of other letters (UTF-8) and builtins' names are fine */
static void test_param_names(void **state) {
  (void)state;
  static const struct { const char *name, *why; } bad[] = {
      {"True", "is a Python keyword"}, {"None", "is a Python keyword"}, {"lambda", "is a Python keyword"},
      {"for", "is a Python keyword"},  {"a b", "is not a name"},        {"1x", "is not a name"},
      {"x-y", "is not a name"},        {"a.b", "is not a name"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char t[512], want[256];
    snprintf(t, sizeof t, HEAD "{\"Name\": \"ok\", \"Type\": \"int\", \"Values\": \"[1]\"},\n"
             "  {\"Name\": \"%s\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}]}}", bad[i].name);
    snprintf(want, sizeof want, "mem.json:2:12: ConfigurationSpace.TuningParameters[1].Name: '%s' %s", bad[i].name,
             bad[i].why);
    expect_error(t, MPT_ERR_VALUE, (const char *[]){want, "no expression can refer to it", NULL});
  }
  mpt_problem *p = NULL;
  mpt_error err;
  int rc = parse(HEAD "{\"Name\": \"\xc2\xb5_1\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}, {\"Name\": \"len\", \"Type\": "
                 "\"int\", \"Values\": \"[3]\"}], \"Conditions\": [\"\xc2\xb5_1 < len\"]}}", &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_problem_free(p);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define RANGE "is out of range (not representable as a double)"

/* a number no double holds (cJSON read 1e999999 as inf: a Default that was only "not among the values", with
 * exit 0) is refused wherever it stands, at its line and column and with the field: a Default, an item of
 * Values, a ProblemSize, a Budget's value; numbers doubles hold are read (Kernel Tuner's 1e20, DBL_MAX, 1e-400
 * as 0) */
static void test_numbers_out_of_range(void **state) {
  (void)state;
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "  {\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\", \"Default\": 1e999999}]}}",
               MPT_ERR_VALUE, (const char *[]){"mem.json:2:63: ConfigurationSpace.TuningParameters[0].Default: number "
                                               "1e999999 " RANGE, NULL});
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "  {\"Name\": \"a\", \"Type\": \"float\", \"Values\": \"[1, 2]\"},\n"
               "  {\"Name\": \"b\", \"Type\": \"float\", \"Values\": [0.5, -1e400, 2]}]}}",
               MPT_ERR_VALUE, (const char *[]){"mem.json:3:50: ConfigurationSpace.TuningParameters[1].Values[1]: number "
                                               "-1e400 " RANGE, NULL});
  expect_error("{\"KernelSpecification\": {\"Language\": \"CUDA\",\n \"ProblemSize\": [4096, 2E+308]},\n"
               " \"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": [1]}]}}",
               MPT_ERR_VALUE, (const char *[]){"mem.json:2:24: KernelSpecification.ProblemSize[1]: number 2E+308 " RANGE,
                                               NULL});
  expect_error("{\"Budget\": [{\"Type\": \"ConfigurationCount\", \"BudgetValue\": 17976931348623159e292}],\n"
               " \"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": [1]}]}}",
               MPT_ERR_VALUE, (const char *[]){"mem.json:1:59: Budget[0].BudgetValue: number 17976931348623159e292 " RANGE,
                                               NULL});
  /* a syntax error before it is the one reported */
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [,\n"
               "  {\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\", \"Default\": 1e999999}]}}",
               MPT_ERR_PARSE, (const char *[]){"mem.json:1:46: malformed JSON", NULL});
  mpt_problem *p = NULL;
  mpt_error err;
  int rc = parse("{\"Budget\": [{\"Type\": \"TuningDuration\", \"BudgetValue\": 1e20}],\n"
                 " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
                 "  {\"Name\": \"f\", \"Type\": \"float\", \"Values\": [1e-400, 1.7976931348623157e308, 1e20], "
                 "\"Default\": 1e20}]}}", &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_true(p->params[0].numeric[0] == 0.0);
  assert_true(p->params[0].numeric[1] == 1.7976931348623157e308);
  assert_int_equal(p->params[0].default_index, 2);
  assert_int_equal(p->n_warnings, 0);
  mpt_problem_free(p);
}

/* n parameters, one a line (line 2 + i for parameter i), named p0, p1, ..., the last one named as parameter
 * dup when dup >= 0; the caller frees the text */
static char *many_params(int n, int dup) {
  size_t cap = 80 * (size_t)n + 256, len = 0;
  char *t = malloc(cap);
  assert_non_null(t);
  len += (size_t)snprintf(t, cap, "{\"ConfigurationSpace\": {\"TuningParameters\": [\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(t + len, cap - len, "  {\"Name\": \"p%d\", \"Type\": \"int\", \"Values\": [1, 2]}%s\n",
                            i == n - 1 && dup >= 0 ? dup : i, i + 1 < n ? "," : "");
  snprintf(t + len, cap - len, "]}}");
  return t;
}

/* a file with hundreds of thousands of parameters is refused at once with the limit (comparing each name
 * with every earlier one took 13.8 s for 64k of them, over a minute for 100k, and then the space was
 * refused as too large); the limit itself is accepted */
static void test_too_many_params(void **state) {
  (void)state;
  char *t = many_params(100000, -1);
  mpt_problem *p = NULL;
  mpt_error err;
  double t0 = now_s();
  int rc = parse(t, &p, &err);
  double took = now_s() - t0;
  if (rc != MPT_ERR_VALUE) fprintf(stderr, "rc %d: %s\n", rc, err.msg);
  assert_int_equal(rc, MPT_ERR_VALUE);
  assert_null(p);
  assert_string_equal(err.msg, "mem.json:1:45: ConfigurationSpace.TuningParameters: 100000 parameters; mptune reads at "
                               "most 10000 (far more than any real problem has)");
  assert_true(took < 10); /* a sanity bound: well under a second */
  free(t);
  t = many_params(MPT_T1_MAX_PARAMS, -1);
  rc = parse(t, &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(p->n_params, MPT_T1_MAX_PARAMS);
  assert_int_equal(mpt_problem_param_index(p, "p9999"), 9999);
  assert_int_equal(mpt_problem_param_index(p, "p10000"), -1);
  mpt_problem_free(p);
  free(t);
}

/* a parameter name given twice is refused at the second one, naming the first (found through a hash set of
 * the names, not by comparing each name with every earlier one) */
static void test_duplicate_param_name(void **state) {
  (void)state;
  char *t = many_params(5000, 17);
  expect_error(t, MPT_ERR_VALUE,
               (const char *[]){"mem.json:5001:12: ConfigurationSpace.TuningParameters[4999].Name: duplicate parameter "
                                "'p17' (the name of TuningParameters[17] too)", NULL});
  free(t);
}

/* an object with 50,000 keys of other tools (General here) is read at once, and a misspelt key after them is
 * still found at its line and column: the keys read there were looked up among the object's members for each
 * of its keys (a minute for these) */
static void test_many_other_keys(void **state) {
  (void)state;
  enum { N = 50000 };
  size_t cap = 32 * (size_t)N + 512, len = 0;
  char *t = malloc(cap);
  assert_non_null(t);
  len += (size_t)snprintf(t, cap, "{\"General\": {\n");
  for (int i = 0; i < N; i++) len += (size_t)snprintf(t + len, cap - len, "\"Comment%d\": %d,\n", i, i);
  snprintf(t + len, cap - len, "  \"BenchmarkNme\": \"x\"},\n" "\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": "
           "\"a\", \"Type\": \"int\", \"Values\": [1, 2]}]}}");
  double t0 = now_s();
  char want[128];
  snprintf(want, sizeof want, "mem.json:%d:3: General.BenchmarkNme: unknown key; did you mean 'BenchmarkName'?", N + 2);
  expect_error(t, MPT_ERR_NAME, (const char *[]){want, NULL});
  assert_true(now_s() - t0 < 10); /* a sanity bound: well under a second */
  free(t);
}

/* a key given twice in one object is refused at its (first) position: cJSON keeps the first silently, so the
 * second (often the edit meant) would be dropped */
static void test_duplicate_keys(void **state) {
  (void)state;
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "  {\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\", \"Values\": \"[4]\"}]}}",
               MPT_ERR_VALUE,
               (const char *[]){"mem.json:2:32: ConfigurationSpace.TuningParameters[0].Values: key given twice in one object", NULL});
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\"}],\n"
               " \"Conditions\": []},\n \"ConfigurationSpace\": {}}",
               MPT_ERR_VALUE, (const char *[]){"mem.json:1:2: ConfigurationSpace: key given twice in one object", NULL});
  /* an unknown key given twice (another tool's extension) is not ours to judge */
  mpt_problem *p = NULL;
  mpt_error err;
  assert_int_equal(parse("{\"Notes\": 1, \"Notes\": 2, \"ConfigurationSpace\": {\"TuningParameters\": [\n"
                         "  {\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}]}}", &p, &err), 0);
  mpt_problem_free(p);
}

/* misspelt keys: one or two edits from a key the reader knows (or a case difference) is an error with file,
 * line, column, field and the key meant; keys far from all (other tools' extensions) are accepted */
static void test_misspelt_keys(void **state) {
  (void)state;
  expect_error("{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "  {\"Name\": \"a\", \"Type\": \"int\", \"Vaules\": \"[1, 2]\"}]}}",
               MPT_ERR_NAME,
               (const char *[]){"mem.json:2:32: ConfigurationSpace.TuningParameters[0].Vaules: unknown key; did you mean 'Values'?", NULL});
  /* the position is that of the key in the object named, not of the same key earlier in another object
   * (an extension's, or an earlier parameter's) */
  expect_error("{\"Notes\": {\"Vaules\": 0}, \"ConfigurationSpace\": {\"TuningParameters\": [\n"
               "  {\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1]\", \"Meta\": {\"Vaules\": 1}},\n"
               "  {\"Name\": \"b\", \"Type\": \"int\", \"Vaules\": \"[1, 2]\"}]}}",
               MPT_ERR_NAME,
               (const char *[]){"mem.json:3:32: ConfigurationSpace.TuningParameters[1].Vaules: unknown key; did you mean 'Values'?", NULL});
  expect_error(HEAD "{\"Nmae\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}]}}", MPT_ERR_NAME,
               (const char *[]){"TuningParameters[0].Nmae", "'Name'", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"type\": \"int\", \"Values\": \"[1, 2]\"}]}}", MPT_ERR_NAME,
               (const char *[]){"TuningParameters[0].type", "'Type'", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], \"Conditons\": []}}",
               MPT_ERR_NAME, (const char *[]){"ConfigurationSpace.Conditons", "'Conditions'", NULL});
  expect_error(HEAD "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], \"Conditions\": "
                    "[{\"Expresion\": \"a > 1\"}]}}",
               MPT_ERR_NAME, (const char *[]){"Conditions[0].Expresion", "'Expression'", NULL});
  expect_error("{\"Genral\": {}, \"ConfigurationSpace\": {}}", MPT_ERR_NAME, (const char *[]){"mem.json:1:2: Genral", "'General'", NULL});
  expect_error("{\"ConfigurationSpaces\": {}}", MPT_ERR_NAME, (const char *[]){"'ConfigurationSpace'", NULL});
  expect_error("{\"General\": {\"BenchmarkNam\": \"x\"}, \"ConfigurationSpace\": {}}", MPT_ERR_NAME,
               (const char *[]){"General.BenchmarkNam", "'BenchmarkName'", NULL});
  /* accepted: keys far from every known one, and a near one whose key is there too */
  mpt_problem *p = NULL;
  mpt_error err;
  int rc = parse("{\"General\": {\"Comment\": \"c\", \"BenchmarkName\": \"n\"}, \"BenchmarkConfig\": {\"dataSize\": 1}, "
                 "\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Names\": \"x\", \"Type\": \"int\", "
                 "\"Values\": \"[1, 2]\", \"Description\": \"d\"}]}}",
                 &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_problem_free(p);
  /* the distance itself: swaps count once, case is ignored, counting stops past the limit */
  assert_int_equal(mpt_key_distance("Nmae", "Name", 2), 1);
  assert_int_equal(mpt_key_distance("values", "Values", 2), 0);
  assert_int_equal(mpt_key_distance("Argumens", "Arguments", 2), 1);
  assert_int_equal(mpt_key_distance("Arguemnts", "Arguments", 2), 1);
  assert_int_equal(mpt_key_distance("Argmnts", "Arguments", 2), 2);
  assert_int_equal(mpt_key_distance("Stream", "Arguments", 2), 3);
  assert_int_equal(mpt_key_distance("", "Name", 9), 4);
}

/* 1000 damaged copies of five shared problem files, fixed by a seed: half anywhere (characters changed or
 * cut out, JSON and Python tokens inserted, slices repeated), half only inside one Values or Expression
 * string (Python tokens inserted, characters cut). Each parses, and then builds its space (when its
 * Cartesian product is at most a million), or fails with one message (naming the file when parsing);
 * never a crash (ASan/UBSan build: no invalid access, no undefined behaviour in the expression parser
 * and evaluator; leaks too with ASAN_OPTIONS=detect_leaks=1, which CI leaves off for MPICH's sake). */
static void test_damaged_problems(void **state) {
  (void)state;
  static const char *const files[] = {"convolution_milo.json", "dedispersion_milo.json", "gemm_milo.json",
                                      "hotspot_milo.json", "paper_prl_2x2.json"};
  static const char *const tokens[] = {"{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "1e999", "-",
                                       "**", "//", "%", "(", ")", " for i in range(3)", " if ", "lambda", "[1,2]",
                                       "\"Values\"", "\"Conditions\"", "0", "-1", "2**62", "range(", "\\u0000",
                                       "\n", "\"int\"", "\"float\"", "\"string\"", "\"bool\"", " and ", " not "};
  enum { NF = sizeof files / sizeof *files };
  char *base[NF], paths[NF][1024];
  const char *path_of[NF];
  size_t blen[NF], cap;
  for (int i = 0; i < NF; i++) {
    data_path(paths[i], sizeof paths[i], files[i]);
    path_of[i] = paths[i];
  }
  char *b = test_slurp_many(path_of, NF, base, blen, 4096, &cap);
  mpt_rng rng;
  mpt_rng_seed(&rng, 1122);
  int parsed = 0, built = 0, failed = 0;
  for (int i = 0; i < 1000; i++) {
    int fi = i % NF;
    size_t n = blen[fi];
    memcpy(b, base[fi], n);
    b[n] = 0;
    /* every other copy is damaged only inside one Values or Expression string (Python, not JSON) */
    size_t lo = 0, hi = n;
    if (i % 2) {
      const char *key = mpt_rng_below(&rng, 2) ? "\"Expression\": \"" : "\"Values\": \"";
      int count = 0;
      for (const char *q = strstr(b, key); q && q < b + n; q = strstr(q + 1, key)) count++;
      int pick = count ? (int)mpt_rng_below(&rng, (uint64_t)count) : -1;
      for (const char *q = strstr(b, key); q && pick >= 0; q = strstr(q + 1, key), pick--)
        if (pick == 0) {
          lo = (size_t)(q - b) + strlen(key);
          hi = lo;
          while (hi < n && b[hi] != '"') hi++;
        }
    }
    for (int m = 1 + (int)mpt_rng_below(&rng, 3); m > 0 && n > 0; m--) {
      size_t top = i % 2 ? hi : n; /* the damage stays in [lo, top) */
      if (top <= lo) break;
      size_t p = lo + (size_t)mpt_rng_below(&rng, top - lo), k;
      int op = (int)mpt_rng_below(&rng, 4);
      if (i % 2 && (op == 0 || op == 3)) op = 2; /* inside a string: tokens and cuts only */
      switch (op) {
      case 0: b[p] = (char)(32 + mpt_rng_below(&rng, 95)); break;
      case 1: /* cut out up to 10 characters */
        k = 1 + (size_t)mpt_rng_below(&rng, 10);
        if (k > n - p) k = n - p;
        if (i % 2 && k > hi - p) k = hi - p;
        memmove(b + p, b + p + k, n - p - k);
        n -= k;
        hi -= i % 2 ? k : 0;
        break;
      case 2: { /* insert a token (inside a string: one without quotes or backslashes) */
        const char *t;
        do t = tokens[mpt_rng_below(&rng, sizeof tokens / sizeof *tokens)];
        while (i % 2 && strpbrk(t, "\"\\\n"));
        k = strlen(t);
        if (n + k > cap) break;
        memmove(b + p + k, b + p, n - p);
        memcpy(b + p, t, k);
        n += k;
        hi += i % 2 ? k : 0;
        break;
      }
      default: { /* repeat a slice of up to 30 characters */
        char slice[30];
        size_t q = (size_t)mpt_rng_below(&rng, n);
        k = 1 + (size_t)mpt_rng_below(&rng, 30);
        if (k > n - q) k = n - q;
        if (n + k > cap) break;
        memcpy(slice, b + q, k);
        memmove(b + p + k, b + p, n - p);
        memcpy(b + p, slice, k);
        n += k;
      }
      }
    }
    b[n] = 0;
    mpt_problem *p = NULL;
    mpt_error err;
    mpt_error_clear(&err);
    int rc = mpt_problem_parse(b, "damaged.json", &p, &err);
    if (rc == 0) {
      assert_non_null(p);
      parsed++;
      double cart = 1;
      for (int q = 0; q < p->n_params; q++) cart *= p->params[q].n_values;
      if (cart <= 1e6) {
        mpt_space *sp = NULL;
        mpt_error_clear(&err);
        rc = mpt_space_build(p, &sp, &err);
        if (rc == 0) {
          assert_non_null(sp);
          assert_true(mpt_space_size(sp) <= (int64_t)cart);
          mpt_space_free(sp);
          built++;
        } else {
          assert_true(rc < 0);
          assert_true(err.msg[0] != 0);
          failed++;
        }
      }
      mpt_problem_free(p);
    } else {
      assert_true(rc < 0);
      assert_null(p);
      if (!strstr(err.msg, "damaged.json")) fprintf(stderr, "damaged problem %d: %s\n", i, err.msg);
      assert_non_null(strstr(err.msg, "damaged.json"));
      failed++;
    }
  }
  for (int i = 0; i < NF; i++) free(base[i]);
  free(b);
  /* both outcomes occur */
  assert_true(parsed > 40 && built > 40 && failed > 300);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hotspot),
      cmocka_unit_test(test_all_files_load),
      cmocka_unit_test(test_gemm_milo_default_list),
      cmocka_unit_test(test_lenient_and_types),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_misspelt_keys), cmocka_unit_test(test_duplicate_keys),
      cmocka_unit_test(test_error_positions), cmocka_unit_test(test_exact_reading),
      cmocka_unit_test(test_damaged_problems), cmocka_unit_test(test_json_hygiene),
      cmocka_unit_test(test_param_names), cmocka_unit_test(test_too_many_params),
      cmocka_unit_test(test_duplicate_param_name), cmocka_unit_test(test_many_other_keys),
      cmocka_unit_test(test_numbers_out_of_range), cmocka_unit_test(test_search_and_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
