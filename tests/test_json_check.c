/* tests/test_json_check.c: the range of numbers in the JSON check (spaces/json/json_check.c) against strtod: a
 * number is refused exactly when strtod overflows on it (to an infinity), at its first byte, with its text in
 * the message; for thousands of random numbers, those around DBL_MAX digit by digit, long ones, and each fed
 * whole and in pieces of one to seven bytes (a number split between the pieces a stream reads). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "spaces/json/json_check.h"
#include "spaces/sys/rng.h"

/* 2^1024 - 2^970: the least value that overflows */
static const char least_overflow[] =
    "1797693134862315807937289714053034150799341327100378269361737789804449682927647509466490179775872070963"
    "3028641669288791094655554785194040263065748867150582068190890200070838367627385484581771153176447573027"
    "0069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";

/* feeds {"a": [1, NUMBER, 2]} (pieces of 1..piece bytes, 0: whole) and checks the verdict against strtod */
static void check_number(const char *number, int piece, mpt_rng *rng) {
  static char doc[4096];
  int n = snprintf(doc, sizeof doc, "{\"a\": [1, %s, 2]}", number);
  assert_true(n > 0 && (size_t)n < sizeof doc);
  mpt_json_check c;
  mpt_json_check_init(&c);
  for (int at = 0; at < n && c.bad_at < 0;) {
    int k = piece ? 1 + (int)mpt_rng_below(rng, (uint64_t)piece) : n;
    if (k > n - at) k = n - at;
    mpt_json_check_feed(&c, doc + at, (size_t)k);
    at += k;
  }
  int overflows = isinf(strtod(number, NULL)) != 0;
  if ((c.bad_at >= 0) != overflows)
    fprintf(stderr, "%s (pieces of up to %d): strtod %s, the check %s\n", number, piece,
            overflows ? "overflows" : "does not", c.bad_at >= 0 ? c.what : "passed it");
  assert_int_equal(c.bad_at >= 0, overflows);
  if (!overflows) return;
  assert_int_equal(c.bad_at, 10); /* the number's first byte */
  assert_int_equal(c.out_of_range, 1);
  char want[64];
  snprintf(want, sizeof want, "number %.20s", number);
  assert_true(strncmp(c.what, want, strlen(want)) == 0);
  assert_non_null(strstr(c.what, "is out of range (not representable as a double)"));
}

static void check_all_ways(const char *number, mpt_rng *rng) {
  for (int piece = 0; piece <= 7; piece++) check_number(number, piece, rng);
}

/* random numbers: a sign, 1..40 mantissa digits, a point somewhere, an exponent near where doubles end */
static void test_random_numbers(void **state) {
  (void)state;
  mpt_rng rng;
  mpt_rng_seed(&rng, 30);
  char num[200];
  for (int t = 0; t < 4000; t++) {
    int len = 0, digits = 1 + (int)mpt_rng_below(&rng, 40), point = (int)mpt_rng_below(&rng, (uint64_t)digits + 1);
    if (mpt_rng_below(&rng, 2)) num[len++] = '-';
    int zero_int = mpt_rng_below(&rng, 4) == 0; /* 0.000ddd */
    if (zero_int) {
      len += snprintf(num + len, sizeof num - (size_t)len, "0.");
      for (int z = (int)mpt_rng_below(&rng, 12); z > 0; z--) num[len++] = '0';
    }
    for (int d = 0; d < digits; d++) {
      if (!zero_int && d == point && d > 0 && d < digits) num[len++] = '.';
      num[len++] = (char)((d == 0 && !zero_int ? '1' : '0') + (int)mpt_rng_below(&rng, d == 0 && !zero_int ? 9 : 10));
    }
    int e = 280 + (int)mpt_rng_below(&rng, 60) - (int)mpt_rng_below(&rng, 3) * 100;
    if (mpt_rng_below(&rng, 5) == 0) e = -e;
    len += snprintf(num + len, sizeof num - (size_t)len, "%s%d", mpt_rng_below(&rng, 2) ? "e" : "E+", e);
    check_all_ways(num, &rng);
  }
}

/* the digits of 2^1024 - 2^970 and their neighbours, at every scale and with a point anywhere: a number at
 * least that overflows (a tie rounds away from DBL_MAX), one less does not */
static void test_around_dbl_max(void **state) {
  (void)state;
  mpt_rng rng;
  mpt_rng_seed(&rng, 1024);
  static char num[1200];
  const int n = (int)strlen(least_overflow);
  for (int variant = 0; variant < 6; variant++) {
    char digits[400];
    memcpy(digits, least_overflow, (size_t)n + 1);
    if (variant == 1) digits[n - 1]--;            /* one less */
    if (variant == 2) digits[n - 1]++;            /* one more */
    if (variant == 3) strcat(digits, "000000001"); /* a little more, past the last digit */
    if (variant == 4) digits[17] = '8';           /* 1.797693134862315808e308: more */
    if (variant == 5) { digits[16] = '7'; digits[20] = '\0'; } /* 1.797693134862315707e308... cut: less */
    int nd = (int)strlen(digits);
    /* as an integer of the right length; then with a point after k digits and an exponent n - k; then cut to
     * 20 digits with the exponent to match; then as 0.000digits with the exponent */
    check_all_ways(digits, &rng);
    int mag = n; /* the value's digits before the point */
    for (int k = 1; k < nd; k += 1 + (int)mpt_rng_below(&rng, 40)) {
      snprintf(num, sizeof num, "%.*s.%se%d", k, digits, digits + k, mag - k);
      check_all_ways(num, &rng);
    }
    snprintf(num, sizeof num, "0.0000%se%d", digits, mag + 4);
    check_all_ways(num, &rng);
    snprintf(num, sizeof num, "%.20se%d", digits, mag - 20);
    check_all_ways(num, &rng);
  }
  check_all_ways("1.7976931348623157e308", &rng);
  check_all_ways("1.7976931348623159e308", &rng);
  check_all_ways("-1.7976931348623159e+308", &rng);
}

/* numbers strtod reads as they are: long ones without an exponent (400 digits overflow, 300 do not, zeros
 * never), exponents of many digits, underflow to zero, and the readers' cases: 1e999, -1e400, 1e20 */
static void test_special_numbers(void **state) {
  (void)state;
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  static char num[1200];
  static const int lens[] = {300, 308, 309, 310, 400, 1000};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    memset(num, '9', (size_t)lens[i]);
    num[lens[i]] = '\0';
    check_all_ways(num, &rng);
    num[0] = '1';
    memset(num + 1, '0', (size_t)lens[i] - 1);
    check_all_ways(num, &rng);
    snprintf(num, sizeof num, "0.%0*d", lens[i], 0); /* zeros only */
    check_all_ways(num, &rng);
  }
  static const char *const more[] = {"1e999", "-1e400", "1e999999", "1E+0000000000000000000000309", "1e308",
                                     "1e-400", "-1e-99999999999999999999", "0e99999", "-0.0e400", "1e20", "1.5",
                                     "0", "-0", "123456789012345678901234567890", "9.9e307", "10e307", "100e307"};
  for (size_t i = 0; i < sizeof more / sizeof *more; i++) check_all_ways(more[i], &rng);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_numbers),
      cmocka_unit_test(test_around_dbl_max),
      cmocka_unit_test(test_special_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
