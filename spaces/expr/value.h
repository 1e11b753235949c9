/* spaces/expr/value.h: the values of the expression language, the bottom layer of spaces/expr/. The
 * public part (mpt_value and the mpt_value_* functions) is part of the contract of spaces/expr/expr.h,
 * which includes this header. The private part, for the files of spaces/expr/ only: the limits that turn
 * hostile input into errors, the evaluator's value with its ownership (xval) and the operations on values
 * with Python's semantics (xv_*). */
#ifndef MPT_EXPR_VALUE_H
#define MPT_EXPR_VALUE_H
#include <stddef.h>
#include <stdint.h>
#include "spaces/sys/error.h"

/* ==== public (through spaces/expr/expr.h) ==== */

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

/* ==== private to spaces/expr/ ==== */

/* Limits that turn hostile input into errors instead of crashes. */
#define XP_MAX_DEPTH 200          /* parser nesting (parentheses, unary chains, …) */
#define XP_MAX_LOCALS 32          /* nested comprehensions */
#define XP_MAX_LIST (1 << 24)     /* items in one list value */
#define XP_MAX_STR (1 << 28)      /* bytes in one string value */
/* bytes of strings and lists one evaluation holds at once (xbudget): a string counts its length + 1, a
 * list its items (sizeof(mpt_value) each), each allocation XP_ALLOC_OVERHEAD more */
#define XP_MAX_HELD ((int64_t)1 << 30)
#define XP_ALLOC_OVERHEAD 16

/* What one evaluation holds of XP_MAX_HELD: the strings and lists it allocated and has not freed. Each
 * evaluation has its own (in its context: nothing shared between evaluations or threads); the functions
 * below that allocate or free values take it, NULL where nothing is counted (constants of the compiled
 * tree, the public mpt_value_* functions). Going over XP_MAX_HELD is a MemoryError (MPT_ERR_EVAL). */
typedef struct xbudget {
  int64_t held;
} xbudget;

/* A value during evaluation: own=0 means it is borrowed (from vars, constants or a container that
 * outlives it) and must not be freed; scalars own nothing either way. */
typedef struct xval {
  mpt_value v;
  int own;
} xval;

/* inline scalar constructors for the evaluators' hot paths */
static inline mpt_value xv_i(int64_t i) {
  mpt_value v;
  v.kind = MPT_V_INT;
  v.u.i = i;
  return v;
}
static inline mpt_value xv_b(int b) {
  mpt_value v;
  v.kind = MPT_V_BOOL;
  v.u.i = b != 0;
  return v;
}
static inline mpt_value xv_f(double f) {
  mpt_value v;
  v.kind = MPT_V_FLOAT;
  v.u.f = f;
  return v;
}

/* frees v, giving back to b what it held */
void xv_free(mpt_value *v, xbudget *b);

/* drops x: frees what it owns (given back to b), leaves MPT_V_NONE */
static inline void xv_release(xval *x, xbudget *b) {
  if (x->own && (x->v.kind == MPT_V_STR || x->v.kind == MPT_V_LIST)) xv_free(&x->v, b);
  x->v.kind = MPT_V_NONE;
  x->own = 0;
}

/* Operations on values (Python semantics); each returns 0 or MPT_ERR_EVAL / MPT_ERR_NOMEM with a
 * Python-like message "ExceptionClass: text" in err. */
static inline int xv_is_intlike(const mpt_value *v) { return v->kind == MPT_V_INT || v->kind == MPT_V_BOOL; }
/* o takes v (owned); returns 0 */
static inline int xv_set_owned(xval *o, mpt_value v) {
  o->v = v;
  o->own = 1;
  return 0;
}
/* a new string of len bytes for the caller to fill, NUL-terminated */
int xv_alloc_str(mpt_value *out, size_t len, xbudget *b, mpt_error *err);
/* a new string: the len bytes at s */
int xv_new_str(mpt_value *out, const char *s, size_t len, xbudget *b, mpt_error *err);
/* deep copy of src */
int xv_copy(mpt_value *dst, const mpt_value *src, xbudget *b, mpt_error *err);
/* binary arithmetic/bitwise operator op (X_ADD..X_RSHIFT of ops.h) on any values; result is owned */
int xv_binop(int op, const mpt_value *l, const mpt_value *r, mpt_value *out, xbudget *b, mpt_error *err);
int xv_unop(int op, const mpt_value *a, mpt_value *out, mpt_error *err);
/* comparison code C_* (ops.h) → *res 0/1 */
int xv_compare(int cmp, const mpt_value *l, const mpt_value *r, int *res, mpt_error *err);
int xv_list_append(mpt_value *list, int64_t *cap, mpt_value item, xbudget *b, mpt_error *err); /* takes item */
int xv_new_list(mpt_value *out, int64_t n, xbudget *b, mpt_error *err); /* n NONE items */
/* int64 helpers */
int xv_overflow(mpt_error *err);
int xv_int_floordiv(int64_t a, int64_t b, int64_t *q, mpt_error *err);
int xv_int_mod(int64_t a, int64_t b, int64_t *r, mpt_error *err);
int xv_int_pow(int64_t a, int64_t b, mpt_value *out, mpt_error *err);
int xv_float_floordiv(double a, double b, double *q, mpt_error *err);
int xv_float_mod(double a, double b, double *r, mpt_error *err);
int xv_float_pow(double a, double b, double *r, mpt_error *err);
double xv_int_truediv(int64_t a, int64_t b);
/* exact int64 vs double comparison: -1, 0, 1; 2 when unordered (nan) */
int xv_cmp_int_float(int64_t i, double f);

#endif
