/* spaces/expr/eval.c: evaluation of compiled expressions (a flattened tree walked with int64 fast
 * paths that never allocate for scalars; long chains of binary operators in a loop), the builtins (range,
 * list, len, min, max, abs, int, float, round, sum, bool, str) and constant folding of variable-free
 * subtrees at compile time. */
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
static int take(xval *x, mpt_value *dst, mpt_error *err) {
  if (x->own || (x->v.kind != MPT_V_STR && x->v.kind != MPT_V_LIST)) {
    *dst = x->v;
    x->own = 0;
    x->v.kind = MPT_V_NONE;
    return 0;
  }
  if (mpt_value_copy(dst, &x->v)) return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  x->v.kind = MPT_V_NONE;
  return 0;
}


/* ------------------------------------------------------------------ builtins */

static int not_iterable(const mpt_value *v, mpt_error *err) {
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: '%s' object is not iterable", mpt_value_type_name(v));
}


static int b_range(xval *a, int n, xval *o, mpt_error *err) {
  for (int i = 0; i < n; i++)
    if (xb_need_int(&a[i].v, err)) return MPT_ERR_EVAL;
  int64_t start = 0, stop, step = 1;
  if (n == 1) stop = a[0].v.u.i;
  else { start = a[0].v.u.i; stop = a[1].v.u.i; }
  if (n == 3) step = a[2].v.u.i;
  if (step == 0) return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: range() arg 3 must not be zero");
  __int128 len = 0;
  if (step > 0 && start < stop) len = ((__int128)stop - start - 1) / step + 1;
  if (step < 0 && start > stop) len = ((__int128)start - stop - 1) / (-(__int128)step) + 1;
  if (len > XP_MAX_LIST)
    return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: range of %lld items is too large to materialize", (long long)(len > INT64_MAX ? INT64_MAX : len));
  mpt_value l;
  int rc = xv_new_list(&l, (int64_t)len, err);
  if (rc) return rc;
  for (int64_t i = 0; i < (int64_t)len; i++) l.u.list.items[i] = xv_i((int64_t)(start + (__int128)i * step));
  return xv_set_owned(o, l);
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
    xv_release(&a);
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

/* a list/str operand as a list value (strings split into 1-character strings) */
static int as_list(xval *x, xval *o, mpt_error *err) {
  if (x->v.kind == MPT_V_LIST) {
    if (x->own) { *o = *x; x->own = 0; x->v.kind = MPT_V_NONE; return 0; }
    mpt_value l;
    if (mpt_value_copy(&l, &x->v)) return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
    return xv_set_owned(o, l);
  }
  if (x->v.kind == MPT_V_STR) {
    int64_t n = (int64_t)strlen(x->v.u.s);
    mpt_value l;
    int rc = xv_new_list(&l, n, err);
    if (rc) return rc;
    for (int64_t i = 0; i < n; i++) {
      char ch[2] = {x->v.u.s[i], 0};
      l.u.list.items[i] = mpt_value_str(ch);
      if (l.u.list.items[i].kind != MPT_V_STR) { mpt_value_free(&l); return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory"); }
    }
    return xv_set_owned(o, l);
  }
  return not_iterable(&x->v, err);
}

static int b_minmax(int is_max, xval *a, int n, xval *o, mpt_error *err) {
  const char *fname = is_max ? "max" : "min";
  const mpt_value *items;
  int64_t cnt;
  mpt_value tmpl;
  int have_tmp = 0;
  mpt_value *argv = NULL;
  if (n == 1) {
    if (a[0].v.kind == MPT_V_LIST) {
      items = a[0].v.u.list.items;
      cnt = a[0].v.u.list.n;
    } else if (a[0].v.kind == MPT_V_STR) {
      xval t = {{0}, 0};
      int rc = as_list(&a[0], &t, err);
      if (rc) return rc;
      tmpl = t.v;
      have_tmp = 1;
      items = tmpl.u.list.items;
      cnt = tmpl.u.list.n;
    } else {
      return not_iterable(&a[0].v, err);
    }
    if (cnt == 0) {
      if (have_tmp) mpt_value_free(&tmpl);
      return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: %s() arg is an empty sequence", fname);
    }
  } else {
    argv = malloc((size_t)n * sizeof(mpt_value));
    if (!argv) return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
    for (int i = 0; i < n; i++) argv[i] = a[i].v;
    items = argv;
    cnt = n;
  }
  int64_t best = 0;
  int rc = 0;
  for (int64_t i = 1; i < cnt; i++) {
    int less;
    /* max keeps the first maximal item (item > best, i.e. best < item); min: item < best */
    rc = is_max ? xv_compare(C_GT, &items[i], &items[best], &less, err) : xv_compare(C_LT, &items[i], &items[best], &less, err);
    if (rc) break;
    if (less) best = i;
  }
  if (!rc) {
    mpt_value r;
    if (mpt_value_copy(&r, &items[best])) rc = mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
    else xv_set_owned(o, r);
  }
  if (have_tmp) mpt_value_free(&tmpl);
  free(argv);
  return rc;
}

static int b_sum(xval *a, int n, xval *o, mpt_error *err) {
  mpt_value acc = xv_i(0);
  if (n == 2) {
    if (a[1].v.kind == MPT_V_STR)
      return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: sum() can't sum strings [use ''.join(seq) instead]");
    if (mpt_value_copy(&acc, &a[1].v)) return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  }
  xval items = {{0}, 0};
  if (a[0].v.kind == MPT_V_LIST) {
    items.v = a[0].v; /* borrowed */
  } else if (a[0].v.kind == MPT_V_STR) {
    int rc = as_list(&a[0], &items, err); /* sum('') is 0; sum('ab') fails on 0 + 'a' */
    if (rc) { mpt_value_free(&acc); return rc; }
  } else {
    mpt_value_free(&acc);
    return not_iterable(&a[0].v, err);
  }
  for (int64_t i = 0; i < items.v.u.list.n; i++) {
    mpt_value r;
    int rc = xv_binop(X_ADD, &acc, &items.v.u.list.items[i], &r, err);
    mpt_value_free(&acc);
    if (rc) { xv_release(&items); return rc; }
    acc = r;
  }
  xv_release(&items);
  return xv_set_owned(o, acc);
}

__attribute__((noinline)) static int ev_call(const ctx *c, const xnode *n, xval *o) {
  xval small[8];
  memset(small, 0, sizeof small);
  xval *a = small;
  int cnt = n->n;
  if (cnt > 8) {
    a = calloc((size_t)cnt, sizeof(xval));
    if (!a) return mpt_error_set(c->err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  }
  if (n->slot == B_LEN && is_range_call(c, c->e->args[n->first])) {
    xrange r;
    int rc = range_of(c, &c->e->nodes[c->e->args[n->first]], &r);
    if (rc) return rc;
    if (r.len > INT64_MAX) return xv_overflow(c->err);
    return xv_set_owned(o, xv_i((int64_t)r.len));
  }
  int rc = 0, done = 0;
  for (; done < cnt; done++) {
    rc = ev(c, c->e->args[n->first + done], &a[done]);
    if (rc) break;
  }
  if (!rc) {
    mpt_error *err = c->err;
    const mpt_value *v = cnt ? &a[0].v : NULL;
    switch (n->slot) {
    case B_RANGE: rc = b_range(a, cnt, o, err); break;
    case B_LIST:
      if (cnt == 0) {
        mpt_value l;
        rc = xv_new_list(&l, 0, err);
        if (!rc) xv_set_owned(o, l);
      } else {
        rc = as_list(&a[0], o, err);
      }
      break;
    case B_LEN:
      if (v->kind == MPT_V_LIST) xv_set_owned(o, xv_i(v->u.list.n));
      else if (v->kind == MPT_V_STR) xv_set_owned(o, xv_i((int64_t)strlen(v->u.s)));
      else rc = mpt_error_set(err, MPT_ERR_EVAL, "TypeError: object of type '%s' has no len()", mpt_value_type_name(v));
      break;
    case B_MIN: rc = b_minmax(0, a, cnt, o, err); break;
    case B_MAX: rc = b_minmax(1, a, cnt, o, err); break;
    case B_ABS:
      if (xv_is_intlike(v)) {
        if (v->u.i == INT64_MIN) rc = xv_overflow(err);
        else xv_set_owned(o, xv_i(v->u.i < 0 ? -v->u.i : v->u.i));
      } else if (v->kind == MPT_V_FLOAT) {
        xv_set_owned(o, xv_f(fabs(v->u.f)));
      } else {
        rc = mpt_error_set(err, MPT_ERR_EVAL, "TypeError: bad operand type for abs(): '%s'", mpt_value_type_name(v));
      }
      break;
    case B_INT: rc = xb_int(a, cnt, o, err); break;
    case B_FLOAT: rc = xb_float(a, cnt, o, err); break;
    case B_ROUND: rc = xb_round(a, cnt, o, err); break;
    case B_SUM: rc = b_sum(a, cnt, o, err); break;
    case B_BOOL: xv_set_owned(o, xv_b(cnt ? mpt_value_truthy(v) : 0)); break;
    case B_STR: {
      if (cnt == 0) {
        xv_set_owned(o, mpt_value_str(""));
      } else if (v->kind == MPT_V_STR) {
        mpt_value s = mpt_value_str(v->u.s);
        xv_set_owned(o, s);
      } else {
        int len = mpt_value_str_repr(v, NULL, 0);
        if (len > XP_MAX_STR) {
          rc = mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: string is too large");
          break;
        }
        char *buf = malloc((size_t)len + 1);
        if (!buf) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory"); break; }
        mpt_value_str_repr(v, buf, len + 1);
        mpt_value s;
        memset(&s, 0, sizeof s);
        s.kind = MPT_V_STR;
        s.u.s = buf;
        xv_set_owned(o, s);
      }
      if (!rc && o->v.kind != MPT_V_STR) rc = mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
      break;
    }
    default: rc = mpt_error_set(err, MPT_ERR_INTERNAL, "internal error: unknown builtin");
    }
  }
  for (int i = 0; i < done; i++) xv_release(&a[i]);
  if (a != small) free(a);
  return rc;
}

/* ------------------------------------------------------------------ evaluation */

__attribute__((noinline)) static int ev_index(const ctx *c, const xnode *n, xval *o) {
  xval con, idx;
  int rc = ev(c, n->a, &con);
  if (rc) return rc;
  rc = ev(c, n->b, &idx);
  if (rc) { xv_release(&con); return rc; }
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
      char ch[2] = {con.v.u.s[i], 0};
      mpt_value s = mpt_value_str(ch);
      if (s.kind != MPT_V_STR) rc = mpt_error_set(c->err, MPT_ERR_NOMEM, "MemoryError: out of memory");
      else xv_set_owned(o, s);
    } else if (con.own) {
      o->v = con.v.u.list.items[i];
      o->own = 1;
      con.v.u.list.items[i].kind = MPT_V_NONE;
    } else {
      o->v = con.v.u.list.items[i];
      o->own = 0;
    }
  }
  xv_release(&idx);
  xv_release(&con);
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
    rc = not_iterable(&it.v, c->err);
    xv_release(&it);
    return rc;
  }
  __int128 cnt = lazy ? rg.len : it.v.kind == MPT_V_LIST ? it.v.u.list.n : (int64_t)strlen(it.v.u.s);
  mpt_value res;
  rc = xv_new_list(&res, 0, c->err);
  if (rc) { xv_release(&it); return rc; }
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
      xv_release(&cond);
    }
    if (rc || !keep) continue;
    xval x;
    rc = ev(c, n->a, &x);
    if (rc) break;
    mpt_value item;
    rc = take(&x, &item, c->err);
    if (rc) { xv_release(&x); break; }
    rc = xv_list_append(&res, &cap, item, c->err);
  }
  slot->kind = MPT_V_NONE;
  xv_release(&it);
  if (rc) { mpt_value_free(&res); return rc; }
  return xv_set_owned(o, res);
}

__attribute__((noinline)) static int ev_list(const ctx *c, const xnode *n, xval *o) {
  mpt_value l;
  int rc = xv_new_list(&l, n->n, c->err);
  if (rc) return rc;
  for (int i = 0; i < n->n; i++) {
    xval x;
    rc = ev(c, c->e->args[n->first + i], &x);
    if (rc) { /* x was not set */
      mpt_value_free(&l);
      return rc;
    }
    rc = take(&x, &l.u.list.items[i], c->err);
    if (rc) {
      xv_release(&x);
      mpt_value_free(&l);
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
    xv_release(&l);
    l = r;
    if (rc) break;
    if (!res) { truth = 0; break; }
  }
  xv_release(&l);
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
  int rc = xv_binop(op, &l->v, &r->v, &res, c->err);
  xv_release(l);
  xv_release(r);
  if (rc) return rc;
  return xv_set_owned(o, res);
}

/* o = o OP n->b for the chain operator n (a chain's step: o holds the value of the left operand, taken;
 * and/or short-circuit, returning an operand); on an error o holds nothing */
static int ev_step(const ctx *c, const xnode *n, xval *o) {
  if (n->op == X_AND || n->op == X_OR) {
    int t = mpt_value_truthy(&o->v);
    if ((n->op == X_AND) ? !t : t) return 0;
    xv_release(o);
    return ev(c, n->b, o);
  }
  xval l = *o, r;
  o->v.kind = MPT_V_NONE;
  o->own = 0;
  int rc = evl(c, n->b, &r);
  if (rc) {
    xv_release(&l);
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
    if (rc) { xv_release(&l); return rc; }
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
      xv_release(&a);
      o->v = xv_b(!t);
      o->own = 0;
      return 0;
    }
    mpt_value res;
    rc = xv_unop(n->op, &a.v, &res, c->err);
    xv_release(&a);
    if (rc) return rc;
    return xv_set_owned(o, res);
  }
  case X_CMP: return ev_cmp(c, n, o);
  case X_IFELSE: {
    xval cond;
    int rc = ev(c, n->b, &cond);
    if (rc) return rc;
    int t = mpt_value_truthy(&cond.v);
    xv_release(&cond);
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
  ctx c = {e, vars, locals, err, fault};
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
  if (take(&x, &v, &err) != 0) return 0;
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
