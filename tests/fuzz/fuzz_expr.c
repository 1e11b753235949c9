/* tests/fuzz/fuzz_expr.c: fuzz harness of the expression language (spaces/expr*.c). The input, as text, is
 * compiled against a few bound variables and evaluated three ways that must agree: mpt_expr_eval with the
 * numeric fast path and without it, and the truth-value hot path mpt_expr_eval_bool. A run-time error must
 * have a column (mpt_expr_fault_column), a compile error a column inside the text; both messages are
 * formatted as the T1 reader does. The text is also evaluated as a constant, as a T1 `Values` is. A
 * disagreement aborts (a finding); everything allocated is freed. Expressions whose values are huge by
 * design are evaluated once, not compared (COMPARE_MAX_WEIGHT); fuzz.sh keeps those that are slow or need
 * more memory than libFuzzer allows as artifacts, not failures (README.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/expr.h"
#include "tests/fuzz/fuzz.h"

/* a larger value (value_weight: 100,000 items, a string of 1.6 MB) is not compared: evaluating one of
 * millions of items (deep copies of lists in lists) or a string of hundreds of MB takes seconds in this
 * instrumented build, and doing it twice more would leave little time to fuzz */
enum { COMPARE_MAX_WEIGHT = 100000 };
static const char *const names[] = {"a", "b", "z", "f", "s", "t", "L", "E", "M", "B"};
enum { N_NAMES = sizeof names / sizeof names[0] };
static mpt_value vars[N_NAMES];

static void free_vars(void) {
  for (int i = 0; i < N_NAMES; i++) mpt_value_free(&vars[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  vars[0] = mpt_value_int(3);
  vars[1] = mpt_value_int(-2);
  vars[2] = mpt_value_int(0);
  vars[3] = mpt_value_float(2.5);
  vars[4] = mpt_value_str("ab");
  vars[5] = mpt_value_bool(1);
  int rc = mpt_expr_eval_const("[1, 2, 3]", &vars[6], NULL, NULL);
  rc |= mpt_expr_eval_const("[]", &vars[7], NULL, NULL);
  rc |= mpt_expr_eval_const("[[1, 2.5], ['x'], True]", &vars[8], NULL, NULL);
  vars[9] = mpt_value_int(INT64_C(4611686018427387904)); /* 2**62: overflows are near */
  atexit(free_vars);
  if (rc) fuzz_setup_failed("fuzz_expr", "cannot build the bound variables");
  return 0;
}

/* the same Python value, item by item: the same type and == (a float NaN is the same as a NaN, 0.0 is
 * not -0.0: repr tells them apart) */
static int same_value(const mpt_value *x, const mpt_value *y) {
  if (x->kind != y->kind) return 0;
  if (x->kind == MPT_V_FLOAT)
    return isnan(x->u.f) ? isnan(y->u.f) : x->u.f == y->u.f && signbit(x->u.f) == signbit(y->u.f);
  if (x->kind != MPT_V_LIST) return mpt_value_equal(x, y);
  if (x->u.list.n != y->u.list.n) return 0;
  for (int64_t i = 0; i < x->u.list.n; i++)
    if (!same_value(&x->u.list.items[i], &y->u.list.items[i])) return 0;
  return 1;
}

/* how large v is: its items, nested lists counted through, and a string's bytes by 16 (up to limit) */
static int64_t value_weight(const mpt_value *v, int64_t limit) {
  if (v->kind == MPT_V_STR) return 1 + (int64_t)(strlen(v->u.s) / 16);
  if (v->kind != MPT_V_LIST) return 1;
  int64_t n = 1;
  for (int64_t i = 0; i < v->u.list.n && n <= limit; i++) n += value_weight(&v->u.list.items[i], limit - n);
  return n;
}

static void check_repr(const mpt_value *v) {
  char small[64];
  int need = mpt_value_repr(v, small, (int)sizeof small);
  if (need < 0) fuzz_finding("mpt_value_repr failed");
  char *buf = malloc((size_t)need + 1);
  if (!buf) return;
  if (mpt_value_repr(v, buf, need + 1) != need || strlen(buf) != (size_t)need)
    fuzz_finding("mpt_value_repr: the length it asked for is not the length it wrote");
  free(buf);
}

/* a run-time error: both evaluators fail, the fault has a column, the message formats */
static void check_eval_error(const mpt_expr *e, const char *src, int rc_fast, mpt_error *err) {
  if (rc_fast == 0)
    fuzz_finding("the fast path succeeds where the general evaluator fails");
  int col = mpt_expr_fault_column(e, vars);
  if (err->code == MPT_ERR_EVAL && (col < 0 || col > (int)strlen(src)))
    fuzz_finding("a run-time error without a column inside the expression");
  mpt_expr_format_error(err, "fuzz.json", "Conditions[0].Expression", src, col);
}

/* The general evaluator first; then, where that is worth comparing (not out of memory, a value small enough
 * to be compared in the time of one input: COMPARE_MAX_WEIGHT), the fast path and the truth-value hot path. */
static void eval_and_compare(const mpt_expr *e, const char *src) {
  mpt_error err_slow, err_fast, err_bool;
  mpt_error_clear(&err_slow);
  mpt_error_clear(&err_fast);
  mpt_error_clear(&err_bool);
  mpt_value slow, fast;
  mpt_expr_set_fast_path(0);
  int rc_slow = mpt_expr_eval(e, vars, &slow, &err_slow);
  mpt_expr_set_fast_path(1);
  if (rc_slow == MPT_ERR_NOMEM) return;
  if (rc_slow == 0 && value_weight(&slow, COMPARE_MAX_WEIGHT) > COMPARE_MAX_WEIGHT) {
    mpt_value_free(&slow);
    return;
  }
  int rc_fast = mpt_expr_eval(e, vars, &fast, &err_fast);
  int truth = -1;
  int rc_bool = mpt_expr_eval_bool(e, vars, &truth, &err_bool);
  if (rc_fast == MPT_ERR_NOMEM || rc_bool == MPT_ERR_NOMEM) {
    /* out of memory in one of them: nothing to compare */
  } else if (rc_slow) {
    check_eval_error(e, src, rc_fast, &err_slow);
    if (rc_bool == 0) fuzz_finding("mpt_expr_eval_bool succeeds where mpt_expr_eval fails");
  } else {
    if (rc_fast) fuzz_finding("the fast path fails where the general evaluator succeeds");
    if (!same_value(&fast, &slow)) fuzz_finding("the fast path and the general evaluator disagree");
    if (rc_bool) fuzz_finding("mpt_expr_eval_bool fails where mpt_expr_eval succeeds");
    if (truth != mpt_value_truthy(&slow)) fuzz_finding("mpt_expr_eval_bool disagrees with the value's truth");
    check_repr(&slow);
  }
  if (rc_fast == 0) mpt_value_free(&fast);
  if (rc_slow == 0) mpt_value_free(&slow);
}

static void eval_as_values(const char *src) {
  mpt_value v;
  int col = -1;
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_expr_eval_const(src, &v, &col, &err) == 0) {
    check_repr(&v);
    mpt_value_free(&v);
  } else {
    mpt_expr_format_error(&err, "fuzz.json", "ConfigurationSpace.TuningParameters[0].Values", src, col);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = fuzz_text(data, size);
  if (!src) return 0;
  mpt_expr *e = NULL;
  int col = -1;
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_expr_compile(src, names, N_NAMES, &e, &col, &err) == 0) {
    eval_and_compare(e, src);
    /* without variables mpt_expr_eval ran what a T1 Values runs; with them, Values' compile fails */
    if (mpt_expr_n_uses(e) > 0) eval_as_values(src);
    mpt_expr_free(e);
  } else {
    if (err.code != MPT_ERR_NOMEM && (col < 0 || col > (int)strlen(src)))
      fuzz_finding("a compile error without a column inside the expression");
    mpt_expr_format_error(&err, "fuzz.json", "Conditions[0].Expression", src, col);
    eval_as_values(src);
  }
  free(src);
  return 0;
}
