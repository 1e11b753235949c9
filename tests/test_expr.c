/* tests/test_expr.c: unit tests of the expression language (the files of spaces/expr/): Python semantics of the
 * operators and builtins, the T1 expressions of the shared data, error classes and columns, the
 * formatted error message, repr, used variables, that mpt_expr_eval_bool does not allocate on
 * scalar expressions (malloc/calloc/realloc are wrapped with -Wl,--wrap in tests/expr.cmake), and the
 * cap on the memory one evaluation holds (in a child process with a limited address space). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "spaces/expr/expr.h"
#include "spaces/sys/name_set.h"

/* ---- allocation counter (linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc) */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
static long n_allocs;
void *__wrap_malloc(size_t n) { n_allocs++; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { n_allocs++; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { n_allocs++; return __real_realloc(p, n); }

static const char *const names[] = {"a", "b", "f", "s", "L", "filter_width", "ProblemSize"};
#define N_NAMES 7
static mpt_value vars[N_NAMES];

static int setup(void **state) {
  (void)state;
  vars[0] = mpt_value_int(3);
  vars[1] = mpt_value_int(-2);
  vars[2] = mpt_value_float(2.5);
  vars[3] = mpt_value_str("ab");
  if (mpt_expr_eval_const("[1, 2, 3]", &vars[4], NULL, NULL)) return -1;
  if (mpt_expr_eval_const("[3, 5, 7]", &vars[5], NULL, NULL)) return -1;
  if (mpt_expr_eval_const("[4096, 2048]", &vars[6], NULL, NULL)) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < N_NAMES; i++) mpt_value_free(&vars[i]);
  return 0;
}

/* evaluates src with the variables above and returns "OK <repr>" or "ERR <message>" */
static const char *run(const char *src) {
  static char out[4096];
  mpt_expr *e;
  mpt_error err;
  mpt_error_clear(&err);
  int col;
  int rc = mpt_expr_compile(src, names, N_NAMES, &e, &col, &err);
  if (rc) {
    snprintf(out, sizeof out, "CERR %d %s", col, err.msg);
    return out;
  }
  mpt_value v;
  rc = mpt_expr_eval(e, vars, &v, &err);
  if (rc) {
    assert_int_equal(rc, MPT_ERR_EVAL);
    snprintf(out, sizeof out, "ERR %s", err.msg);
  } else {
    char rep[4000];
    mpt_value_repr(&v, rep, sizeof rep);
    snprintf(out, sizeof out, "OK %s", rep);
    mpt_value_free(&v);
  }
  mpt_expr_free(e);
  return out;
}

static void check(const char *src, const char *expect) {
  const char *got = run(src);
  if (strncmp(got, expect, strlen(expect)) != 0) {
    print_error("%s\n  expected: %s\n  got:      %s\n", src, expect, got);
    fail();
  }
}

#define OK(src, rep) check(src, "OK " rep)
#define ERR(src, cls) check(src, "ERR " cls)

static void test_arithmetic(void **state) {
  (void)state;
  OK("1 + 2 * 3", "7");
  OK("(1 + 2) * 3", "9");
  OK("7 / 2", "3.5");
  OK("6 / 2", "3.0");
  OK("-7 // 2", "-4");
  OK("7 // -2", "-4");
  OK("-7 % 2", "1");
  OK("7 % -2", "-1");
  OK("7.5 // 2", "3.0");
  OK("-7.5 // 2", "-4.0");
  OK("-7.5 % 2", "0.5");
  OK("7.5 % -2", "-0.5");
  OK("5.0 % 5", "0.0");
  OK("-5.0 % 5", "0.0");
  OK("5.0 % -5", "-0.0");
  OK("2 ** 10", "1024");
  OK("2 ** 3 ** 2", "512");
  OK("-2 ** 2", "-4");
  OK("(-2) ** 2", "4");
  OK("2 ** -1", "0.5");
  OK("-2 ** -2", "-0.25");
  OK("4 ** 0.5", "2.0");
  OK("True + 1", "2");
  OK("True * 2.5", "2.5");
  OK("-True", "-1");
  OK("+True", "1");
  OK("~5", "-6");
  OK("6 & 3", "2");
  OK("6 | 3", "7");
  OK("6 ^ 3", "5");
  OK("True & False", "False");
  OK("1 << 10", "1024");
  OK("-9 >> 1", "-5");
  OK("9223372036854775807", "9223372036854775807");
  OK("-9223372036854775807 - 1", "-9223372036854775808");
  OK("(-2) ** 63", "-9223372036854775808");
  OK("0.1 + 0.2", "0.30000000000000004");
  OK("1e308 * 10", "inf");
  OK("2 ** 53 + 1 == 2.0 ** 53", "False");
  OK("2 ** 53 == 2.0 ** 53", "True");
  OK("9007199254740993 / 1", "9007199254740992.0");
}

static void test_arith_errors(void **state) {
  (void)state;
  ERR("1 / 0", "ZeroDivisionError: division by zero");
  ERR("1 // 0", "ZeroDivisionError: integer division or modulo by zero");
  ERR("1 % 0", "ZeroDivisionError");
  ERR("1.0 / 0", "ZeroDivisionError: float division by zero");
  ERR("1.0 // 0.0", "ZeroDivisionError");
  ERR("1.0 % 0", "ZeroDivisionError");
  ERR("0 ** -1", "ZeroDivisionError");
  ERR("0.0 ** -1", "ZeroDivisionError");
  ERR("2 ** 63", "OverflowError");
  ERR("9223372036854775807 + 1", "OverflowError");
  ERR("-(-9223372036854775807 - 1)", "OverflowError");
  ERR("(-9223372036854775807 - 1) // -1", "OverflowError");
  ERR("3037000500 * 3037000500", "OverflowError");
  ERR("10.0 ** 400", "OverflowError");
  ERR("(-8) ** 0.5", "ValueError");
  ERR("1 << -1", "ValueError");
  ERR("'a' + 1", "TypeError: unsupported operand type(s) for +: 'str' and 'int'");
  ERR("[1] - [1]", "TypeError");
  ERR("-'a'", "TypeError: bad operand type for unary -: 'str'");
  ERR("1.5 & 1", "TypeError");
}

static void test_comparisons(void **state) {
  (void)state;
  OK("1 == 1.0", "True");
  OK("True == 1", "True");
  OK("1 == '1'", "False");
  OK("1 != '1'", "True");
  OK("[1, 2] == [1.0, 2]", "True");
  OK("1 < 2 < 3", "True");
  OK("1 < 3 < 2", "False");
  OK("3 > 2 == 2", "True");
  OK("32 <= a * 16 <= 1024", "True");
  OK("'abc' < 'abd'", "True");
  OK("[1, 2] < [1, 3]", "True");
  OK("[1, 2] < [1, 2, 0]", "True");
  OK("float('nan') == float('nan')", "False");
  OK("1 < 2 < 'x' if False else 0", "0");
  ERR("1 < 'a'", "TypeError: '<' not supported between instances of 'int' and 'str'");
  ERR("[1] < [1, 'a'] < 2", "TypeError");
  OK("1 > 2 < 'a'", "False"); /* short-circuit: 'a' is never compared */
  OK("2 in L", "True");
  OK("4 not in L", "True");
  OK("'b' in s", "True");
  OK("'ab' in 'xaby'", "True");
  OK("2.0 in L", "True");
  ERR("1 in 'abc'", "TypeError");
  ERR("1 in 5", "TypeError: argument of type 'int' is not iterable");
}

static void test_boolean(void **state) {
  (void)state;
  OK("0 or 5", "5");
  OK("3 or 1 / 0", "3");
  OK("0 and 1 / 0", "0");
  OK("'' or 'x'", "'x'");
  OK("[] or L", "[1, 2, 3]");
  OK("L and s", "'ab'");
  OK("not 0", "True");
  OK("not L", "False");
  OK("not a == 3", "False");
  OK("not (a == 3 and b == -2)", "False");
  OK("a == 3 and b == -2 or f", "True");
  OK("1 if a > 2 else 1 / 0", "1");
  OK("1 / 0 if a < 2 else 'no'", "'no'");
  OK("1 if 0 else 2 if 0 else 3", "3");
}

static void test_sequences(void **state) {
  (void)state;
  OK("[1, 2] + [3]", "[1, 2, 3]");
  OK("[0] * 3", "[0, 0, 0]");
  OK("2 * [1, 'a']", "[1, 'a', 1, 'a']");
  OK("[1] * -1", "[]");
  OK("'ab' * 2", "'abab'");
  OK("'ab' + 'cd'", "'abcd'");
  OK("L[0]", "1");
  OK("L[-1]", "3");
  OK("s[-2]", "'a'");
  OK("[[1, 2], [3]][0][1]", "2");
  OK("ProblemSize[0]*ProblemSize[1]", "8388608");
  OK("[]", "[]");
  OK("[1, 2,]", "[1, 2]");
  ERR("L[3]", "IndexError: list index out of range");
  ERR("L[-4]", "IndexError");
  ERR("s[5]", "IndexError: string index out of range");
  ERR("L[1.0]", "TypeError");
  ERR("a[0]", "TypeError: 'int' object is not subscriptable");
  OK("[x * 2 for x in range(10) if x % 3]", "[2, 4, 8, 10, 14, 16]");
  OK("[x for x in 'abc']", "['a', 'b', 'c']");
  OK("[x for x in L if x > 1 if x < 3]", "[2]");
  OK("[[y * x for y in L] for x in L]", "[[1, 2, 3], [2, 4, 6], [3, 6, 9]]");
  OK("[a for a in range(3)] + [a]", "[0, 1, 2, 3]"); /* the loop variable is local */
  OK("[a for a in range(a)]", "[0, 1, 2]");         /* the iterable sees the outer a */
  OK("[x for x in L] == L", "True");
  ERR("[x for x in 5]", "TypeError: 'int' object is not iterable");
}

static void test_builtins(void **state) {
  (void)state;
  OK("list(range(5))", "[0, 1, 2, 3, 4]");
  OK("list(range(2, 10, 3))", "[2, 5, 8]");
  OK("list(range(10, 2, -3))", "[10, 7, 4]");
  OK("list(range(3, 3))", "[]");
  ERR("range(1, 10, 0)", "ValueError");
  ERR("range(1.5)", "TypeError");
  OK("list('ab')", "['a', 'b']");
  OK("len(L)", "3");
  OK("len('abc')", "3");
  ERR("len(5)", "TypeError");
  OK("max(L)", "3");
  OK("min(3, 1, 2)", "1");
  OK("max(1, 1.0)", "1");
  OK("max(1.0, 1)", "1.0");
  OK("max(filter_width)", "7");
  OK("max('abc')", "'c'");
  ERR("max([])", "ValueError");
  ERR("max(1, 'a')", "TypeError");
  ERR("max(5)", "TypeError");
  OK("abs(-3)", "3");
  OK("abs(-2.5)", "2.5");
  OK("abs(True)", "1");
  OK("int(2.9)", "2");
  OK("int(-2.9)", "-2");
  OK("int(' -42 ')", "-42");
  OK("int('1_000')", "1000");
  OK("int(True)", "1");
  ERR("int('2.5')", "ValueError");
  ERR("int(float('inf'))", "OverflowError");
  ERR("int(float('nan'))", "ValueError");
  OK("float(3)", "3.0");
  OK("float(' 1e3 ')", "1000.0");
  OK("float('-inf')", "-inf");
  ERR("float('abc')", "ValueError");
  OK("round(2.5)", "2");
  OK("round(3.5)", "4");
  OK("round(-2.5)", "-2");
  OK("round(2.675, 2)", "2.67");
  OK("round(0.125, 2)", "0.12");
  OK("round(0.375, 2)", "0.38");
  OK("round(1234.5, -2)", "1200.0");
  OK("round(1250.0, -2)", "1200.0");
  OK("round(1350.0, -2)", "1400.0");
  OK("round(149.7, -2)", "100.0");
  OK("round(1250, -2)", "1200");
  OK("round(-1250, -2)", "-1200");
  OK("round(7, 1)", "7");
  OK("round(f)", "2");
  OK("sum(L)", "6");
  OK("sum([0.5, 1])", "1.5");
  OK("sum([[1], [2]], [])", "[1, 2]");
  OK("bool([])", "False");
  OK("str(2.5)", "'2.5'");
  OK("str(L)", "'[1, 2, 3]'");
  OK("max(x * x for x in range(-4, 3))", "16");
  /* range() is lazy where it can be, and accepted only where it behaves like a list */
  OK("len(range(10**15))", "1000000000000000");
  OK("len(range(10, -10**18, -7))", "142857142857142859");
  OK("10**13 in range(0, 10**14, 10**13)", "True");
  OK("10**13 + 1 in range(0, 10**14, 10**13)", "False");
  OK("-4 in range(10, -10, -7)", "True");
  OK("2.0 in range(5)", "True");
  OK("2.5 not in range(5)", "True");
  OK("'a' in range(5)", "False");
  OK("[x for x in range(10**6) if x % 250000 == 3]", "[3, 250003, 500003, 750003]");
  OK("range(5)[-2]", "3");
  OK("range(3)", "[0, 1, 2]");
  OK("sum(range(101))", "5050");
  ERR("len(range(0, 10**12, 0))", "ValueError");
  ERR("list(range(10**12))", "MemoryError");
}

static void test_t1_expressions(void **state) {
  (void)state;
  OK("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))",
     "[1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480, 512, 544, 576, 608, "
     "640, 672, 704, 736, 768, 800, 832, 864, 896, 928, 960, 992, 1024]");
  OK("[2**i for i in range(0, 6)]", "[1, 2, 4, 8, 16, 32]");
  OK("[8 * i for i in range(4, 6)]", "[32, 40]");
  OK("[i for i in range(1, 10+1)]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
  /* conditions, with the variables bound to real parameter values */
  static const char *const cn[] = {"KWG", "MDIMC", "NDIMC", "MDIMA", "block_size_x", "block_size_y", "use_padding"};
  mpt_value cv[7] = {mpt_value_int(32), mpt_value_int(8), mpt_value_int(16), mpt_value_int(16), mpt_value_int(64),
                     mpt_value_int(4), mpt_value_int(1)};
  struct { const char *src; int truth; } cases[] = {
      {"KWG % ((MDIMC * NDIMC)/MDIMA) == 0", 1},  /* 32 % 8.0 == 0.0 */
      {"32 <= block_size_x * block_size_y <= 1024", 1},
      {"use_padding==0 or block_size_x % 32 != 0", 0},
      {"not (KWG == 32 and MDIMC == 8)", 0},
      {"(262144 // block_size_x) // MDIMC", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mpt_expr *e;
    mpt_error err;
    int col, truth = -1;
    assert_int_equal(mpt_expr_compile(cases[i].src, cn, 7, &e, &col, &err), 0);
    assert_int_equal(mpt_expr_eval_bool(e, cv, &truth, &err), 0);
    assert_int_equal(truth, cases[i].truth);
    mpt_expr_free(e);
  }
  mpt_expr *e;
  mpt_error err;
  int col;
  assert_int_equal(mpt_expr_compile("(262144 // block_size_x) // MDIMC", cn, 7, &e, &col, &err), 0);
  mpt_value v;
  assert_int_equal(mpt_expr_eval(e, cv, &v, &err), 0);
  assert_int_equal(v.kind, MPT_V_INT);
  assert_int_equal(v.u.i, 512);
  assert_int_equal(mpt_expr_n_uses(e), 2);
  assert_int_equal(mpt_expr_uses(e)[0], 1);
  assert_int_equal(mpt_expr_uses(e)[1], 4);
  assert_string_equal(mpt_expr_source(e), "(262144 // block_size_x) // MDIMC");
  mpt_expr_free(e);
}

/* names found through an index (mpt_expr_compile_indexed, as the T1 reader compiles conditions) resolve, hide
 * builtins and fail as when searched in turn; the used variables are each slot once, ascending (also one read
 * only where `and` may cut it short) */
static void test_compile_indexed(void **state) {
  (void)state;
  mpt_name_set index;
  assert_int_equal(mpt_name_set_init(&index, N_NAMES), 0);
  for (int i = 0; i < N_NAMES; i++) assert_int_equal(mpt_name_set_add(&index, names[i], i, NULL), 0);
  static const struct { const char *src; int n_uses, uses[3]; } ok[] = {
      {"b + a * b - a", 2, {0, 1}}, {"ProblemSize if s else f", 3, {2, 3, 6}}, {"False and b > 1", 1, {1}},
      {"[x * a for x in L if x > b]", 3, {0, 1, 4}}, {"len(L) + 1", 1, {4}}};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    for (int indexed = 0; indexed < 2; indexed++) {
      mpt_expr *e;
      mpt_error err;
      int col;
      int rc = indexed ? mpt_expr_compile_indexed(ok[i].src, names, N_NAMES, &index, &e, &col, &err)
                       : mpt_expr_compile(ok[i].src, names, N_NAMES, &e, &col, &err);
      if (rc) fprintf(stderr, "%s: %s\n", ok[i].src, err.msg);
      assert_int_equal(rc, 0);
      assert_int_equal(mpt_expr_n_uses(e), ok[i].n_uses);
      for (int k = 0; k < ok[i].n_uses; k++) assert_int_equal(mpt_expr_uses(e)[k], ok[i].uses[k]);
      mpt_value v, w;
      assert_int_equal(mpt_expr_eval(e, vars, &v, &err), 0);
      mpt_expr_free(e);
      assert_int_equal(mpt_expr_compile(ok[i].src, names, N_NAMES, &e, &col, &err), 0);
      assert_int_equal(mpt_expr_eval(e, vars, &w, &err), 0);
      assert_true(mpt_value_equal(&v, &w));
      mpt_value_free(&v);
      mpt_value_free(&w);
      mpt_expr_free(e);
    }
  static const struct { const char *src; int code, col; const char *msg; } bad[] = {
      {"a + nope", MPT_ERR_NAME, 4, "unknown name 'nope'"},
      {"L(1)", MPT_ERR_PARSE, 0, "'L' is not a function"},
      {"a < len", MPT_ERR_NAME, 4, "builtin 'len' can only be called"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    mpt_expr *e = (mpt_expr *)1;
    mpt_error err;
    int col = -7;
    int rc = mpt_expr_compile_indexed(bad[i].src, names, N_NAMES, &index, &e, &col, &err);
    if (rc != bad[i].code || col != bad[i].col || !strstr(err.msg, bad[i].msg))
      fprintf(stderr, "%s: %d at %d (%s)\n", bad[i].src, rc, col, err.msg);
    assert_int_equal(rc, bad[i].code);
    assert_int_equal(col, bad[i].col);
    assert_non_null(strstr(err.msg, bad[i].msg));
    assert_null(e);
  }
  mpt_name_set_free(&index);
}

static void expect_compile_error(const char *src, int code, int column, const char *msg) {
  mpt_expr *e = (mpt_expr *)1;
  mpt_error err;
  mpt_error_clear(&err);
  int col = -7;
  int rc = mpt_expr_compile(src, names, N_NAMES, &e, &col, &err);
  if (rc != code || col != column || strstr(err.msg, msg) == NULL) {
    print_error("%s: expected %d at %d (%s), got %d at %d (%s)\n", src, code, column, msg, rc, col, err.msg);
    fail();
  }
  assert_null(e);
  assert_int_equal(err.code, code);
}

static void test_compile_errors(void **state) {
  (void)state;
  expect_compile_error("a + x", MPT_ERR_NAME, 4, "unknown name 'x'");
  expect_compile_error("KWG % ((MDIMC * NDIMC)/MDIMA) == 0", MPT_ERR_NAME, 0, "unknown name 'KWG'");
  expect_compile_error("a + ", MPT_ERR_PARSE, 4, "unexpected end");
  expect_compile_error("(a + b", MPT_ERR_PARSE, 6, "unexpected end");
  expect_compile_error("a + b)", MPT_ERR_PARSE, 5, "unexpected ')'");
  expect_compile_error("a = 1", MPT_ERR_PARSE, 2, "'=='");
  expect_compile_error("a $ b", MPT_ERR_PARSE, 2, "invalid character");
  expect_compile_error("'abc", MPT_ERR_PARSE, 0, "unterminated string");
  expect_compile_error("a if b", MPT_ERR_PARSE, 6, "unexpected end");
  expect_compile_error("foo(1)", MPT_ERR_NAME, 0, "unknown function 'foo'");
  expect_compile_error("a(1)", MPT_ERR_PARSE, 0, "not a function");
  expect_compile_error("len(1, 2)", MPT_ERR_PARSE, 0, "len() takes exactly 1 argument");
  expect_compile_error("[x for x in L] + [x]", MPT_ERR_NAME, 18, "unknown name 'x'");
  expect_compile_error("max", MPT_ERR_NAME, 0, "builtin 'max'");
  expect_compile_error("", MPT_ERR_PARSE, 0, "empty expression");
  expect_compile_error("   ", MPT_ERR_PARSE, 0, "empty expression");
  expect_compile_error("012", MPT_ERR_PARSE, 0, "leading zeros");
  expect_compile_error("99999999999999999999", MPT_ERR_PARSE, 0, "too large");
  expect_compile_error("a is 3", MPT_ERR_PARSE, 2, "'is'");
  expect_compile_error("lambda: 1", MPT_ERR_PARSE, 0, "not supported");
  expect_compile_error("L[1:2]", MPT_ERR_PARSE, 3, "slices");
  expect_compile_error("(1, 2)", MPT_ERR_PARSE, 2, "tuples");
  expect_compile_error("s.upper()", MPT_ERR_PARSE, 1, "attribute");
  expect_compile_error("1 2", MPT_ERR_PARSE, 2, "unexpected '2'");
  expect_compile_error("a and or b", MPT_ERR_PARSE, 6, "unexpected 'or'");
  expect_compile_error("range(3) == [0, 1, 2]", MPT_ERR_PARSE, 0, "range() is only supported");
  expect_compile_error("a * range(3)", MPT_ERR_PARSE, 4, "range() is only supported");
  expect_compile_error("1 in range(3) == L", MPT_ERR_PARSE, 5, "range() is only supported");
  expect_compile_error("max(range(3), L)", MPT_ERR_PARSE, 4, "range() is only supported");
  /* deep nesting is an error, not a stack overflow */
  char deep[4000];
  memset(deep, '(', 1000);
  strcpy(deep + 1000, "1");
  memset(deep + 1001, ')', 1000);
  deep[2001] = '\0';
  mpt_expr *e;
  mpt_error err;
  int col;
  assert_int_equal(mpt_expr_compile(deep, names, N_NAMES, &e, &col, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "too deeply nested"));
  assert_true(col > 50 && col < 1000 && deep[col] == '(');
  /* so is nesting made of chains: 1000 levels of (a + (a + ... )) */
  char *nest = malloc(8000);
  assert_non_null(nest);
  int o = 0;
  for (int i = 0; i < 1000; i++) o += sprintf(nest + o, "(a+");
  nest[o++] = 'a';
  memset(nest + o, ')', 1000);
  nest[o + 1000] = '\0';
  assert_int_equal(mpt_expr_compile(nest, names, N_NAMES, &e, &col, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "too deeply nested"));
  free(nest);
  /* a const evaluation */
  mpt_value v;
  assert_int_equal(mpt_expr_eval_const("[8 * i for i in range(4, 33)]", &v, &col, &err), 0);
  assert_int_equal(v.kind, MPT_V_LIST);
  assert_int_equal(v.u.list.n, 29);
  assert_int_equal(v.u.list.items[28].u.i, 256);
  mpt_value_free(&v);
  assert_int_equal(mpt_expr_eval_const("[1, 2] + ", &v, &col, &err), MPT_ERR_PARSE);
  assert_int_equal(col, 9);
  assert_int_equal(mpt_expr_eval_const("[1, 2][5]", &v, &col, &err), MPT_ERR_EVAL);
  assert_int_equal(v.kind, MPT_V_NONE);
}

/* a flat chain of left-associative operators (a + b - c ..., a and b or c) is no nesting: it compiles and
 * evaluates in a loop, whatever its length (802 terms were "too deeply nested"); 100,000 terms neither
 * recurse per term (no stack overflow, ASan included) nor take the numeric fast path's recursive tree */
static void test_long_chains(void **state) {
  (void)state;
  enum { TERMS = 100000 };
  static const struct { const char *first, *term, *want; } chains[] = {
      {"a", "+a", "300000"},                 /* a = 3: 100,000 times */
      {"1", "+1", "100000"},                 /* constant: folded */
      {"b", "-b*2", "399994"},               /* b = -2: -2 + 99,999 * 4 */
      {"a", " and a", "3"},                  /* and/or return an operand */
      {"0", " or b", "-2"},
      {"f", "+1", "100001.5"},               /* a float */
      {"s", "+'x'", NULL},                   /* a string of 100,001 bytes (each + copies it: quadratic time) */
  };
  char *src = malloc((size_t)TERMS * 8 + 64);
  assert_non_null(src);
  for (size_t k = 0; k < sizeof chains / sizeof *chains; k++) {
    size_t o = (size_t)sprintf(src, "%s", chains[k].first), tl = strlen(chains[k].term);
    for (int i = 1; i < TERMS; i++, o += tl) memcpy(src + o, chains[k].term, tl);
    src[o] = '\0';
    mpt_expr *e;
    mpt_error err;
    int col;
    int rc = mpt_expr_compile(src, names, N_NAMES, &e, &col, &err);
    if (rc) fprintf(stderr, "chain %zu: %s\n", k, err.msg);
    assert_int_equal(rc, 0);
    mpt_value v;
    rc = mpt_expr_eval(e, vars, &v, &err);
    if (rc) fprintf(stderr, "chain %zu: %s\n", k, err.msg);
    assert_int_equal(rc, 0);
    char rep[64];
    if (chains[k].want) {
      mpt_value_repr(&v, rep, sizeof rep);
      assert_string_equal(rep, chains[k].want);
    } else {
      assert_int_equal(v.kind, MPT_V_STR);
      assert_int_equal(strlen(v.u.s), 2 + TERMS - 1);
    }
    int truth = 0;
    assert_int_equal(mpt_expr_eval_bool(e, vars, &truth, &err), 0);
    assert_true(truth);
    mpt_value_free(&v);
    mpt_expr_free(e);
  }
  /* a chain in a condition over a space, and an error inside a long chain keeps its column */
  const char *tail = "+a//0";
  size_t o = (size_t)sprintf(src, "a");
  for (int i = 1; i < TERMS; i++, o += 2) memcpy(src + o, "+a", 2);
  strcpy(src + o, tail);
  mpt_expr *e;
  mpt_error err;
  int col;
  assert_int_equal(mpt_expr_compile(src, names, N_NAMES, &e, &col, &err), 0);
  mpt_value v;
  assert_int_equal(mpt_expr_eval(e, vars, &v, &err), MPT_ERR_EVAL);
  assert_non_null(strstr(err.msg, "ZeroDivisionError"));
  assert_int_equal(mpt_expr_fault_column(e, vars), (int)o + 2); /* the '//' of the last step */
  mpt_expr_free(e);
  free(src);
}

/* the column of the operation that fails at run time: the innermost failing node, in a chain its own
 * step, through calls, subscripts, comprehensions and the fast path's fallback; -1 when nothing fails */
static void test_fault_column(void **state) {
  (void)state;
  static const char *const fn[] = {"a", "b", "xs"};
  mpt_value items[2] = {mpt_value_int(4), mpt_value_int(5)};
  mpt_value fv[3] = {mpt_value_int(0), mpt_value_int(3), {.kind = MPT_V_LIST}};
  fv[2].u.list.items = items;
  fv[2].u.list.n = 2;
  static const struct {
    const char *src;
    int col; /* -1: evaluates */
  } cases[] = {
      {"b // a > 0", 2},
      {"b > 0 and b % a == 1", 12},
      {"b + b + b + b // a", 14},
      {"(b * 2) / (a * 1)", 8},
      {"xs[b] > 1", 2},
      {"min([x for x in xs if x > 9]) > 0", 0},
      {"[b // (x - 4) for x in xs]", 3},
      {"a < 1 or b // a", -1},
      {"a > 0 and b // a", -1},
      {"b // a if a else 0", -1},
      {"0 if a == 0 else b // a", -1},
      {"2 ** -a + 1 / a", 12},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mpt_expr *e;
    mpt_error err;
    int col;
    assert_int_equal(mpt_expr_compile(cases[k].src, fn, 3, &e, &col, &err), 0);
    int truth;
    int rc = mpt_expr_eval_bool(e, fv, &truth, &err);
    if (cases[k].col < 0) assert_int_equal(rc, 0);
    else assert_int_equal(rc, MPT_ERR_EVAL);
    int got = mpt_expr_fault_column(e, fv);
    if (got != cases[k].col) fail_msg("'%s': fault column %d, want %d", cases[k].src, got, cases[k].col);
    mpt_expr_free(e);
  }
}

static void test_format_error(void **state) {
  (void)state;
  const char *src = "32 <= block_size_x * blok <= 1024";
  static const char *const cn[] = {"block_size_x"};
  mpt_expr *e;
  mpt_error err;
  int col;
  assert_int_equal(mpt_expr_compile(src, cn, 1, &e, &col, &err), MPT_ERR_NAME);
  assert_int_equal(col, 21);
  mpt_expr_format_error(&err, "problem.json", "Conditions[0].Expression", src, col);
  assert_string_equal(err.msg,
                      "problem.json: Conditions[0].Expression: unknown name 'blok'\n"
                      "    32 <= block_size_x * blok <= 1024\n"
                      "                         ^");
  assert_int_equal(err.code, MPT_ERR_NAME);
}

static void repr_is(mpt_value v, const char *expect) {
  char buf[128];
  int n = mpt_value_repr(&v, buf, sizeof buf);
  assert_string_equal(buf, expect);
  assert_int_equal(n, (int)strlen(expect));
}

static void test_repr(void **state) {
  (void)state;
  repr_is(mpt_value_float(1e16), "1e+16");
  repr_is(mpt_value_float(1e15), "1000000000000000.0");
  repr_is(mpt_value_float(1e-5), "1e-05");
  repr_is(mpt_value_float(1e-4), "0.0001");
  repr_is(mpt_value_float(0.1), "0.1");
  repr_is(mpt_value_float(1.0), "1.0");
  repr_is(mpt_value_float(-0.0), "-0.0");
  repr_is(mpt_value_float(INFINITY), "inf");
  repr_is(mpt_value_float(-INFINITY), "-inf");
  repr_is(mpt_value_float(NAN), "nan");
  repr_is(mpt_value_float(123456789012345678.0), "1.2345678901234568e+17");
  repr_is(mpt_value_float(1.5e-7), "1.5e-07");
  repr_is(mpt_value_float(5e-324), "5e-324");
  repr_is(mpt_value_float(1.7976931348623157e308), "1.7976931348623157e+308");
  repr_is(mpt_value_float(2.5), "2.5");
  repr_is(mpt_value_float(-123.456), "-123.456");
  repr_is(mpt_value_int(-42), "-42");
  repr_is(mpt_value_bool(1), "True");
  repr_is(mpt_value_bool(0), "False");
  mpt_value s = mpt_value_str("it's");
  repr_is(s, "\"it's\"");
  char buf[64];
  mpt_value_str_repr(&s, buf, sizeof buf);
  assert_string_equal(buf, "it's");
  mpt_value_free(&s);
  assert_int_equal(s.kind, MPT_V_NONE);
  s = mpt_value_str("a'\"\n\\");
  repr_is(s, "'a\\'\"\\n\\\\'");
  mpt_value_free(&s);
  mpt_value l;
  assert_int_equal(mpt_expr_eval_const("[1, 2.5, 'a', [True]]", &l, NULL, NULL), 0);
  repr_is(l, "[1, 2.5, 'a', [True]]");
  /* truncation reports the needed length, like snprintf */
  assert_int_equal(mpt_value_repr(&l, buf, 5), 21);
  assert_string_equal(buf, "[1, ");
  mpt_value c;
  assert_int_equal(mpt_value_copy(&c, &l), 0);
  assert_true(mpt_value_equal(&c, &l));
  mpt_value_free(&l);
  repr_is(c, "[1, 2.5, 'a', [True]]");
  mpt_value_free(&c);
  mpt_value one = mpt_value_int(1), onef = mpt_value_float(1.0), t = mpt_value_bool(1);
  assert_true(mpt_value_equal(&one, &onef));
  assert_true(mpt_value_equal(&one, &t));
  int ok;
  assert_true(mpt_value_as_double(&t, &ok) == 1.0 && ok);
  assert_false(mpt_value_truthy(&(mpt_value){.kind = MPT_V_FLOAT, .u.f = 0.0}));
}

static void test_eval_bool_no_alloc(void **state) {
  (void)state;
  static const char *const hn[] = {"block_size_x", "tile_size_x", "temporal_tiling_factor", "block_size_y",
                                   "tile_size_y", "sh_power"};
  const char *src =
      "(block_size_x * tile_size_x + temporal_tiling_factor * 2) * (block_size_y * tile_size_y + temporal_tiling_factor "
      "* 2) * (2 + sh_power) * 4 <= 49152 and not (block_size_x in [1, 2, 4]) and 0.5 < 2 ** -1 + 1";
  mpt_expr *e;
  mpt_error err;
  int col;
  assert_int_equal(mpt_expr_compile(src, hn, 6, &e, &col, &err), 0);
  mpt_value v[6] = {mpt_value_int(32), mpt_value_int(2), mpt_value_int(3), mpt_value_int(4), mpt_value_int(1),
                    mpt_value_int(1)};
  long before = n_allocs;
  int truth = 0, n_true = 0;
  for (int bx = 1; bx <= 256; bx++) {
    v[0].u.i = bx;
    assert_int_equal(mpt_expr_eval_bool(e, v, &truth, &err), 0);
    n_true += truth;
  }
  assert_int_equal(n_allocs, before);
  /* (bx*2+6)*(4+6)*3*4 <= 49152  <=>  bx <= 201, minus 1, 2 and 4 */
  assert_int_equal(n_true, 201 - 3);
  mpt_expr_free(e);
  /* the malloc wrapper really counts */
  mpt_value x;
  assert_int_equal(mpt_expr_eval_const("[1, 2]", &x, NULL, NULL), 0);
  assert_true(n_allocs > before);
  mpt_value_free(&x);
}

/* ---- the memory one evaluation holds */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1 /* ASan reserves terabytes of address space: no RLIMIT_AS, and its RSS is its own */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* what compiling and evaluating one constant expression gave, in a child process */
typedef struct held_outcome {
  int rc, column; /* of mpt_expr_eval; the fault column when it failed */
  char msg[256];
  long max_rss_kb; /* the child's peak resident memory */
} held_outcome;

/* compiles and evaluates src in a child whose address space is limited to 3 GiB (so that an evaluation
 * without a cap fails there instead of taking the machine's memory) */
static held_outcome eval_in_child(const char *src) {
  held_outcome r;
  memset(&r, 0, sizeof r);
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    if (!UNDER_ASAN) {
      struct rlimit lim = {(rlim_t)3 << 30, (rlim_t)3 << 30};
      setrlimit(RLIMIT_AS, &lim);
    }
    mpt_expr *e;
    mpt_error err;
    mpt_error_clear(&err);
    int col;
    r.rc = mpt_expr_compile(src, NULL, 0, &e, &col, &err);
    r.column = col;
    if (r.rc == 0) {
      mpt_value v;
      r.rc = mpt_expr_eval(e, NULL, &v, &err);
      if (r.rc) r.column = mpt_expr_fault_column(e, NULL);
      else mpt_value_free(&v);
      mpt_expr_free(e);
    }
    snprintf(r.msg, sizeof r.msg, "%s", err.msg);
    ssize_t w = write(fd[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], &r, sizeof r);
  close(fd[0]);
  int status;
  struct rusage ru;
  assert_int_equal(wait4(pid, &status, 0, &ru), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(got, (ssize_t)sizeof r);
  r.max_rss_kb = ru.ru_maxrss;
  return r;
}

/* a 1.2 KB problem that asked for 4.1 GB (and, with a larger factor, the OOM killer): a MemoryError at
 * the repetition that goes over the cap, with the memory held bounded by the cap */
static void test_eval_memory_cap(void **state) {
  (void)state;
  const char *src = "[len(s) for s in ['a'*100000000]*40]";
  held_outcome r = eval_in_child(src);
  if (r.rc != MPT_ERR_EVAL || strncmp(r.msg, "MemoryError: ", 13) != 0)
    fail_msg("'%s': rc %d, '%s'; want MPT_ERR_EVAL and a MemoryError", src, r.rc, r.msg);
  assert_string_equal(r.msg, "MemoryError: the expression's strings and lists would take more than 1024 MiB");
  assert_int_equal(r.column, 32); /* the '*' of ...]*40 */
  if (!UNDER_ASAN && r.max_rss_kb > 1536L * 1024)
    fail_msg("'%s' held %ld MiB at its peak; the cap is 1 GiB", src, r.max_rss_kb / 1024);
}

/* a constant expression (T1 Values) that fails while it is evaluated: the column of the operation that
 * failed, for the caret of the problem file's message */
static void test_eval_const_fault_column(void **state) {
  (void)state;
  mpt_value v;
  mpt_error err;
  int col = 0;
  assert_int_equal(mpt_expr_eval_const("[1, 2 // 0]", &v, &col, &err), MPT_ERR_EVAL);
  assert_non_null(strstr(err.msg, "ZeroDivisionError"));
  assert_int_equal(col, 6);
  assert_int_equal(mpt_expr_eval_const("[1, 2 // ]", &v, &col, &err), MPT_ERR_PARSE);
  assert_int_equal(col, 9);
  assert_int_equal(mpt_expr_eval_const("[1, 2 // 1]", &v, &col, &err), 0);
  mpt_value_free(&v);
}

/* large values that fit under the cap are still built; the cap counts what is held at once, not what
 * was allocated over the whole evaluation */
static void test_eval_memory_cap_legal(void **state) {
  (void)state;
  OK("len([0] * 10**6)", "1000000");
  OK("len(list(range(10**6)))", "1000000");
  OK("len('a' * 10**7)", "10000000");
  OK("len(s * 5000000 + s * 5000000)", "20000000");
  OK("len([s * 50000000] * 4)", "4");                         /* 400 MB held at once */
  OK("sum([len(s * 500000) for i in range(1200)])", "1200000000"); /* 1.2 GB over time, 1 MB at once */
  OK("len(str(list(range(10**6))))", "7888890");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arithmetic),   cmocka_unit_test(test_arith_errors), cmocka_unit_test(test_comparisons),
      cmocka_unit_test(test_boolean),      cmocka_unit_test(test_sequences),    cmocka_unit_test(test_builtins),
      cmocka_unit_test(test_t1_expressions), cmocka_unit_test(test_compile_errors), cmocka_unit_test(test_long_chains),
      cmocka_unit_test(test_compile_indexed),
      cmocka_unit_test(test_format_error), cmocka_unit_test(test_fault_column),
      cmocka_unit_test(test_repr),         cmocka_unit_test(test_eval_bool_no_alloc),
      cmocka_unit_test(test_eval_memory_cap_legal), cmocka_unit_test(test_eval_memory_cap),
      cmocka_unit_test(test_eval_const_fault_column),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
