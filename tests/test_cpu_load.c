/* tests/test_cpu_load.c: the cpu evaluator's warning about a node whose cores are shared (evaluators/cpu_load.h):
 * workers sharing cores, workers + compile jobs beyond the cores, a load average beyond them; none on a node with
 * a core for each; and what this machine reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/cpu_load.h"

static void check(mpt_cpu_load l, const char *want) {
  char msg[768];
  int warned = mpt_cpu_load_warning(&l, msg, sizeof msg);
  printf("%d workers, %d jobs, %d cores, load %.2f: %s\n", l.workers, l.compile_jobs, l.cores, l.load1,
         warned ? msg : "(no warning)");
  if (!want) {
    assert_int_equal(warned, 0);
    assert_string_equal(msg, "");
    return;
  }
  assert_int_equal(warned, 1);
  assert_non_null(strstr(msg, want));
  assert_non_null(strstr(msg, "timings of this run may vary"));
}

static void test_warnings(void **state) {
  (void)state;
  check((mpt_cpu_load){.cores = 16, .workers = 4, .compile_jobs = 3, .load1 = 0.5}, NULL);
  check((mpt_cpu_load){.cores = 16, .workers = 4, .compile_jobs = 3, .load1 = -1}, NULL);
  check((mpt_cpu_load){.cores = 2, .workers = 3, .compile_jobs = 1, .load1 = 0.1}, "3 cpu workers share 2 online cores");
  check((mpt_cpu_load){.cores = 2, .workers = 1, .compile_jobs = 2, .load1 = 0.1},
        "1 cpu workers + 2 compile jobs each exceed the 2 online cores");
  check((mpt_cpu_load){.cores = 2, .workers = 1, .compile_jobs = 1, .load1 = 13.25},
        "the load average is 13.25 on 2 online cores");
  check((mpt_cpu_load){.cores = 2, .workers = 3, .compile_jobs = 1, .load1 = 9},
        "3 cpu workers share 2 online cores; the load average is 9.00 on 2 online cores");
}

static void test_this_machine(void **state) {
  (void)state;
  mpt_cpu_load l;
  mpt_cpu_load_read(0, 1, &l);
  assert_int_equal(l.cores, (int)sysconf(_SC_NPROCESSORS_ONLN));
  assert_int_equal(l.workers, 1);
  assert_true(l.load1 >= 0);
  mpt_cpu_load_read(l.cores + 1, 0, &l); /* more workers than cores: always said */
  char msg[768];
  assert_int_equal(mpt_cpu_load_warning(&l, msg, sizeof msg), 1);
  assert_non_null(strstr(msg, "share"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_warnings), cmocka_unit_test(test_this_machine)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
