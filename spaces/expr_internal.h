/* spaces/expr_internal.h: private types of the expression language shared by the parser
 * (expr_parse.c), the evaluator (expr_eval.c), the value helpers (expr_value.c) and the public API
 * (expr.c). Not part of any contract: only spaces/expr*.c include it. */
#ifndef MPT_EXPR_INTERNAL_H
#define MPT_EXPR_INTERNAL_H
#include <stdint.h>
#include "spaces/expr.h"

/* Limits that turn hostile input into errors instead of crashes. */
#define XP_MAX_DEPTH 200          /* parser nesting (parentheses, unary chains, …) */
#define XP_MAX_LOCALS 32          /* nested comprehensions */
#define XP_MAX_LIST (1 << 24)     /* items in one list value */
#define XP_MAX_STR (1 << 28)      /* bytes in one string value */

/* Node kinds of the compiled tree. Children are indices into mpt_expr.nodes; variable-length
 * operand lists live in mpt_expr.args[first .. first+n). */
typedef enum xop {
  X_CONST,      /* k */
  X_VAR,        /* slot: vars[slot] */
  X_LOCAL,      /* slot: comprehension variable */
  X_NAME,       /* unresolved name (parser only); name */
  X_NEG, X_POS, X_INV, X_NOT,                   /* a */
  X_ADD, X_SUB, X_MUL, X_DIV, X_FLOORDIV, X_MOD, X_POW,
  X_BAND, X_BOR, X_BXOR, X_LSHIFT, X_RSHIFT,    /* a op b */
  X_AND, X_OR,                                  /* a, b (short-circuit, return operand) */
  X_CMP,        /* chain: args[first..first+n) operands, args[first+n..first+2n-1) comparison codes */
  X_IFELSE,     /* a if b else c */
  X_INDEX,      /* a[b] */
  X_LIST,       /* [args...] */
  X_COMP,       /* [a for local slot in b if args...] */
  X_CALL,       /* builtin slot(args...) */
} xop;

typedef enum xcmp { C_LT, C_LE, C_GT, C_GE, C_EQ, C_NE, C_IN, C_NOTIN } xcmp;

typedef enum xbuiltin {
  B_RANGE, B_LIST, B_LEN, B_MIN, B_MAX, B_ABS, B_INT, B_FLOAT, B_ROUND, B_SUM, B_BOOL, B_STR,
  B_COUNT
} xbuiltin;

typedef struct xnode {
  uint8_t op;        /* xop */
  uint8_t long_chain; /* a chain operator with a spine of more than XP_SHORT_CHAIN below it (resolve() sets
                       * it): the evaluator takes it in a loop, shorter ones by recursion (cheaper) */
  int32_t col;       /* 0-based byte offset of the operator/operand in the source */
  int32_t a, b, c;   /* children (or -1) */
  int32_t first, n;  /* operand list in args */
  int32_t slot;      /* X_VAR / X_LOCAL slot, X_COMP local slot, X_CALL builtin */
  char *name;        /* X_NAME (owned; freed after resolution) */
  mpt_value k;       /* X_CONST (owned by the expression) */
} xnode;

typedef struct xfast xfast;

struct mpt_expr {
  char *src;
  xfast *fast;       /* numeric fast path (expr_fast.c), NULL when the expression needs more */
  xnode *nodes;
  int32_t n_nodes, cap_nodes;
  int32_t *args;
  int32_t n_args, cap_args;
  int32_t root;
  int n_locals;      /* comprehension variable slots needed */
  int *uses;
  int n_uses;
  int n_names;
};

/* A value during evaluation: own=0 means it is borrowed (from vars, constants or a container that
 * outlives it) and must not be freed; scalars own nothing either way. */
typedef struct xval {
  mpt_value v;
  int own;
} xval;

/* inline scalar constructors for the evaluators' hot paths (mpt_value_int & co. live in another file) */
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

static inline void xv_release(xval *x) {
  if (x->own && (x->v.kind == MPT_V_STR || x->v.kind == MPT_V_LIST)) mpt_value_free(&x->v);
  x->v.kind = MPT_V_NONE;
  x->own = 0;
}

/* ---- expr_value.c: operations on values (Python semantics); each returns 0 or MPT_ERR_EVAL /
 * MPT_ERR_NOMEM with a Python-like message "ExceptionClass: text" in err. ---- */
static inline int xv_is_intlike(const mpt_value *v) { return v->kind == MPT_V_INT || v->kind == MPT_V_BOOL; }
/* o takes v (owned); returns 0 */
static inline int xv_set_owned(xval *o, mpt_value v) {
  o->v = v;
  o->own = 1;
  return 0;
}
int xv_float_repr(double d, char *buf, int cap);
/* binary arithmetic/bitwise operator op (X_ADD..X_RSHIFT) on any values; result is owned */
int xv_binop(int op, const mpt_value *l, const mpt_value *r, mpt_value *out, mpt_error *err);
int xv_unop(int op, const mpt_value *a, mpt_value *out, mpt_error *err);
/* comparison code C_* → *res 0/1 */
int xv_compare(int cmp, const mpt_value *l, const mpt_value *r, int *res, mpt_error *err);
/* Python `<` for sorting/min/max: *res = l < r */
int xv_less(const mpt_value *l, const mpt_value *r, int *res, mpt_error *err);
int xv_list_append(mpt_value *list, int64_t *cap, mpt_value item, mpt_error *err); /* takes item */
int xv_new_list(mpt_value *out, int64_t n, mpt_error *err); /* n NONE items */
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

/* ---- chains of left-associative binary operators (a + b - c, a and b or c): the left operand of each is
 * the next one down, a left spine as long as the chain. Every walker of the tree takes a spine in a loop
 * (xp_spine), so that a chain of any length costs no recursion per term; only true nesting (parentheses,
 * right operands) recurses, and that is limited. ---- */
static inline int xp_is_chain_op(int op) { return op >= X_ADD && op <= X_OR && op != X_POW; }
enum { XP_SHORT_CHAIN = 8 }; /* longer spines are "long": see xnode.long_chain */
typedef struct xspine {
  int32_t *v;        /* v[0] the top node, v[k + 1] the left operand of v[k] */
  int n, cap;
  int32_t small[32]; /* v for chains of up to 32 */
} xspine;
/* the spine from node ni (a chain operator) down; returns its bottom, the leftmost operand (evaluated
 * first), or -1 out of memory. xp_spine_free releases s. */
int32_t xp_spine(const mpt_expr *e, int32_t ni, xspine *s);
void xp_spine_free(xspine *s);

/* ---- expr_parse.c ---- */
/* Parses src into e->nodes (root in e->root), resolving names against names[] (through index when not
 * NULL) and comprehension variables. On error sets *column and err. */
int xp_parse(mpt_expr *e, const char *src, const char *const *names, int n_names, const struct mpt_name_set *index,
             int *column, mpt_error *err);
int xp_node_new(mpt_expr *e, int op, int col);

/* ---- expr_eval.c ---- */
/* fault, when not NULL: set to the column of the innermost node whose evaluation failed (-1 when none) */
int xe_eval(const mpt_expr *e, int32_t node, const mpt_value *vars, mpt_value *locals, xval *out,
            mpt_error *err, int32_t *fault);
/* constant folding of subtrees without variables; never fails (errors stay for run time) */
void xe_fold(mpt_expr *e);

/* ---- expr_fast.c: statically typed function tree for numeric expressions ---- */
enum { XF_PK_INT, XF_PK_BOOL, XF_PK_FLOAT, XF_PK_INTBOOL };
xfast *xf_compile(const mpt_expr *e);  /* NULL when not applicable */
void xf_free(xfast *f);
/* 0: result in *iout or *fout (*is_float) with its Python kind XF_PK_*; 1: use the general evaluator */
int xf_run(const xfast *f, const mpt_value *vars, int *is_float, int *pykind, double *fout, int64_t *iout);

/* ---- expr.c: test hook (tests/expr_driver.c): 0 disables the fast path, to compare both paths ---- */
void xe_set_fast(int on);

/* spaces/expr_convert.c: 0 for an int or bool, else a TypeError */
int xv_need_int(const mpt_value *v, mpt_error *err);
/* the builtins int(), float(), round() over their n evaluated arguments a; the result in o */
int xe_b_int(xval *a, int n, xval *o, mpt_error *err);
int xe_b_float(xval *a, int n, xval *o, mpt_error *err);
int xe_b_round(xval *a, int n, xval *o, mpt_error *err);
#endif
