/* spaces/expr/parse.c: recursive-descent parser of the expression language (Python's grammar and
 * operator precedence restricted to expressions; tokens from spaces/expr/lex.c), and the resolution of
 * names to variable slots, comprehension variables and builtins. Errors carry the 0-based column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/parse.h"
#include "spaces/expr/lex.h"

typedef xp_tok tok;

typedef struct P {
  mpt_expr *e;
  const char *src;
  tok *t;
  int nt, pos;
  int depth;
  int *column;
  mpt_error *err;
  const char *const *names;
  int n_names;
  const mpt_name_set *index; /* names -> slot, or NULL: names searched in turn */
  /* comprehension scopes during resolution */
  const char *scope[XP_MAX_LOCALS];
  int n_scope;
} P;

static int fail(P *p, int code, int col, const char *fmt, const char *arg) { return xp_fail(p->column, p->err, code, col, fmt, arg); }
static int nomem(P *p) { return xp_nomem(p->column, p->err); }

static const char *const py_keywords[] = {"lambda", "is", "yield", "await", "async", "def", "class", "return",
                                          "import", "from", "as", "with", "global", "nonlocal", "del", "pass",
                                          "raise", "try", "except", "finally", "while", "break", "continue",
                                          "assert", "elif", NULL};

/* the slot of the variable called s, or -1 */
static int name_slot(const P *p, const char *s) {
  if (p->index) {
    int i = mpt_name_set_find(p->index, s);
    return i < p->n_names ? i : -1;
  }
  for (int i = 0; i < p->n_names; i++)
    if (p->names[i] && !strcmp(p->names[i], s)) return i;
  return -1;
}

/* ------------------------------------------------------------------ nodes */

/* growing int list used while collecting operands */
typedef struct ilist {
  int32_t *v;
  int n, cap;
  int32_t small[16];
} ilist;

static void il_init(ilist *l) { l->v = l->small; l->n = 0; l->cap = 16; }
static void il_free(ilist *l) { if (l->v != l->small) free(l->v); }
static int il_push(ilist *l, int32_t x) {
  if (l->n == l->cap) {
    int nc = l->cap * 2;
    int32_t *v = malloc((size_t)nc * sizeof(int32_t));
    if (!v) return -1;
    memcpy(v, l->v, (size_t)l->n * sizeof(int32_t));
    if (l->v != l->small) free(l->v);
    l->v = v;
    l->cap = nc;
  }
  l->v[l->n++] = x;
  return 0;
}

static int new_node(P *p, int op, int col) {
  int i = xt_node_new(p->e, op, col);
  if (i < 0) return nomem(p);
  return i;
}

static int bin_node(P *p, int op, int col, int a, int b) {
  int i = new_node(p, op, col);
  if (i < 0) return -1;
  p->e->nodes[i].a = a;
  p->e->nodes[i].b = b;
  return i;
}

static int list_node(P *p, int op, int col, ilist *items) {
  int i = new_node(p, op, col);
  if (i < 0) return -1;
  int first = xt_push_args(p->e, items->v, items->n);
  if (first < 0) return nomem(p);
  p->e->nodes[i].first = first;
  p->e->nodes[i].n = items->n;
  return i;
}

/* ------------------------------------------------------------------ parser */

static tok *cur(P *p) { return &p->t[p->pos]; }
static int is_op(P *p, const char *op) { return cur(p)->type == T_OP && strcmp(cur(p)->op, op) == 0; }
static int is_kw(P *p, const char *kw) { return cur(p)->type == T_NAME && strcmp(cur(p)->s, kw) == 0; }
static int is_kw_at(P *p, int pos, const char *kw) {
  return pos < p->nt && p->t[pos].type == T_NAME && strcmp(p->t[pos].s, kw) == 0;
}

static int unexpected(P *p) {
  tok *t = cur(p);
  if (t->type == T_EOF) return fail(p, MPT_ERR_PARSE, t->col, "unexpected end of expression%s", "");
  if (t->type == T_OP && strcmp(t->op, "=") == 0)
    return fail(p, MPT_ERR_PARSE, t->col, "unexpected '=' (use '==' to compare)%s", "");
  if (t->type == T_OP && strcmp(t->op, ":") == 0) return fail(p, MPT_ERR_PARSE, t->col, "slices are not supported%s", "");
  if (t->type == T_OP && strcmp(t->op, ".") == 0) return fail(p, MPT_ERR_PARSE, t->col, "attribute access is not supported%s", "");
  if (t->type == T_OP && (t->op[0] == '{' || t->op[0] == '}'))
    return fail(p, MPT_ERR_PARSE, t->col, "dicts and sets are not supported%s", "");
  if (t->type == T_OP && strcmp(t->op, "<>") == 0) return fail(p, MPT_ERR_PARSE, t->col, "unexpected '<>' (use '!=')%s", "");
  char text[64];
  int len = t->len < 40 ? t->len : 40;
  snprintf(text, sizeof text, "%.*s%s", len, p->src + t->col, t->len > 40 ? "..." : "");
  return fail(p, MPT_ERR_PARSE, t->col, "unexpected '%s'", text);
}

static int expect_op(P *p, const char *op) {
  if (!is_op(p, op)) return unexpected(p);
  p->pos++;
  return 0;
}

static int enter(P *p) {
  if (++p->depth > XP_MAX_DEPTH) return fail(p, MPT_ERR_PARSE, cur(p)->col, "expression is too deeply nested%s", "");
  return 0;
}

static int parse_test(P *p);
static int parse_or(P *p);

static const struct { const char *name; int id, min, max; } builtins[] = {
    {"range", B_RANGE, 1, 3}, {"list", B_LIST, 0, 1}, {"len", B_LEN, 1, 1},   {"min", B_MIN, 1, 1 << 20},
    {"max", B_MAX, 1, 1 << 20}, {"abs", B_ABS, 1, 1},   {"int", B_INT, 0, 1},   {"float", B_FLOAT, 0, 1},
    {"round", B_ROUND, 1, 2},   {"sum", B_SUM, 1, 2},   {"bool", B_BOOL, 0, 1}, {"str", B_STR, 0, 1},
    {NULL, 0, 0, 0}};

static int builtin_index(const char *name) {
  for (int i = 0; builtins[i].name; i++)
    if (strcmp(builtins[i].name, name) == 0) return i;
  return -1;
}

static int is_reserved(const char *s) {
  static const char *const kws[] = {"and", "or", "not", "in", "if", "else", "for", "True", "False", "None", NULL};
  for (int i = 0; kws[i]; i++)
    if (strcmp(kws[i], s) == 0) return 1;
  for (int i = 0; py_keywords[i]; i++)
    if (strcmp(py_keywords[i], s) == 0) return 2;
  return 0;
}

const char *xp_name_fault(const char *name) {
  if (!name[0]) return "empty: no expression can refer to it";
  if (!xp_is_name(name))
    return "not a name (letters, digits and '_', not starting with a digit): no expression can refer to it";
  if (is_reserved(name)) return "a Python keyword: no expression can refer to it";
  return NULL;
}

/* comprehension tail after `elt`: for NAME in or_test (if or_test)* ; cur is 'for' */
static int parse_comp(P *p, int elt, int col) {
  p->pos++; /* for */
  tok *t = cur(p);
  if (t->type != T_NAME || is_reserved(t->s)) {
    if (t->type == T_NAME || t->type == T_EOF || t->type == T_OP) return unexpected(p);
    return fail(p, MPT_ERR_PARSE, t->col, "the comprehension variable must be a name%s", "");
  }
  char *var = t->s;
  p->pos++;
  if (is_op(p, ",")) return fail(p, MPT_ERR_PARSE, cur(p)->col, "tuple unpacking is not supported%s", "");
  if (!is_kw(p, "in")) return unexpected(p);
  p->pos++;
  int it = parse_or(p);
  if (it < 0) return -1;
  ilist conds;
  il_init(&conds);
  while (is_kw(p, "if")) {
    p->pos++;
    int c = parse_or(p);
    if (c < 0 || il_push(&conds, c)) { il_free(&conds); return c < 0 ? -1 : nomem(p); }
  }
  if (is_kw(p, "for")) {
    il_free(&conds);
    return fail(p, MPT_ERR_PARSE, cur(p)->col, "only one 'for' per comprehension is supported%s", "");
  }
  int n = list_node(p, X_COMP, col, &conds);
  il_free(&conds);
  if (n < 0) return -1;
  xnode *x = &p->e->nodes[n];
  x->a = elt;
  x->b = it;
  x->name = strdup(var);
  if (!x->name) return nomem(p);
  return n;
}

static int parse_call(P *p, int bi, int col) {
  p->pos++; /* ( */
  ilist args;
  il_init(&args);
  while (!is_op(p, ")")) {
    if (cur(p)->type == T_NAME && p->pos + 1 < p->nt && p->t[p->pos + 1].type == T_OP &&
        strcmp(p->t[p->pos + 1].op, "=") == 0) {
      il_free(&args);
      return fail(p, MPT_ERR_PARSE, cur(p)->col, "keyword arguments are not supported%s", "");
    }
    if (is_op(p, "*") || is_op(p, "**")) {
      il_free(&args);
      return fail(p, MPT_ERR_PARSE, cur(p)->col, "argument unpacking is not supported%s", "");
    }
    int acol = cur(p)->col;
    int a = parse_test(p);
    if (a < 0) { il_free(&args); return -1; }
    if (is_kw(p, "for")) { /* generator expression argument: f(x for x in y) */
      if (args.n > 0 || builtins[bi].id == B_LEN || builtins[bi].id == B_RANGE || builtins[bi].id == B_INT ||
          builtins[bi].id == B_FLOAT || builtins[bi].id == B_ROUND || builtins[bi].id == B_ABS ||
          builtins[bi].id == B_STR || builtins[bi].id == B_BOOL) {
        il_free(&args);
        return fail(p, MPT_ERR_PARSE, cur(p)->col, "generator expressions are only supported as the argument of list, min, max and sum%s", "");
      }
      a = parse_comp(p, a, acol);
      if (a < 0) { il_free(&args); return -1; }
      if (!is_op(p, ")")) { il_free(&args); return unexpected(p); }
    }
    if (il_push(&args, a)) { il_free(&args); return nomem(p); }
    if (is_op(p, ",")) { p->pos++; continue; }
    if (!is_op(p, ")")) { il_free(&args); return unexpected(p); }
  }
  int close_col = cur(p)->col;
  p->pos++;
  if (args.n < builtins[bi].min || args.n > builtins[bi].max) {
    char msg[160];
    if (builtins[bi].min == builtins[bi].max)
      snprintf(msg, sizeof msg, "%s() takes exactly %d argument%s (%d given)", builtins[bi].name, builtins[bi].min,
               builtins[bi].min == 1 ? "" : "s", args.n);
    else if (args.n < builtins[bi].min)
      snprintf(msg, sizeof msg, "%s() takes at least %d argument%s (%d given)", builtins[bi].name, builtins[bi].min,
               builtins[bi].min == 1 ? "" : "s", args.n);
    else
      snprintf(msg, sizeof msg, "%s() takes at most %d arguments (%d given)", builtins[bi].name, builtins[bi].max, args.n);
    il_free(&args);
    (void)close_col;
    return fail(p, MPT_ERR_PARSE, col, "%s", msg);
  }
  int n = list_node(p, X_CALL, col, &args);
  il_free(&args);
  if (n < 0) return -1;
  p->e->nodes[n].slot = builtins[bi].id;
  return n;
}

/* an int or float literal */
static int parse_number(P *p) {
  tok *t = cur(p);
  int n = new_node(p, X_CONST, t->col);
  if (n < 0) return -1;
  p->e->nodes[n].k = t->type == T_INT ? mpt_value_int(t->i) : mpt_value_float(t->f);
  p->pos++;
  return n;
}

/* string literals, adjacent ones concatenated into one constant */
static int parse_strings(P *p) {
  int col = cur(p)->col;
  size_t len = 0;
  int j = p->pos;
  while (j < p->nt && p->t[j].type == T_STR) len += strlen(p->t[j++].s);
  char *s = malloc(len + 1);
  if (!s) return nomem(p);
  s[0] = '\0';
  size_t o = 0;
  while (p->pos < j) {
    size_t l = strlen(cur(p)->s);
    memcpy(s + o, cur(p)->s, l + 1);
    o += l;
    p->pos++;
  }
  int n = new_node(p, X_CONST, col);
  if (n < 0) { free(s); return -1; }
  mpt_value v;
  memset(&v, 0, sizeof v);
  v.kind = MPT_V_STR;
  v.u.s = s;
  p->e->nodes[n].k = v;
  return n;
}

/* NAME followed by '(': a call of the builtin of that name, unless a parameter hides it */
static int parse_name_call(P *p, const char *s, int col) {
  int bi = builtin_index(s);
  if (name_slot(p, s) >= 0) /* a parameter hides a builtin of its name, as in Python */
    return bi < 0 ? fail(p, MPT_ERR_PARSE, col, "'%s' is not a function", s)
                  : fail(p, MPT_ERR_PARSE, col, "'%s' is a tuning parameter here, not the builtin function "
                         "(Python: not callable)", s);
  if (bi < 0) return fail(p, MPT_ERR_NAME, col, "unknown function '%s'", s);
  p->pos++;
  return parse_call(p, bi, col);
}

/* True, False, None, a call, or a name resolved later (X_NAME) */
static int parse_name(P *p) {
  tok *t = cur(p);
  const char *s = t->s;
  int col = t->col;
  if (!strcmp(s, "True") || !strcmp(s, "False") || !strcmp(s, "None")) {
    int n = new_node(p, X_CONST, col);
    if (n < 0) return -1;
    if (s[0] != 'N') p->e->nodes[n].k = mpt_value_bool(s[0] == 'T');
    p->pos++;
    return n;
  }
  int r = is_reserved(s);
  if (r == 1) return unexpected(p);
  if (r == 2) return fail(p, MPT_ERR_PARSE, col, "'%s' is not supported in expressions", s);
  if (p->pos + 1 < p->nt && p->t[p->pos + 1].type == T_OP && !strcmp(p->t[p->pos + 1].op, "("))
    return parse_name_call(p, s, col);
  int n = new_node(p, X_NAME, col);
  if (n < 0) return -1;
  p->e->nodes[n].name = strdup(s);
  if (!p->e->nodes[n].name) return nomem(p);
  p->pos++;
  return n;
}

/* ( test ): cur is '(' */
static int parse_parenthesized(P *p) {
  int col = cur(p)->col;
  p->pos++;
  if (is_op(p, ")")) return fail(p, MPT_ERR_PARSE, col, "tuples are not supported%s", "");
  if (enter(p)) return -1;
  int n = parse_test(p);
  if (n < 0) return -1;
  p->depth--;
  if (is_kw(p, "for")) return fail(p, MPT_ERR_PARSE, cur(p)->col, "generator expressions are not supported (use a list: [... for ...])%s", "");
  if (is_op(p, ",")) return fail(p, MPT_ERR_PARSE, cur(p)->col, "tuples are not supported%s", "");
  if (expect_op(p, ")")) return -1;
  return n;
}

/* a list display [a, b, ...] or a comprehension [e for x in it if c]: cur is '[' */
static int parse_list_display(P *p) {
  int col = cur(p)->col;
  p->pos++;
  ilist items;
  il_init(&items);
  if (enter(p)) return -1;
  if (!is_op(p, "]")) {
    int first = parse_test(p);
    if (first < 0) return -1;
    if (is_kw(p, "for")) {
      int n = parse_comp(p, first, col);
      if (n < 0) return -1;
      if (expect_op(p, "]")) return -1;
      p->depth--;
      return n;
    }
    if (il_push(&items, first)) return nomem(p);
    while (is_op(p, ",")) {
      p->pos++;
      if (is_op(p, "]")) break;
      int x = parse_test(p);
      if (x < 0 || il_push(&items, x)) { il_free(&items); return x < 0 ? -1 : nomem(p); }
    }
  }
  if (!is_op(p, "]")) { il_free(&items); return unexpected(p); }
  p->pos++;
  p->depth--;
  int n = list_node(p, X_LIST, col, &items);
  il_free(&items);
  return n;
}

static int parse_atom(P *p) {
  switch (cur(p)->type) {
  case T_INT:
  case T_FLOAT: return parse_number(p);
  case T_STR: return parse_strings(p);
  case T_NAME: return parse_name(p);
  case T_OP:
    if (is_op(p, "(")) return parse_parenthesized(p);
    if (is_op(p, "[")) return parse_list_display(p);
    return unexpected(p);
  default:
    return unexpected(p);
  }
}

static int parse_primary(P *p) {
  int n = parse_atom(p);
  if (n < 0) return -1;
  for (;;) {
    if (is_op(p, "[")) {
      int col = cur(p)->col;
      p->pos++;
      if (enter(p)) return -1;
      if (is_op(p, ":")) return unexpected(p);
      int idx = parse_test(p);
      if (idx < 0) return -1;
      p->depth--;
      if (is_op(p, ",")) return fail(p, MPT_ERR_PARSE, cur(p)->col, "tuple indices are not supported%s", "");
      if (expect_op(p, "]")) return -1;
      n = bin_node(p, X_INDEX, col, n, idx);
      if (n < 0) return -1;
    } else if (is_op(p, "(")) {
      return fail(p, MPT_ERR_PARSE, cur(p)->col, "only builtin functions can be called%s", "");
    } else if (is_op(p, ".")) {
      return unexpected(p);
    } else {
      return n;
    }
  }
}

static int parse_factor(P *p);

static int parse_power(P *p) {
  int base = parse_primary(p);
  if (base < 0) return -1;
  if (is_op(p, "**")) {
    int col = cur(p)->col;
    p->pos++;
    if (enter(p)) return -1;
    int ex = parse_factor(p); /* right-associative, binds a unary operand: 2**-1 */
    if (ex < 0) return -1;
    p->depth--;
    return bin_node(p, X_POW, col, base, ex);
  }
  return base;
}

static int parse_factor(P *p) {
  if (is_op(p, "-") || is_op(p, "+") || is_op(p, "~")) {
    int col = cur(p)->col;
    int op = is_op(p, "-") ? X_NEG : is_op(p, "+") ? X_POS : X_INV;
    p->pos++;
    if (enter(p)) return -1;
    int a = parse_factor(p);
    if (a < 0) return -1;
    p->depth--;
    return bin_node(p, op, col, a, -1);
  }
  return parse_power(p);
}

typedef int (*subparser)(P *);

static int parse_binary_level(P *p, subparser sub, const char *const *ops, const int *codes) {
  int l = sub(p);
  if (l < 0) return -1;
  for (;;) {
    int which = -1;
    for (int i = 0; ops[i]; i++)
      if (is_op(p, ops[i])) { which = i; break; }
    if (which < 0) return l;
    int col = cur(p)->col;
    p->pos++;
    int r = sub(p);
    if (r < 0) return -1;
    l = bin_node(p, codes[which], col, l, r);
    if (l < 0) return -1;
  }
}

static int parse_term(P *p) {
  static const char *const ops[] = {"*", "/", "//", "%", NULL};
  static const int codes[] = {X_MUL, X_DIV, X_FLOORDIV, X_MOD};
  return parse_binary_level(p, parse_factor, ops, codes);
}
static int parse_arith(P *p) {
  static const char *const ops[] = {"+", "-", NULL};
  static const int codes[] = {X_ADD, X_SUB};
  return parse_binary_level(p, parse_term, ops, codes);
}
static int parse_shift(P *p) {
  static const char *const ops[] = {"<<", ">>", NULL};
  static const int codes[] = {X_LSHIFT, X_RSHIFT};
  return parse_binary_level(p, parse_arith, ops, codes);
}
static int parse_band(P *p) {
  static const char *const ops[] = {"&", NULL};
  static const int codes[] = {X_BAND};
  return parse_binary_level(p, parse_shift, ops, codes);
}
static int parse_bxor(P *p) {
  static const char *const ops[] = {"^", NULL};
  static const int codes[] = {X_BXOR};
  return parse_binary_level(p, parse_band, ops, codes);
}
static int parse_bor(P *p) {
  static const char *const ops[] = {"|", NULL};
  static const int codes[] = {X_BOR};
  return parse_binary_level(p, parse_bxor, ops, codes);
}

static int cmp_code(P *p, int *len) {
  *len = 1;
  tok *t = cur(p);
  if (t->type == T_OP) {
    static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
    static const int codes[] = {C_LT, C_LE, C_GT, C_GE, C_EQ, C_NE};
    for (int i = 0; i < 6; i++)
      if (!strcmp(t->op, ops[i])) return codes[i];
    return -1;
  }
  if (is_kw(p, "in")) return C_IN;
  if (is_kw(p, "not") && is_kw_at(p, p->pos + 1, "in")) { *len = 2; return C_NOTIN; }
  if (is_kw(p, "is")) return -2;
  return -1;
}

static int parse_comparison(P *p) {
  int first = parse_bor(p);
  if (first < 0) return -1;
  int len, code = cmp_code(p, &len);
  if (code == -2) return fail(p, MPT_ERR_PARSE, cur(p)->col, "'is' is not supported (use '==')%s", "");
  if (code < 0) return first;
  int col = cur(p)->col;
  ilist opnds, codes;
  il_init(&opnds);
  il_init(&codes);
  if (il_push(&opnds, first)) goto oom;
  while ((code = cmp_code(p, &len)) >= 0) {
    p->pos += len;
    int x = parse_bor(p);
    if (x < 0) { il_free(&opnds); il_free(&codes); return -1; }
    if (il_push(&opnds, x) || il_push(&codes, code)) goto oom;
  }
  if (code == -2) {
    il_free(&opnds);
    il_free(&codes);
    return fail(p, MPT_ERR_PARSE, cur(p)->col, "'is' is not supported (use '==')%s", "");
  }
  for (int i = 0; i < codes.n; i++)
    if (il_push(&opnds, codes.v[i])) goto oom;
  int n = new_node(p, X_CMP, col);
  if (n < 0) { il_free(&opnds); il_free(&codes); return -1; }
  int f = xt_push_args(p->e, opnds.v, opnds.n);
  if (f < 0) goto oom;
  p->e->nodes[n].first = f;
  p->e->nodes[n].n = codes.n + 1;
  il_free(&opnds);
  il_free(&codes);
  return n;
oom:
  il_free(&opnds);
  il_free(&codes);
  return nomem(p);
}

static int parse_not(P *p) {
  if (is_kw(p, "not")) {
    int col = cur(p)->col;
    p->pos++;
    if (enter(p)) return -1;
    int a = parse_not(p);
    if (a < 0) return -1;
    p->depth--;
    return bin_node(p, X_NOT, col, a, -1);
  }
  return parse_comparison(p);
}

static int parse_and(P *p) {
  int l = parse_not(p);
  if (l < 0) return -1;
  while (is_kw(p, "and")) {
    int col = cur(p)->col;
    p->pos++;
    int r = parse_not(p);
    if (r < 0) return -1;
    l = bin_node(p, X_AND, col, l, r);
    if (l < 0) return -1;
  }
  return l;
}

static int parse_or(P *p) {
  int l = parse_and(p);
  if (l < 0) return -1;
  while (is_kw(p, "or")) {
    int col = cur(p)->col;
    p->pos++;
    int r = parse_and(p);
    if (r < 0) return -1;
    l = bin_node(p, X_OR, col, l, r);
    if (l < 0) return -1;
  }
  return l;
}

static int parse_test(P *p) {
  if (enter(p)) return -1;
  int a = parse_or(p);
  if (a < 0) return -1;
  if (is_kw(p, "if")) {
    int col = cur(p)->col;
    p->pos++;
    int cond = parse_or(p);
    if (cond < 0) return -1;
    if (!is_kw(p, "else")) return unexpected(p);
    p->pos++;
    int other = parse_test(p);
    if (other < 0) return -1;
    int n = new_node(p, X_IFELSE, col);
    if (n < 0) return -1;
    p->e->nodes[n].a = a;
    p->e->nodes[n].b = cond;
    p->e->nodes[n].c = other;
    a = n;
  }
  p->depth--;
  return a;
}

/* ------------------------------------------------------------------ resolution */

static int resolve(P *p, int ni, int height);

/* resolve() of a long chain (a+b+c+…, a spine of any length): its operands in order, one level deeper
 * each; marks the spine's nodes that the evaluator takes in a loop */
static int resolve_chain(P *p, int ni, int height) {
  xspine sp;
  int32_t bottom = xt_spine(p->e, ni, &sp);
  if (bottom < 0) return nomem(p);
  for (int k = 0; k < sp.n - XT_SHORT_CHAIN; k++) p->e->nodes[sp.v[k]].long_chain = 1;
  int h = resolve(p, bottom, height + 1);
  for (int k = sp.n - 1; h >= 0 && k >= 0; k--) {
    int hb = resolve(p, p->e->nodes[sp.v[k]].b, height + 1);
    h = hb < 0 ? -1 : hb > h ? hb : h;
  }
  xt_spine_free(&sp);
  return h < 0 ? -1 : h + 1;
}

/* Resolves names; returns the tree height (a long chain counts as one level; bounded to keep the recursive
 * walkers' stacks small) or -1 on error */
static int resolve(P *p, int ni, int height) {
  if (ni < 0) return 0;
  if (height > 4 * XP_MAX_DEPTH)
    return fail(p, MPT_ERR_PARSE, p->e->nodes[ni].col, "expression is too deeply nested%s", "");
  xnode *n = &p->e->nodes[ni];
  if (xt_is_chain_op(n->op)) { /* a long chain in a loop; a short one, as the evaluator, by recursion */
    int32_t a = n->a;
    for (int k = 1; k <= XT_SHORT_CHAIN && a >= 0 && xt_is_chain_op(p->e->nodes[a].op); k++) a = p->e->nodes[a].a;
    if (a >= 0 && xt_is_chain_op(p->e->nodes[a].op)) return resolve_chain(p, ni, height);
  }
  switch (n->op) {
  case X_CONST: return 0;
  case X_NAME: {
    char *name = n->name;
    int col = n->col;
    for (int i = p->n_scope - 1; i >= 0; i--)
      if (!strcmp(p->scope[i], name)) {
        n->op = X_LOCAL;
        n->slot = i;
        free(name);
        n->name = NULL;
        return 0;
      }
    int slot = name_slot(p, name);
    if (slot >= 0) {
      n->op = X_VAR;
      n->slot = slot;
      free(name);
      n->name = NULL;
      return 0;
    }
    if (builtin_index(name) >= 0) return fail(p, MPT_ERR_NAME, col, "builtin '%s' can only be called", name);
    return fail(p, MPT_ERR_NAME, col, "unknown name '%s'", name);
  }
  case X_COMP: {
    int h = resolve(p, n->b, height + 1);
    if (h < 0) return -1;
    if (p->n_scope >= XP_MAX_LOCALS)
      return fail(p, MPT_ERR_PARSE, n->col, "comprehensions are too deeply nested%s", "");
    n = &p->e->nodes[ni];
    p->scope[p->n_scope] = n->name;
    n->slot = p->n_scope++;
    if (p->n_scope > p->e->n_locals) p->e->n_locals = p->n_scope;
    int first = n->first, cnt = n->n, a = n->a;
    for (int i = 0; i < cnt; i++) {
      int hc = resolve(p, p->e->args[first + i], height + 1);
      if (hc < 0) return -1;
      if (hc > h) h = hc;
    }
    int ha = resolve(p, a, height + 1);
    if (ha < 0) return -1;
    p->n_scope--;
    return 1 + (ha > h ? ha : h);
  }
  default: {
    int h = 0;
    int a = n->a, b = n->b, c = n->c, first = n->first, cnt = n->n;
    int kids[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
      int hk = resolve(p, kids[i], height + 1);
      if (hk < 0) return -1;
      if (hk > h) h = hk;
    }
    for (int i = 0; i < cnt; i++) {
      int hk = resolve(p, p->e->args[first + i], height + 1);
      if (hk < 0) return -1;
      if (hk > h) h = hk;
    }
    return h + 1;
  }
  }
}

/* range() is materialized as a list, so it is accepted only where a list and a range behave the same
 * in Python (as the whole expression, the argument of list/len/sum/one-argument min and max, the
 * iterable of a comprehension, the last right operand of `in`, an indexed value); elsewhere
 * (`range(3) == [0, 1, 2]`, `range(3) * 2`) Python's answer would differ, so it is an error. */
static int check_ranges(P *p, int ni, int allowed) {
  if (ni < 0) return 0;
  const xnode *n = &p->e->nodes[ni];
  const int32_t *args = n->n > 0 ? p->e->args + n->first : NULL; /* args is NULL in an expression without any */
  switch (n->op) {
  case X_CALL:
    if (n->slot == B_RANGE && !allowed)
      return fail(p, MPT_ERR_PARSE, n->col,
                  "range() is only supported as a whole expression, in list(), len(), sum(), min(), max(), after 'in', "
                  "indexed, or as the iterable of a comprehension%s", "");
    for (int i = 0; i < n->n; i++) {
      int ok = (n->slot == B_LIST || n->slot == B_LEN || (n->slot == B_SUM && i == 0) ||
                ((n->slot == B_MIN || n->slot == B_MAX) && n->n == 1));
      if (check_ranges(p, args[i], ok)) return -1;
    }
    return 0;
  case X_COMP:
    if (check_ranges(p, n->b, 1) || check_ranges(p, n->a, 0)) return -1;
    for (int i = 0; i < n->n; i++)
      if (check_ranges(p, args[i], 0)) return -1;
    return 0;
  case X_CMP:
    for (int i = 0; i < n->n; i++) {
      int ok = i == n->n - 1 && (args[n->n + i - 1] == C_IN || args[n->n + i - 1] == C_NOTIN);
      if (check_ranges(p, args[i], ok)) return -1;
    }
    return 0;
  case X_INDEX:
    return check_ranges(p, n->a, 1) || check_ranges(p, n->b, 0) ? -1 : 0;
  case X_ADD: case X_SUB: case X_MUL: case X_DIV: case X_FLOORDIV: case X_MOD: case X_BAND: case X_BOR:
  case X_BXOR: case X_LSHIFT: case X_RSHIFT: case X_AND: case X_OR: { /* a chain: its operands in order */
    xspine sp;
    int32_t bottom = xt_spine(p->e, ni, &sp);
    if (bottom < 0) return nomem(p);
    int rc = check_ranges(p, bottom, 0);
    for (int k = sp.n - 1; rc == 0 && k >= 0; k--) rc = check_ranges(p, p->e->nodes[sp.v[k]].b, 0);
    xt_spine_free(&sp);
    return rc ? -1 : 0;
  }
  default:
    if (check_ranges(p, n->a, 0) || check_ranges(p, n->b, 0) || check_ranges(p, n->c, 0)) return -1;
    for (int i = 0; i < n->n; i++)
      if (check_ranges(p, args[i], 0)) return -1;
    return 0;
  }
}

int xp_parse(mpt_expr *e, const char *src, const char *const *names, int n_names, const mpt_name_set *index,
             int *column, mpt_error *err) {
  P p;
  memset(&p, 0, sizeof p);
  p.e = e;
  p.src = src;
  p.column = column;
  p.err = err;
  p.names = names;
  p.n_names = n_names;
  p.index = index;
  int rc = -1;
  if (xp_tokenize(src, &p.t, &p.nt, column, err) == 0) {
    if (p.t[0].type == T_EOF) {
      fail(&p, MPT_ERR_PARSE, 0, "empty expression%s", "");
    } else {
      int root = parse_test(&p);
      if (root >= 0 && cur(&p)->type != T_EOF) {
        if (is_kw(&p, "for"))
          fail(&p, MPT_ERR_PARSE, cur(&p)->col, "generator expressions are not supported (use a list: [... for ...])%s", "");
        else
          unexpected(&p);
        root = -1;
      }
      if (root >= 0) {
        e->root = root;
        /* resolve() recursion is bounded by its height check, chains taken in a loop */
        if (resolve(&p, root, 0) >= 0 && check_ranges(&p, root, 1) == 0) rc = 0;
      }
    }
  }
  xp_toks_free(p.t, p.nt);
  return rc;
}
