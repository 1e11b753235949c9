/* tests/test_dist_progress.c: the progress line: its fields (done/budget, valid/failed, best, rate,
 * ETA), the ETA under a time budget, plain lines every 10 % when not a terminal, \r redraws on one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "coordinator/progress.h"
#include "coordinator/signals.h"
#include <signal.h>

static void test_format(void **state) {
  (void)state;
  mpt_progress p;
  mpt_progress_init(&p, NULL, MPT_PROGRESS_LINES, 200, 0, 0, 100.0);
  char buf[512];
  /* 50 done in 10 s: 5/s, 150 left: ETA 30 s */
  mpt_progress_format(&p, 110.0, 50, 45, 5, 0.5536, buf, sizeof buf);
  assert_non_null(strstr(buf, "50/200 evaluations"));
  assert_non_null(strstr(buf, "valid 45 failed 5"));
  assert_non_null(strstr(buf, "best 0.5536"));
  assert_non_null(strstr(buf, "5.00 eval/s"));
  assert_non_null(strstr(buf, "ETA 0:30"));
  /* nothing valid yet, no rate yet */
  mpt_progress_format(&p, 100.0, 0, 0, 0, NAN, buf, sizeof buf);
  assert_non_null(strstr(buf, "best -"));
  assert_non_null(strstr(buf, "ETA ?"));
  /* resume: 100 logged before, 20 new in 10 s -> 2/s, 80 left -> 40 s */
  mpt_progress_init(&p, NULL, MPT_PROGRESS_LINES, 200, 0, 100, 0.0);
  mpt_progress_format(&p, 10.0, 120, 120, 0, 1.0, buf, sizeof buf);
  assert_non_null(strstr(buf, "2.00 eval/s"));
  assert_non_null(strstr(buf, "ETA 0:40"));
  /* a time budget that ends sooner bounds the ETA */
  mpt_progress_init(&p, NULL, MPT_PROGRESS_LINES, 100000, 60, 0, 0.0);
  mpt_progress_format(&p, 50.0, 10, 10, 0, 1.0, buf, sizeof buf);
  assert_non_null(strstr(buf, "ETA 0:10"));
  assert_null(strstr(buf, "evaluating for"));
  /* one rank, one evaluation running for 75 s: said once it has run a second */
  p.running_since = 50.0;
  mpt_progress_format(&p, 50.5, 10, 10, 0, 1.0, buf, sizeof buf);
  assert_null(strstr(buf, "evaluating for"));
  mpt_progress_format(&p, 125.0, 10, 10, 0, 1.0, buf, sizeof buf);
  assert_non_null(strstr(buf, " | evaluating for 1:15"));
  /* a long ask (bo taking in a resumed run's logged observations) says what it does at the end */
  p.running_since = 0;
  p.doing = "bo: model from 32 of 150 logged observations";
  mpt_progress_format(&p, 125.0, 10, 10, 0, 1.0, buf, sizeof buf);
  assert_non_null(strstr(buf, "ETA 0:00 | bo: model from 32 of 150 logged observations"));
}

static void test_lines(void **state) {
  (void)state;
  char buf[16384];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  mpt_progress p;
  mpt_progress_init(&p, f, MPT_PROGRESS_LINES, 100, 0, 0, 0.0);
  /* 100 evaluations within 1 s: one line per 10 % only */
  for (int i = 1; i <= 100; i++) mpt_progress_update(&p, 0.01 * i, i, i, 0, 1.0, 0);
  mpt_progress_finish(&p, 1.0, 100, 100, 0, 1.0);
  fclose(f);
  int lines = 0;
  for (char *s = buf; (s = strstr(s, "progress: ")); s++) lines++;
  assert_true(lines >= 10 && lines <= 12);
  assert_null(strchr(buf, '\r'));
  assert_non_null(strstr(buf, "100/100 evaluations"));
}

static void test_tty(void **state) {
  (void)state;
  char buf[16384];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  mpt_progress p;
  mpt_progress_init(&p, f, MPT_PROGRESS_TTY, 100, 0, 0, 0.0);
  for (int i = 1; i <= 10; i++) mpt_progress_update(&p, 0.5 * i, i, i, 0, 2.0, 0);
  mpt_progress_finish(&p, 5.0, 10, 10, 0, 2.0);
  fclose(f);
  assert_int_equal(buf[0], '\r');
  assert_int_equal(buf[strlen(buf) - 1], '\n'); /* the last redraw is ended */
  assert_non_null(strstr(buf, "10/100 evaluations"));
}

static void test_terminal(void **state) {
  (void)state;
  char buf[64];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  assert_int_equal(mpt_progress_terminal(f), 0); /* a memory stream is no terminal */
  fclose(f);
  assert_int_equal(mpt_progress_terminal(NULL), 0);
}

static void test_off(void **state) {
  (void)state;
  char buf[256] = "";
  FILE *f = fmemopen(buf, sizeof buf, "w");
  mpt_progress p;
  mpt_progress_init(&p, f, MPT_PROGRESS_OFF, 100, 0, 0, 0.0);
  mpt_progress_update(&p, 1.0, 1, 1, 0, 1.0, 1);
  mpt_progress_finish(&p, 1.0, 1, 1, 0, 1.0);
  fclose(f);
  assert_int_equal(buf[0], '\0');
}

static void test_signals(void **state) {
  (void)state;
  mpt_signals_install();
  assert_int_equal(mpt_signals_count(), 0);
  assert_int_equal(*mpt_signals_flag(), 0);
  raise(SIGTERM); /* would kill the test without the handler */
  assert_int_equal(mpt_signals_count(), 1);
  assert_int_equal(mpt_signals_last(), SIGTERM);
  assert_int_not_equal(*mpt_signals_flag(), 0);
  raise(SIGINT);
  assert_int_equal(mpt_signals_count(), 2);
  assert_int_equal(mpt_signals_last(), SIGINT);
  mpt_signals_restore();
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_format), cmocka_unit_test(test_lines), cmocka_unit_test(test_tty), cmocka_unit_test(test_terminal),
    cmocka_unit_test(test_off),    cmocka_unit_test(test_signals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
