/* spaces/expr/expr.c: public API of the expression language (spaces/expr/expr.h): compile (parse, resolve,
 * fold constants, collect used variables), evaluate, the allocation-free truth-value hot path,
 * constant expressions, and the user-facing error message with a caret under the column.
 *
 * The language (what T1 Values, Conditions and KernelSpecification sizes may use) is Python's expression
 * grammar and semantics restricted to:
 *   literals: int (decimal, 0x/0o/0b, underscores), float, 'str'/"str" (adjacent ones concatenate),
 *     True, False, None; list displays [a, b] and comprehensions [e for x in it if c ...] (one `for`,
 *     any number of `if`; the variable is local; the iterable is evaluated in the enclosing scope);
 *     generator arguments of list/min/max/sum: max(x for x in L)
 *   operators with Python precedence: x if c else y; or; and; not; chained comparisons < <= > >= == !=
 *     in, not in; | ^ & << >>; + -; * / // %; unary - + ~; ** (right-assoc., binds tighter than a unary
 *     minus on its left); indexing a[i] (negative i) on lists and strings
 *   builtins: range, list, len, min, max, abs, int, float, round, sum, bool, str (positional arguments)
 * Deliberate differences from Python, all reported as errors rather than different answers:
 *   - ints are int64: a result outside it is "OverflowError: integer result does not fit in 64 bits";
 *   - a negative float to a fractional power (a complex number in Python) is a ValueError;
 *   - one list holds at most 2^24 items and one string 2^28 bytes, and one evaluation at most 1 GiB of
 *     strings and lists at once (value.h: XP_MAX_*; MemoryError beyond, at the operation that went over);
 *   - range() is a list, so it is accepted only where a list and a range agree (whole expression,
 *     list/len/sum/one-argument min/max, comprehension iterable, last operand of `in`, indexing);
 *     len(), `in` and comprehensions use it without building it;
 *   - wrong argument counts of builtins, unknown names, slices, tuples, dicts, attributes, lambdas,
 *     keyword arguments and `is` are compile-time errors with a column; string % formatting is a
 *     TypeError at run time;
 *   - strings are byte strings: len() and indexing count bytes (identical to Python for ASCII);
 *   - `x in L` compares with == only (Python also accepts the identical object, which matters for nan);
 *   - nesting (parentheses, unary operators, right operands, `**`) deeper than a few hundred levels is a
 *     compile-time error ("too deeply nested"); a flat chain of left-associative operators (a + b - c ...,
 *     a and b or c) is no nesting and may have any length.
 * int / int is correctly rounded like Python's, also beyond 2^53 (128-bit integer quotient). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/expr.h"
#include "spaces/expr/eval.h"
#include "spaces/expr/fast.h"
#include "spaces/expr/parse.h"

void mpt_expr_free(mpt_expr *e) {
  if (!e) return;
  xf_free(e->fast);
  e->fast = NULL;
  xt_free(e);
}

const char *mpt_expr_name_fault(const char *name) { return xp_name_fault(name); }

/* the variable slots read below a node, as found (repeats included); oom set when the list could not grow */
typedef struct slot_list {
  int *v;
  int n, cap, oom;
} slot_list;

static void mark_uses(const mpt_expr *e, int32_t ni, slot_list *used) {
  for (; ni >= 0 && xt_is_chain_op(e->nodes[ni].op); ni = e->nodes[ni].a) /* a chain, in a loop */
    mark_uses(e, e->nodes[ni].b, used);
  if (ni < 0) return;
  const xnode *n = &e->nodes[ni];
  if (n->op == X_VAR) {
    if (used->n == used->cap) {
      int cap = used->cap ? 2 * used->cap : 8;
      int *v = realloc(used->v, sizeof(int) * (size_t)cap);
      if (!v) { used->oom = 1; return; }
      used->v = v;
      used->cap = cap;
    }
    used->v[used->n++] = n->slot;
    return;
  }
  if (n->op == X_CONST || n->op == X_LOCAL) return;
  mark_uses(e, n->a, used);
  mark_uses(e, n->b, used);
  mark_uses(e, n->c, used);
  for (int i = 0; i < n->n; i++) mark_uses(e, e->args[n->first + i], used);
}

static int int_order(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int mpt_expr_compile(const char *src, const char *const *names, int n_names, mpt_expr **out, int *column,
                     mpt_error *err) {
  return mpt_expr_compile_indexed(src, names, n_names, NULL, out, column, err);
}

int mpt_expr_compile_indexed(const char *src, const char *const *names, int n_names, const struct mpt_name_set *index,
                             mpt_expr **out, int *column, mpt_error *err) {
  int dummy_col;
  if (!column) column = &dummy_col;
  *column = -1;
  if (out) *out = NULL;
  if (!src || !out) {
    *column = 0;
    return mpt_error_set(err, MPT_ERR_VALUE, "no expression");
  }
  if (n_names < 0 || (n_names > 0 && !names)) {
    *column = 0;
    return mpt_error_set(err, MPT_ERR_VALUE, "bad variable table");
  }
  mpt_expr *e = calloc(1, sizeof *e);
  if (!e) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  e->src = strdup(src);
  e->n_names = n_names;
  if (!e->src) {
    free(e);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  mpt_error local;
  if (!err) err = &local;
  if (xp_parse(e, src, names, n_names, index, column, err) != 0) {
    int code = err->code ? err->code : MPT_ERR_PARSE;
    mpt_expr_free(e);
    return code;
  }
  xe_fold(e);
  slot_list used = {0}; /* sorted, then its repeats dropped: the uses */
  mark_uses(e, e->root, &used);
  e->uses = used.v ? used.v : malloc(sizeof(int));
  if (used.oom || !e->uses) {
    mpt_expr_free(e);
    *column = 0;
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  qsort(e->uses, (size_t)used.n, sizeof(int), int_order);
  for (int k = 0; k < used.n; k++)
    if (k == 0 || e->uses[k] != e->uses[k - 1]) e->uses[e->n_uses++] = e->uses[k];
  e->fast = xf_compile(e); /* optional: NULL keeps the general evaluator */
  *out = e;
  *column = -1;
  return 0;
}

const char *mpt_expr_source(const mpt_expr *e) { return e ? e->src : NULL; }
int mpt_expr_n_uses(const mpt_expr *e) { return e ? e->n_uses : 0; }
const int *mpt_expr_uses(const mpt_expr *e) { return e ? e->uses : NULL; }

static int fast_enabled = 1;
void mpt_expr_set_fast_path(int on) { fast_enabled = on; }

int mpt_expr_eval(const mpt_expr *e, const mpt_value *vars, mpt_value *out, mpt_error *err) {
  mpt_value locals[XP_MAX_LOCALS];
  xval x;
  out->kind = MPT_V_NONE;
  if (e->n_uses && !vars) return mpt_error_set(err, MPT_ERR_VALUE, "expression reads variables but none were given");
  if (e->fast && fast_enabled) {
    int is_float, pk;
    double f;
    int64_t i;
    if (xf_run(e->fast, vars, &is_float, &pk, &f, &i) == 0 && pk != XF_PK_INTBOOL) {
      *out = is_float ? mpt_value_float(f) : pk == XF_PK_BOOL ? mpt_value_bool(i != 0) : mpt_value_int(i);
      return 0;
    }
  }
  int rc = xe_eval(e, e->root, vars, locals, &x, err, NULL);
  if (rc) return rc;
  if (!x.own && (x.v.kind == MPT_V_STR || x.v.kind == MPT_V_LIST)) {
    if (mpt_value_copy(out, &x.v)) return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
    return 0;
  }
  *out = x.v;
  return 0;
}

int mpt_expr_eval_bool(const mpt_expr *e, const mpt_value *vars, int *truth, mpt_error *err) {
  mpt_value locals[XP_MAX_LOCALS];
  xval x;
  if (e->n_uses && !vars) return mpt_error_set(err, MPT_ERR_VALUE, "expression reads variables but none were given");
  if (e->fast && fast_enabled) {
    int is_float, pk;
    double f;
    int64_t i;
    if (xf_run(e->fast, vars, &is_float, &pk, &f, &i) == 0) {
      *truth = is_float ? f != 0.0 : i != 0;
      return 0;
    }
  }
  int rc = xe_eval(e, e->root, vars, locals, &x, err, NULL);
  if (rc) return rc;
  *truth = mpt_value_truthy(&x.v);
  xv_release(&x, NULL);
  return 0;
}

int mpt_expr_fault_column(const mpt_expr *e, const mpt_value *vars) {
  mpt_value locals[XP_MAX_LOCALS];
  mpt_error err;
  xval x;
  int32_t fault = -1;
  if (!e || (e->n_uses && !vars)) return -1;
  if (xe_eval(e, e->root, vars, locals, &x, &err, &fault) != 0) return fault;
  xv_release(&x, NULL);
  return -1;
}

int mpt_expr_eval_const(const char *src, mpt_value *out, int *column, mpt_error *err) {
  mpt_expr *e;
  int rc = mpt_expr_compile(src, NULL, 0, &e, column, err);
  if (rc) return rc;
  rc = mpt_expr_eval(e, NULL, out, err);
  if (rc && column) *column = mpt_expr_fault_column(e, NULL); /* the caret under the operation that failed */
  mpt_expr_free(e);
  return rc;
}

void mpt_expr_format_error(mpt_error *err, const char *file, const char *field, const char *src, int column) {
  if (!err) return;
  char msg[sizeof err->msg];
  memcpy(msg, err->msg, sizeof msg);
  char head[1024];
  head[0] = '\0';
  if (file && *file) snprintf(head, sizeof head, "%s: ", file);
  if (field && *field) snprintf(head + strlen(head), sizeof head - strlen(head), "%s: ", field);
  if (!src) {
    snprintf(err->msg, sizeof err->msg, "%s%s", head, msg);
    return;
  }
  /* the expression on one line (newlines/tabs shown as spaces) */
  size_t len = strlen(src);
  if (len > 900) len = 900;
  char line[904];
  for (size_t i = 0; i < len; i++) line[i] = (src[i] == '\n' || src[i] == '\t' || src[i] == '\r') ? ' ' : src[i];
  line[len] = '\0';
  if (column < 0) {
    snprintf(err->msg, sizeof err->msg, "%s%s\n    %s", head, msg, line);
    return;
  }
  /* caret under the column, counting UTF-8 characters rather than bytes */
  int pad = 0;
  for (int i = 0; i < column && (size_t)i < len; i++)
    if (((unsigned char)src[i] & 0xC0) != 0x80) pad++;
  if ((size_t)column > len) pad += column - (int)len;
  if (pad > 900) pad = 900;
  char caret[910];
  memset(caret, ' ', (size_t)pad);
  caret[pad] = '^';
  caret[pad + 1] = '\0';
  snprintf(err->msg, sizeof err->msg, "%s%s\n    %s\n    %s", head, msg, line, caret);
}
