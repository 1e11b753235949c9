/* spaces/space.c: construction of the valid set (constraint-ordered depth-first enumeration with
 * per-level memoised candidate lists, free parameters multiplied in), its packed storage and hash index,
 * and the O(1) accessors id <-> configuration. Neighbours: space_nb.c; sampling/encoding: space_sample.c;
 * conditions split at their top-level `and`: cond_split.c. */
#include "spaces/space_internal.h"
#include "spaces/cond_split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "spaces/sys/clock.h"

static inline uint64_t mix64(uint64_t z) {
  z ^= z >> 33;
  z *= 0xff51afd7ed558ccdULL;
  z ^= z >> 33;
  z *= 0xc4ceb9fe1a85ec53ULL;
  z ^= z >> 33;
  return z;
}

static inline uint64_t hash_key(const uint64_t *k, int w) {
  uint64_t h = mix64(k[0]);
  for (int i = 1; i < w; i++) h = mix64(h ^ (k[i] + 0x9e3779b97f4a7c15ULL));
  return h;
}

int64_t mpt_space__find_row(const mpt_space *s, const uint64_t *key) {
  if (!s->table) return -1;
  int w = s->words;
  uint64_t hk = hash_key(key, w), h = hk & s->tmask;
  if (s->tagged) { /* the top 8 bits of a slot hold 8 other bits of the hash: most misses skip the row */
    uint32_t tag = (uint32_t)(hk >> 56) << 24;
    for (;;) {
      uint32_t e = s->table[h];
      if (e == MPT_SPACE_EMPTY_SLOT) return -1;
      if ((e & 0xff000000u) == tag) {
        uint32_t row = e & 0xffffffu;
        const uint64_t *r = s->rows + (uint64_t)row * (uint64_t)w;
        if (r[0] == key[0] && (w == 1 || memcmp(r, key, sizeof(uint64_t) * (size_t)w) == 0)) return (int64_t)row;
      }
      h = (h + 1) & s->tmask;
    }
  }
  for (;;) {
    uint32_t e = s->table[h];
    if (e == MPT_SPACE_EMPTY_SLOT) return -1;
    const uint64_t *r = s->rows + (uint64_t)e * (uint64_t)w;
    if (r[0] == key[0] && (w == 1 || memcmp(r, key, sizeof(uint64_t) * (size_t)w) == 0)) return (int64_t)e;
    h = (h + 1) & s->tmask;
  }
}

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

/* qsort_r order of parameter indices by their level (ctx: the level of each parameter) */
static int by_level(const void *a, const void *b, void *ctx) {
  const int *lvl_of = ctx;
  int x = lvl_of[*(const int *)a], y = lvl_of[*(const int *)b];
  return (x > y) - (x < y);
}

/* Greedy order of the constrained parameters: single-valued first, then the one that completes the most
 * conditions, then the one most connected to the placed ones, then the fewest allowed values (ties: the
 * earlier in con[]). Each parameter's counts of the conditions it would complete and of those it touches are
 * kept up to date as parameters are placed, so a step costs one pass over the unplaced parameters. */
static void order_params(const mpt_space *s, const builder *bd, const uint8_t *multi, int *order) {
  int n = s->n_con, d = s->dims, nc = bd->cl.n;
  /* incidence: the multi-parameter conditions of each parameter, in_cond[at[x] .. at[x + 1]) */
  int *at = calloc((size_t)d + 1, sizeof(int)), *fill = calloc((size_t)d + 1, sizeof(int));
  int *placed_in = calloc((size_t)nc + 1, sizeof(int)); /* per condition: its parameters placed */
  long *completes = calloc((size_t)d, sizeof(long)), *touches = calloc((size_t)d, sizeof(long));
  uint8_t *placed = calloc((size_t)d, 1);
  int *in_cond = NULL;
  if (at && fill) {
    for (int k = 0; k < nc; k++)
      if (multi[k])
        for (int j = 0; j < bd->cl.cs[k].n_params; j++) at[bd->cl.cs[k].params[j] + 1]++;
    for (int x = 0; x < d; x++) at[x + 1] += at[x];
    in_cond = malloc(sizeof(int) * (size_t)(at[d] > 0 ? at[d] : 1));
  }
  if (!in_cond || !placed_in || !completes || !touches || !placed) { /* keep the current order */
    memcpy(order, s->con, sizeof(int) * (size_t)n);
    goto out;
  }
  for (int k = 0; k < nc; k++)
    if (multi[k])
      for (int j = 0; j < bd->cl.cs[k].n_params; j++) {
        int x = bd->cl.cs[k].params[j];
        in_cond[at[x] + fill[x]++] = k;
      }
  for (int step = 0; step < n; step++) {
    int best = -1;
    long bs[4] = {0, 0, 0, 0};
    for (int ci = 0; ci < n; ci++) {
      int x = s->con[ci];
      if (placed[x]) continue;
      long sc[4] = {s->n_allowed[x] == 1, completes[x], touches[x], -(long)s->n_allowed[x]};
      int better = best < 0;
      for (int t = 0; t < 4 && !better; t++) {
        if (sc[t] > bs[t]) { better = 1; break; }
        if (sc[t] < bs[t]) break;
      }
      if (better) { best = x; memcpy(bs, sc, sizeof bs); }
    }
    order[step] = best;
    placed[best] = 1;
    /* for an unplaced parameter of a condition, the condition's placed parameters are its placed others */
    for (int e = at[best]; e < at[best + 1]; e++) {
      const mpt_condition *c = &bd->cl.cs[in_cond[e]];
      int now = ++placed_in[in_cond[e]];
      for (int j = 0; j < c->n_params; j++) {
        int z = c->params[j];
        if (placed[z]) continue;
        touches[z] += now == 1;
        completes[z] += now == c->n_params - 1;
      }
    }
  }
out:
  free(at);
  free(fill);
  free(in_cond);
  free(placed_in);
  free(completes);
  free(touches);
  free(placed);
}

/* The single-parameter conditions of each parameter, in the order of cl: (*list)[(*at)[x] .. (*at)[x + 1]) for
 * parameter x. 0 or MPT_ERR_NOMEM. */
static int single_conditions(const mpt_cond_list *cl, int d, int **at, int **list) {
  int *a = calloc((size_t)d + 1, sizeof(int)), *l = NULL, *fill = calloc((size_t)d + 1, sizeof(int));
  if (a && fill) {
    for (int k = 0; k < cl->n; k++)
      if (cl->cs[k].n_params == 1) a[cl->cs[k].params[0] + 1]++;
    for (int x = 0; x < d; x++) a[x + 1] += a[x];
    l = malloc(sizeof(int) * (size_t)(a[d] > 0 ? a[d] : 1));
  }
  if (!l) {
    free(a);
    free(fill);
    return MPT_ERR_NOMEM;
  }
  for (int k = 0; k < cl->n; k++)
    if (cl->cs[k].n_params == 1) {
      int x = cl->cs[k].params[0];
      l[a[x] + fill[x]++] = k;
    }
  free(fill);
  *at = a;
  *list = l;
  return 0;
}

/* Most rows of constrained values the enumeration may produce before it gives up with an error: 2^26 for rows
 * of one or two words (512 MiB per row word), 2^27 / words for wider rows (1 GiB: a space of thousands of
 * constrained parameters gives up there, not after asking for tens of GiB), or MPT_SPACE_MAX_ROWS from the
 * environment; never more than 2^32 - 2. */
static int64_t mpt_space__max_rows(int words) {
  int64_t lim = words > 2 ? ((int64_t)1 << 27) / words : (int64_t)1 << 26;
  const char *e = getenv("MPT_SPACE_MAX_ROWS");
  if (e && *e) {
    char *end = NULL;
    long long v = strtoll(e, &end, 10);
    if (end && !*end && v > 0) lim = v;
  }
  if (lim > (int64_t)UINT32_MAX - 2) lim = (int64_t)UINT32_MAX - 2;
  return lim;
}

static mpt_space_watch_fn g_watch;
void mpt_space_set_watch(mpt_space_watch_fn fn) { g_watch = fn; }

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
  uint8_t *in_key = NULL; /* per parameter: in the memo key being built */
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
  /* memo keys: the earlier parameters a level's conditions read, in level order */
  in_key = calloc((size_t)s->dims, 1);
  if (!in_key) { rc = MPT_ERR_NOMEM; goto out; }
  for (int L = 0; L < n; L++) {
    level *l = &lv[L];
    if (!l->n_conds) continue;
    int most = 1;
    for (int k = 0; k < l->n_conds; k++) most += b->cl.cs[l->conds[k]].n_params;
    l->key = malloc(sizeof(int) * (size_t)most);
    l->kstride = malloc(sizeof(int64_t) * (size_t)most);
    if (!l->key || !l->kstride) { rc = MPT_ERR_NOMEM; goto out; }
    for (int k = 0; k < l->n_conds; k++) {
      const mpt_condition *c = &b->cl.cs[l->conds[k]];
      for (int j = 0; j < c->n_params; j++) {
        int x = c->params[j];
        if (x != l->param && !in_key[x]) {
          in_key[x] = 1;
          l->key[l->n_key++] = x;
        }
      }
    }
    qsort_r(l->key, (size_t)l->n_key, sizeof(int), by_level, lvl_of);
    double space = 1;
    for (int k = 0; k < l->n_key; k++) {
      in_key[l->key[k]] = 0;
      space *= s->n_allowed[l->key[k]];
    }
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

  int64_t cap = 4096, nrows = 0, max_rows = mpt_space__max_rows(W);
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
  double t_start = mpt_clock_mono_s();
  while (L >= 0) {
    if (g_watch && (++steps & 0xFFFFF) == 0) {
      /* the share walked: the finished subtrees of every level down to this one */
      double done = 0, scale = 1;
      for (int M = 0; M <= L && lcnt[M] > 0; M++) {
        scale /= lcnt[M];
        done += (double)(lit[M] < lcnt[M] ? lit[M] : lcnt[M]) * scale;
      }
      if (g_watch(done, mpt_clock_mono_s() - t_start)) { rc = BUILD_STOPPED; goto fail_rows; }
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
  free(in_key);
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
  double t0 = mpt_clock_mono_s();
  *out = NULL;
  mpt_space *s = calloc(1, sizeof *s);
  if (!s) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  builder b = {0};
  b.s = s;
  b.p = p;
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
  int *single_at = NULL, *single = NULL;
  if ((rc = single_conditions(&b.cl, d, &single_at, &single))) goto fail;
  for (int i = 0; i < d; i++) {
    int nvi = s->nv[i];
    s->allowed[i] = malloc(sizeof(int) * (size_t)nvi);
    s->pos[i] = malloc(sizeof(int) * (size_t)nvi);
    s->present[i] = calloc((size_t)nvi, 1);
    if (!s->allowed[i] || !s->pos[i] || !s->present[i]) {
      free(single_at);
      free(single);
      rc = MPT_ERR_NOMEM;
      goto fail;
    }
    int c = 0;
    for (int v = 0; v < nvi; v++) {
      b.vars[i] = p->params[i].values[v];
      int ok = conds_hold(&b, single + single_at[i], single_at[i + 1] - single_at[i]);
      s->pos[i][v] = ok ? c : -1;
      if (ok) s->allowed[i][c++] = v;
    }
    s->n_allowed[i] = c;
    b.vars[i] = p->params[i].values[c ? s->allowed[i][0] : 0];
    if (c == 0) empty = 1;
  }
  free(single_at);
  free(single);
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
                         p->path, (long long)mpt_space__max_rows(s->words));
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
    uint64_t cap = 16;
    while (cap * 7 < 10 * (uint64_t)s->n_rows) cap *= 2; /* load factor <= 0.7 */
    s->table = malloc(sizeof(uint32_t) * cap);
    if (!s->table) { rc = MPT_ERR_NOMEM; goto fail; }
    memset(s->table, 0xff, sizeof(uint32_t) * cap);
    s->tmask = cap - 1;
    s->tagged = s->n_rows < (1 << 24) - 1; /* row indices fit 24 bits; a slot is never all ones */
    int W = s->words;
    enum { PF = 16 }; /* prefetch the slots of the rows inserted PF steps later; hashes kept in a ring */
    uint64_t ring[PF];
    for (int64_t r = 0; r < PF && r < s->n_rows; r++) {
      ring[r] = hash_key(s->rows + (size_t)r * (size_t)W, W);
      __builtin_prefetch(&s->table[ring[r] & s->tmask], 1);
    }
    for (int64_t r = 0; r < s->n_rows; r++) {
      uint64_t hk = ring[r % PF], h = hk & s->tmask;
      if (r + PF < s->n_rows) {
        uint64_t nx = hash_key(s->rows + (size_t)(r + PF) * (size_t)W, W);
        ring[r % PF] = nx;
        __builtin_prefetch(&s->table[nx & s->tmask], 1);
      }
      while (s->table[h] != MPT_SPACE_EMPTY_SLOT) h = (h + 1) & s->tmask;
      s->table[h] = s->tagged ? (uint32_t)r | ((uint32_t)(hk >> 56) << 24) : (uint32_t)r;
    }
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

void mpt_space_free(mpt_space *s) {
  if (!s) return;
  for (int i = 0; i < s->dims; i++) {
    if (s->allowed) free(s->allowed[i]);
    if (s->pos) free(s->pos[i]);
    if (s->present) free(s->present[i]);
  }
  free(s->nv);
  free(s->allowed);
  free(s->n_allowed);
  free(s->pos);
  free(s->present);
  free(s->role);
  free(s->con);
  free(s->freep);
  free(s->fword);
  free(s->fshift);
  free(s->fmask);
  free(s->fstride);
  free(s->rows);
  free(s->table);
  free(s->eval_warning);
  free(s->emin);
  free(s->emax);
  free(s->lmin);
  free(s->lmax);
  free(s->logok);
  free(s);
}

/* ---- accessors ---- */

const mpt_problem *mpt_space_problem(const mpt_space *s) { return s->prob; }
int64_t mpt_space_size(const mpt_space *s) { return s->size; }
int mpt_space_dims(const mpt_space *s) { return s->dims; }
int mpt_space_n_values(const mpt_space *s, int param) {
  return (param >= 0 && param < s->dims) ? s->nv[param] : 0;
}
void mpt_space_stats_get(const mpt_space *s, mpt_space_stats *st) { *st = s->st; }
const char *mpt_space_eval_warning(const mpt_space *s) { return s->eval_warning; }

int mpt_space_value_index(const mpt_space *s, int64_t id, int param) {
  if (id < 0 || id >= s->size || param < 0 || param >= s->dims) return -1;
  int r = s->role[param];
  if (r >= 0) {
    int64_t row = s->q == 1 ? id : id / s->q;
    return (int)((s->rows[(size_t)row * (size_t)s->words + (size_t)s->fword[param]] >> s->fshift[param]) &
                 s->fmask[param]);
  }
  int64_t sfx = s->q == 1 ? 0 : id % s->q;
  return s->allowed[param][(sfx / s->fstride[param]) % s->n_allowed[param]];
}

void mpt_space_config(const mpt_space *s, int64_t id, int *idx) {
  if (id < 0 || id >= s->size) {
    for (int i = 0; i < s->dims; i++) idx[i] = -1;
    return;
  }
  int64_t row = s->q == 1 ? id : id / s->q;
  int64_t sfx = s->q == 1 ? 0 : id % s->q;
  const uint64_t *r = s->rows + (size_t)row * (size_t)s->words;
  for (int k = 0; k < s->n_con; k++) {
    int x = s->con[k];
    idx[x] = (int)((r[s->fword[x]] >> s->fshift[x]) & s->fmask[x]);
  }
  for (int k = s->n_free - 1; k >= 0; k--) {
    int x = s->freep[k];
    int na = s->n_allowed[x];
    idx[x] = s->allowed[x][sfx % na];
    sfx /= na;
  }
}

int64_t mpt_space_lookup(const mpt_space *s, const int *idx) {
  if (s->size == 0) return -1;
  uint64_t kbuf[8];
  uint64_t *key = s->words <= 8 ? kbuf : calloc((size_t)s->words, sizeof(uint64_t));
  if (!key) return -1;
  for (int w = 0; w < s->words && s->words <= 8; w++) key[w] = 0;
  int64_t sfx = 0, res = -1;
  for (int i = 0; i < s->dims; i++) {
    int v = idx[i];
    if (v < 0 || v >= s->nv[i]) goto done;
    int j = s->pos[i][v];
    if (j < 0) goto done;
    if (s->role[i] >= 0) key[s->fword[i]] |= (uint64_t)v << s->fshift[i];
    else sfx += (int64_t)j * s->fstride[i];
  }
  int64_t row = mpt_space__find_row(s, key);
  if (row >= 0) res = row * s->q + sfx;
done:
  if (key != kbuf) free(key);
  return res;
}

int mpt_space_check(const mpt_space *s, const int *idx) {
  const mpt_problem *p = s->prob;
  mpt_value vb[64];
  mpt_value *vars = s->dims <= 64 ? vb : malloc(sizeof(mpt_value) * (size_t)s->dims);
  if (!vars) return 0;
  int ok = 1;
  for (int i = 0; i < s->dims; i++) {
    if (idx[i] < 0 || idx[i] >= s->nv[i]) { ok = 0; break; }
    vars[i] = p->params[i].values[idx[i]];
  }
  mpt_error e;
  for (int k = 0; k < p->n_conditions && ok; k++) {
    int t = 0;
    if (mpt_expr_eval_bool(p->conditions[k].expr, vars, &t, &e) || !t) ok = 0;
  }
  if (vars != vb) free(vars);
  return ok;
}

int64_t mpt_space_default_id(const mpt_space *s) { return s->default_id; }

int mpt_space_format(const mpt_space *s, int64_t id, char *buf, int cap) {
  int ib[64];
  int *idx = s->dims <= 64 ? ib : malloc(sizeof(int) * (size_t)s->dims);
  if (!idx) return 0;
  mpt_space_config(s, id, idx);
  int len = 0;
  for (int i = 0; i < s->dims; i++) {
    const mpt_param *par = &s->prob->params[i];
    char vb[256], *v = vb; /* a longer value whole, in memory of its own */
    int need = idx[i] >= 0 ? mpt_value_str_repr(&par->values[idx[i]], NULL, 0) : 0;
    if (need >= (int)sizeof vb && !(v = malloc((size_t)need + 1))) v = vb;
    if (idx[i] >= 0) mpt_value_str_repr(&par->values[idx[i]], v, v == vb ? (int)sizeof vb : need + 1);
    else snprintf(v, sizeof vb, "?");
    int n = snprintf(len < cap ? buf + len : NULL, len < cap ? (size_t)(cap - len) : 0, "%s%s=%s", i ? "," : "",
                     par->name, v);
    if (v != vb) free(v);
    len += n;
  }
  if (cap > 0 && len >= cap) buf[cap - 1] = '\0';
  if (idx != ib) free(idx);
  return len;
}
