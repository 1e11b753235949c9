/* tests/test_devices_options.c: the evaluator option tables (evaluators/evaluator.h, evaluator_options.c): a
 * key=value checked against a type's table (an unknown key with the one meant and the valid keys, a bad value
 * with its row), `auto` taking the options of the evaluators it may pick, a type without options, and an
 * opened cpu evaluator reading the values given and the defaults of the rest; options checked at open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/evaluator.h"
#include "spaces/space.h"

static const char *src_dir(void) {
  const char *d = getenv("MPT_SOURCE_DIR");
  return d ? d : ".";
}

static void expect_error(const char *type, const char *kv, const char *part) {
  mpt_error err = {0};
  int rc = mpt_evaluator_check_option(mpt_evaluator_find(type), kv, &err);
  if (!strstr(err.msg, part)) fprintf(stderr, "expected '%s' in: %s\n", part, err.msg);
  assert_true(rc < 0);
  assert_non_null(strstr(err.msg, part));
}

static void expect_ok(const char *type, const char *kv) {
  mpt_error err = {0};
  int rc = mpt_evaluator_check_option(mpt_evaluator_find(type), kv, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
}

static void test_check(void **state) {
  (void)state;
  expect_ok("cpu", "isolation=fork");
  expect_ok("cpu", "memory_limit_mb=2048");
  expect_ok("cuda", "compile_options=-use_fast_math -lineinfo");
  expect_ok("hip", "compile_options=-O3");
  expect_ok("auto", "isolation=server"); /* cpu's */
  expect_ok("auto", "compile_options=-O3"); /* cuda's and hip's */
  expect_error("cpu", "isolaton=fork", "evaluator 'cpu': unknown option 'isolaton'; did you mean 'isolation'? "
               "valid options of 'cpu': memory_limit_mb, isolation (mptune tune --evaluator cpu --help)");
  expect_error("cpu", "isolation=thread", "evaluator 'cpu': bad value for option 'isolation': 'thread' is not one "
               "of server|fork; the option: isolation (string, default server, one of server|fork)");
  expect_error("cpu", "memory_limit_mb=-1", "-1 is outside 0..1.04858e+06");
  expect_error("cpu", "memory_limit_mb=lots", "'lots' is not an integer");
  expect_error("cuda", "isolation=fork", "evaluator 'cuda': unknown option 'isolation'; valid options of 'cuda': "
               "compile_options");
  expect_error("auto", "nothing=1", "valid options of 'auto': memory_limit_mb, isolation, compile_options (mptune");
  expect_error("sim", "delay=1", "evaluator 'sim' takes no options");
  expect_error("cpu", "isolation", "is not of the form key=value");
}

static void test_print(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  mpt_evaluator_print_options(mpt_evaluator_find("auto"), f);
  mpt_evaluator_print_options(mpt_evaluator_find("sim"), f);
  fclose(f);
  assert_non_null(strstr(buf, "options of evaluator 'cpu', which 'auto' takes when it picks it"));
  assert_non_null(strstr(buf, "  isolation (string, default server, one of server|fork): "));
  assert_non_null(strstr(buf, "options of evaluator 'hip', which 'auto' takes"));
  assert_non_null(strstr(buf, "evaluator 'sim' takes no options\n"));
  free(buf);
}

/* the cpu evaluator opened on the matmul example: the values given (the last of a key given twice) and the
 * defaults; a bad option refused at open, before anything is compiled */
static void test_opened(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/examples/cpu/matmul.json", src_dir());
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_load(path, &p, &err), 0);
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  const char *opts[] = {"isolation=server", "memory_limit_mb=4096", "isolation=fork"};
  mpt_eval_settings set = {.options = opts, .n_options = 3, .iterations = 1};
  mpt_evaluator *ev = NULL;
  int rc = mpt_evaluator_open("auto", p, s, &set, &ev, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_string_equal(ev->type->name, "cpu"); /* auto picked cpu for a C kernel */
  assert_string_equal(ev->device.evaluator, "cpu");
  assert_string_equal(mpt_evaluator_opt_str(ev, "isolation"), "fork");
  assert_int_equal(mpt_evaluator_opt_int(ev, "memory_limit_mb"), 4096);
  assert_int_equal(mpt_evaluator_opt_given(ev, "memory_limit_mb"), 1);
  assert_null(mpt_evaluator_opt_str(ev, "compile_options")); /* not cpu's */
  mpt_obs o;
  assert_int_equal(mpt_evaluator_evaluate(ev, 0, &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  mpt_evaluator_close(ev);
  const char *bad[] = {"isolation=thread"};
  set.options = bad;
  set.n_options = 1;
  assert_true(mpt_evaluator_open("cpu", p, s, &set, &ev, &err) < 0);
  assert_non_null(strstr(err.msg, "bad value for option 'isolation'"));
  mpt_space_free(s);
  mpt_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check),
      cmocka_unit_test(test_print),
      cmocka_unit_test(test_opened),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
