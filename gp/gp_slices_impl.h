/* gp/gp_slices_impl.h: the sliced GP's state on each rank and its commands (private to gp/gp_slices*.c).
 * Rank 0 broadcasts a command header (op and its integer arguments); then every rank, rank 0 included,
 * runs the command's part (gp/gp_slices_ops.c) with the collectives it needs; each command ends with a
 * collective status, so a server's failure fails rank 0's call. */
#ifndef MPT_GP_SLICES_IMPL_H
#define MPT_GP_SLICES_IMPL_H
#include "gp/gp_slices.h"
#include "spaces/sys/clock.h"

enum { SL_QUIT = 1, SL_CREATE, SL_FREE, SL_SYNC, SL_POOL, SL_PREDICT, SL_VARSUM, SL_LML, SL_MEMORY, SL_COLUMNS, SL_CAND_COLUMNS };
#define SL_HDR 8

struct mpt_gp_slices {
  MPI_Comm comm;
  int rank, size;
  int dim;
  int64_t n_cand;
  int64_t *first;          /* size + 1: rank r holds candidates [first[r], first[r + 1]) */
  mpt_gp *gp;              /* this rank's slice */
  uint8_t *skip;           /* this slice's skip marks (scratch) */
  mpt_gp_pool_item *last;  /* this slice's pool of the last pool command, sorted (n_last items; room for cap_last) */
  int n_last, cap_last;
  /* rank 0: what the slices hold (mpt_gp_slices_sync compares the mirrored GP with it) */
  int n_s, cap_s;
  double *Xs, *ys;         /* cap_s x dim points, cap_s outputs */
  double *hyp;             /* dim + 2: lengthscales, variance, noise */
  uint8_t *skip_all;       /* n_cand: the combined marks scattered to the slices */
  /* the critical path (gp/gp_slices_path.c): this rank's compute in the current command, its last start */
  double work, work_t0;
  double step_t0;          /* rank 0: its thread CPU time at the current command's start */
  mpt_gp_slices_path path; /* rank 0: the totals */
};

/* this rank's compute in the current command: the thread CPU time between work_on and work_off (around the
 * command's computation, never around an MPI call) */
static inline void mpt_gp_slices_work_on(mpt_gp_slices *sl) { sl->work_t0 = mpt_clock_thread_cpu_s(); }
static inline void mpt_gp_slices_work_off(mpt_gp_slices *sl) { sl->work += mpt_clock_thread_cpu_s() - sl->work_t0; }
/* rank 0, before a command's header is broadcast (servers: their work is reset when the header arrives) */
void mpt_gp_slices_step_begin(mpt_gp_slices *sl);
/* every rank, at a command's end: the largest compute reduced to rank 0 and added to its totals (collective) */
void mpt_gp_slices_step_end(mpt_gp_slices *sl);

/* the slice bounds of n candidates over size ranks, by shares (size values > 0; NULL: equal) */
void mpt_gp_slices_bounds(int64_t n, int size, const double *shares, int64_t *first);
/* every rank: 0 when every rank's rc is 0, else an error on rank 0 naming what failed */
int mpt_gp_slices_status(mpt_gp_slices *sl, int rc, const char *what, mpt_error *err);

/* every rank's part of a command (h: the header rank 0 broadcast; rank 0 passes its arguments) */
int mpt_gp_slices_do_sync(mpt_gp_slices *sl, const int64_t *h, const double *Xn, const double *y, const double *hyp,
                          mpt_error *err);
int mpt_gp_slices_do_pool(mpt_gp_slices *sl, const int64_t *h, const uint8_t *a, const uint8_t *b, const double *fbxi,
                          mpt_gp_pool_item *pool, int *n_pool, int64_t *n_free, mpt_error *err);
int mpt_gp_slices_do_columns(mpt_gp_slices *sl, const mpt_gp_pool_item *pool, int n, float *V, double *abv,
                              mpt_error *err);
int mpt_gp_slices_do_cand_columns(mpt_gp_slices *sl, const int64_t *h, const int64_t *ids, float *V, double *abv,
                                  mpt_error *err);
int mpt_gp_slices_do_predict(mpt_gp_slices *sl, const int64_t *h, double *ms, mpt_error *err);
int mpt_gp_slices_do_varsum(mpt_gp_slices *sl, const uint8_t *a, const uint8_t *b, double *sum, int64_t *count,
                            mpt_error *err);
int mpt_gp_slices_do_lml(mpt_gp_slices *sl, const int64_t *h, const double *hyp, double *lml, mpt_error *err);
int mpt_gp_slices_do_memory(mpt_gp_slices *sl, int64_t *bytes, int64_t *rss, mpt_error *err);
/* rank 0: the combined skip marks scattered to every slice's sl->skip (collective) */
void mpt_gp_slices_scatter_skip(mpt_gp_slices *sl, const uint8_t *a, const uint8_t *b);

#endif
