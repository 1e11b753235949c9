/* tests/test_name_set.c: the hash set of names (spaces/sys/name_set.c): growth from empty past many rehashes, each
 * name found with its value, a name added twice refused with the first one's value, absent names not found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "spaces/sys/name_set.h"

enum { N = 50000 };

static void test_add_find(void **state) {
  (void)state;
  static char names[N][16];
  mpt_name_set s;
  assert_int_equal(mpt_name_set_init(&s, 0), 0);
  assert_int_equal(mpt_name_set_find(&s, "x0"), -1);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "x%d", i);
    assert_int_equal(mpt_name_set_add(&s, names[i], i, NULL), 0);
  }
  assert_int_equal((int)s.n, N);
  assert_true(s.cap >= 2 * (size_t)N); /* at most half full */
  for (int i = 0; i < N; i++) assert_int_equal(mpt_name_set_find(&s, names[i]), i);
  char other[16];
  for (int i = 0; i < 1000; i++) {
    snprintf(other, sizeof other, "y%d", i);
    assert_int_equal(mpt_name_set_find(&s, other), -1);
    snprintf(other, sizeof other, "x%d", N + i);
    assert_int_equal(mpt_name_set_find(&s, other), -1);
  }
  /* a name again (another copy of its bytes): refused, the first one's value given back, nothing changed */
  int existing = -1;
  snprintf(other, sizeof other, "x%d", 4321);
  assert_int_equal(mpt_name_set_add(&s, other, 7, &existing), 1);
  assert_int_equal(existing, 4321);
  assert_int_equal(mpt_name_set_find(&s, other), 4321);
  assert_int_equal((int)s.n, N);
  assert_int_equal(mpt_name_set_find(&s, ""), -1);
  assert_int_equal(mpt_name_set_add(&s, "", 5, NULL), 0);
  assert_int_equal(mpt_name_set_find(&s, ""), 5);
  mpt_name_set_free(&s);
  assert_int_equal(mpt_name_set_find(&s, "x1"), -1); /* freed: empty */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_add_find)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
