/* spaces/space.c: the search space's own data (space_internal.h): the hash index of the packed rows and
 * its probe, the O(1) accessors id <-> configuration, the direct check of a configuration, the numeric
 * encodings for models, and freeing. It needs no other space file: the builder (space_build.c), the box
 * query (space_box.c), neighbours (space_nb.c) and sampling (space_sample*.c, space_nearest.c) stand on it. */
#include "spaces/space_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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

int mpt_space__index_rows(mpt_space *s) {
  uint64_t cap = 16;
  int64_t n = s->n_rows;
  while (cap * 7 < 10 * (uint64_t)n) cap *= 2; /* load factor <= 0.7 */
  uint32_t *table = malloc(sizeof(uint32_t) * cap);
  if (!table) return MPT_ERR_NOMEM;
  memset(table, 0xff, sizeof(uint32_t) * cap);
  uint64_t mask = cap - 1;
  int tagged = n < (1 << 24) - 1; /* row indices fit 24 bits; a slot is never all ones */
  const uint64_t *rows = s->rows;
  int W = s->words;
  enum { PF = 16 }; /* prefetch the slots of the rows inserted PF steps later; hashes kept in a ring */
  uint64_t ring[PF];
  for (int64_t r = 0; r < PF && r < n; r++) {
    ring[r] = hash_key(rows + (size_t)r * (size_t)W, W);
    __builtin_prefetch(&table[ring[r] & mask], 1);
  }
  for (int64_t r = 0; r < n; r++) {
    uint64_t hk = ring[r % PF], h = hk & mask;
    if (r + PF < n) {
      uint64_t nx = hash_key(rows + (size_t)(r + PF) * (size_t)W, W);
      ring[r % PF] = nx;
      __builtin_prefetch(&table[nx & mask], 1);
    }
    while (table[h] != MPT_SPACE_EMPTY_SLOT) h = (h + 1) & mask;
    table[h] = tagged ? (uint32_t)r | ((uint32_t)(hk >> 56) << 24) : (uint32_t)r;
  }
  s->table = table;
  s->tmask = mask;
  s->tagged = tagged;
  return 0;
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

/* ---- encodings ---- */

int mpt_space__prepare_encoding(mpt_space *s) {
  int d = s->dims;
  s->emin = malloc(sizeof(double) * (size_t)d);
  s->emax = malloc(sizeof(double) * (size_t)d);
  s->lmin = malloc(sizeof(double) * (size_t)d);
  s->lmax = malloc(sizeof(double) * (size_t)d);
  s->logok = malloc((size_t)d);
  if (!s->emin || !s->emax || !s->lmin || !s->lmax || !s->logok) return MPT_ERR_NOMEM;
  for (int p = 0; p < d; p++) {
    const double *num = s->prob->params[p].numeric;
    double lo = INFINITY, hi = -INFINITY;
    int ok = 1;
    for (int v = 0; v < s->nv[p]; v++) {
      if (num[v] < lo) lo = num[v];
      if (num[v] > hi) hi = num[v];
      if (!(num[v] > 0) || s->prob->params[p].type == MPT_P_STRING) ok = 0;
    }
    s->emin[p] = lo;
    s->emax[p] = hi;
    s->logok[p] = (uint8_t)ok;
    s->lmin[p] = ok ? log2(lo) : 0;
    s->lmax[p] = ok ? log2(hi) : 0;
  }
  return 0;
}

void mpt_space_encode_idx(const mpt_space *s, const int *idx, mpt_encoding enc, double *x) {
  for (int p = 0; p < s->dims; p++) {
    int v = idx[p];
    if (v < 0) v = 0;
    if (v >= s->nv[p]) v = s->nv[p] - 1;
    if (enc == MPT_ENC_INDEX) {
      x[p] = s->nv[p] > 1 ? (double)v / (double)(s->nv[p] - 1) : 0.0;
      continue;
    }
    double num = s->prob->params[p].numeric[v];
    if (enc == MPT_ENC_LOG2 && s->logok[p]) {
      double r = s->lmax[p] - s->lmin[p];
      x[p] = r > 0 ? (log2(num) - s->lmin[p]) / r : 0.0;
    } else {
      double r = s->emax[p] - s->emin[p];
      x[p] = r > 0 ? (num - s->emin[p]) / r : 0.0;
    }
  }
}

void mpt_space_encode(const mpt_space *s, int64_t id, mpt_encoding enc, double *x) {
  int d = s->dims;
  int cfg[d];
  mpt_space_config(s, id, cfg);
  mpt_space_encode_idx(s, cfg, enc, x);
}
