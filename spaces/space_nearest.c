/* spaces/space_nearest.c: searches over the valid set for the lhs_valid family of designs
 * (space_sample_valid.c), using the rows x free-suffix layout (space_internal.h) so they need no scan per
 * design point: value counts of the valid configurations from the rows alone, and the unused valid
 * configuration nearest to a target: most matching value indices, then least total index distance, ties
 * uniformly at random by a reservoir draw per tie in id order. mpt_space__nearest_unused scans every id;
 * a nearest batch gets, in one pruned pass for a chunk of targets, the ids each target's scan can be
 * affected by, and its picks replay the scan over those ids only: the same picks and the same random
 * draws. Target j needs j + 1 keys and ids at least, so a design of n points needs n^2 / 2 of them: the
 * targets go in chunks of at most CHUNK_ENTRIES (each chunk one more pass, made when its first pick
 * comes), which bounds the memory whatever the design's size. */
#include <stdlib.h>
#include <string.h>

#include "spaces/space_internal.h"

/* the running best of a scan in id order: a higher key wins, an equal one replaces it with
 * probability 1/ties (key = matches * big - distance, big above any distance) */
typedef struct best {
  int64_t pick, ties, key;
} best;

static void offer(best *b, int64_t c, int64_t key, mpt_rng *rng) {
  if (b->pick < 0 || key > b->key) {
    b->key = key;
    b->pick = c;
    b->ties = 1;
  } else if (key == b->key && mpt_rng_below(rng, (uint64_t)++b->ties) == 0) {
    b->pick = c;
  }
}

/* one more than the largest total index distance over params */
static int64_t key_big(const mpt_space *sp, const int *params, int np) {
  int64_t big = 1;
  for (int d = 0; d < np; d++) big += mpt_space_n_values(sp, params[d]) - 1;
  return big;
}

void mpt_space__value_counts(const mpt_space *sp, const int *params, int np, const int *off, int64_t *cnt) {
  if (sp->size <= 0) return;
  for (int d = 0; d < np; d++) {
    int p = params[d];
    if (sp->role[p] < 0) { /* free: every allowed value in q / n_allowed suffixes of every row */
      for (int x = 0; x < sp->n_allowed[p]; x++) cnt[off[d] + sp->allowed[p][x]] += sp->n_rows * (sp->q / sp->n_allowed[p]);
      continue;
    }
    for (int64_t r = 0; r < sp->n_rows; r++)
      cnt[off[d] + ((sp->rows[(size_t)r * (size_t)sp->words + (size_t)sp->fword[p]] >> sp->fshift[p]) & sp->fmask[p])] += sp->q;
  }
}

int64_t mpt_space__nearest_unused(const mpt_space *sp, const int *params, int np, const int *tgt, const uint8_t *used,
                                  mpt_rng *rng) {
  int64_t N = mpt_space_size(sp), big = key_big(sp, params, np);
  best b = {-1, 0, 0};
  for (int64_t c = 0; c < N; c++) {
    if (used[c]) continue;
    int64_t key = 0;
    for (int d = 0; d < np; d++) {
      int df = mpt_space_value_index(sp, c, params[d]) - tgt[d];
      key += (df == 0 ? big : 0) - (df < 0 ? -df : df);
    }
    offer(&b, c, key, rng);
  }
  return b.pick;
}

/* Why the batch is exact: with j ids used (the picks before target j), the scan's running best before
 * id c is at least the (j+1)-th largest key of ALL ids before c, so an id below that is never a new best
 * nor a tie and draws nothing; and the id holding the running best is itself kept (its key was at least
 * the same threshold when it came). Keeping, per target j, every id whose key reaches the (j+1)-th largest
 * key before it (a min-heap of j+1 keys), the replay skipping the used ones makes the scan's draws. */
#define KEEP_MAX ((int64_t)1 << 18) /* ids kept per target; beyond: that target scans */
/* heap entries (the sum of j + 1 over a chunk's targets j): 1 MiB of heaps and some 3 MiB of kept ids and
 * keys per chunk, one pass for a design of up to 723 points (paper_hotspot, 4,000 points: 12 s and 49 MB
 * peak; in one pass 28 s and 900 MB, as the square of the design) */
#define CHUNK_ENTRIES ((int64_t)1 << 18)
static int64_t chunk_entries = CHUNK_ENTRIES;

void mpt_space__nearest_set_chunk(int64_t entries) { chunk_entries = entries > 0 ? entries : CHUNK_ENTRIES; }

struct mpt_nearest {
  const mpt_space *sp;
  const int *params, *tgt;
  int np, tstride;
  int64_t n, *len, *cap, **ids;
  int32_t **keys;
  uint8_t *scan; /* per target: replay impossible (kept too many ids, or no batch), scan instead */
  int64_t c0, c1; /* the chunk of targets whose ids are kept now */
};

typedef struct pass {
  mpt_nearest *nb;
  int64_t j0;         /* the chunk's first target: local target t is target j0 + t */
  int L;              /* levels: the row, then each free parameter by decreasing stride */
  int64_t *stride;    /* per level */
  int64_t *count;     /* per level: rows or allowed values */
  int32_t **tab;      /* per space parameter: nv x n keys of its values (NULL when not in params) */
  int32_t *maxrest;   /* (L + 1) x n: bound on the key of levels >= l */
  int32_t *kbuf;      /* (L + 1) x n: key so far per level */
  int32_t *abuf;      /* (L + 1) x n: targets still able to keep an id, per level */
  int32_t *heap;      /* local target t's min-heap of its j0 + t + 1 largest keys at hoff[t] */
  int64_t *hoff, *hn;
  const int32_t **rowtab; /* per constrained parameter in params: its table row for the current row */
  int *conp, nconp;
} pass;

/* local target t's threshold: the (j0 + t + 1)-th largest key kept so far */
static int64_t threshold(const pass *P, int64_t t) {
  return P->hn[t] < P->j0 + t + 1 ? INT64_MIN : P->heap[P->hoff[t]];
}

static void heap_add(pass *P, int64_t t, int32_t k) {
  int32_t *h = P->heap + P->hoff[t];
  int64_t n = P->hn[t], i;
  if (n < P->j0 + t + 1) { /* sift up */
    for (i = n++; i > 0 && h[(i - 1) / 2] > k; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = k;
    P->hn[t] = n;
    return;
  }
  if (k <= h[0]) return;
  for (i = 0;;) { /* replace the least, sift down */
    int64_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && h[c + 1] < h[c]) c++;
    if (h[c] >= k) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = k;
}

/* keeps id with key k for local target t */
static int keep(pass *P, int64_t t, int64_t id, int32_t k) {
  mpt_nearest *nb = P->nb;
  int64_t j = P->j0 + t;
  if (nb->len[j] == nb->cap[j]) {
    int64_t nc = nb->cap[j] ? 2 * nb->cap[j] : 64;
    if (nc > KEEP_MAX) { /* too many ties: this target scans */
      nb->scan[j] = 1;
      return 0;
    }
    int64_t *ni = realloc(nb->ids[j], sizeof(int64_t) * (size_t)nc);
    if (ni) nb->ids[j] = ni;
    int32_t *nk = realloc(nb->keys[j], sizeof(int32_t) * (size_t)nc);
    if (nk) nb->keys[j] = nk;
    if (!ni || !nk) return MPT_ERR_NOMEM;
    nb->cap[j] = nc;
  }
  nb->ids[j][nb->len[j]] = id;
  nb->keys[j][nb->len[j]++] = k;
  heap_add(P, t, k);
  return 0;
}

/* the ids under one node of level l (first id `base`), for the local targets act[0..na) with keys key[] */
static int descend(pass *P, int l, int64_t base, const int32_t *act, int na) {
  int64_t n = P->nb->c1 - P->j0;
  const int32_t *key = P->kbuf + (size_t)l * (size_t)n;
  int32_t *ck = P->kbuf + (size_t)(l + 1) * (size_t)n, *ca = P->abuf + (size_t)(l + 1) * (size_t)n;
  const int32_t *mr = P->maxrest + (size_t)(l + 1) * (size_t)n;
  const mpt_space *sp = P->nb->sp;
  int p = l > 0 ? sp->freep[l - 1] : -1;
  for (int64_t x = 0; x < P->count[l]; x++) {
    const int32_t *t = NULL;
    if (l == 0) {
      const uint64_t *row = sp->rows + (size_t)x * (size_t)sp->words;
      for (int k = 0; k < P->nconp; k++) {
        int q = P->conp[k];
        P->rowtab[k] = P->tab[q] + (size_t)((row[sp->fword[q]] >> sp->fshift[q]) & sp->fmask[q]) * (size_t)n;
      }
    } else if (P->tab[p]) {
      t = P->tab[p] + (size_t)sp->allowed[p][x] * (size_t)n;
    }
    int cn = 0;
    for (int i = 0; i < na; i++) {
      int32_t j = act[i];
      if (P->nb->scan[P->j0 + j]) continue;
      int32_t k = key[j];
      if (l == 0)
        for (int c = 0; c < P->nconp; c++) k += P->rowtab[c][j];
      else if (t)
        k += t[j];
      if ((int64_t)k + mr[j] < threshold(P, j)) continue;
      if (l + 1 == P->L) {
        int rc = keep(P, j, base + x * P->stride[l], k);
        if (rc) return rc;
      } else {
        ck[j] = k;
        ca[cn++] = j;
      }
    }
    if (cn > 0) {
      int rc = descend(P, l + 1, base + x * P->stride[l], ca, cn);
      if (rc) return rc;
    }
  }
  return 0;
}

/* the pass for the chunk of targets [nb->c0, nb->c1) */
static int batch_pass(mpt_nearest *nb) {
  const mpt_space *sp = nb->sp;
  int64_t j0 = nb->c0, n = nb->c1 - nb->c0, big = key_big(sp, nb->params, nb->np);
  if (sp->size <= 0) return 0;
  if (nb->np == 0 || (int64_t)nb->np * big > INT32_MAX || n > INT32_MAX) { /* keys need 64 bits */
    memset(nb->scan + j0, 1, (size_t)n);
    return 0;
  }
  pass P = {.nb = nb, .j0 = j0, .L = 1 + sp->n_free};
  int dims = sp->dims, rc = MPT_ERR_NOMEM;
  P.stride = malloc(sizeof(int64_t) * (size_t)P.L);
  P.count = malloc(sizeof(int64_t) * (size_t)P.L);
  P.tab = calloc((size_t)dims, sizeof(int32_t *));
  P.maxrest = calloc((size_t)(P.L + 1) * (size_t)n, sizeof(int32_t));
  P.kbuf = calloc((size_t)(P.L + 1) * (size_t)n, sizeof(int32_t));
  P.abuf = malloc(sizeof(int32_t) * (size_t)(P.L + 1) * (size_t)n);
  P.hoff = malloc(sizeof(int64_t) * (size_t)n);
  P.hn = calloc((size_t)n, sizeof(int64_t));
  int64_t entries = 0;
  for (int64_t t = 0; P.hoff && t < n; t++) P.hoff[t] = entries, entries += j0 + t + 1;
  P.heap = malloc(sizeof(int32_t) * (size_t)(entries > 0 ? entries : 1));
  P.rowtab = malloc(sizeof(int32_t *) * (size_t)(dims > 0 ? dims : 1));
  P.conp = malloc(sizeof(int) * (size_t)(dims > 0 ? dims : 1));
  if (!P.stride || !P.count || !P.tab || !P.maxrest || !P.kbuf || !P.abuf || !P.heap || !P.hoff || !P.hn || !P.rowtab ||
      !P.conp)
    goto out;
  /* key tables: value v of parameter p adds, per target, big when it is the target's value, less its distance */
  for (int d = 0; d < nb->np; d++) {
    int p = nb->params[d], nv = sp->nv[p];
    if (!P.tab[p]) {
      if (!(P.tab[p] = calloc((size_t)nv * (size_t)n, sizeof(int32_t)))) goto out;
      if (sp->role[p] >= 0) P.conp[P.nconp++] = p;
    }
    for (int64_t j = 0; j < n; j++) {
      int tv = nb->tgt[(size_t)(j0 + j) * (size_t)nb->tstride + (size_t)d];
      for (int v = 0; v < nv; v++) P.tab[p][(size_t)v * (size_t)n + (size_t)j] += (int32_t)((v == tv ? big : 0) - (v < tv ? tv - v : v - tv));
    }
  }
  /* levels, and the most each can add per target (over all values for a row's parameters) */
  P.stride[0] = sp->q;
  P.count[0] = sp->n_rows;
  for (int k = 0; k < P.nconp; k++)
    for (int64_t j = 0; j < n; j++) {
      int32_t m = INT32_MIN;
      for (int v = 0; v < sp->nv[P.conp[k]]; v++) {
        int32_t t = P.tab[P.conp[k]][(size_t)v * (size_t)n + (size_t)j];
        if (t > m) m = t;
      }
      P.maxrest[n + j] += m; /* level 0's bound, completed below */
    }
  for (int l = 1; l < P.L; l++) {
    int p = sp->freep[l - 1];
    P.stride[l] = sp->fstride[p];
    P.count[l] = sp->n_allowed[p];
    for (int64_t j = 0; P.tab[p] && j < n; j++) {
      int32_t m = INT32_MIN;
      for (int x = 0; x < sp->n_allowed[p]; x++) {
        int32_t t = P.tab[p][(size_t)sp->allowed[p][x] * (size_t)n + (size_t)j];
        if (t > m) m = t;
      }
      P.maxrest[(size_t)(l + 1) * (size_t)n + (size_t)j] = m;
    }
  }
  /* maxrest[l] = the bound of levels >= l (so far row l + 1 held level l's own bound) */
  for (int64_t j = 0; j < n; j++) {
    int32_t acc = 0;
    for (int l = P.L - 1; l >= 0; l--) {
      acc += P.maxrest[(size_t)(l + 1) * (size_t)n + (size_t)j];
      P.maxrest[(size_t)(l + 1) * (size_t)n + (size_t)j] = acc - P.maxrest[(size_t)(l + 1) * (size_t)n + (size_t)j];
      if (l == 0) P.maxrest[j] = acc;
    }
  }
  for (int64_t j = 0; j < n; j++) P.abuf[j] = (int32_t)j;
  rc = descend(&P, 0, 0, P.abuf, (int)n);
out:
  for (int p = 0; P.tab && p < dims; p++) free(P.tab[p]);
  free(P.stride); free(P.count); free(P.tab); free(P.maxrest); free(P.kbuf); free(P.abuf); free(P.heap); free(P.hoff); free(P.hn);
  free(P.rowtab); free(P.conp);
  return rc;
}

void mpt_space__nearest_free(mpt_nearest *nb) {
  if (!nb) return;
  for (int64_t j = 0; nb->ids && j < nb->n; j++) free(nb->ids[j]);
  for (int64_t j = 0; nb->keys && j < nb->n; j++) free(nb->keys[j]);
  free(nb->ids); free(nb->keys); free(nb->len); free(nb->cap); free(nb->scan);
  free(nb);
}

/* the ids kept for the chunk's targets released, then the chunk of targets from j0 on: as many as
 * CHUNK_ENTRIES heap entries allow, one at least */
static void next_chunk(mpt_nearest *nb, int64_t j0) {
  for (int64_t j = nb->c0; j < nb->c1; j++) {
    free(nb->ids[j]);
    free(nb->keys[j]);
    nb->ids[j] = NULL;
    nb->keys[j] = NULL;
    nb->len[j] = nb->cap[j] = 0;
  }
  int64_t j1 = j0, entries = 0;
  while (j1 < nb->n && (j1 == j0 || entries + j1 + 1 <= chunk_entries)) entries += ++j1;
  nb->c0 = j0;
  nb->c1 = j1;
}

int mpt_space__nearest_batch(const mpt_space *sp, const int *params, int np, const int *tgt, int tstride, int64_t n,
                             mpt_nearest **out) {
  mpt_nearest *nb = calloc(1, sizeof *nb);
  *out = NULL;
  if (!nb) return MPT_ERR_NOMEM;
  *nb = (mpt_nearest){.sp = sp, .params = params, .np = np, .tgt = tgt, .tstride = tstride, .n = n};
  size_t m = (size_t)(n > 0 ? n : 1);
  nb->len = calloc(m, sizeof(int64_t));
  nb->cap = calloc(m, sizeof(int64_t));
  nb->ids = calloc(m, sizeof(int64_t *));
  nb->keys = calloc(m, sizeof(int32_t *));
  nb->scan = calloc(m, 1);
  int rc = !nb->len || !nb->cap || !nb->ids || !nb->keys || !nb->scan ? MPT_ERR_NOMEM : 0;
  if (rc == 0 && n > 0) {
    next_chunk(nb, 0);
    rc = batch_pass(nb);
  }
  if (rc) {
    mpt_space__nearest_free(nb);
    return rc;
  }
  *out = nb;
  return 0;
}

int64_t mpt_space__nearest_pick(mpt_nearest *nb, int64_t j, const uint8_t *used, mpt_rng *rng) {
  if (j >= KEEP_MAX) { /* it would keep j + 1 ids at least, more than KEEP_MAX: no pass, the scan */
    nb->scan[j] = 1;
  } else if (j >= nb->c1 && !nb->scan[j]) { /* the next chunk's pass (out of memory: its targets scan) */
    next_chunk(nb, j);
    if (batch_pass(nb)) memset(nb->scan + nb->c0, 1, (size_t)(nb->c1 - nb->c0));
  }
  if (nb->scan[j] || j < nb->c0) /* an earlier chunk's ids are gone: the scan gives the same pick */
    return mpt_space__nearest_unused(nb->sp, nb->params, nb->np, nb->tgt + (size_t)j * (size_t)nb->tstride, used, rng);
  best b = {-1, 0, 0};
  for (int64_t i = 0; i < nb->len[j]; i++)
    if (!used[nb->ids[j][i]]) offer(&b, nb->ids[j][i], nb->keys[j][i], rng);
  return b.pick;
}
