/* spaces/expr_fast.c: the numeric fast path of the expression language. An expression made only of
 * numbers, variables, arithmetic, comparisons, and/or/not, ternaries and `in` a constant list is
 * compiled a second time into a statically typed register program (int64 or double registers, no
 * tags, no allocation). It runs when every variable it reads is an int or bool; whenever a case
 * needs Python's error or an exact slow path (overflow, division by zero, huge ints in true division…)
 * it gives up and the general evaluator (expr_eval.c) computes the result and the error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr_internal.h"

#define XF_MAX_REGS 256
#define XF_MAX_CODE 2048

enum fop {
  F_MOV, F_I2F,
  F_ADD_I, F_SUB_I, F_MUL_I, F_FLOORDIV_I, F_MOD_I, F_TDIV_I, F_POW_I, F_BAND_I, F_BOR_I, F_BXOR_I,
  F_SHL_I, F_SHR_I,
  F_ADD_F, F_SUB_F, F_MUL_F, F_DIV_F, F_FLOORDIV_F, F_MOD_F, F_POW_F,
  F_NEG_I, F_INV_I, F_NEG_F, F_NOT_I, F_NOT_F,
  F_CMP_I, F_CMP_F, F_CMP_IF, F_CMP_FI, F_IN_I, F_IN_F,
  F_JF_I, F_JT_I, F_JF_F, F_JT_F, F_JMP,
  F_RET,
};

typedef struct xins {
  uint8_t op, cc;      /* cc: comparison code for F_CMP_* / F_IN_* */
  uint16_t dst, a, b;  /* registers; b is the jump target for jumps and the list index for F_IN_* */
} xins;

typedef union xreg {
  int64_t i;
  double f;
} xreg;

/* static kinds: register type (int64 or double) and the Python kind of the value */
enum { T_I = 0, T_F = 1 };
enum { PK_INT = XF_PK_INT, PK_BOOL = XF_PK_BOOL, PK_FLOAT = XF_PK_FLOAT, PK_INTBOOL = XF_PK_INTBOOL /* int or bool, known only at run time */ };

struct xfast {
  int n_regs, n_k, n_v, n_code, n_lists;
  xreg k[XF_MAX_REGS];               /* constant registers 0..n_k-1 */
  int vslot[XF_MAX_REGS];            /* variable registers n_k..n_k+n_v-1 read vars[vslot[i]] */
  xins code[XF_MAX_CODE];
  const mpt_value *lists[64];        /* constant lists for F_IN_* (owned by the expression's nodes) */
  int ret, ret_type, ret_pk;
};

typedef struct fcomp {
  const mpt_expr *e;
  xfast *f;
  int *reg_of;   /* node -> register for constants and variables */
  int *type_of;  /* their register type */
  int *pk_of;
  int *var_reg;  /* slot -> register */
  int fail;
} fcomp;

static int emit(fcomp *c, int op, int dst, int a, int b, int cc) {
  if (c->f->n_code >= XF_MAX_CODE) { c->fail = 1; return -1; }
  xins *i = &c->f->code[c->f->n_code];
  i->op = (uint8_t)op;
  i->cc = (uint8_t)cc;
  i->dst = (uint16_t)dst;
  i->a = (uint16_t)a;
  i->b = (uint16_t)b;
  return c->f->n_code++;
}

static int new_reg(fcomp *c) {
  if (c->f->n_regs >= XF_MAX_REGS) { c->fail = 1; return 0; }
  return c->f->n_regs++;
}

/* pass 1: constants and variables get fixed registers */
static void collect(fcomp *c, int32_t ni) {
  if (ni < 0 || c->fail) return;
  const xnode *n = &c->e->nodes[ni];
  switch (n->op) {
  case X_CONST:
    if (n->k.kind == MPT_V_INT || n->k.kind == MPT_V_BOOL || n->k.kind == MPT_V_FLOAT) {
      if (c->f->n_k >= XF_MAX_REGS / 2) { c->fail = 1; return; }
      int r = c->f->n_k++;
      c->reg_of[ni] = r;
      if (n->k.kind == MPT_V_FLOAT) {
        c->f->k[r].f = n->k.u.f;
        c->type_of[ni] = T_F;
        c->pk_of[ni] = PK_FLOAT;
      } else {
        c->f->k[r].i = n->k.u.i;
        c->type_of[ni] = T_I;
        c->pk_of[ni] = n->k.kind == MPT_V_BOOL ? PK_BOOL : PK_INT;
      }
    }
    return;
  case X_VAR: return;
  case X_LOCAL: case X_INDEX: case X_LIST: case X_COMP: case X_CALL: case X_NAME:
    c->fail = 1;
    return;
  default: break;
  }
  collect(c, n->a);
  collect(c, n->b);
  collect(c, n->c);
  if (n->op == X_CMP) {
    for (int i = 0; i < n->n; i++) {
      int32_t arg = c->e->args[n->first + i];
      int code = i > 0 ? c->e->args[n->first + n->n + i - 1] : -1;
      const xnode *an = &c->e->nodes[arg];
      /* `x in [constants]`: the list stays a node constant */
      if ((code == C_IN || code == C_NOTIN) && an->op == X_CONST && an->k.kind == MPT_V_LIST) continue;
      collect(c, arg);
    }
  }
}

static int to_float(fcomp *c, int r, int t) {
  if (t == T_F) return r;
  int d = new_reg(c);
  emit(c, F_I2F, d, r, 0, 0);
  return d;
}

static int gen(fcomp *c, int32_t ni, int *type, int *pk);

static int gen_cmp_pair(fcomp *c, int dst, int ra, int ta, int32_t bnode, int code, int *rb_out, int *tb_out) {
  const xnode *bn = &c->e->nodes[bnode];
  if (code == C_IN || code == C_NOTIN) {
    if (bn->op != X_CONST || bn->k.kind != MPT_V_LIST || c->f->n_lists >= 64) { c->fail = 1; return -1; }
    int li = c->f->n_lists++;
    c->f->lists[li] = &bn->k;
    emit(c, ta == T_I ? F_IN_I : F_IN_F, dst, ra, li, code);
    *rb_out = -1; /* a list cannot be the left operand of a following comparison */
    *tb_out = -1;
    return 0;
  }
  int tb, pkb;
  int rb = gen(c, bnode, &tb, &pkb);
  if (c->fail) return -1;
  int op = ta == T_I ? (tb == T_I ? F_CMP_I : F_CMP_IF) : (tb == T_I ? F_CMP_FI : F_CMP_F);
  emit(c, op, dst, ra, rb, code);
  *rb_out = rb;
  *tb_out = tb;
  return 0;
}

static int gen(fcomp *c, int32_t ni, int *type, int *pk) {
  if (c->fail) return 0;
  const xnode *n = &c->e->nodes[ni];
  switch (n->op) {
  case X_CONST:
    if (c->reg_of[ni] < 0) { c->fail = 1; return 0; }
    *type = c->type_of[ni];
    *pk = c->pk_of[ni];
    return c->reg_of[ni];
  case X_VAR:
    *type = T_I;
    *pk = PK_INTBOOL;
    return c->var_reg[n->slot];
  case X_ADD: case X_SUB: case X_MUL: case X_DIV: case X_FLOORDIV: case X_MOD: case X_POW:
  case X_BAND: case X_BOR: case X_BXOR: case X_LSHIFT: case X_RSHIFT: {
    int ta, tb, pa, pb;
    int ra = gen(c, n->a, &ta, &pa);
    int rb = gen(c, n->b, &tb, &pb);
    if (c->fail) return 0;
    int d = new_reg(c);
    if (n->op >= X_BAND) {
      if (ta != T_I || tb != T_I) { c->fail = 1; return 0; }
      static const int ops[] = {F_BAND_I, F_BOR_I, F_BXOR_I, F_SHL_I, F_SHR_I};
      emit(c, ops[n->op - X_BAND], d, ra, rb, 0);
      *type = T_I;
      if (n->op > X_BXOR) *pk = PK_INT;
      else if (pa == PK_BOOL && pb == PK_BOOL) *pk = PK_BOOL;
      else if (pa == PK_INT || pb == PK_INT) *pk = PK_INT;
      else *pk = PK_INTBOOL;
      return d;
    }
    if (n->op == X_POW && ta == T_I && tb == T_I) {
      /* int ** int: int for a constant exponent >= 0, float for a negative one, unknown otherwise */
      const xnode *bn = &c->e->nodes[n->b];
      if (bn->op != X_CONST) { c->fail = 1; return 0; }
      if (bn->k.u.i >= 0) {
        emit(c, F_POW_I, d, ra, rb, 0);
        *type = T_I;
        *pk = PK_INT;
        return d;
      }
    }
    if (ta == T_I && tb == T_I && n->op != X_POW) {
      static const int iops[] = {F_ADD_I, F_SUB_I, F_MUL_I, F_TDIV_I, F_FLOORDIV_I, F_MOD_I};
      emit(c, iops[n->op - X_ADD], d, ra, rb, 0);
      *type = n->op == X_DIV ? T_F : T_I;
      *pk = n->op == X_DIV ? PK_FLOAT : PK_INT;
      return d;
    }
    ra = to_float(c, ra, ta);
    rb = to_float(c, rb, tb);
    static const int fops[] = {F_ADD_F, F_SUB_F, F_MUL_F, F_DIV_F, F_FLOORDIV_F, F_MOD_F, F_POW_F};
    emit(c, fops[n->op - X_ADD], d, ra, rb, 0);
    *type = T_F;
    *pk = PK_FLOAT;
    return d;
  }
  case X_NEG: case X_POS: case X_INV: case X_NOT: {
    int ta, pa;
    int ra = gen(c, n->a, &ta, &pa);
    if (c->fail) return 0;
    int d = new_reg(c);
    if (n->op == X_NOT) {
      emit(c, ta == T_I ? F_NOT_I : F_NOT_F, d, ra, 0, 0);
      *type = T_I;
      *pk = PK_BOOL;
      return d;
    }
    if (ta == T_F) {
      if (n->op == X_INV) { c->fail = 1; return 0; }
      if (n->op == X_NEG) emit(c, F_NEG_F, d, ra, 0, 0);
      else emit(c, F_MOV, d, ra, 0, 0);
      *type = T_F;
      *pk = PK_FLOAT;
      return d;
    }
    if (n->op == X_POS) emit(c, F_MOV, d, ra, 0, 0);
    else emit(c, n->op == X_NEG ? F_NEG_I : F_INV_I, d, ra, 0, 0);
    *type = T_I;
    *pk = PK_INT;
    return d;
  }
  case X_AND: case X_OR: case X_IFELSE: {
    /* result register d receives one of two operands, which must share a register type */
    int d = new_reg(c);
    int t1, p1, t2, p2;
    if (n->op == X_IFELSE) {
      int tc, pc;
      int rc = gen(c, n->b, &tc, &pc);
      if (c->fail) return 0;
      int jf = emit(c, tc == T_I ? F_JF_I : F_JF_F, 0, rc, 0, 0);
      int r1 = gen(c, n->a, &t1, &p1);
      emit(c, F_MOV, d, r1, 0, 0);
      int jend = emit(c, F_JMP, 0, 0, 0, 0);
      if (c->fail) return 0;
      c->f->code[jf].b = (uint16_t)c->f->n_code;
      int r2 = gen(c, n->c, &t2, &p2);
      emit(c, F_MOV, d, r2, 0, 0);
      if (c->fail) return 0;
      c->f->code[jend].b = (uint16_t)c->f->n_code;
    } else {
      int r1 = gen(c, n->a, &t1, &p1);
      if (c->fail) return 0;
      emit(c, F_MOV, d, r1, 0, 0);
      int op = n->op == X_AND ? (t1 == T_I ? F_JF_I : F_JF_F) : (t1 == T_I ? F_JT_I : F_JT_F);
      int j = emit(c, op, 0, d, 0, 0);
      int r2 = gen(c, n->b, &t2, &p2);
      emit(c, F_MOV, d, r2, 0, 0);
      if (c->fail) return 0;
      c->f->code[j].b = (uint16_t)c->f->n_code;
    }
    if (t1 != t2) { c->fail = 1; return 0; }
    *type = t1;
    *pk = p1 == p2 ? p1 : (t1 == T_I ? PK_INTBOOL : PK_FLOAT);
    return d;
  }
  case X_CMP: {
    int d = new_reg(c);
    const int32_t *args = c->e->args + n->first;
    int ta, pa;
    int ra = gen(c, args[0], &ta, &pa);
    if (c->fail) return 0;
    int jumps[64], nj = 0;
    for (int i = 1; i < n->n; i++) {
      if (i > 1) {
        if (ra < 0 || nj >= 64) { c->fail = 1; return 0; }
        jumps[nj++] = emit(c, F_JF_I, 0, d, 0, 0);
      }
      int code = args[n->n + i - 1];
      int rb, tb;
      if (gen_cmp_pair(c, d, ra, ta, args[i], code, &rb, &tb)) return 0;
      ra = rb;
      ta = tb;
    }
    if (c->fail) return 0;
    for (int j = 0; j < nj; j++) c->f->code[jumps[j]].b = (uint16_t)c->f->n_code;
    *type = T_I;
    *pk = PK_BOOL;
    return d;
  }
  default:
    c->fail = 1;
    return 0;
  }
}

xfast *xf_compile(const mpt_expr *e) {
  xfast *f = calloc(1, sizeof *f);
  fcomp c;
  memset(&c, 0, sizeof c);
  c.e = e;
  c.f = f;
  c.reg_of = malloc((size_t)e->n_nodes * sizeof(int));
  c.type_of = calloc((size_t)e->n_nodes, sizeof(int));
  c.pk_of = calloc((size_t)e->n_nodes, sizeof(int));
  c.var_reg = malloc((size_t)(e->n_names > 0 ? e->n_names : 1) * sizeof(int));
  if (!f || !c.reg_of || !c.type_of || !c.pk_of || !c.var_reg) c.fail = 1;
  if (!c.fail) {
    for (int i = 0; i < e->n_nodes; i++) c.reg_of[i] = -1;
    collect(&c, e->root);
  }
  if (!c.fail) {
    f->n_v = e->n_uses;
    if (f->n_k + f->n_v > XF_MAX_REGS / 2) c.fail = 1;
  }
  if (!c.fail) {
    for (int i = 0; i < e->n_uses; i++) {
      f->vslot[i] = e->uses[i];
      c.var_reg[e->uses[i]] = f->n_k + i;
    }
    f->n_regs = f->n_k + f->n_v;
    int t, pk;
    int r = gen(&c, e->root, &t, &pk);
    if (!c.fail) {
      emit(&c, F_RET, 0, r, 0, 0);
      f->ret = r;
      f->ret_type = t;
      f->ret_pk = pk;
    }
  }
  free(c.reg_of);
  free(c.type_of);
  free(c.pk_of);
  free(c.var_reg);
  if (c.fail) {
    free(f);
    return NULL;
  }
  return f;
}

void xf_free(xfast *f) { free(f); }

#define LIM53 ((int64_t)1 << 53)

static int cmp_ii(int cc, int64_t a, int64_t b) {
  switch (cc) {
  case C_LT: return a < b;
  case C_LE: return a <= b;
  case C_GT: return a > b;
  case C_GE: return a >= b;
  case C_EQ: return a == b;
  default: return a != b;
  }
}

static int cmp_ff(int cc, double a, double b) {
  switch (cc) {
  case C_LT: return a < b;
  case C_LE: return a <= b;
  case C_GT: return a > b;
  case C_GE: return a >= b;
  case C_EQ: return a == b;
  default: return a != b;
  }
}

static int cmp_c3(int cc, int c3) { /* c3: -1, 0, 1, 2 = unordered */
  if (c3 == 2) return cc == C_NE;
  return cmp_ii(cc, c3, 0);
}

/* 0 with *out and the kinds set; 1 when the general evaluator must take over */
int xf_run(const xfast *f, const mpt_value *vars, int *is_float, int *pykind, double *fout, int64_t *iout) {
  xreg R[XF_MAX_REGS];
  memcpy(R, f->k, (size_t)f->n_k * sizeof(xreg));
  for (int i = 0; i < f->n_v; i++) {
    const mpt_value *v = &vars[f->vslot[i]];
    if (v->kind != MPT_V_INT && v->kind != MPT_V_BOOL) return 1;
    R[f->n_k + i].i = v->u.i;
  }
  const xins *code = f->code;
  int pc = 0;
  for (;;) {
    const xins *in = &code[pc++];
    int64_t a, b, x;
    switch (in->op) {
    case F_MOV: R[in->dst] = R[in->a]; break;
    case F_I2F: R[in->dst].f = (double)R[in->a].i; break;
    case F_ADD_I: if (__builtin_add_overflow(R[in->a].i, R[in->b].i, &R[in->dst].i)) return 1; break;
    case F_SUB_I: if (__builtin_sub_overflow(R[in->a].i, R[in->b].i, &R[in->dst].i)) return 1; break;
    case F_MUL_I: if (__builtin_mul_overflow(R[in->a].i, R[in->b].i, &R[in->dst].i)) return 1; break;
    case F_FLOORDIV_I:
      a = R[in->a].i; b = R[in->b].i;
      if (b <= 0 || a < 0) {
        if (b == 0 || (b == -1 && a == INT64_MIN)) return 1;
        x = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) x--;
        R[in->dst].i = x;
      } else {
        R[in->dst].i = a / b;
      }
      break;
    case F_MOD_I:
      a = R[in->a].i; b = R[in->b].i;
      if (b <= 0 || a < 0) {
        if (b == 0) return 1;
        if (b == -1) { R[in->dst].i = 0; break; }
        x = a % b;
        if (x != 0 && ((x < 0) != (b < 0))) x += b;
        R[in->dst].i = x;
      } else {
        R[in->dst].i = a % b;
      }
      break;
    case F_TDIV_I:
      a = R[in->a].i; b = R[in->b].i;
      if (b == 0 || a > LIM53 || a < -LIM53 || b > LIM53 || b < -LIM53) return 1;
      R[in->dst].f = (double)a / (double)b;
      break;
    case F_POW_I: {
      int64_t base = R[in->a].i, e = R[in->b].i, r = 1;
      while (e) {
        if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return 1;
        e >>= 1;
        if (e && __builtin_mul_overflow(base, base, &base)) return 1;
      }
      R[in->dst].i = r;
      break;
    }
    case F_BAND_I: R[in->dst].i = R[in->a].i & R[in->b].i; break;
    case F_BOR_I: R[in->dst].i = R[in->a].i | R[in->b].i; break;
    case F_BXOR_I: R[in->dst].i = R[in->a].i ^ R[in->b].i; break;
    case F_SHL_I:
      a = R[in->a].i; b = R[in->b].i;
      if (b < 0 || b > 62) return 1;
      {
        __int128 w = (__int128)a * ((__int128)1 << b);
        if (w > INT64_MAX || w < INT64_MIN) return 1;
        R[in->dst].i = (int64_t)w;
      }
      break;
    case F_SHR_I:
      a = R[in->a].i; b = R[in->b].i;
      if (b < 0) return 1;
      R[in->dst].i = b >= 63 ? (a < 0 ? -1 : 0) : (a >> b);
      break;
    case F_ADD_F: R[in->dst].f = R[in->a].f + R[in->b].f; break;
    case F_SUB_F: R[in->dst].f = R[in->a].f - R[in->b].f; break;
    case F_MUL_F: R[in->dst].f = R[in->a].f * R[in->b].f; break;
    case F_DIV_F:
      if (R[in->b].f == 0.0) return 1;
      R[in->dst].f = R[in->a].f / R[in->b].f;
      break;
    case F_FLOORDIV_F: if (xv_float_floordiv(R[in->a].f, R[in->b].f, &R[in->dst].f, NULL)) return 1; break;
    case F_MOD_F: if (xv_float_mod(R[in->a].f, R[in->b].f, &R[in->dst].f, NULL)) return 1; break;
    case F_POW_F: if (xv_float_pow(R[in->a].f, R[in->b].f, &R[in->dst].f, NULL)) return 1; break;
    case F_NEG_I:
      if (R[in->a].i == INT64_MIN) return 1;
      R[in->dst].i = -R[in->a].i;
      break;
    case F_INV_I: R[in->dst].i = ~R[in->a].i; break;
    case F_NEG_F: R[in->dst].f = -R[in->a].f; break;
    case F_NOT_I: R[in->dst].i = R[in->a].i == 0; break;
    case F_NOT_F: R[in->dst].i = R[in->a].f == 0.0; break;
    case F_CMP_I: R[in->dst].i = cmp_ii(in->cc, R[in->a].i, R[in->b].i); break;
    case F_CMP_F: R[in->dst].i = cmp_ff(in->cc, R[in->a].f, R[in->b].f); break;
    case F_CMP_IF: R[in->dst].i = cmp_c3(in->cc, xv_cmp_int_float(R[in->a].i, R[in->b].f)); break;
    case F_CMP_FI: {
      int c3 = xv_cmp_int_float(R[in->b].i, R[in->a].f);
      R[in->dst].i = cmp_c3(in->cc, c3 == 2 ? 2 : -c3);
      break;
    }
    case F_IN_I: case F_IN_F: {
      const mpt_value *l = f->lists[in->b];
      mpt_value x = in->op == F_IN_I ? mpt_value_int(R[in->a].i) : mpt_value_float(R[in->a].f);
      int found = 0;
      for (int64_t i = 0; i < l->u.list.n && !found; i++) found = mpt_value_equal(&l->u.list.items[i], &x);
      R[in->dst].i = in->cc == C_IN ? found : !found;
      break;
    }
    case F_JF_I: if (R[in->a].i == 0) pc = in->b; break;
    case F_JT_I: if (R[in->a].i != 0) pc = in->b; break;
    case F_JF_F: if (R[in->a].f == 0.0) pc = in->b; break;
    case F_JT_F: if (R[in->a].f != 0.0) pc = in->b; break;
    case F_JMP: pc = in->b; break;
    case F_RET:
      *is_float = f->ret_type == T_F;
      *pykind = f->ret_pk;
      if (f->ret_type == T_F) *fout = R[in->a].f;
      else *iout = R[in->a].i;
      return 0;
    default: return 1;
    }
  }
}

int xf_ret_kind(const xfast *f) { return f->ret_pk; }
