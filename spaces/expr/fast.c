/* spaces/expr/fast.c: the numeric fast path of the expression language. An expression made only of
 * numbers, variables, arithmetic, comparisons, and/or/not, ternaries and `in` a constant list is
 * compiled a second time into a statically typed tree of C functions (each node returns an int64 or a
 * double in a machine register: no tags, no allocation, constant operands folded into the node). It
 * runs when every variable it reads is an int or bool; whenever a case needs Python's error or an
 * exact slow path (overflow, division by zero, huge ints in true division…) it sets `bail` and the
 * general evaluator (eval.c) computes the result and the error. Nodes have no side effects, so
 * after a bail the remaining work is harmless (every operation still checks its own preconditions). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/fast.h"

typedef struct cn cn;
typedef int64_t (*ifn)(const cn *, const mpt_value *, int *);
typedef double (*dfn)(const cn *, const mpt_value *, int *);

struct cn {
  ifn fi;             /* set for int-typed nodes (ints and bools) */
  dfn fd;             /* set for double-typed nodes */
  const cn *a, *b, *c;
  int64_t k;          /* int constant (also a constant right operand) */
  double kd;          /* double constant */
  int slot, cc;
  int ta, tb;         /* operand register types for mixed comparisons */
  const int64_t *ilist; /* `in` an all-int constant list */
  const mpt_value *list;
  int64_t nlist;
  const cn **ops;     /* chained comparison operands (nops) and codes (nops-1) */
  const int *codes;
  int nops;
};

enum { T_I = 0, T_F = 1 };
enum { PK_INT = XF_PK_INT, PK_BOOL = XF_PK_BOOL, PK_FLOAT = XF_PK_FLOAT, PK_INTBOOL = XF_PK_INTBOOL };

struct xfast {
  cn *nodes;
  int n_nodes, cap_nodes;
  void **blocks;      /* extra arrays (chain operands, int lists) */
  int n_blocks;
  const cn *root;
  int ret_type, ret_pk;
  const int *uses;
  int n_uses;
};

/* leaves (variables, constants) are read in place instead of called: most operands are leaves */
static int64_t i_const(const cn *n, const mpt_value *v, int *bail);
static int64_t i_var(const cn *n, const mpt_value *v, int *bail);
static inline int64_t evi(const cn *x, const mpt_value *v, int *bail) {
  if (x->fi == i_var) return v[x->slot].u.i;
  if (x->fi == i_const) return x->k;
  return x->fi(x, v, bail);
}
#define EVI(x) evi((x), v, bail)
static double d_const(const cn *n, const mpt_value *v, int *bail);
static double d_from_i(const cn *n, const mpt_value *v, int *bail);
static inline double evd(const cn *x, const mpt_value *v, int *bail) {
  if (x->fd == d_const) return x->kd;
  if (x->fd == d_from_i) return (double)evi(x->a, v, bail);
  return x->fd(x, v, bail);
}
#define EVD(x) evd((x), v, bail)
#define BAIL() do { *bail = 1; return 0; } while (0)
#define LIM53 ((int64_t)1 << 53)

/* ------------------------------------------------------------------ int nodes */

static int64_t i_const(const cn *n, const mpt_value *v, int *bail) { (void)v; (void)bail; return n->k; }
static int64_t i_var(const cn *n, const mpt_value *v, int *bail) { (void)bail; return v[n->slot].u.i; }

static int64_t i_add(const cn *n, const mpt_value *v, int *bail) {
  int64_t x;
  if (__builtin_add_overflow(EVI(n->a), EVI(n->b), &x)) BAIL();
  return x;
}
static int64_t i_add_k(const cn *n, const mpt_value *v, int *bail) {
  int64_t x;
  if (__builtin_add_overflow(EVI(n->a), n->k, &x)) BAIL();
  return x;
}
static int64_t i_sub(const cn *n, const mpt_value *v, int *bail) {
  int64_t x;
  if (__builtin_sub_overflow(EVI(n->a), EVI(n->b), &x)) BAIL();
  return x;
}
static int64_t i_sub_k(const cn *n, const mpt_value *v, int *bail) {
  int64_t x;
  if (__builtin_sub_overflow(EVI(n->a), n->k, &x)) BAIL();
  return x;
}
static int64_t i_mul(const cn *n, const mpt_value *v, int *bail) {
  int64_t x;
  if (__builtin_mul_overflow(EVI(n->a), EVI(n->b), &x)) BAIL();
  return x;
}
static int64_t i_mul_k(const cn *n, const mpt_value *v, int *bail) {
  int64_t x;
  if (__builtin_mul_overflow(EVI(n->a), n->k, &x)) BAIL();
  return x;
}
static inline int64_t floordiv(int64_t a, int64_t b, int *bail) {
  if (b > 0 && a >= 0) return a / b;
  if (b == 0 || (b == -1 && a == INT64_MIN)) BAIL();
  int64_t x = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) x--;
  return x;
}
static inline int64_t modulo(int64_t a, int64_t b, int *bail) {
  if (b > 0 && a >= 0) return a % b;
  if (b == 0) BAIL();
  if (b == -1) return 0;
  int64_t x = a % b;
  if (x != 0 && ((x < 0) != (b < 0))) x += b;
  return x;
}
static int64_t i_floordiv(const cn *n, const mpt_value *v, int *bail) { return floordiv(EVI(n->a), EVI(n->b), bail); }
static int64_t i_floordiv_k(const cn *n, const mpt_value *v, int *bail) { return floordiv(EVI(n->a), n->k, bail); }
static int64_t i_mod(const cn *n, const mpt_value *v, int *bail) { return modulo(EVI(n->a), EVI(n->b), bail); }
static int64_t i_mod_k(const cn *n, const mpt_value *v, int *bail) { return modulo(EVI(n->a), n->k, bail); }
static int64_t i_pow_k(const cn *n, const mpt_value *v, int *bail) {
  int64_t base = EVI(n->a), e = n->k, r = 1;
  while (e) {
    if ((e & 1) && __builtin_mul_overflow(r, base, &r)) BAIL();
    e >>= 1;
    if (e && __builtin_mul_overflow(base, base, &base)) BAIL();
  }
  return r;
}
static int64_t i_band(const cn *n, const mpt_value *v, int *bail) { return EVI(n->a) & EVI(n->b); }
static int64_t i_bor(const cn *n, const mpt_value *v, int *bail) { return EVI(n->a) | EVI(n->b); }
static int64_t i_bxor(const cn *n, const mpt_value *v, int *bail) { return EVI(n->a) ^ EVI(n->b); }
static int64_t i_shl(const cn *n, const mpt_value *v, int *bail) {
  int64_t a = EVI(n->a), b = EVI(n->b);
  if (b < 0 || b > 62) BAIL();
  __int128 w = (__int128)a * ((__int128)1 << b);
  if (w > INT64_MAX || w < INT64_MIN) BAIL();
  return (int64_t)w;
}
static int64_t i_shr(const cn *n, const mpt_value *v, int *bail) {
  int64_t a = EVI(n->a), b = EVI(n->b);
  if (b < 0) BAIL();
  return b >= 63 ? (a < 0 ? -1 : 0) : (a >> b);
}
static int64_t i_neg(const cn *n, const mpt_value *v, int *bail) {
  int64_t a = EVI(n->a);
  if (a == INT64_MIN) BAIL();
  return -a;
}
static int64_t i_inv(const cn *n, const mpt_value *v, int *bail) { return ~EVI(n->a); }
static int64_t i_not_i(const cn *n, const mpt_value *v, int *bail) { return EVI(n->a) == 0; }
static int64_t i_not_d(const cn *n, const mpt_value *v, int *bail) { return EVD(n->a) == 0.0; }
static int64_t i_and(const cn *n, const mpt_value *v, int *bail) {
  int64_t x = EVI(n->a);
  return x ? EVI(n->b) : x;
}
static int64_t i_or(const cn *n, const mpt_value *v, int *bail) {
  int64_t x = EVI(n->a);
  return x ? x : EVI(n->b);
}
static int64_t i_if_i(const cn *n, const mpt_value *v, int *bail) { return EVI(n->b) ? EVI(n->a) : EVI(n->c); }
static int64_t i_if_d(const cn *n, const mpt_value *v, int *bail) { return EVD(n->b) != 0.0 ? EVI(n->a) : EVI(n->c); }

#define CMP_FUNCS(name, op)                                                                                         \
  static int64_t i_##name##_ii(const cn *n, const mpt_value *v, int *bail) { return EVI(n->a) op EVI(n->b); }      \
  static int64_t i_##name##_ik(const cn *n, const mpt_value *v, int *bail) { return EVI(n->a) op n->k; }           \
  static int64_t i_##name##_dd(const cn *n, const mpt_value *v, int *bail) { return EVD(n->a) op EVD(n->b); }
CMP_FUNCS(lt, <)
CMP_FUNCS(le, <=)
CMP_FUNCS(gt, >)
CMP_FUNCS(ge, >=)
CMP_FUNCS(eq, ==)
CMP_FUNCS(ne, !=)
static const ifn cmp_ii[6] = {i_lt_ii, i_le_ii, i_gt_ii, i_ge_ii, i_eq_ii, i_ne_ii};
static const ifn cmp_ik[6] = {i_lt_ik, i_le_ik, i_gt_ik, i_ge_ik, i_eq_ik, i_ne_ik};
static const ifn cmp_dd[6] = {i_lt_dd, i_le_dd, i_gt_dd, i_ge_dd, i_eq_dd, i_ne_dd};

static int apply3(int cc, int c3) { /* c3: -1, 0, 1, or 2 = unordered (nan) */
  if (c3 == 2) return cc == C_NE;
  switch (cc) {
  case C_LT: return c3 < 0;
  case C_LE: return c3 <= 0;
  case C_GT: return c3 > 0;
  case C_GE: return c3 >= 0;
  case C_EQ: return c3 == 0;
  default: return c3 != 0;
  }
}

/* one comparison of values of register types ta/tb (exact between int64 and double, as Python) */
static int cmp_mixed(int cc, int ta, int64_t ia, double da, int tb, int64_t ib, double db) {
  if (ta == T_I && tb == T_I) return apply3(cc, ia < ib ? -1 : ia > ib);
  if (ta == T_F && tb == T_F) return apply3(cc, da < db ? -1 : da > db ? 1 : da == db ? 0 : 2);
  if (ta == T_I) return apply3(cc, xv_cmp_int_float(ia, db));
  int c3 = xv_cmp_int_float(ib, da);
  return apply3(cc, c3 == 2 ? 2 : -c3);
}

static int64_t i_cmp_mixed(const cn *n, const mpt_value *v, int *bail) {
  int64_t ia = 0, ib = 0;
  double da = 0, db = 0;
  if (n->ta == T_I) ia = EVI(n->a); else da = EVD(n->a);
  if (n->tb == T_I) ib = EVI(n->b); else db = EVD(n->b);
  return cmp_mixed(n->cc, n->ta, ia, da, n->tb, ib, db);
}

/* a < b <= c …: each operand evaluated once, stops at the first false comparison */
static int64_t i_chain(const cn *n, const mpt_value *v, int *bail) {
  const cn *x = n->ops[0];
  int tp = x->fi ? T_I : T_F;
  int64_t ip = tp == T_I ? EVI(x) : 0;
  double dp = tp == T_F ? EVD(x) : 0;
  for (int i = 1; i < n->nops; i++) {
    x = n->ops[i];
    int tc = x->fi ? T_I : T_F;
    int64_t ic = tc == T_I ? EVI(x) : 0;
    double dc = tc == T_F ? EVD(x) : 0;
    if (!cmp_mixed(n->codes[i - 1], tp, ip, dp, tc, ic, dc)) return 0;
    tp = tc;
    ip = ic;
    dp = dc;
  }
  return 1;
}

static int64_t i_in_ilist(const cn *n, const mpt_value *v, int *bail) {
  int64_t x = EVI(n->a);
  int found = 0;
  for (int64_t i = 0; i < n->nlist; i++)
    if (n->ilist[i] == x) { found = 1; break; }
  return n->cc == C_IN ? found : !found;
}

static int64_t i_in_list(const cn *n, const mpt_value *v, int *bail) {
  mpt_value x = n->a->fi ? mpt_value_int(EVI(n->a)) : mpt_value_float(EVD(n->a));
  int found = 0;
  for (int64_t i = 0; i < n->list->u.list.n && !found; i++) found = mpt_value_equal(&n->list->u.list.items[i], &x);
  return n->cc == C_IN ? found : !found;
}

/* ------------------------------------------------------------------ double nodes */

static double d_const(const cn *n, const mpt_value *v, int *bail) { (void)v; (void)bail; return n->kd; }
static double d_from_i(const cn *n, const mpt_value *v, int *bail) { return (double)EVI(n->a); }
static double d_add(const cn *n, const mpt_value *v, int *bail) { return EVD(n->a) + EVD(n->b); }
static double d_sub(const cn *n, const mpt_value *v, int *bail) { return EVD(n->a) - EVD(n->b); }
static double d_mul(const cn *n, const mpt_value *v, int *bail) { return EVD(n->a) * EVD(n->b); }
static double d_div(const cn *n, const mpt_value *v, int *bail) {
  double a = EVD(n->a), b = EVD(n->b);
  if (b == 0.0) BAIL();
  return a / b;
}
static double d_tdiv_ii(const cn *n, const mpt_value *v, int *bail) {
  int64_t a = EVI(n->a), b = EVI(n->b);
  if (b == 0 || a > LIM53 || a < -LIM53 || b > LIM53 || b < -LIM53) BAIL();
  return (double)a / (double)b;
}
static double d_floordiv(const cn *n, const mpt_value *v, int *bail) {
  double r = 0;
  if (xv_float_floordiv(EVD(n->a), EVD(n->b), &r, NULL)) BAIL();
  return r;
}
static double d_mod(const cn *n, const mpt_value *v, int *bail) {
  double r = 0;
  if (xv_float_mod(EVD(n->a), EVD(n->b), &r, NULL)) BAIL();
  return r;
}
static double d_pow(const cn *n, const mpt_value *v, int *bail) {
  double r = 0;
  if (xv_float_pow(EVD(n->a), EVD(n->b), &r, NULL)) BAIL();
  return r;
}
static double d_neg(const cn *n, const mpt_value *v, int *bail) { return -EVD(n->a); }
static double d_and(const cn *n, const mpt_value *v, int *bail) {
  double x = EVD(n->a);
  return x != 0.0 ? EVD(n->b) : x;
}
static double d_or(const cn *n, const mpt_value *v, int *bail) {
  double x = EVD(n->a);
  return x != 0.0 ? x : EVD(n->b);
}
static double d_if_i(const cn *n, const mpt_value *v, int *bail) { return EVI(n->b) ? EVD(n->a) : EVD(n->c); }
static double d_if_d(const cn *n, const mpt_value *v, int *bail) { return EVD(n->b) != 0.0 ? EVD(n->a) : EVD(n->c); }

/* ------------------------------------------------------------------ compiler */

typedef struct fcomp {
  const mpt_expr *e;
  xfast *f;
  int fail;
  int depth; /* of build()'s recursion: the depth of the tree of C functions, which recurse as deep to run */
} fcomp;

/* the deepest tree of C functions built: deeper ones (chains of hundreds of terms: a + b + c ...) are left
 * to the general evaluator, which takes chains in a loop */
enum { XF_MAX_DEPTH = 1000 };

static cn *node(fcomp *c) {
  if (c->f->n_nodes >= c->f->cap_nodes) { c->fail = 1; return NULL; }
  cn *n = &c->f->nodes[c->f->n_nodes++];
  memset(n, 0, sizeof *n);
  return n;
}

static void *block(fcomp *c, size_t bytes) {
  void *p = calloc(1, bytes ? bytes : 1);
  void **nb = p ? realloc(c->f->blocks, (size_t)(c->f->n_blocks + 1) * sizeof(void *)) : NULL;
  if (!nb) { free(p); c->fail = 1; return NULL; }
  c->f->blocks = nb;
  c->f->blocks[c->f->n_blocks++] = p;
  return p;
}

static const cn *as_double(fcomp *c, const cn *x) {
  if (!x || x->fd) return x;
  cn *n = node(c);
  if (!n) return NULL;
  n->fd = d_from_i;
  n->a = x;
  return n;
}

static int is_const_int(const cn *x) { return x && x->fi == i_const; }

static const cn *build(fcomp *c, int32_t ni, int *pk);

static const cn *build_binop(fcomp *c, const xnode *xn, int *pk) {
  int pa, pb;
  const cn *a = build(c, xn->a, &pa);
  const cn *b = build(c, xn->b, &pb);
  if (c->fail) return NULL;
  cn *n = node(c);
  if (!n) return NULL;
  int op = xn->op;
  if (op >= X_BAND) { /* bitwise and shifts: ints only */
    if (!a->fi || !b->fi) { c->fail = 1; return NULL; }
    static const ifn fns[] = {i_band, i_bor, i_bxor, i_shl, i_shr};
    n->fi = fns[op - X_BAND];
    n->a = a;
    n->b = b;
    if (op > X_BXOR) *pk = PK_INT;
    else if (pa == PK_BOOL && pb == PK_BOOL) *pk = PK_BOOL;
    else if (pa == PK_INT || pb == PK_INT) *pk = PK_INT;
    else *pk = PK_INTBOOL;
    return n;
  }
  if (a->fi && b->fi && op == X_POW) {
    /* int ** int: int for a constant exponent >= 0, float for a negative one, unknown otherwise */
    if (!is_const_int(b)) { c->fail = 1; return NULL; }
    if (b->k >= 0) {
      n->fi = i_pow_k;
      n->a = a;
      n->k = b->k;
      *pk = PK_INT;
      return n;
    }
  }
  if (a->fi && b->fi && op != X_POW) {
    n->a = a;
    n->b = b;
    *pk = PK_INT;
    int k = is_const_int(b);
    n->k = k ? b->k : 0;
    switch (op) {
    case X_ADD: n->fi = k ? i_add_k : i_add; break;
    case X_SUB: n->fi = k ? i_sub_k : i_sub; break;
    case X_MUL: n->fi = k ? i_mul_k : i_mul; break;
    case X_FLOORDIV: n->fi = k ? i_floordiv_k : i_floordiv; break;
    case X_MOD: n->fi = k ? i_mod_k : i_mod; break;
    case X_DIV: n->fd = d_tdiv_ii; *pk = PK_FLOAT; break;
    default: c->fail = 1; return NULL;
    }
    return n;
  }
  n->a = as_double(c, a);
  n->b = as_double(c, b);
  static const dfn fns[] = {d_add, d_sub, d_mul, d_div, d_floordiv, d_mod, d_pow};
  n->fd = fns[op - X_ADD];
  *pk = PK_FLOAT;
  return n;
}

static const cn *build_cmp(fcomp *c, const xnode *xn, int *pk) {
  const int32_t *args = c->e->args + xn->first;
  *pk = PK_BOOL;
  int pa;
  if (xn->n == 2) {
    int code = args[2];
    const cn *a = build(c, args[0], &pa);
    if (c->fail) return NULL;
    cn *n = node(c);
    if (!n) return NULL;
    n->fi = NULL;
    n->a = a;
    n->cc = code;
    if (code == C_IN || code == C_NOTIN) {
      const xnode *ln = &c->e->nodes[args[1]];
      if (ln->op != X_CONST || ln->k.kind != MPT_V_LIST) { c->fail = 1; return NULL; }
      int all_int = a->fi != NULL;
      for (int64_t i = 0; i < ln->k.u.list.n && all_int; i++)
        all_int = ln->k.u.list.items[i].kind == MPT_V_INT || ln->k.u.list.items[i].kind == MPT_V_BOOL;
      n->nlist = ln->k.u.list.n;
      n->list = &ln->k;
      if (all_int) {
        int64_t *il = block(c, (size_t)n->nlist * sizeof(int64_t));
        if (!il) return NULL;
        for (int64_t i = 0; i < n->nlist; i++) il[i] = ln->k.u.list.items[i].u.i;
        n->ilist = il;
        n->fi = i_in_ilist;
      } else {
        n->fi = i_in_list;
      }
      return n;
    }
    int pb;
    const cn *b = build(c, args[1], &pb);
    if (c->fail) return NULL;
    n->b = b;
    if (a->fi && b->fi) {
      if (is_const_int(b)) { n->fi = cmp_ik[code]; n->k = b->k; }
      else n->fi = cmp_ii[code];
    } else if (a->fd && b->fd) {
      n->fi = cmp_dd[code];
    } else {
      n->fi = i_cmp_mixed;
      n->ta = a->fi ? T_I : T_F;
      n->tb = b->fi ? T_I : T_F;
    }
    return n;
  }
  /* chains: all comparisons must be orderings/equalities (no `in`) */
  const cn **ops = block(c, (size_t)xn->n * sizeof(cn *));
  int *codes = block(c, (size_t)xn->n * sizeof(int));
  if (!ops || !codes) return NULL;
  for (int i = 0; i < xn->n; i++) {
    if (i > 0) {
      codes[i - 1] = args[xn->n + i - 1];
      if (codes[i - 1] == C_IN || codes[i - 1] == C_NOTIN) { c->fail = 1; return NULL; }
    }
    ops[i] = build(c, args[i], &pa);
    if (c->fail) return NULL;
  }
  cn *n = node(c);
  if (!n) return NULL;
  n->fi = i_chain;
  n->ops = ops;
  n->codes = codes;
  n->nops = xn->n;
  return n;
}

static const cn *build_node(fcomp *c, int32_t ni, int *pk);

static const cn *build(fcomp *c, int32_t ni, int *pk) {
  if (c->fail) return NULL;
  if (c->depth >= XF_MAX_DEPTH) {
    c->fail = 1;
    return NULL;
  }
  c->depth++;
  const cn *n = build_node(c, ni, pk);
  c->depth--;
  return n;
}

/* an int, bool or float constant; other constants (strings, lists) are not for the fast path */
static const cn *build_const(fcomp *c, const xnode *xn, int *pk) {
  cn *n;
  if (xn->k.kind == MPT_V_INT || xn->k.kind == MPT_V_BOOL) {
    if (!(n = node(c))) return NULL;
    n->fi = i_const;
    n->k = xn->k.u.i;
    *pk = xn->k.kind == MPT_V_BOOL ? PK_BOOL : PK_INT;
    return n;
  }
  if (xn->k.kind == MPT_V_FLOAT) {
    if (!(n = node(c))) return NULL;
    n->fd = d_const;
    n->kd = xn->k.u.f;
    *pk = PK_FLOAT;
    return n;
  }
  c->fail = 1;
  return NULL;
}

/* -a, +a, ~a, not a */
static const cn *build_unary(fcomp *c, const xnode *xn, int *pk) {
  int pa;
  const cn *a = build(c, xn->a, &pa);
  if (c->fail) return NULL;
  if (xn->op == X_POS && a->fd) { *pk = PK_FLOAT; return a; }
  cn *n = node(c);
  if (!n) return NULL;
  n->a = a;
  if (xn->op == X_NOT) {
    n->fi = a->fi ? i_not_i : i_not_d;
    *pk = PK_BOOL;
    return n;
  }
  if (a->fd) {
    if (xn->op == X_INV) { c->fail = 1; return NULL; }
    n->fd = d_neg;
    *pk = PK_FLOAT;
    return n;
  }
  if (xn->op == X_POS) { /* +bool is an int: same register, Python kind int */
    n->fi = i_add_k;
    n->k = 0;
  } else {
    n->fi = xn->op == X_NEG ? i_neg : i_inv;
  }
  *pk = PK_INT;
  return n;
}

/* a and b, a or b, a if cond else b: both operands of one register type */
static const cn *build_choice(fcomp *c, const xnode *xn, int *pk) {
  int p1, p2, pc = 0;
  const cn *cond = xn->op == X_IFELSE ? build(c, xn->b, &pc) : NULL;
  const cn *a = build(c, xn->a, &p1);
  const cn *b = build(c, xn->op == X_IFELSE ? xn->c : xn->b, &p2);
  if (c->fail) return NULL;
  if (!a->fi != !b->fi) { c->fail = 1; return NULL; } /* both operands must share a register type */
  cn *n = node(c);
  if (!n) return NULL;
  n->a = a;
  if (xn->op == X_IFELSE) {
    n->b = cond;
    n->c = b;
    if (a->fi) n->fi = cond->fi ? i_if_i : i_if_d;
    else n->fd = cond->fi ? d_if_i : d_if_d;
  } else {
    n->b = b;
    if (a->fi) n->fi = xn->op == X_AND ? i_and : i_or;
    else n->fd = xn->op == X_AND ? d_and : d_or;
  }
  *pk = p1 == p2 ? p1 : (a->fi ? PK_INTBOOL : PK_FLOAT);
  return n;
}

static const cn *build_node(fcomp *c, int32_t ni, int *pk) {
  const xnode *xn = &c->e->nodes[ni];
  switch (xn->op) {
  case X_CONST: return build_const(c, xn, pk);
  case X_VAR: {
    cn *n = node(c);
    if (!n) return NULL;
    n->fi = i_var;
    n->slot = xn->slot;
    *pk = PK_INTBOOL;
    return n;
  }
  case X_ADD: case X_SUB: case X_MUL: case X_DIV: case X_FLOORDIV: case X_MOD: case X_POW:
  case X_BAND: case X_BOR: case X_BXOR: case X_LSHIFT: case X_RSHIFT:
    return build_binop(c, xn, pk);
  case X_NEG: case X_POS: case X_INV: case X_NOT: return build_unary(c, xn, pk);
  case X_AND: case X_OR: case X_IFELSE: return build_choice(c, xn, pk);
  case X_CMP: return build_cmp(c, xn, pk);
  default:
    c->fail = 1;
    return NULL;
  }
}

void xf_free(xfast *f) {
  if (!f) return;
  for (int i = 0; i < f->n_blocks; i++) free(f->blocks[i]);
  free(f->blocks);
  free(f->nodes);
  free(f);
}

xfast *xf_compile(const mpt_expr *e) {
  xfast *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->cap_nodes = 2 * e->n_nodes + 4; /* each expression node, plus int-to-double conversions */
  f->nodes = calloc((size_t)f->cap_nodes, sizeof(cn));
  fcomp c = {e, f, f->nodes == NULL, 0};
  int pk = PK_INT;
  const cn *root = c.fail ? NULL : build(&c, e->root, &pk);
  if (c.fail || !root) {
    xf_free(f);
    return NULL;
  }
  f->root = root;
  f->ret_type = root->fi ? T_I : T_F;
  f->ret_pk = pk;
  f->uses = e->uses;
  f->n_uses = e->n_uses;
  return f;
}

/* 0 with the result set; 1 when the general evaluator must take over */
int xf_run(const xfast *f, const mpt_value *vars, int *is_float, int *pykind, double *fout, int64_t *iout) {
  for (int i = 0; i < f->n_uses; i++) {
    mpt_vkind k = vars[f->uses[i]].kind;
    if (k != MPT_V_INT && k != MPT_V_BOOL) return 1;
  }
  int bail = 0;
  const cn *r = f->root;
  *pykind = f->ret_pk;
  if (f->ret_type == T_I) {
    int64_t x = r->fi(r, vars, &bail);
    *is_float = 0;
    *iout = x;
  } else {
    double x = r->fd(r, vars, &bail);
    *is_float = 1;
    *fout = x;
  }
  return bail;
}
