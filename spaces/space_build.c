/* spaces/space_build.c: construction of the valid set from a T1 problem (constraint-ordered depth-first
 * enumeration with per-level memoised candidate lists, free parameters multiplied in), into the packed
 * rows and hash index of space.c. Conditions are split at their top-level `and` (cond_split.c). */
#include "spaces/space_internal.h"
#include "spaces/cond_split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/sys/clock.h"

/* ---- construction ---- */

typedef struct level {
  int param;          /* parameter assigned at this level */
  int n_conds, *conds;/* conditions whose last parameter is this one */
  int n_key, *key;    /* parameters (earlier levels) those conditions read: the memo key */
  int64_t *kstride;   /* mixed-radix stride of each key parameter's allowed position */
  int32_t *memo;      /* memo[key] = offset in pool of [count, positions...], -1 unknown; NULL: no memo */
  int64_t memo_n;
  int32_t *pool;
  int64_t pool_n, pool_cap;
  int *buf;           /* candidates when not memoised */
} level;

typedef struct builder {
  mpt_space *s;
  const mpt_problem *p;
  mpt_cond_list cl;   /* conditions as enumerated: the problem's, split at top-level `and` */
  mpt_value *vars;
  int *curpos;        /* current allowed position per parameter */
  int64_t eval_errors;
  char *first_error;
  mpt_error err;
  const mpt_watch *watch; /* NULL: unwatched */
} builder;

static void note_eval_error(builder *b, int ci) {
  b->eval_errors++;
  if (b->first_error) return;
  const mpt_condition *c = &b->cl.cs[ci];
  char cfg[768] = "";
  size_t l = 0;
  for (int k = 0; k < c->n_params && l < sizeof cfg - 1; k++) {
    int pp = c->params[k];
    char v[96];
    mpt_value_repr(&b->vars[pp], v, sizeof v);
    l += (size_t)snprintf(cfg + l, sizeof cfg - l, "%s%s=%s", k ? ", " : "", b->p->params[pp].name, v);
  }
  char at[800] = ""; /* a condition of no parameter fails everywhere: no "at" */
  if (cfg[0]) snprintf(at, sizeof at, " (at %s)", cfg);
  /* FILE:LINE:COL: FIELD: message, the whole condition and a caret under the operation that failed */
  int oi = b->cl.orig[ci];
  int col = mpt_expr_fault_column(c->expr, b->vars);
  if (col >= 0) col += b->cl.offset[ci];
  char field[96];
  snprintf(field, sizeof field, "ConfigurationSpace.Conditions[%d].Expression", oi);
  mpt_error e = {.code = MPT_ERR_EVAL};
  snprintf(e.msg, sizeof e.msg, "%s%s; configurations where it fails are not valid (reported once)", b->err.msg, at);
  mpt_problem_expr_error(b->p, &e, MPT_ERR_EVAL, field, b->p->conditions[oi].source, col);
  b->first_error = strdup(e.msg);
}

/* 1 when every listed condition holds for the current vars; errors count as "does not hold" */
static int conds_hold(builder *b, const int *conds, int n) {
  for (int k = 0; k < n; k++) {
    int truth = 0;
    int rc = mpt_expr_eval_bool(b->cl.cs[conds[k]].expr, b->vars, &truth, &b->err);
    if (rc) { note_eval_error(b, conds[k]); return 0; }
    if (!truth) return 0;
  }
  return 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* multi-word rows: the highest word is the most significant */
static int cmp_rows(const void *a, const void *b, void *words) {
  const uint64_t *x = a, *y = b;
  for (int i = *(const int *)words - 1; i >= 0; i--)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* LSD radix sort of single-word keys using `bits` low bits */
static int radix_sort(uint64_t *a, int64_t n, int bits) {
  if (n < 2 || bits == 0) return 0;
  if (n < 2048) { qsort(a, (size_t)n, sizeof *a, cmp_u64); return 0; }
  uint64_t *tmp = malloc(sizeof(uint64_t) * (size_t)n);
  if (!tmp) return MPT_ERR_NOMEM;
  const int D = 11;
  int64_t cnt[1 << 11];
  uint64_t *src = a, *dst = tmp;
  for (int sh = 0; sh < bits; sh += D) {
    memset(cnt, 0, sizeof cnt);
    for (int64_t i = 0; i < n; i++) cnt[(src[i] >> sh) & ((1u << D) - 1)]++;
    int64_t sum = 0;
    for (int d = 0; d < (1 << D); d++) { int64_t c = cnt[d]; cnt[d] = sum; sum += c; }
    for (int64_t i = 0; i < n; i++) dst[cnt[(src[i] >> sh) & ((1u << D) - 1)]++] = src[i];
    uint64_t *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, sizeof(uint64_t) * (size_t)n);
  free(tmp);
  return 0;
}

static int bits_for(int n) {
  int b = 0;
  while (b < 31 && (1LL << b) < n) b++;
  return b;
}

static void free_levels(level *lv, int n) {
  if (!lv) return;
  for (int i = 0; i < n; i++) {
    free(lv[i].conds);
    free(lv[i].key);
    free(lv[i].kstride);
    free(lv[i].memo);
    free(lv[i].pool);
    free(lv[i].buf);
  }
  free(lv);
}

/* Greedy order of the constrained parameters: single-valued first, then the one that completes the most
 * conditions, then the one most connected to the placed ones, then the fewest allowed values. */
static void order_params(const mpt_space *s, const builder *bd, const uint8_t *multi, int *order) {
  int n = s->n_con;
  uint8_t *placed = calloc((size_t)s->dims, 1);
  if (!placed) { /* keep the current order */
    memcpy(order, s->con, sizeof(int) * (size_t)n);
    return;
  }
  for (int step = 0; step < n; step++) {
    int best = -1;
    long bs[4] = {0, 0, 0, 0};
    for (int ci = 0; ci < n; ci++) {
      int x = s->con[ci];
      if (placed[x]) continue;
      long completes = 0, touches = 0;
      for (int k = 0; k < bd->cl.n; k++) {
        if (!multi[k]) continue;
        const mpt_condition *c = &bd->cl.cs[k];
        int has = 0, others = 0, placed_others = 0;
        for (int j = 0; j < c->n_params; j++) {
          if (c->params[j] == x) has = 1;
          else { others++; placed_others += placed[c->params[j]]; }
        }
        if (!has) continue;
        if (placed_others == others) completes++;
        if (placed_others > 0) touches++;
      }
      long sc[4] = {s->n_allowed[x] == 1, completes, touches, -(long)s->n_allowed[x]};
      int better = best < 0;
      for (int t = 0; t < 4 && !better; t++) {
        if (sc[t] > bs[t]) { better = 1; break; }
        if (sc[t] < bs[t]) break;
      }
      if (better) { best = x; memcpy(bs, sc, sizeof bs); }
    }
    order[step] = best;
    placed[best] = 1;
  }
  free(placed);
}

/* Most rows of constrained values the enumeration may produce before it gives up with an error: 2^26
 * (512 MiB per row word), or MPT_SPACE_MAX_ROWS from the environment; never more than 2^32 - 2. */
static int64_t mpt_space__max_rows(void) {
  int64_t lim = (int64_t)1 << 26;
  const char *e = getenv("MPT_SPACE_MAX_ROWS");
  if (e && *e) {
    char *end = NULL;
    long long v = strtoll(e, &end, 10);
    if (end && !*end && v > 0) lim = v;
  }
  if (lim > (int64_t)UINT32_MAX - 2) lim = (int64_t)UINT32_MAX - 2;
  return lim;
}

enum { BUILD_STOPPED = 1 }; /* build_valid_set: the watcher said stop */

static int build_valid_set(builder *b, uint8_t *multi) {
  mpt_space *s = b->s;
  const mpt_problem *p = b->p;
  int n = s->n_con, W = s->words;
  int rc = 0;
  if (n == 0) { /* one empty row */
    s->rows = calloc((size_t)W, sizeof(uint64_t));
    if (!s->rows) return MPT_ERR_NOMEM;
    s->n_rows = 1;
    return 0;
  }
  int *order = malloc(sizeof(int) * (size_t)n);
  int *lvl_of = malloc(sizeof(int) * (size_t)s->dims);
  level *lv = calloc((size_t)n, sizeof(level));
  uint64_t *keys = calloc((size_t)(n + 1) * (size_t)W, sizeof(uint64_t));
  int *lcnt = calloc((size_t)n, sizeof(int));
  int *lit = calloc((size_t)n, sizeof(int));
  const int **llst = calloc((size_t)n, sizeof(int *));
  int **ident = calloc((size_t)s->dims, sizeof(int *));
  uint64_t **vfield = calloc((size_t)s->dims, sizeof(uint64_t *));
  if (!order || !lvl_of || !lv || !keys || !lcnt || !lit || !llst || !ident || !vfield) { rc = MPT_ERR_NOMEM; goto out; }
  memcpy(order, s->con, sizeof(int) * (size_t)n); /* mpt_space_build put them in enumeration order */
  for (int i = 0; i < s->dims; i++) lvl_of[i] = -1;
  for (int L = 0; L < n; L++) lvl_of[order[L]] = L;
  for (int L = 0; L < n; L++) {
    int x = order[L];
    lv[L].param = x;
    ident[x] = malloc(sizeof(int) * (size_t)s->n_allowed[x]);
    vfield[x] = malloc(sizeof(uint64_t) * (size_t)s->n_allowed[x]);
    lv[L].buf = malloc(sizeof(int) * (size_t)s->n_allowed[x]);
    if (!ident[x] || !vfield[x] || !lv[L].buf) { rc = MPT_ERR_NOMEM; goto out; }
    for (int j = 0; j < s->n_allowed[x]; j++) {
      ident[x][j] = j;
      vfield[x][j] = (uint64_t)s->allowed[x][j] << s->fshift[x];
    }
  }
  /* conditions fire at the level of their deepest parameter */
  for (int k = 0; k < b->cl.n; k++) {
    if (!multi[k]) continue;
    const mpt_condition *c = &b->cl.cs[k];
    int L = -1;
    for (int j = 0; j < c->n_params; j++)
      if (lvl_of[c->params[j]] > L) L = lvl_of[c->params[j]];
    int *nc = realloc(lv[L].conds, sizeof(int) * (size_t)(lv[L].n_conds + 1));
    if (!nc) { rc = MPT_ERR_NOMEM; goto out; }
    lv[L].conds = nc;
    nc[lv[L].n_conds++] = k;
  }
  /* memo keys */
  for (int L = 0; L < n; L++) {
    level *l = &lv[L];
    if (!l->n_conds) continue;
    uint8_t *in = calloc((size_t)s->dims, 1);
    if (!in) { rc = MPT_ERR_NOMEM; goto out; }
    for (int k = 0; k < l->n_conds; k++) {
      const mpt_condition *c = &b->cl.cs[l->conds[k]];
      for (int j = 0; j < c->n_params; j++)
        if (c->params[j] != l->param) in[c->params[j]] = 1;
    }
    l->key = malloc(sizeof(int) * (size_t)(L + 1));
    l->kstride = malloc(sizeof(int64_t) * (size_t)(L + 1));
    if (!l->key || !l->kstride) { free(in); rc = MPT_ERR_NOMEM; goto out; }
    double space = 1;
    for (int M = 0; M < L; M++)
      if (in[order[M]]) { l->key[l->n_key++] = order[M]; space *= s->n_allowed[order[M]]; }
    free(in);
    /* memoise when the key leaves out earlier parameters (so keys repeat) and the table is small */
    if (l->n_key < L && space <= (double)(1 << 20)) {
      int64_t st = 1;
      for (int k = l->n_key - 1; k >= 0; k--) { l->kstride[k] = st; st *= s->n_allowed[l->key[k]]; }
      l->memo_n = st;
      l->memo = malloc(sizeof(int32_t) * (size_t)st);
      if (!l->memo) { rc = MPT_ERR_NOMEM; goto out; }
      memset(l->memo, 0xff, sizeof(int32_t) * (size_t)st);
    }
  }

  int64_t cap = 4096, nrows = 0, max_rows = mpt_space__max_rows();
  uint64_t *rows = malloc(sizeof(uint64_t) * (size_t)cap * (size_t)W);
  if (!rows) { rc = MPT_ERR_NOMEM; goto out; }

  const mpt_param *P = p->params;
  int L = 0;
  /* enter level 0 (and every level) : compute candidate list */
#define ENTER(LV)                                                                                       \
  do {                                                                                                  \
    level *l_ = &lv[LV];                                                                                \
    int x_ = l_->param;                                                                                 \
    lit[LV] = 0;                                                                                        \
    if (!l_->n_conds) {                                                                                 \
      llst[LV] = ident[x_];                                                                             \
      lcnt[LV] = s->n_allowed[x_];                                                                      \
    } else if (l_->memo) {                                                                              \
      int64_t key_ = 0;                                                                                 \
      for (int k_ = 0; k_ < l_->n_key; k_++) key_ += l_->kstride[k_] * b->curpos[l_->key[k_]];          \
      int32_t off_ = l_->memo[key_];                                                                    \
      if (off_ < 0) {                                                                                   \
        int na_ = s->n_allowed[x_];                                                                     \
        if (l_->pool_n + na_ + 1 > l_->pool_cap) {                                                      \
          int64_t nc_ = (l_->pool_cap ? l_->pool_cap * 2 : 1024);                                       \
          while (nc_ < l_->pool_n + na_ + 1) nc_ *= 2;                                                  \
          if (nc_ > INT32_MAX) { rc = MPT_ERR_NOMEM; goto fail_rows; }                                  \
          int32_t *np_ = realloc(l_->pool, sizeof(int32_t) * (size_t)nc_);                              \
          if (!np_) { rc = MPT_ERR_NOMEM; goto fail_rows; }                                             \
          l_->pool = np_;                                                                               \
          l_->pool_cap = nc_;                                                                           \
        }                                                                                               \
        off_ = (int32_t)l_->pool_n;                                                                     \
        int32_t *dst_ = l_->pool + off_ + 1;                                                            \
        int c_ = 0;                                                                                     \
        for (int j_ = 0; j_ < na_; j_++) {                                                              \
          b->vars[x_] = P[x_].values[s->allowed[x_][j_]];                                               \
          if (conds_hold(b, l_->conds, l_->n_conds)) dst_[c_++] = j_;                                   \
        }                                                                                               \
        l_->pool[off_] = c_;                                                                            \
        l_->pool_n += c_ + 1;                                                                           \
        l_->memo[key_] = off_;                                                                          \
      }                                                                                                 \
      llst[LV] = (const int *)(l_->pool + off_ + 1);                                                    \
      lcnt[LV] = l_->pool[off_];                                                                        \
    } else {                                                                                            \
      int na_ = s->n_allowed[x_], c_ = 0;                                                               \
      for (int j_ = 0; j_ < na_; j_++) {                                                                \
        b->vars[x_] = P[x_].values[s->allowed[x_][j_]];                                                 \
        if (conds_hold(b, l_->conds, l_->n_conds)) l_->buf[c_++] = j_;                                  \
      }                                                                                                 \
      llst[LV] = l_->buf;                                                                               \
      lcnt[LV] = c_;                                                                                    \
    }                                                                                                   \
  } while (0)

  ENTER(0);
  uint64_t steps = 0;
  while (L >= 0) {
    if (b->watch && (++steps & 0xFFFFF) == 0) {
      /* the share walked: the finished subtrees of every level down to this one */
      double done = 0, scale = 1;
      for (int M = 0; M <= L && lcnt[M] > 0; M++) {
        scale /= lcnt[M];
        done += (double)(lit[M] < lcnt[M] ? lit[M] : lcnt[M]) * scale;
      }
      if (mpt_watch_call(b->watch, "building the search space", done)) { rc = BUILD_STOPPED; goto fail_rows; }
    }
    if (lit[L] >= lcnt[L]) {
      L--;
      if (L >= 0) lit[L]++;
      continue;
    }
    int x = lv[L].param;
    if (L == n - 1) { /* emit every candidate of the last level */
      int c = lcnt[L];
      if (nrows + c > cap) {
        while (nrows + c > cap) cap *= 2;
        uint64_t *nr = realloc(rows, sizeof(uint64_t) * (size_t)cap * (size_t)W);
        if (!nr) { rc = MPT_ERR_NOMEM; goto fail_rows; }
        rows = nr;
      }
      const uint64_t *base = keys + (size_t)L * (size_t)W;
      const int *lst = llst[L];
      const uint64_t *vf = vfield[x];
      if (W == 1) {
        uint64_t b0 = base[0];
        for (int i = 0; i < c; i++) rows[nrows + i] = b0 | vf[lst[i]];
      } else {
        int fw = s->fword[x];
        for (int i = 0; i < c; i++) {
          uint64_t *r = rows + (size_t)(nrows + i) * (size_t)W;
          memcpy(r, base, sizeof(uint64_t) * (size_t)W);
          r[fw] |= vf[lst[i]];
        }
      }
      nrows += c;
      if (nrows > max_rows) { rc = MPT_ERR_VALUE; goto fail_rows; }
      lit[L] = c;
      continue;
    }
    int j = llst[L][lit[L]];
    b->curpos[x] = j;
    b->vars[x] = P[x].values[s->allowed[x][j]];
    uint64_t *kn = keys + (size_t)(L + 1) * (size_t)W;
    memcpy(kn, keys + (size_t)L * (size_t)W, sizeof(uint64_t) * (size_t)W);
    kn[s->fword[x]] |= vfield[x][j];
    L++;
    ENTER(L);
  }
#undef ENTER
  if (nrows > 0 && nrows < cap) { /* give back the unused capacity */
    uint64_t *fit = realloc(rows, sizeof(uint64_t) * (size_t)nrows * (size_t)W);
    if (fit) rows = fit;
  }
  s->rows = rows;
  s->n_rows = nrows;
  rows = NULL;
fail_rows:
  free(rows);
out:
  if (s->dims && ident)
    for (int i = 0; i < s->dims; i++) { free(ident[i]); free(vfield ? vfield[i] : NULL); }
  free(ident);
  free(vfield);
  free(order);
  free(lvl_of);
  free_levels(lv, n);
  free(keys);
  free(lcnt);
  free(lit);
  free(llst);
  return rc;
}

int mpt_space_build(const mpt_problem *p, mpt_space **out, mpt_error *err) {
  return mpt_space_build_watched(p, NULL, out, err);
}

int mpt_space_build_watched(const mpt_problem *p, const mpt_watch *watch, mpt_space **out, mpt_error *err) {
  double t0 = mpt_clock_mono_s();
  *out = NULL;
  mpt_space *s = calloc(1, sizeof *s);
  if (!s) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  builder b = {0};
  b.s = s;
  b.p = p;
  b.watch = watch && watch->fn ? watch : NULL;
  int rc = 0, d = p->n_params;
  if ((rc = mpt_cond_list_split(b.p, &b.cl))) {
    mpt_cond_list_free(&b.cl);
    free(s);
    return mpt_error_set(err, rc, "%s: out of memory", p->path);
  }
  uint8_t *multi = calloc((size_t)b.cl.n + 1, 1);
  s->prob = p;
  s->dims = d;
  s->default_id = -1;
  s->nv = calloc((size_t)d, sizeof(int));
  s->allowed = calloc((size_t)d, sizeof(int *));
  s->n_allowed = calloc((size_t)d, sizeof(int));
  s->pos = calloc((size_t)d, sizeof(int *));
  s->present = calloc((size_t)d, sizeof(uint8_t *));
  s->role = calloc((size_t)d, sizeof(int));
  s->con = calloc((size_t)d, sizeof(int));
  s->freep = calloc((size_t)d, sizeof(int));
  s->fword = calloc((size_t)d, sizeof(int));
  s->fshift = calloc((size_t)d, sizeof(int));
  s->fmask = calloc((size_t)d, sizeof(uint64_t));
  s->fstride = calloc((size_t)d, sizeof(int64_t));
  b.vars = calloc((size_t)d, sizeof(mpt_value));
  b.curpos = calloc((size_t)d, sizeof(int));
  if (!multi || !s->nv || !s->allowed || !s->n_allowed || !s->pos || !s->present || !s->role || !s->con ||
      !s->freep || !s->fword || !s->fshift || !s->fmask || !s->fstride || !b.vars || !b.curpos) {
    rc = MPT_ERR_NOMEM;
    goto fail;
  }
  for (int i = 0; i < d; i++) {
    s->nv[i] = p->params[i].n_values;
    b.vars[i] = p->params[i].values[0];
  }
  int empty = 0;
  /* conditions over no parameter: evaluated once */
  for (int k = 0; k < b.cl.n; k++) {
    if (b.cl.cs[k].n_params != 0) continue;
    int idx0 = k;
    if (!conds_hold(&b, &idx0, 1)) empty = 1;
  }
  /* single-parameter conditions filter the value lists up front */
  for (int i = 0; i < d; i++) {
    int nvi = s->nv[i];
    s->allowed[i] = malloc(sizeof(int) * (size_t)nvi);
    s->pos[i] = malloc(sizeof(int) * (size_t)nvi);
    s->present[i] = calloc((size_t)nvi, 1);
    if (!s->allowed[i] || !s->pos[i] || !s->present[i]) { rc = MPT_ERR_NOMEM; goto fail; }
    int c = 0;
    for (int v = 0; v < nvi; v++) {
      b.vars[i] = p->params[i].values[v];
      int ok = 1;
      for (int k = 0; k < b.cl.n && ok; k++)
        if (b.cl.cs[k].n_params == 1 && b.cl.cs[k].params[0] == i) ok = conds_hold(&b, &k, 1);
      s->pos[i][v] = ok ? c : -1;
      if (ok) s->allowed[i][c++] = v;
    }
    s->n_allowed[i] = c;
    b.vars[i] = p->params[i].values[c ? s->allowed[i][0] : 0];
    if (c == 0) empty = 1;
  }
  /* constrained vs free parameters */
  uint8_t *isc = calloc((size_t)d, 1);
  if (!isc) { rc = MPT_ERR_NOMEM; goto fail; }
  for (int k = 0; k < b.cl.n; k++) {
    if (b.cl.cs[k].n_params < 2) continue;
    multi[k] = 1;
    for (int j = 0; j < b.cl.cs[k].n_params; j++) isc[b.cl.cs[k].params[j]] = 1;
  }
  for (int i = 0; i < d; i++) {
    if (isc[i]) { s->role[i] = s->n_con; s->con[s->n_con++] = i; }
    else { s->role[i] = -(1 + s->n_free); s->freep[s->n_free++] = i; }
  }
  free(isc);
  /* enumeration order of the constrained parameters; con[] follows it from here on */
  if (s->n_con > 1) {
    int *order = malloc(sizeof(int) * (size_t)s->n_con);
    if (!order) { rc = MPT_ERR_NOMEM; goto fail; }
    order_params(s, &b, multi, order);
    memcpy(s->con, order, sizeof(int) * (size_t)s->n_con);
    free(order);
    for (int k = 0; k < s->n_con; k++) s->role[s->con[k]] = k;
  }
  /* bit fields: the first parameter of the enumeration order in the highest bits, the last one in the low
   * bits of word 0, so that the depth-first enumeration emits the rows in ascending key order */
  {
    int word = 0, bit = 0;
    for (int k = s->n_con - 1; k >= 0; k--) {
      int x = s->con[k];
      int nb = bits_for(s->nv[x]);
      if (bit + nb > 64) { word++; bit = 0; }
      s->fword[x] = word;
      s->fshift[x] = nb ? bit : (bit < 64 ? bit : 63); /* a single-valued parameter: empty field, shift defined */
      s->fmask[x] = nb ? ((nb == 64 ? ~0ULL : ((1ULL << nb) - 1))) : 0;
      bit += nb;
    }
    s->words = word + 1;
  }
  /* free parameters: mixed-radix suffix, last one fastest */
  {
    double q = 1;
    int64_t st = 1;
    for (int k = s->n_free - 1; k >= 0; k--) {
      int x = s->freep[k];
      s->fstride[x] = st;
      q *= s->n_allowed[x] ? s->n_allowed[x] : 1;
      if (q > 9.0e18) { rc = mpt_error_set(err, MPT_ERR_VALUE, "%s: the search space is too large (over 2^63 valid configurations)", p->path); goto fail; }
      st *= s->n_allowed[x] ? s->n_allowed[x] : 1;
    }
    s->q = st;
  }
  if (!empty) {
    rc = build_valid_set(&b, multi);
    if (rc == BUILD_STOPPED) {
      rc = mpt_error_set(err, MPT_ERR_STATE, "%s: building the search space was stopped", p->path);
      goto fail;
    }
    if (rc == MPT_ERR_VALUE) {
      rc = mpt_error_set(err, MPT_ERR_VALUE,
                         "%s: more than %lld valid combinations of the constrained parameters; the space is too "
                         "large to enumerate (raise the limit with MPT_SPACE_MAX_ROWS)",
                         p->path, (long long)mpt_space__max_rows());
      goto fail;
    }
    if (rc) goto fail;
    if ((double)s->n_rows * (double)s->q > 9.0e18) {
      rc = mpt_error_set(err, MPT_ERR_VALUE, "%s: the search space is too large (over 2^63 valid configurations)",
                         p->path);
      goto fail;
    }
  } else {
    s->n_rows = 0;
  }
  s->size = s->n_rows * s->q;
  if (s->n_rows > 0) {
    /* the enumeration emits ascending keys; sort only if that ever fails to hold */
    int sorted = 1;
    if (s->words == 1) {
      for (int64_t r = 1; r < s->n_rows && sorted; r++) sorted = s->rows[r - 1] < s->rows[r];
    } else {
      for (int64_t r = 1; r < s->n_rows && sorted; r++)
        sorted = cmp_rows(s->rows + (size_t)(r - 1) * (size_t)s->words, s->rows + (size_t)r * (size_t)s->words,
                          &s->words) < 0;
    }
    if (sorted) {
    } else if (s->words == 1) {
      int bits = 0;
      for (int k = 0; k < s->n_con; k++) bits += bits_for(s->nv[s->con[k]]);
      if ((rc = radix_sort(s->rows, s->n_rows, bits))) goto fail;
    } else {
      qsort_r(s->rows, (size_t)s->n_rows, sizeof(uint64_t) * (size_t)s->words, cmp_rows, &s->words);
    }
    if ((rc = mpt_space__index_rows(s))) goto fail;
    int W = s->words;
    /* values present in the valid set */
    for (int k = 0; k < s->n_con; k++) {
      int x = s->con[k];
      const uint64_t *col = s->rows + s->fword[x];
      int sh = s->fshift[x];
      uint64_t m = s->fmask[x];
      uint8_t *pr = s->present[x];
      int64_t marked = 0;
      for (int64_t r = 0; r < s->n_rows; r++) {
        uint8_t *q = &pr[(col[(size_t)r * (size_t)W] >> sh) & m];
        marked += !*q;
        *q = 1;
        if (marked == s->n_allowed[x]) break; /* every allowed value seen */
      }
    }
    for (int k = 0; k < s->n_free; k++) {
      int x = s->freep[k];
      for (int j = 0; j < s->n_allowed[x]; j++) s->present[x][s->allowed[x][j]] = 1;
    }
    /* default configuration */
    int *di = malloc(sizeof(int) * (size_t)d);
    if (!di) { rc = MPT_ERR_NOMEM; goto fail; }
    int ok = 1;
    for (int i = 0; i < d; i++) {
      di[i] = p->params[i].default_index;
      if (di[i] < 0) ok = 0;
    }
    s->default_id = ok ? mpt_space_lookup(s, di) : -1;
    free(di);
  }
  if ((rc = mpt_space__prepare_encoding(s))) goto fail;
  s->eval_warning = b.first_error;
  b.first_error = NULL;
  s->st.valid = s->size;
  double cart = 1;
  for (int i = 0; i < d; i++) cart *= s->nv[i];
  s->st.cartesian = cart;
  s->st.eval_errors = b.eval_errors;
  int64_t bytes = (int64_t)sizeof *s + s->n_rows * s->words * 8 + (s->table ? (int64_t)(s->tmask + 1) * 4 : 0);
  for (int i = 0; i < d; i++) bytes += (int64_t)s->nv[i] * (4 + 4 + 1) + 64;
  s->st.bytes = bytes;
  free(multi);
  free(b.vars);
  free(b.curpos);
  mpt_cond_list_free(&b.cl);
  s->st.seconds = mpt_clock_mono_s() - t0;
  *out = s;
  return 0;
fail:
  free(multi);
  free(b.vars);
  free(b.curpos);
  mpt_cond_list_free(&b.cl);
  free(b.first_error);
  mpt_space_free(s);
  if (rc == MPT_ERR_NOMEM) return mpt_error_set(err, rc, "%s: out of memory building the search space", p->path);
  return rc;
}
