/* gp/gp_slices.c: the sliced GP's life (gp/gp_slices.h): rank 0 creates the slices and sends each server the
 * rows of its candidates, the servers' loop that runs rank 0's commands, freeing and quitting, and the
 * collective status that ends every command. The commands themselves: gp/gp_slices_ops.c and
 * gp/gp_slices_lml.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_slices_impl.h"

#define SL_ROWS 4096 /* rows per message when the candidates are sent */
#define SL_TAG 7301

void mpt_gp_slices_bounds(int64_t n, int size, const double *shares, int64_t *first) {
  double total = 0, at = 0;
  for (int r = 0; shares && r < size; r++) total += shares[r];
  for (int r = 0; r <= size; r++) {
    first[r] = shares ? (r == size ? n : (int64_t)((double)n * (at / total))) : n * r / size;
    if (shares && r < size) at += shares[r];
  }
}

int mpt_gp_slices_status(mpt_gp_slices *sl, int rc, const char *what, mpt_error *err) {
  int bad = rc < 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, sl->comm);
  if (!any) return 0;
  if (sl->rank == 0 && rc >= 0) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: %s failed on a model rank", what);
  return rc < 0 ? rc : MPT_ERR_NOMEM;
}

/* the state common to every rank; NULL out of memory */
static mpt_gp_slices *slices_new(MPI_Comm comm, int dim, int64_t n_cand, const double *shares) {
  mpt_gp_slices *sl = calloc(1, sizeof *sl);
  if (!sl) return NULL;
  sl->comm = comm;
  MPI_Comm_rank(comm, &sl->rank);
  MPI_Comm_size(comm, &sl->size);
  sl->dim = dim;
  sl->n_cand = n_cand;
  sl->first = malloc(sizeof(int64_t) * (size_t)(sl->size + 1));
  sl->hyp = calloc((size_t)dim + 2, sizeof(double));
  if (!sl->first || !sl->hyp) { free(sl->first); free(sl->hyp); free(sl); return NULL; }
  mpt_gp_slices_bounds(n_cand, sl->size, shares, sl->first);
  int64_t mine = sl->first[sl->rank + 1] - sl->first[sl->rank];
  sl->skip = malloc((size_t)(mine > 0 ? mine : 1));
  if (sl->rank == 0) sl->skip_all = malloc((size_t)(n_cand > 0 ? n_cand : 1));
  if (!sl->skip || (sl->rank == 0 && !sl->skip_all)) { free(sl->skip); free(sl->first); free(sl->hyp); free(sl); return NULL; }
  return sl;
}

static void slices_drop(mpt_gp_slices *sl) {
  if (!sl) return;
  mpt_gp_free(sl->gp);
  free(sl->first); free(sl->skip); free(sl->skip_all); free(sl->last); free(sl->Xs); free(sl->ys); free(sl->hyp);
  free(sl);
}

/* rank 0's own slice: the caller's rows from the slice's first candidate on */
typedef struct offset_fill {
  mpt_gp_cand_fn fill;
  void *ctx;
  int64_t first;
} offset_fill;

static void fill_offset(void *ctx, int64_t first, int64_t n, double *rows) {
  offset_fill *o = ctx;
  o->fill(o->ctx, o->first + first, n, rows);
}

/* rank 0: every server's rows, in messages of SL_ROWS rows; 0 or -1 out of memory */
static int send_rows(mpt_gp_slices *sl, mpt_gp_cand_fn fill, void *ctx) {
  double *buf = malloc(sizeof(double) * SL_ROWS * (size_t)sl->dim);
  for (int r = 1; r < sl->size; r++)
    for (int64_t c = sl->first[r]; c < sl->first[r + 1]; c += SL_ROWS) {
      int64_t n = sl->first[r + 1] - c < SL_ROWS ? sl->first[r + 1] - c : SL_ROWS;
      mpt_gp_slices_work_on(sl);
      if (buf) fill(ctx, c, n, buf); /* out of memory: the server gets empty messages and fails */
      mpt_gp_slices_work_off(sl);
      MPI_Send(buf, buf ? (int)(n * sl->dim) : 0, MPI_DOUBLE, r, SL_TAG, sl->comm);
    }
  free(buf);
  return buf ? 0 : -1;
}

/* a server: its rows from rank 0 into X (its slice's rows; freed here), then its GP; 0 or an error */
static int recv_rows(mpt_gp_slices *sl, double *X, const mpt_gp_config *cfg, mpt_error *err) {
  int64_t n = sl->first[sl->rank + 1] - sl->first[sl->rank];
  int ok = 1;
  for (int64_t c = 0; c < n; c += SL_ROWS) {
    int64_t k = n - c < SL_ROWS ? n - c : SL_ROWS;
    MPI_Status st;
    MPI_Recv(X + (size_t)c * sl->dim, (int)(k * sl->dim), MPI_DOUBLE, 0, SL_TAG, sl->comm, &st);
    int got = 0;
    MPI_Get_count(&st, MPI_DOUBLE, &got);
    ok = ok && got == (int)(k * sl->dim); /* rank 0 sends empty messages when it has no memory for rows */
  }
  mpt_gp_slices_work_on(sl);
  int rc = ok ? mpt_gp_create(cfg, sl->dim, n, X, &sl->gp, err) : mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: no rows");
  mpt_gp_slices_work_off(sl);
  free(X);
  return rc;
}

/* every rank: 1 when ok is 1 on every rank of comm */
static int agree(MPI_Comm comm, int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  return all;
}

/* shares of the slices broadcast from rank 0 (size values) when h says there are: the caller's to free; NULL
 * when there are none (equal slices) or out of memory */
static double *bcast_shares(MPI_Comm comm, const int64_t *h, const double *mine) {
  int size;
  MPI_Comm_size(comm, &size);
  if (!h[3]) return NULL;
  double *b = malloc(sizeof(double) * (size_t)size);
  if (b && mine) memcpy(b, mine, sizeof(double) * (size_t)size);
  if (b) MPI_Bcast(b, size, MPI_DOUBLE, 0, comm);
  else /* out of memory: the broadcast still matched, NULL returned (the creation then fails on every rank) */
    for (int r = 0; r < size; r++) { double d = 1; MPI_Bcast(&d, 1, MPI_DOUBLE, 0, comm); }
  return b;
}

int mpt_gp_slices_create(MPI_Comm comm, const mpt_gp_config *cfg, int dim, int64_t n_cand, mpt_gp_cand_fn fill,
                         void *ctx, mpt_gp_slices **out, mpt_error *err) {
  return mpt_gp_slices_create_shares(comm, cfg, dim, n_cand, NULL, fill, ctx, out, err);
}

int mpt_gp_slices_create_shares(MPI_Comm comm, const mpt_gp_config *cfg, int dim, int64_t n_cand, const double *shares,
                                mpt_gp_cand_fn fill, void *ctx, mpt_gp_slices **out, mpt_error *err) {
  *out = NULL;
  int size, good = 1;
  MPI_Comm_size(comm, &size);
  for (int r = 0; shares && r < size; r++) good = good && shares[r] > 0 && isfinite(shares[r]);
  if (!good) return mpt_error_set(err, MPT_ERR_VALUE, "gp_slices: every rank's share of the candidates must be > 0");
  double t0 = mpt_clock_thread_cpu_s();
  int64_t h[SL_HDR] = {SL_CREATE, dim, n_cand, shares != NULL};
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, comm);
  MPI_Bcast((void *)cfg, (int)sizeof *cfg, MPI_BYTE, 0, comm);
  double *sh = bcast_shares(comm, h, shares);
  mpt_gp_slices *sl = (!h[3] || sh) ? slices_new(comm, dim, n_cand, sh) : NULL;
  free(sh);
  if (sl) sl->step_t0 = t0;
  if (!agree(comm, sl != NULL)) { /* no rows are sent then */
    slices_drop(sl);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory on a model rank");
  }
  int rc = send_rows(sl, fill, ctx) == 0 ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "gp_slices: out of memory");
  offset_fill of = {fill, ctx, sl->first[0]};
  mpt_gp_slices_work_on(sl);
  if (rc == 0) rc = mpt_gp_create_from(cfg, dim, sl->first[1], fill_offset, &of, &sl->gp, err);
  mpt_gp_slices_work_off(sl);
  if ((rc = mpt_gp_slices_status(sl, rc, "creating the candidates' slices", err)) != 0) {
    mpt_gp_slices_free(sl);
    return rc;
  }
  mpt_gp_slices_step_end(sl);
  *out = sl;
  return 0;
}

void mpt_gp_slices_free(mpt_gp_slices *sl) {
  if (!sl) return;
  int64_t h[SL_HDR] = {SL_FREE};
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, sl->comm);
  slices_drop(sl);
}

void mpt_gp_slices_quit(MPI_Comm comm) {
  int64_t h[SL_HDR] = {SL_QUIT};
  MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, comm);
}

/* a server: one command of rank 0 on its slice; 0 or an error (the command's status already said it) */
static int serve_one(mpt_gp_slices *sl, const int64_t *h, mpt_error *err) {
  double d[2];
  int64_t c;
  int n;
  switch (h[0]) {
  case SL_SYNC: return mpt_gp_slices_do_sync(sl, h, NULL, NULL, NULL, err);
  case SL_POOL: return mpt_gp_slices_do_pool(sl, h, NULL, NULL, NULL, NULL, &n, &c, err);
  case SL_PREDICT: return mpt_gp_slices_do_predict(sl, h, d, err);
  case SL_VARSUM: return mpt_gp_slices_do_varsum(sl, NULL, NULL, d, &c, err);
  case SL_LML: return mpt_gp_slices_do_lml(sl, h, NULL, d, err);
  case SL_MEMORY: return mpt_gp_slices_do_memory(sl, NULL, NULL, err);
  case SL_COLUMNS: return mpt_gp_slices_do_columns(sl, NULL, 0, NULL, NULL, err);
  case SL_CAND_COLUMNS: return mpt_gp_slices_do_cand_columns(sl, h, NULL, NULL, NULL, err);
  default: return mpt_error_set(err, MPT_ERR_INTERNAL, "gp_slices: unknown command %lld", (long long)h[0]);
  }
}

int mpt_gp_slices_serve(MPI_Comm comm, mpt_error *err) {
  mpt_gp_slices *sl = NULL;
  for (;;) {
    int64_t h[SL_HDR];
    if (MPI_Bcast(h, SL_HDR, MPI_INT64_T, 0, comm) != MPI_SUCCESS)
      return mpt_error_set(err, MPT_ERR_INTERNAL, "gp_slices: the model ranks' communicator failed");
    if (h[0] == SL_QUIT) break;
    if (h[0] == SL_CREATE || h[0] == SL_FREE) {
      slices_drop(sl);
      sl = NULL;
    }
    if (h[0] == SL_CREATE) {
      mpt_gp_config cfg;
      MPI_Bcast(&cfg, (int)sizeof cfg, MPI_BYTE, 0, comm);
      double *sh = bcast_shares(comm, h, NULL);
      sl = (!h[3] || sh) ? slices_new(comm, (int)h[1], h[2], sh) : NULL;
      free(sh);
      int64_t n = sl ? sl->first[sl->rank + 1] - sl->first[sl->rank] : 0;
      double *X = sl ? malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)h[1]) : NULL;
      if (!agree(comm, sl && X)) { free(X); slices_drop(sl); sl = NULL; continue; } /* rank 0 sends no rows */
      int rc = recv_rows(sl, X, &cfg, err);
      if (mpt_gp_slices_status(sl, rc, "creating the candidates' slices", err) != 0) { slices_drop(sl); sl = NULL; }
      else mpt_gp_slices_step_end(sl);
    } else if (h[0] != SL_FREE && sl) {
      sl->work = 0;
      serve_one(sl, h, err);
      mpt_gp_slices_step_end(sl);
    }
  }
  slices_drop(sl);
  return 0;
}
