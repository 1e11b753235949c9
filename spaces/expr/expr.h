/* spaces/expr/expr.h: the expression language, a strict subset of Python with Python's semantics, used for
 * T1 `Values`, `Conditions[].Expression` and KernelSpecification sizes. An expression is compiled once
 * against a table of variable names (slot i = names[i]) and then evaluated many millions of times. */
#ifndef MPT_EXPR_H
#define MPT_EXPR_H
#include <stdint.h>
#include "spaces/sys/error.h"
#include "spaces/expr/value.h" /* mpt_value and its functions */

typedef struct mpt_expr mpt_expr;

/* Compiles `src`. Names not in `names` (and not builtins or comprehension variables) are an error
 * (MPT_ERR_NAME); syntax errors are MPT_ERR_PARSE. On error *column (0-based byte offset into src) is
 * set and err->msg holds a short description without location ("unexpected ')'", "unknown name 'x'").
 * Use mpt_expr_format_error() to build the user-facing message. */
int mpt_expr_compile(const char *src, const char *const *names, int n_names, mpt_expr **out,
                     int *column, mpt_error *err);
/* The same, with index mapping each of names to its slot (spaces/sys/name_set.h): a name is found in constant
 * time, so that a problem with thousands of parameters and conditions compiles in time linear in its size. */
struct mpt_name_set;
int mpt_expr_compile_indexed(const char *src, const char *const *names, int n_names, const struct mpt_name_set *index,
                             mpt_expr **out, int *column, mpt_error *err);
void mpt_expr_free(mpt_expr *e);
const char *mpt_expr_source(const mpt_expr *e);
/* NULL when an expression can refer to a variable called name, else why not (a phrase: "a Python
 * keyword", "not a name ..."): what the names given to mpt_expr_compile must be */
const char *mpt_expr_name_fault(const char *name);

/* The variable slots the expression reads (free variables), ascending, without duplicates. */
int mpt_expr_n_uses(const mpt_expr *e);
const int *mpt_expr_uses(const mpt_expr *e);

/* Evaluates with vars[slot] bound to each variable (only the used slots are read). The result is
 * written to *out (caller frees with mpt_value_free). Run-time errors (ZeroDivisionError, TypeError,
 * overflow, index out of range, …) return MPT_ERR_EVAL with a Python-like message in err. */
int mpt_expr_eval(const mpt_expr *e, const mpt_value *vars, mpt_value *out, mpt_error *err);

/* Hot path for constraints: evaluates and returns the Python truth value in *truth, without heap
 * allocation when the expression only involves scalars. Same errors as mpt_expr_eval. */
int mpt_expr_eval_bool(const mpt_expr *e, const mpt_value *vars, int *truth, mpt_error *err);

/* Where evaluating e with vars fails: the column (byte in the source) of the innermost operation whose
 * evaluation failed (the operator of `a // b`, the call of `min(x)`, ...), or -1 when it does not fail.
 * For messages once mpt_expr_eval or mpt_expr_eval_bool failed: it evaluates again, in the general
 * evaluator. */
int mpt_expr_fault_column(const mpt_expr *e, const mpt_value *vars);

/* Convenience: compile and evaluate an expression without variables (T1 `Values`). On an error, *column
 * (when not NULL) is where: the column of a compile error, or that of the operation whose evaluation
 * failed (mpt_expr_fault_column). */
int mpt_expr_eval_const(const char *src, mpt_value *out, int *column, mpt_error *err);

/* Builds the user-facing message for an expression error:
 *   FILE: FIELD: MESSAGE
 *     EXPRESSION
 *     ^ (under column)
 * and stores it in err (keeping err->code). */
void mpt_expr_format_error(mpt_error *err, const char *file, const char *field, const char *src,
                           int column);

/* Test hook (tests/expr_driver.c, tests/bench_expr.c): 0 turns the numeric fast path off, so that the
 * general evaluator is checked and timed alone; 1 (the default) on. Not for the rest of the project. */
void mpt_expr_set_fast_path(int on);

#endif
