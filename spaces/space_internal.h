/* spaces/space_internal.h: the layout of mpt_space shared by spaces/space*.c (private to spaces/).
 * Parameters split into "constrained" ones (read by a condition over two or more parameters) and "free"
 * ones. The valid set is n_rows packed rows (value indices of the constrained parameters, bit fields in
 * `words` uint64 words, sorted in file order) times the mixed-radix product of the free parameters'
 * allowed values: id = row * q + suffix. An open-addressing hash maps a packed row to its index.
 * The files, bottom up: space.c (the struct's accessors, the row index, encodings) and space_box.c (box
 * queries) need no other space file; space_build.c (T1 -> valid set), space_nb.c (neighbours),
 * space_sample.c, space_nearest.c and space_sample_valid.c (sampling) stand on them. */
#ifndef MPT_SPACE_INTERNAL_H
#define MPT_SPACE_INTERNAL_H
#include <stdint.h>
#include "spaces/space.h"

#define MPT_SPACE_EMPTY_SLOT UINT32_MAX

struct mpt_space {
  const mpt_problem *prob;
  int dims;
  int *nv;             /* values per parameter */
  int **allowed;       /* per parameter: value indices passing its single-parameter conditions, ascending */
  int *n_allowed;
  int **pos;           /* pos[p][v]: position of v in allowed[p], or -1 */
  uint8_t **present;   /* present[p][v]: value v of p occurs in at least one valid configuration */
  int *role;           /* >= 0: index in con[]; < 0: -(1 + index in freep[]) */
  int n_con, *con;     /* constrained parameters, file order */
  int n_free, *freep;  /* free parameters, file order */
  int words;           /* uint64 words per packed row (>= 1) */
  int *fword, *fshift; /* per parameter (constrained only): word and bit offset of its field */
  uint64_t *fmask;     /* per parameter: field mask (after shifting down) */
  int64_t *fstride;    /* per parameter (free only): stride of its allowed position in the suffix */
  uint64_t *rows;      /* n_rows * words */
  int64_t n_rows;
  int64_t q;           /* product of n_allowed over free parameters */
  uint32_t *table;     /* hash: row index or MPT_SPACE_EMPTY_SLOT */
  uint64_t tmask;
  int tagged;          /* slots hold a 24-bit row index and an 8-bit hash tag */
  int64_t size;
  int64_t default_id;
  mpt_space_stats st;
  double *emin, *emax;   /* per parameter: min/max numeric value (encodings) */
  double *lmin, *lmax;   /* per parameter: min/max log2 value, when every value is > 0 */
  uint8_t *logok;
  char *eval_warning;
};

/* space.c. Hash slot probe for a packed key; row index or -1 */
int64_t mpt_space__find_row(const mpt_space *s, const uint64_t *key);
/* space.c. Builds the hash index of the rows (s->rows, s->n_rows > 0, sorted): s->table, tmask, tagged;
 * 0 or MPT_ERR_NOMEM */
int mpt_space__index_rows(mpt_space *s);
/* space.c. Fills emin/emax/lmin/lmax/logok; 0 or MPT_ERR_NOMEM */
int mpt_space__prepare_encoding(mpt_space *s);

/* a single-word row shifted down by sh bits (0 for sh >= 64): its fields from bit sh up, which sort as
 * the rows do */
static inline uint64_t mpt_space__shr(uint64_t x, int sh) { return sh >= 64 ? 0 : x >> sh; }

/* A box: per parameter a list of candidate value indices (ascending, within range). */
typedef struct mpt_box {
  int *n;
  const int **v;
} mpt_box;
/* space_box.c. Visits every valid id whose value indices all lie in the box, in ascending id order, until visit()
 * returns nonzero. With count: *count receives the number of such ids, and the traversal goes on
 * (counting whole rows at once) after visit() asked to stop. 0 or MPT_ERR_NOMEM. */
int mpt_space__box(const mpt_space *s, const mpt_box *bx, int (*visit)(void *, int64_t), void *ctx,
                   int64_t *count);

/* space_nearest.c. Counts of each value among the valid configurations, added to cnt[off[d] + value]
 * for params[d], from the rows alone. */
void mpt_space__value_counts(const mpt_space *s, const int *params, int np, const int *off, int64_t *cnt);
/* The unused valid configuration (used[] per id) with most value indices of params[d] equal to tgt[d],
 * then least total index distance, ties by a reservoir draw from rng per tie in id order; -1 when every
 * one is used. One scan of the valid set. */
int64_t mpt_space__nearest_unused(const mpt_space *s, const int *params, int np, const int *tgt, const uint8_t *used,
                                  mpt_rng *rng);
/* The same for n targets (target j at tgt + j * tstride) picked in turn (j = 0, 1, ...), pick j with the
 * picks before it used (and no other id): one pruned pass per chunk of targets (the first at the batch's
 * creation, the next when its first pick comes; chunks bound the memory, which grows as the square of
 * the targets), then picks with exactly the scan's results and random draws. Batch: 0 or MPT_ERR_NOMEM
 * (a later chunk out of memory scans). mpt_space__nearest_set_chunk: the chunk's size in heap entries
 * (the sum of j + 1 over its targets), for tests; 0 restores the default. */
typedef struct mpt_nearest mpt_nearest;
int mpt_space__nearest_batch(const mpt_space *s, const int *params, int np, const int *tgt, int tstride, int64_t n,
                             mpt_nearest **out);
int64_t mpt_space__nearest_pick(mpt_nearest *nb, int64_t j, const uint8_t *used, mpt_rng *rng);
void mpt_space__nearest_free(mpt_nearest *nb);
void mpt_space__nearest_set_chunk(int64_t entries);

#endif
