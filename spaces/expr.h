/* spaces/expr.h: the expression language, a strict subset of Python with Python's semantics, used for
 * T1 `Values`, `Conditions[].Expression` and KernelSpecification sizes. An expression is compiled once
 * against a table of variable names (slot i = names[i]) and then evaluated many millions of times. */
#ifndef MPT_EXPR_H
#define MPT_EXPR_H
#include <stdint.h>
#include "spaces/error.h"

typedef enum mpt_vkind {
  MPT_V_NONE = 0, MPT_V_BOOL, MPT_V_INT, MPT_V_FLOAT, MPT_V_STR, MPT_V_LIST
} mpt_vkind;

/* A Python value. Ints are int64 (an overflow is an evaluation error, never silent wrap-around).
 * MPT_V_STR and MPT_V_LIST own heap memory released by mpt_value_free(); scalars own nothing. */
typedef struct mpt_value {
  mpt_vkind kind;
  union {
    int64_t i;     /* BOOL (0/1) and INT */
    double f;      /* FLOAT */
    char *s;       /* STR, NUL-terminated */
    struct { struct mpt_value *items; int64_t n; } list;
  } u;
} mpt_value;

mpt_value mpt_value_int(int64_t i);
mpt_value mpt_value_float(double f);
mpt_value mpt_value_bool(int b);
mpt_value mpt_value_str(const char *s);      /* copies s */
void mpt_value_free(mpt_value *v);           /* frees owned memory, leaves MPT_V_NONE */
int mpt_value_copy(mpt_value *dst, const mpt_value *src); /* deep copy; 0 or MPT_ERR_NOMEM */
/* Python repr(): 3, -2.5, 1e+20, 'abc', True, [1, 2]. Returns the length it needed (like snprintf). */
int mpt_value_repr(const mpt_value *v, char *buf, int cap);
/* Python str() (strings without quotes); otherwise as repr */
int mpt_value_str_repr(const mpt_value *v, char *buf, int cap);
/* Python ==  (1 == 1.0 == True) */
int mpt_value_equal(const mpt_value *a, const mpt_value *b);
/* Python truthiness */
int mpt_value_truthy(const mpt_value *v);
/* Python's type name: NoneType, bool, int, float, str, list */
const char *mpt_value_type_name(const mpt_value *v);
/* numeric value of a BOOL/INT/FLOAT as double; 0 and *ok=0 for other kinds */
double mpt_value_as_double(const mpt_value *v, int *ok);

typedef struct mpt_expr mpt_expr;

/* Compiles `src`. Names not in `names` (and not builtins or comprehension variables) are an error
 * (MPT_ERR_NAME); syntax errors are MPT_ERR_PARSE. On error *column (0-based byte offset into src) is
 * set and err->msg holds a short description without location ("unexpected ')'", "unknown name 'x'").
 * Use mpt_expr_format_error() to build the user-facing message. */
int mpt_expr_compile(const char *src, const char *const *names, int n_names, mpt_expr **out,
                     int *column, mpt_error *err);
/* The same, with index mapping each of names to its slot (spaces/name_set.h): a name is found in constant
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

/* Convenience: compile and evaluate an expression without variables (T1 `Values`). */
int mpt_expr_eval_const(const char *src, mpt_value *out, int *column, mpt_error *err);

/* Builds the user-facing message for an expression error:
 *   FILE: FIELD: MESSAGE
 *     EXPRESSION
 *     ^ (under column)
 * and stores it in err (keeping err->code). */
void mpt_expr_format_error(mpt_error *err, const char *file, const char *field, const char *src,
                           int column);

#endif
