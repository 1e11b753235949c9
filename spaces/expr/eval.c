/* spaces/expr/eval.c: evaluation of compiled expressions (a flattened tree walked with int64 fast
 * paths that never allocate for scalars; long chains of binary operators in a loop; calls of builtins,
 * with range() taken without building it where len, `in` and comprehensions allow) and constant folding
 * of variable-free subtrees at compile time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/eval.h"
#include "spaces/expr/builtins.h"

typedef struct ctx {
  const mpt_expr *e;
  const mpt_value *vars;
  mpt_value *locals;
  mpt_error *err;
  int32_t *fault; /* when not NULL: the column of the innermost node whose evaluation failed (first set) */
  xbudget *held;  /* what this evaluation holds of XP_MAX_HELD */
} ctx;

static int ev(const ctx *c, int32_t ni, xval *o);

/* notes n's column as where the evaluation failed, unless a node below it already failed */
static void note_fault(const ctx *c, const xnode *n) {
  if (c->fault && *c->fault < 0) *c->fault = n->col;
}

/* leaves (constants, variables, comprehension variables) are read in place instead of called */
static inline int evl(const ctx *c, int32_t ni, xval *o) {
  const xnode *n = &c->e->nodes[ni];
  switch (n->op) {
  case X_CONST: o->v = n->k; o->own = 0; return 0;
  case X_VAR: o->v = c->vars[n->slot]; o->own = 0; return 0;
  case X_LOCAL: o->v = c->locals[n->slot]; o->own = 0; return 0;
  default: return ev(c, ni, o);
  }
}


/* moves an evaluated value into a container slot (deep-copies borrowed strings/lists) */
static int take(xval *x, mpt_value *dst, xbudget *held, mpt_error *err) {
  if (x->own || (x->v.kind != MPT_V_STR && x->v.kind != MPT_V_LIST)) {
    *dst = x->v;
    x->own = 0;
    x->v.kind = MPT_V_NONE;
    return 0;
  }
  int rc = xv_copy(dst, &x->v, held, err);
  if (rc) return rc;
  x->v.kind = MPT_V_NONE;
  return 0;
}



/* range(...) without materializing it (len, `in` and comprehension iteration): its arguments */
typedef struct xrange {
  int64_t start, step;
  __int128 len;
} xrange;

static int range_of(const ctx *c, const xnode *rn, xrange *r) {
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < rn->n; i++) {
    xval a;
    int rc = ev(c, c->e->args[rn->first + i], &a);
    if (rc) return rc;
    rc = xb_need_int(&a.v, c->err);
    int64_t x = a.v.u.i;
    xv_release(&a, c->held);
    if (rc) return rc;
    v[i] = x;
  }
  int64_t start = 0, stop, step = 1;
  if (rn->n == 1) stop = v[0];
  else { start = v[0]; stop = v[1]; }
  if (rn->n == 3) step = v[2];
  if (step == 0) return mpt_error_set(c->err, MPT_ERR_EVAL, "ValueError: range() arg 3 must not be zero");
  r->start = start;
  r->step = step;
  r->len = 0;
  if (step > 0 && start < stop) r->len = ((__int128)stop - start - 1) / step + 1;
  if (step < 0 && start > stop) r->len = ((__int128)start - stop - 1) / (-(__int128)step) + 1;
  return 0;
}

static int is_range_call(const ctx *c, int32_t ni) {
  const xnode *n = &c->e->nodes[ni];
  return n->op == X_CALL && n->slot == B_RANGE;
}

/* Python's `x in range(...)`: ints arithmetically, integral floats as their int, others never */
static int range_contains(const xrange *r, const mpt_value *x) {
  __int128 v;
  if (x->kind == MPT_V_INT || x->kind == MPT_V_BOOL) {
    v = x->u.i;
  } else if (x->kind == MPT_V_FLOAT) {
    double f = x->u.f;
    if (!isfinite(f) || f != trunc(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0) return 0;
    v = (__int128)(int64_t)f;
  } else {
    return 0;
  }
  if (r->len == 0) return 0;
  __int128 d = v - r->start;
  if (r->step > 0 ? d < 0 : d > 0) return 0;
  if (d % r->step != 0) return 0;
  return d / r->step < r->len;
}

/* len(range(...)) without building the range */
static int ev_len_of_range(const ctx *c, const xnode *n, xval *o) {
  xrange r;
  int rc = range_of(c, &c->e->nodes[c->e->args[n->first]], &r);
  if (rc) return rc;
  if (r.len > INT64_MAX) return xv_overflow(c->err);
  return xv_set_owned(o, xv_i((int64_t)r.len));
}

/* a builtin call: its arguments evaluated in order, then the builtin (builtins.c) */
__attribute__((noinline)) static int ev_call(const ctx *c, const xnode *n, xval *o) {
  if (n->slot == B_LEN && is_range_call(c, c->e->args[n->first])) return ev_len_of_range(c, n, o);
  xval small[8];
  memset(small, 0, sizeof small);
  xval *a = small;
  int cnt = n->n;
  if (cnt > 8) {
    a = calloc((size_t)cnt, sizeof(xval));
    if (!a) return mpt_error_set(c->err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  }
  int rc = 0, done = 0;
  for (; done < cnt; done++) {
    rc = ev(c, c->e->args[n->first + done], &a[done]);
    if (rc) break;
  }
  if (!rc) rc = xb_call(n->slot, a, cnt, o, c->held, c->err);
  for (int i = 0; i < done; i++) xv_release(&a[i], c->held);
  if (a != small) free(a);
  return rc;
}

/* ------------------------------------------------------------------ evaluation */

__attribute__((noinline)) static int ev_index(const ctx *c, const xnode *n, xval *o) {
  xval con, idx;
  int rc = ev(c, n->a, &con);
  if (rc) return rc;
  rc = ev(c, n->b, &idx);
  if (rc) { xv_release(&con, c->held); return rc; }
  if (con.v.kind != MPT_V_LIST && con.v.kind != MPT_V_STR) {
    rc = mpt_error_set(c->err, MPT_ERR_EVAL, "TypeError: '%s' object is not subscriptable", mpt_value_type_name(&con.v));
  } else if (!xv_is_intlike(&idx.v)) {
    rc = mpt_error_set(c->err, MPT_ERR_EVAL, "TypeError: %s indices must be integers%s, not %s",
                       con.v.kind == MPT_V_LIST ? "list" : "string", con.v.kind == MPT_V_LIST ? " or slices" : "",
                       mpt_value_type_name(&idx.v));
  } else {
    int64_t len = con.v.kind == MPT_V_LIST ? con.v.u.list.n : (int64_t)strlen(con.v.u.s);
    int64_t i = idx.v.u.i;
    if (i < 0) i += len;
    if (i < 0 || i >= len) {
      rc = mpt_error_set(c->err, MPT_ERR_EVAL, "IndexError: %s index out of range", con.v.kind == MPT_V_LIST ? "list" : "string");
    } else if (con.v.kind == MPT_V_STR) {
      mpt_value s;
      rc = xv_new_str(&s, &con.v.u.s[i], 1, c->held, c->err);
      if (!rc) xv_set_owned(o, s);
    } else if (con.own) {
      o->v = con.v.u.list.items[i];
      o->own = 1;
      con.v.u.list.items[i].kind = MPT_V_NONE;
    } else {
      o->v = con.v.u.list.items[i];
      o->own = 0;
    }
  }
  xv_release(&idx, c->held);
  xv_release(&con, c->held);
  return rc;
}

__attribute__((noinline)) static int ev_comp(const ctx *c, const xnode *n, xval *o) {
  xval it;
  int rc;
  xrange rg = {0, 1, 0};
  int lazy = is_range_call(c, n->b);
  if (lazy) { /* iterate range() without building it */
    rc = range_of(c, &c->e->nodes[n->b], &rg);
    if (rc) return rc;
    it.own = 0;
    it.v = xv_i(0);
  } else {
    rc = ev(c, n->b, &it);
    if (rc) return rc;
  }
  if (!lazy && it.v.kind != MPT_V_LIST && it.v.kind != MPT_V_STR) {
    rc = xb_not_iterable(&it.v, c->err);
    xv_release(&it, c->held);
    return rc;
  }
  __int128 cnt = lazy ? rg.len : it.v.kind == MPT_V_LIST ? it.v.u.list.n : (int64_t)strlen(it.v.u.s);
  mpt_value res;
  rc = xv_new_list(&res, 0, c->held, c->err);
  if (rc) { xv_release(&it, c->held); return rc; }
  int64_t cap = 1;
  char chbuf[2] = {0, 0};
  mpt_value *slot = &c->locals[n->slot];
  for (__int128 i = 0; i < cnt && !rc; i++) {
    if (lazy) {
      *slot = xv_i((int64_t)(rg.start + i * rg.step));
    } else if (it.v.kind == MPT_V_LIST) {
      *slot = it.v.u.list.items[i];
    } else {
      chbuf[0] = it.v.u.s[i];
      memset(slot, 0, sizeof *slot);
      slot->kind = MPT_V_STR;
      slot->u.s = chbuf; /* borrowed: never freed (locals are never owned) */
    }
    int keep = 1;
    for (int j = 0; j < n->n && keep; j++) {
      xval cond;
      rc = ev(c, c->e->args[n->first + j], &cond);
      if (rc) break;
      keep = mpt_value_truthy(&cond.v);
      xv_release(&cond, c->held);
    }
    if (rc || !keep) continue;
    xval x;
    rc = ev(c, n->a, &x);
    if (rc) break;
    mpt_value item;
    rc = take(&x, &item, c->held, c->err);
    if (rc) { xv_release(&x, c->held); break; }
    rc = xv_list_append(&res, &cap, item, c->held, c->err);
  }
  slot->kind = MPT_V_NONE;
  xv_release(&it, c->held);
  if (rc) { xv_free(&res, c->held); return rc; }
  return xv_set_owned(o, res);
}

__attribute__((noinline)) static int ev_list(const ctx *c, const xnode *n, xval *o) {
  mpt_value l;
  int rc = xv_new_list(&l, n->n, c->held, c->err);
  if (rc) return rc;
  for (int i = 0; i < n->n; i++) {
    xval x;
    rc = ev(c, c->e->args[n->first + i], &x);
    if (rc) { /* x was not set */
      xv_free(&l, c->held);
      return rc;
    }
    rc = take(&x, &l.u.list.items[i], c->held, c->err);
    if (rc) {
      xv_release(&x, c->held);
      xv_free(&l, c->held);
      return rc;
    }
  }
  return xv_set_owned(o, l);
}

__attribute__((noinline)) static int ev_cmp(const ctx *c, const xnode *n, xval *o) {
  const int32_t *args = c->e->args + n->first;
  xval l, r;
  int rc = evl(c, args[0], &l);
  if (rc) return rc;
  int truth = 1;
  for (int i = 1; i < n->n; i++) {
    int code = args[n->n + i - 1];
    if ((code == C_IN || code == C_NOTIN) && is_range_call(c, args[i])) {
      /* the last operand (compile-time rule): decide without building the range */
      xrange rg;
      rc = range_of(c, &c->e->nodes[args[i]], &rg);
      if (rc) break;
      int found = range_contains(&rg, &l.v);
      truth = code == C_IN ? found : !found;
      break;
    }
    rc = evl(c, args[i], &r);
    if (rc) break;
    int res = 0;
    if (l.v.kind == MPT_V_INT && r.v.kind == MPT_V_INT) {
      int64_t a = l.v.u.i, b = r.v.u.i;
      switch (code) {
      case C_LT: res = a < b; break;
      case C_LE: res = a <= b; break;
      case C_GT: res = a > b; break;
      case C_GE: res = a >= b; break;
      case C_EQ: res = a == b; break;
      case C_NE: res = a != b; break;
      default: rc = xv_compare(code, &l.v, &r.v, &res, c->err);
      }
    } else {
      rc = xv_compare(code, &l.v, &r.v, &res, c->err);
    }
    xv_release(&l, c->held);
    l = r;
    if (rc) break;
    if (!res) { truth = 0; break; }
  }
  xv_release(&l, c->held);
  if (rc) return rc;
  o->v = xv_b(truth);
  o->own = 0;
  return 0;
}

/* o = l op r (binary arithmetic and bitwise operators), l and r released */
__attribute__((always_inline)) static inline int ev_binop(const ctx *c, int op, xval *l, xval *r, xval *o) {
  if (l->v.kind == MPT_V_INT && r->v.kind == MPT_V_INT) {
    int64_t a = l->v.u.i, b = r->v.u.i, x;
    o->own = 0;
    switch (op) {
    case X_ADD:
      if (__builtin_add_overflow(a, b, &x)) return xv_overflow(c->err);
      o->v = xv_i(x);
      return 0;
    case X_SUB:
      if (__builtin_sub_overflow(a, b, &x)) return xv_overflow(c->err);
      o->v = xv_i(x);
      return 0;
    case X_MUL:
      if (__builtin_mul_overflow(a, b, &x)) return xv_overflow(c->err);
      o->v = xv_i(x);
      return 0;
    case X_FLOORDIV:
      if (b > 0 && a >= 0) { o->v = xv_i(a / b); return 0; }
      if (xv_int_floordiv(a, b, &x, c->err)) return MPT_ERR_EVAL;
      o->v = xv_i(x);
      return 0;
    case X_MOD:
      if (b > 0 && a >= 0) { o->v = xv_i(a % b); return 0; }
      if (xv_int_mod(a, b, &x, c->err)) return MPT_ERR_EVAL;
      o->v = xv_i(x);
      return 0;
    default: break;
    }
  }
  mpt_value res;
  int rc = xv_binop(op, &l->v, &r->v, &res, c->held, c->err);
  xv_release(l, c->held);
  xv_release(r, c->held);
  if (rc) return rc;
  return xv_set_owned(o, res);
}

/* o = o OP n->b for the chain operator n (a chain's step: o holds the value of the left operand, taken;
 * and/or short-circuit, returning an operand); on an error o holds nothing */
static int ev_step(const ctx *c, const xnode *n, xval *o) {
  if (n->op == X_AND || n->op == X_OR) {
    int t = mpt_value_truthy(&o->v);
    if ((n->op == X_AND) ? !t : t) return 0;
    xv_release(o, c->held);
    return ev(c, n->b, o);
  }
  xval l = *o, r;
  o->v.kind = MPT_V_NONE;
  o->own = 0;
  int rc = evl(c, n->b, &r);
  if (rc) {
    xv_release(&l, c->held);
    return rc;
  }
  rc = ev_binop(c, n->op, &l, &r, o);
  if (rc) note_fault(c, n); /* a chain's step: its own operator, not the chain's top */
  return rc;
}

/* a chain of binary operators (a + b + c ...: a spine of any length), in a loop */
__attribute__((noinline)) static int ev_chain(const ctx *c, int32_t ni, xval *o) {
  xspine sp;
  int32_t bottom = xt_spine(c->e, ni, &sp);
  if (bottom < 0) return mpt_error_set(c->err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  int rc = evl(c, bottom, o);
  for (int k = sp.n - 1; rc == 0 && k >= 0; k--) rc = ev_step(c, &c->e->nodes[sp.v[k]], o);
  xt_spine_free(&sp);
  return rc;
}

static int ev_node(const ctx *c, int32_t ni, xval *o) {
  const xnode *n = &c->e->nodes[ni];
  switch (n->op) {
  case X_CONST:
    o->v = n->k;
    o->own = 0;
    return 0;
  case X_VAR:
    o->v = c->vars[n->slot];
    o->own = 0;
    return 0;
  case X_LOCAL:
    o->v = c->locals[n->slot];
    o->own = 0;
    return 0;
  case X_ADD: case X_SUB: case X_MUL: case X_FLOORDIV: case X_MOD: case X_DIV: case X_POW:
  case X_BAND: case X_BOR: case X_BXOR: case X_LSHIFT: case X_RSHIFT: {
    if (n->long_chain) return ev_chain(c, ni, o);
    xval l, r;
    int rc = evl(c, n->a, &l);
    if (rc) return rc;
    rc = evl(c, n->b, &r);
    if (rc) { xv_release(&l, c->held); return rc; }
    return ev_binop(c, n->op, &l, &r, o);
  }
  case X_AND: case X_OR: {
    if (n->long_chain) return ev_chain(c, ni, o);
    int rc = ev(c, n->a, o);
    return rc ? rc : ev_step(c, n, o);
  }
  case X_NEG: case X_POS: case X_INV: case X_NOT: {
    xval a;
    int rc = ev(c, n->a, &a);
    if (rc) return rc;
    if (n->op == X_NOT) {
      int t = mpt_value_truthy(&a.v);
      xv_release(&a, c->held);
      o->v = xv_b(!t);
      o->own = 0;
      return 0;
    }
    mpt_value res;
    rc = xv_unop(n->op, &a.v, &res, c->err);
    xv_release(&a, c->held);
    if (rc) return rc;
    return xv_set_owned(o, res);
  }
  case X_CMP: return ev_cmp(c, n, o);
  case X_IFELSE: {
    xval cond;
    int rc = ev(c, n->b, &cond);
    if (rc) return rc;
    int t = mpt_value_truthy(&cond.v);
    xv_release(&cond, c->held);
    return ev(c, t ? n->a : n->c, o);
  }
  case X_INDEX: return ev_index(c, n, o);
  case X_LIST: return ev_list(c, n, o);
  case X_COMP: return ev_comp(c, n, o);
  case X_CALL: return ev_call(c, n, o);
  default: return mpt_error_set(c->err, MPT_ERR_INTERNAL, "internal error: bad expression node %d", n->op);
  }
}

static int ev(const ctx *c, int32_t ni, xval *o) {
  int rc = ev_node(c, ni, o);
  if (rc) note_fault(c, &c->e->nodes[ni]);
  return rc;
}

int xe_eval(const mpt_expr *e, int32_t node, const mpt_value *vars, mpt_value *locals, xval *out, mpt_error *err,
            int32_t *fault) {
  xbudget held = {0};
  ctx c = {e, vars, locals, err, fault, &held};
  if (fault) *fault = -1;
  out->own = 0;
  out->v.kind = MPT_V_NONE;
  return ev(&c, node, out);
}

/* ------------------------------------------------------------------ constant folding */

typedef struct deps {
  int vars;      /* reads a variable */
  int minlocal;  /* smallest comprehension slot read freely, XP_MAX_LOCALS if none */
} deps;

static deps fold(mpt_expr *e, int32_t ni, mpt_value *locals);

static void merge(deps *d, deps k) {
  d->vars |= k.vars;
  if (k.minlocal < d->minlocal) d->minlocal = k.minlocal;
}

/* replaces the constant subtree ni by its value: 1, or 0 when its evaluation fails (the error is left for
 * run time) */
static int fold_const(mpt_expr *e, int32_t ni, mpt_value *locals) {
  mpt_error err;
  xval x;
  if (xe_eval(e, ni, NULL, locals, &x, &err, NULL) != 0) return 0;
  mpt_value v;
  if (take(&x, &v, NULL, &err) != 0) return 0;
  e->nodes[ni].op = X_CONST;
  e->nodes[ni].k = v;
  return 1;
}

/* fold() of a chain (a + b + c ...), in a loop: each step is folded once its left part is; a step whose
 * evaluation fails fails every step above it, which are not tried */
static deps fold_chain(mpt_expr *e, int32_t ni, mpt_value *locals) {
  xspine sp;
  int32_t bottom = xt_spine(e, ni, &sp);
  if (bottom < 0) return (deps){1, XP_MAX_LOCALS}; /* out of memory: nothing folded */
  deps d = fold(e, bottom, locals);
  int folding = 1;
  for (int k = sp.n - 1; k >= 0; k--) {
    merge(&d, fold(e, e->nodes[sp.v[k]].b, locals));
    if (folding && !d.vars && d.minlocal == XP_MAX_LOCALS) folding = fold_const(e, sp.v[k], locals);
  }
  xt_spine_free(&sp);
  return d;
}

static deps fold(mpt_expr *e, int32_t ni, mpt_value *locals) {
  deps d = {0, XP_MAX_LOCALS};
  if (ni < 0) return d;
  xnode *n = &e->nodes[ni];
  switch (n->op) {
  case X_CONST: return d;
  case X_VAR: d.vars = 1; return d;
  case X_LOCAL: d.minlocal = n->slot; return d;
  default: break;
  }
  if (xt_is_chain_op(n->op)) return fold_chain(e, ni, locals);
  int32_t kids[3] = {n->a, n->b, n->c};
  int first = n->first, cnt = n->n, slot = n->slot, op = n->op;
  for (int i = 0; i < 3; i++) {
    deps k = fold(e, kids[i], locals);
    if (op == X_COMP && i == 0 && k.minlocal >= slot) k.minlocal = XP_MAX_LOCALS; /* elt: own variable */
    merge(&d, k);
  }
  for (int i = 0; i < cnt; i++) {
    deps k = fold(e, e->args[first + i], locals);
    if (op == X_COMP && k.minlocal >= slot) k.minlocal = XP_MAX_LOCALS; /* filters */
    merge(&d, k);
  }
  /* constant subtree: evaluate now; run-time errors are left for run time */
  if (!d.vars && d.minlocal == XP_MAX_LOCALS) fold_const(e, ni, locals);
  return d;
}

void xe_fold(mpt_expr *e) {
  mpt_value locals[XP_MAX_LOCALS];
  memset(locals, 0, sizeof locals);
  fold(e, e->root, locals);
}
