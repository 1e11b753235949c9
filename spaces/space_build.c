/* spaces/space_build.c: construction of the valid set from a T1 problem (constraint-ordered depth-first
 * enumeration with per-level memoised candidate lists, free parameters multiplied in), into the packed
 * rows and hash index of space.c. Conditions are split at their top-level `and` (cond_split.c). */
#include "spaces/space_internal.h"
#include "spaces/cond_split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/sys/clock.h"

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
  uint8_t *multi;     /* per condition of cl: it reads two parameters or more (checked by the enumeration) */
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

enum { BUILD_STOPPED = 1 }; /* enumerate_rows: the watcher said stop */

/* ---- the enumeration: depth first over the constrained parameters, one level each (s->con's order) ---- */

typedef struct walk {
  builder *b;
  mpt_space *s;
  int n, W;            /* levels, words per row */
  level *lv;
  uint64_t *keys;      /* (n + 1) * W: the packed fields of the values chosen above each level */
  int *lcnt, *lit;     /* per level: its candidates, the one visited now */
  const int **llst;    /* per level: its candidates (positions in allowed[]) */
  int **ident;         /* per parameter: 0..n_allowed-1, the candidates of a level without conditions */
  uint64_t **vfield;   /* per parameter: each allowed value shifted into its field */
  uint64_t *rows;      /* the rows emitted so far */
  int64_t nrows, cap, max_rows;
  int *lvl_of;         /* per parameter: its level, -1 for a free one */
  uint8_t *in_key;     /* per parameter: in the memo key being planned (scratch, all 0 between plans) */
} walk;

/* the per-level and per-parameter tables of the walk; 0 or MPT_ERR_NOMEM (walk_close either way) */
static int walk_open(walk *w, builder *b) {
  mpt_space *s = b->s;
  int n = s->n_con;
  w->b = b;
  w->s = s;
  w->n = n;
  w->W = s->words;
  w->lv = calloc((size_t)n, sizeof(level));
  w->keys = calloc((size_t)(n + 1) * (size_t)w->W, sizeof(uint64_t));
  w->lcnt = calloc((size_t)n, sizeof(int));
  w->lit = calloc((size_t)n, sizeof(int));
  w->llst = calloc((size_t)n, sizeof(int *));
  w->ident = calloc((size_t)s->dims, sizeof(int *));
  w->vfield = calloc((size_t)s->dims, sizeof(uint64_t *));
  w->lvl_of = malloc(sizeof(int) * (size_t)(s->dims > 0 ? s->dims : 1));
  w->in_key = calloc((size_t)(s->dims > 0 ? s->dims : 1), 1);
  if (!w->lv || !w->keys || !w->lcnt || !w->lit || !w->llst || !w->ident || !w->vfield || !w->lvl_of || !w->in_key)
    return MPT_ERR_NOMEM;
  for (int i = 0; i < s->dims; i++) w->lvl_of[i] = -1;
  for (int L = 0; L < n; L++) {
    int x = s->con[L]; /* mpt_space_build put them in enumeration order */
    w->lv[L].param = x;
    w->lvl_of[x] = L;
    w->ident[x] = malloc(sizeof(int) * (size_t)s->n_allowed[x]);
    w->vfield[x] = malloc(sizeof(uint64_t) * (size_t)s->n_allowed[x]);
    w->lv[L].buf = malloc(sizeof(int) * (size_t)s->n_allowed[x]);
    if (!w->ident[x] || !w->vfield[x] || !w->lv[L].buf) return MPT_ERR_NOMEM;
    for (int j = 0; j < s->n_allowed[x]; j++) {
      w->ident[x][j] = j;
      w->vfield[x][j] = (uint64_t)s->allowed[x][j] << s->fshift[x];
    }
  }
  return 0;
}

static void walk_close(walk *w) {
  if (w->s->dims && w->ident)
    for (int i = 0; i < w->s->dims; i++) { free(w->ident[i]); free(w->vfield ? w->vfield[i] : NULL); }
  free(w->ident);
  free(w->vfield);
  free_levels(w->lv, w->n);
  free(w->keys);
  free(w->lcnt);
  free(w->lit);
  free(w->llst);
  free(w->rows);
  free(w->lvl_of);
  free(w->in_key);
}

/* each condition over two parameters or more fires at the level of its deepest parameter */
static int place_conditions(walk *w) {
  const builder *b = w->b;
  const int *lvl_of = w->lvl_of;
  for (int k = 0; k < b->cl.n; k++) {
    if (!b->multi[k]) continue;
    const mpt_condition *c = &b->cl.cs[k];
    int L = -1;
    for (int j = 0; j < c->n_params; j++)
      if (lvl_of[c->params[j]] > L) L = lvl_of[c->params[j]];
    int *nc = realloc(w->lv[L].conds, sizeof(int) * (size_t)(w->lv[L].n_conds + 1));
    if (!nc) return MPT_ERR_NOMEM;
    w->lv[L].conds = nc;
    nc[w->lv[L].n_conds++] = k;
  }
  return 0;
}

/* a level's memo key: the earlier parameters its conditions read, in level order. It memoises its
 * candidate lists when the key leaves out earlier parameters (so keys repeat) and the table is small. */
static int plan_memo(walk *w, int L) {
  const mpt_space *s = w->s;
  level *l = &w->lv[L];
  int most = 1;
  for (int k = 0; k < l->n_conds; k++) most += w->b->cl.cs[l->conds[k]].n_params;
  l->key = malloc(sizeof(int) * (size_t)most);
  l->kstride = malloc(sizeof(int64_t) * (size_t)most);
  if (!l->key || !l->kstride) return MPT_ERR_NOMEM;
  for (int k = 0; k < l->n_conds; k++) {
    const mpt_condition *c = &w->b->cl.cs[l->conds[k]];
    for (int j = 0; j < c->n_params; j++) {
      int x = c->params[j];
      if (x != l->param && !w->in_key[x]) {
        w->in_key[x] = 1;
        l->key[l->n_key++] = x;
      }
    }
  }
  qsort_r(l->key, (size_t)l->n_key, sizeof(int), by_level, w->lvl_of);
  double space = 1;
  for (int k = 0; k < l->n_key; k++) {
    w->in_key[l->key[k]] = 0;
    space *= s->n_allowed[l->key[k]];
  }
  if (l->n_key < L && space <= (double)(1 << 20)) {
    int64_t st = 1;
    for (int k = l->n_key - 1; k >= 0; k--) { l->kstride[k] = st; st *= s->n_allowed[l->key[k]]; }
    l->memo_n = st;
    l->memo = malloc(sizeof(int32_t) * (size_t)st);
    if (!l->memo) return MPT_ERR_NOMEM;
    memset(l->memo, 0xff, sizeof(int32_t) * (size_t)st);
  }
  return 0;
}

/* room in a level's pool for one more candidate list of na entries; 0 or MPT_ERR_NOMEM */
static int grow_pool(level *l, int na) {
  if (l->pool_n + na + 1 <= l->pool_cap) return 0;
  int64_t nc = (l->pool_cap ? l->pool_cap * 2 : 1024);
  while (nc < l->pool_n + na + 1) nc *= 2;
  if (nc > INT32_MAX) return MPT_ERR_NOMEM;
  int32_t *np = realloc(l->pool, sizeof(int32_t) * (size_t)nc);
  if (!np) return MPT_ERR_NOMEM;
  l->pool = np;
  l->pool_cap = nc;
  return 0;
}

/* the allowed positions of level l's parameter for which its conditions hold (the earlier levels'
 * values set in vars), written to dst; their count */
static inline int filter_candidates(walk *w, level *l, int *dst) {
  builder *b = w->b;
  int x = l->param, na = w->s->n_allowed[x], c = 0;
  const mpt_value *values = b->p->params[x].values;
  const int *allowed = w->s->allowed[x];
  for (int j = 0; j < na; j++) {
    b->vars[x] = values[allowed[j]];
    if (conds_hold(b, l->conds, l->n_conds)) dst[c++] = j;
  }
  return c;
}

/* a memoised level's candidates: looked up by the key's positions, filtered into the pool when new */
static inline int memoised_candidates(walk *w, int L) {
  level *l = &w->lv[L];
  int64_t key = 0;
  for (int k = 0; k < l->n_key; k++) key += l->kstride[k] * w->b->curpos[l->key[k]];
  int32_t off = l->memo[key];
  if (off < 0) {
    if (grow_pool(l, w->s->n_allowed[l->param])) return MPT_ERR_NOMEM;
    off = (int32_t)l->pool_n;
    int c = filter_candidates(w, l, (int *)(l->pool + off + 1));
    l->pool[off] = c;
    l->pool_n += c + 1;
    l->memo[key] = off;
  }
  w->llst[L] = (const int *)(l->pool + off + 1);
  w->lcnt[L] = l->pool[off];
  return 0;
}

/* entering level L: its candidate list (every allowed value without conditions, the memo's, or filtered
 * now); 0 or MPT_ERR_NOMEM */
static inline int enter_level(walk *w, int L) {
  level *l = &w->lv[L];
  w->lit[L] = 0;
  if (!l->n_conds) {
    w->llst[L] = w->ident[l->param];
    w->lcnt[L] = w->s->n_allowed[l->param];
    return 0;
  }
  if (l->memo) return memoised_candidates(w, L);
  w->lcnt[L] = filter_candidates(w, l, l->buf);
  w->llst[L] = l->buf;
  return 0;
}

/* the last level: one row per candidate, the fields above from keys; 0, MPT_ERR_NOMEM or MPT_ERR_VALUE
 * (more rows than max_rows) */
static inline int emit_rows(walk *w, int L) {
  int c = w->lcnt[L], W = w->W;
  if (w->nrows + c > w->cap) {
    while (w->nrows + c > w->cap) w->cap *= 2;
    uint64_t *nr = realloc(w->rows, sizeof(uint64_t) * (size_t)w->cap * (size_t)W);
    if (!nr) return MPT_ERR_NOMEM;
    w->rows = nr;
  }
  const uint64_t *base = w->keys + (size_t)L * (size_t)W;
  const int *lst = w->llst[L];
  int x = w->lv[L].param;
  const uint64_t *vf = w->vfield[x];
  uint64_t *rows = w->rows;
  int64_t nrows = w->nrows;
  if (W == 1) {
    uint64_t b0 = base[0];
    for (int i = 0; i < c; i++) rows[nrows + i] = b0 | vf[lst[i]];
  } else {
    int fw = w->s->fword[x];
    for (int i = 0; i < c; i++) {
      uint64_t *r = rows + (size_t)(nrows + i) * (size_t)W;
      memcpy(r, base, sizeof(uint64_t) * (size_t)W);
      r[fw] |= vf[lst[i]];
    }
  }
  w->nrows = nrows + c;
  return w->nrows > w->max_rows ? MPT_ERR_VALUE : 0;
}

/* the share of the enumeration walked: the finished subtrees of every level down to L */
static double walked_share(const walk *w, int L) {
  double done = 0, scale = 1;
  for (int M = 0; M <= L && w->lcnt[M] > 0; M++) {
    scale /= w->lcnt[M];
    done += (double)(w->lit[M] < w->lcnt[M] ? w->lit[M] : w->lcnt[M]) * scale;
  }
  return done;
}

/* level L takes its candidate lit[L]: its value in vars and its field in the key of level L + 1 */
static inline void choose(walk *w, int L) {
  int x = w->lv[L].param, W = w->W;
  int j = w->llst[L][w->lit[L]];
  w->b->curpos[x] = j;
  w->b->vars[x] = w->b->p->params[x].values[w->s->allowed[x][j]];
  uint64_t *kn = w->keys + (size_t)(L + 1) * (size_t)W;
  memcpy(kn, w->keys + (size_t)L * (size_t)W, sizeof(uint64_t) * (size_t)W);
  kn[w->s->fword[x]] |= w->vfield[x][j];
}

/* walks every level down, emitting the rows (ascending: the first level holds the highest bits), the
 * watch called every 2^20 steps; 0, BUILD_STOPPED, MPT_ERR_NOMEM or MPT_ERR_VALUE */
static int walk_levels(walk *w) {
  const mpt_watch *watch = w->b->watch;
  int n = w->n, L = 0, rc = 0;
  int *lit = w->lit, *lcnt = w->lcnt;
  if ((rc = enter_level(w, 0))) return rc;
  uint64_t steps = 0;
  while (L >= 0) {
    if (watch && (++steps & 0xFFFFF) == 0) {
      if (mpt_watch_call(watch, "building the search space", walked_share(w, L))) return BUILD_STOPPED;
    }
    if (lit[L] >= lcnt[L]) {
      L--;
      if (L >= 0) lit[L]++;
      continue;
    }
    if (L == n - 1) { /* emit every candidate of the last level */
      if ((rc = emit_rows(w, L))) return rc;
      lit[L] = lcnt[L];
      continue;
    }
    choose(w, L);
    L++;
    if ((rc = enter_level(w, L))) return rc;
  }
  return 0;
}

/* the packed rows of the valid combinations of the constrained parameters into s->rows, s->n_rows;
 * 0, BUILD_STOPPED, MPT_ERR_NOMEM or MPT_ERR_VALUE (more than max_rows rows) */
static int enumerate_rows(builder *b) {
  mpt_space *s = b->s;
  if (s->n_con == 0) { /* one empty row */
    s->rows = calloc((size_t)s->words, sizeof(uint64_t));
    if (!s->rows) return MPT_ERR_NOMEM;
    s->n_rows = 1;
    return 0;
  }
  walk w = {0};
  int rc = walk_open(&w, b);
  if (!rc) rc = place_conditions(&w);
  for (int L = 0; L < w.n && !rc; L++)
    if (w.lv[L].n_conds) rc = plan_memo(&w, L);
  if (!rc) {
    w.cap = 4096;
    w.max_rows = mpt_space__max_rows(w.W);
    w.rows = malloc(sizeof(uint64_t) * (size_t)w.cap * (size_t)w.W);
    if (!w.rows) rc = MPT_ERR_NOMEM;
  }
  if (!rc) rc = walk_levels(&w);
  if (!rc) {
    if (w.nrows > 0 && w.nrows < w.cap) { /* give back the unused capacity */
      uint64_t *fit = realloc(w.rows, sizeof(uint64_t) * (size_t)w.nrows * (size_t)w.W);
      if (fit) w.rows = fit;
    }
    s->rows = w.rows;
    s->n_rows = w.nrows;
    w.rows = NULL;
  }
  walk_close(&w);
  return rc;
}

/* ---- the phases of mpt_space_build ---- */

/* the space's per-parameter tables and the builder's values; 0 or MPT_ERR_NOMEM */
static int alloc_tables(builder *b) {
  mpt_space *s = b->s;
  int d = b->p->n_params;
  b->multi = calloc((size_t)b->cl.n + 1, 1);
  s->prob = b->p;
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
  b->vars = calloc((size_t)d, sizeof(mpt_value));
  b->curpos = calloc((size_t)d, sizeof(int));
  if (!b->multi || !s->nv || !s->allowed || !s->n_allowed || !s->pos || !s->present || !s->role || !s->con ||
      !s->freep || !s->fword || !s->fshift || !s->fmask || !s->fstride || !b->vars || !b->curpos)
    return MPT_ERR_NOMEM;
  for (int i = 0; i < d; i++) {
    s->nv[i] = b->p->params[i].n_values;
    b->vars[i] = b->p->params[i].values[0];
  }
  return 0;
}

/* conditions over no parameter, evaluated once: *empty when one does not hold */
static void check_constant_conditions(builder *b, int *empty) {
  for (int k = 0; k < b->cl.n; k++) {
    if (b->cl.cs[k].n_params != 0) continue;
    int idx0 = k;
    if (!conds_hold(b, &idx0, 1)) *empty = 1;
  }
}

/* single-parameter conditions filter the value lists up front: allowed, pos, n_allowed (present
 * allocated); *empty when a parameter keeps no value. 0 or MPT_ERR_NOMEM */
static int filter_values(builder *b, int *empty) {
  mpt_space *s = b->s;
  const mpt_problem *p = b->p;
  int *single_at = NULL, *single = NULL;
  if (single_conditions(&b->cl, s->dims, &single_at, &single)) return MPT_ERR_NOMEM;
  for (int i = 0; i < s->dims; i++) {
    int nvi = s->nv[i];
    s->allowed[i] = malloc(sizeof(int) * (size_t)nvi);
    s->pos[i] = malloc(sizeof(int) * (size_t)nvi);
    s->present[i] = calloc((size_t)nvi, 1);
    if (!s->allowed[i] || !s->pos[i] || !s->present[i]) {
      free(single_at);
      free(single);
      return MPT_ERR_NOMEM;
    }
    int c = 0;
    for (int v = 0; v < nvi; v++) {
      b->vars[i] = p->params[i].values[v];
      int ok = conds_hold(b, single + single_at[i], single_at[i + 1] - single_at[i]);
      s->pos[i][v] = ok ? c : -1;
      if (ok) s->allowed[i][c++] = v;
    }
    s->n_allowed[i] = c;
    b->vars[i] = p->params[i].values[c ? s->allowed[i][0] : 0];
    if (c == 0) *empty = 1;
  }
  free(single_at);
  free(single);
  return 0;
}

/* constrained (read by a condition over two parameters or more: multi[]) vs free parameters, each in
 * file order: role, con, freep. 0 or MPT_ERR_NOMEM */
static int split_constrained(builder *b) {
  mpt_space *s = b->s;
  uint8_t *isc = calloc((size_t)s->dims, 1);
  if (!isc) return MPT_ERR_NOMEM;
  for (int k = 0; k < b->cl.n; k++) {
    if (b->cl.cs[k].n_params < 2) continue;
    b->multi[k] = 1;
    for (int j = 0; j < b->cl.cs[k].n_params; j++) isc[b->cl.cs[k].params[j]] = 1;
  }
  for (int i = 0; i < s->dims; i++) {
    if (isc[i]) { s->role[i] = s->n_con; s->con[s->n_con++] = i; }
    else { s->role[i] = -(1 + s->n_free); s->freep[s->n_free++] = i; }
  }
  free(isc);
  return 0;
}

/* the enumeration order of the constrained parameters (order_params); con[] and role follow it from
 * here on. 0 or MPT_ERR_NOMEM */
static int order_enumeration(builder *b) {
  mpt_space *s = b->s;
  if (s->n_con <= 1) return 0;
  int *order = malloc(sizeof(int) * (size_t)s->n_con);
  if (!order) return MPT_ERR_NOMEM;
  order_params(s, b, b->multi, order);
  memcpy(s->con, order, sizeof(int) * (size_t)s->n_con);
  free(order);
  for (int k = 0; k < s->n_con; k++) s->role[s->con[k]] = k;
  return 0;
}

/* bit fields of the constrained parameters: the first of the enumeration order in the highest bits, the
 * last one in the low bits of word 0, so that the depth-first enumeration emits the rows in ascending
 * key order */
static void lay_out_fields(mpt_space *s) {
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

/* free parameters: a mixed-radix suffix, the last one fastest (fstride, q); 0 or MPT_ERR_VALUE (err set)
 * when it passes 2^63 */
static int lay_out_suffix(mpt_space *s, mpt_error *err) {
  double q = 1;
  int64_t st = 1;
  for (int k = s->n_free - 1; k >= 0; k--) {
    int x = s->freep[k];
    s->fstride[x] = st;
    q *= s->n_allowed[x] ? s->n_allowed[x] : 1;
    if (q > 9.0e18)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s: the search space is too large (over 2^63 valid configurations)",
                           s->prob->path);
    st *= s->n_allowed[x] ? s->n_allowed[x] : 1;
  }
  s->q = st;
  return 0;
}

/* enumerate_rows with its failures told in err (stopped, too many rows, over 2^63 configurations);
 * MPT_ERR_NOMEM without a message */
static int enumerate_valid_set(builder *b, mpt_error *err) {
  mpt_space *s = b->s;
  const char *path = b->p->path;
  int rc = enumerate_rows(b);
  if (rc == BUILD_STOPPED) return mpt_error_set(err, MPT_ERR_STATE, "%s: building the search space was stopped", path);
  if (rc == MPT_ERR_VALUE)
    return mpt_error_set(err, MPT_ERR_VALUE,
                         "%s: more than %lld valid combinations of the constrained parameters; the space is too "
                         "large to enumerate (raise the limit with MPT_SPACE_MAX_ROWS)",
                         path, (long long)mpt_space__max_rows(s->words));
  if (rc) return rc;
  if ((double)s->n_rows * (double)s->q > 9.0e18)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: the search space is too large (over 2^63 valid configurations)",
                         path);
  return 0;
}

/* the enumeration emits ascending keys; sorts the rows only if that ever fails to hold. 0 or MPT_ERR_NOMEM */
static int sort_rows(mpt_space *s) {
  int sorted = 1;
  if (s->words == 1) {
    for (int64_t r = 1; r < s->n_rows && sorted; r++) sorted = s->rows[r - 1] < s->rows[r];
  } else {
    for (int64_t r = 1; r < s->n_rows && sorted; r++)
      sorted = cmp_rows(s->rows + (size_t)(r - 1) * (size_t)s->words, s->rows + (size_t)r * (size_t)s->words,
                        &s->words) < 0;
  }
  if (sorted) return 0;
  if (s->words == 1) {
    int bits = 0;
    for (int k = 0; k < s->n_con; k++) bits += bits_for(s->nv[s->con[k]]);
    return radix_sort(s->rows, s->n_rows, bits);
  }
  qsort_r(s->rows, (size_t)s->n_rows, sizeof(uint64_t) * (size_t)s->words, cmp_rows, &s->words);
  return 0;
}

/* present[p][v]: value v of p occurs in a valid configuration (free parameters: every allowed value) */
static void mark_present_values(mpt_space *s) {
  int W = s->words;
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
}

/* the id of the problem's Default configuration (-1 when it has none or it is not valid); 0 or
 * MPT_ERR_NOMEM */
static int find_default(mpt_space *s) {
  int d = s->dims;
  int *di = malloc(sizeof(int) * (size_t)d);
  if (!di) return MPT_ERR_NOMEM;
  int ok = 1;
  for (int i = 0; i < d; i++) {
    di[i] = s->prob->params[i].default_index;
    if (di[i] < 0) ok = 0;
  }
  s->default_id = ok ? mpt_space_lookup(s, di) : -1;
  free(di);
  return 0;
}

/* a non-empty valid set sorted and indexed, its present values marked, its default found; 0 or
 * MPT_ERR_NOMEM */
static int index_valid_set(mpt_space *s) {
  int rc = sort_rows(s);
  if (!rc) rc = mpt_space__index_rows(s);
  if (rc) return rc;
  mark_present_values(s);
  return find_default(s);
}

/* the statistics, the first run-time error of a condition handed to the space */
static void record_stats(builder *b) {
  mpt_space *s = b->s;
  s->eval_warning = b->first_error;
  b->first_error = NULL;
  s->st.valid = s->size;
  double cart = 1;
  for (int i = 0; i < s->dims; i++) cart *= s->nv[i];
  s->st.cartesian = cart;
  s->st.eval_errors = b->eval_errors;
  int64_t bytes = (int64_t)sizeof *s + s->n_rows * s->words * 8 + (s->table ? (int64_t)(s->tmask + 1) * 4 : 0);
  for (int i = 0; i < s->dims; i++) bytes += (int64_t)s->nv[i] * (4 + 4 + 1) + 64;
  s->st.bytes = bytes;
}

static void builder_free(builder *b) {
  free(b->multi);
  free(b->vars);
  free(b->curpos);
  mpt_cond_list_free(&b->cl);
  free(b->first_error);
}

int mpt_space_build(const mpt_problem *p, mpt_space **out, mpt_error *err) {
  return mpt_space_build_watched(p, NULL, out, err);
}

int mpt_space_build_watched(const mpt_problem *p, const mpt_watch *watch, mpt_space **out, mpt_error *err) {
  double t0 = mpt_clock_mono_s();
  *out = NULL;
  mpt_space *s = calloc(1, sizeof *s);
  if (!s) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  builder b = {.s = s, .p = p, .watch = watch && watch->fn ? watch : NULL};
  int rc = mpt_cond_list_split(p, &b.cl);
  if (rc) {
    mpt_cond_list_free(&b.cl);
    free(s);
    return mpt_error_set(err, rc, "%s: out of memory", p->path);
  }
  int empty = 0;
  rc = alloc_tables(&b);
  if (!rc) {
    check_constant_conditions(&b, &empty);
    rc = filter_values(&b, &empty);
  }
  if (!rc) rc = split_constrained(&b);
  if (!rc) rc = order_enumeration(&b);
  if (!rc) {
    lay_out_fields(s);
    rc = lay_out_suffix(s, err);
  }
  if (!rc && !empty) rc = enumerate_valid_set(&b, err); /* else n_rows stays 0 */
  if (!rc) s->size = s->n_rows * s->q;
  if (!rc && s->n_rows > 0) rc = index_valid_set(s);
  if (!rc) rc = mpt_space__prepare_encoding(s);
  if (rc) {
    builder_free(&b);
    mpt_space_free(s);
    if (rc == MPT_ERR_NOMEM) return mpt_error_set(err, rc, "%s: out of memory building the search space", p->path);
    return rc;
  }
  record_stats(&b);
  builder_free(&b);
  s->st.seconds = mpt_clock_mono_s() - t0;
  *out = s;
  return 0;
}
