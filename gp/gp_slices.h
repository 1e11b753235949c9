/* gp/gp_slices.h: a GP whose candidates are sliced over the ranks of a communicator (the model ranks: rank 0,
 * which drives, and the ranks that serve it). Each rank holds a GP (gp/gp.h) over its contiguous slice of
 * the candidates, so its part of the observations x candidates matrix; the observations (points, outputs,
 * hyperparameters) are broadcast from rank 0 and replicated, small. On the slices: the pool of the best
 * candidates by expected improvement (gp/gp_ei_pool.h), merged on rank 0, and the columns of a batch's pool
 * (or of any candidates rank 0 names) gathered to rank 0; one candidate's posterior; the sum of
 * the posterior variances; and above the crossover (gp/gp_dist.h) the log marginal likelihood with ScaLAPACK
 * over all of them. No rank holds the whole matrix.
 *
 * Rank 0 calls the functions below; every other rank of the communicator sits in mpt_gp_slices_serve until
 * rank 0 calls mpt_gp_slices_quit. Rank 0 mirrors a GP of its own that holds the observations (any number of
 * candidates, 0 is enough) with mpt_gp_slices_sync: the slices then replay what happened to it (observations
 * added or truncated, outputs replaced, hyperparameters set), so their posteriors equal that GP's with the
 * candidates (up to the rounding of the float panels: the same code over other blocks of candidates). */
#ifndef MPT_GP_SLICES_H
#define MPT_GP_SLICES_H
#include <mpi.h>
#include <stdint.h>
#include "gp/gp.h"
#include "gp/gp_ei_pool.h"

typedef struct mpt_gp_slices mpt_gp_slices;

/* Rank 0: n_cand candidates (rows from fill, as mpt_gp_create_from) sliced over comm's ranks, each slice
 * sent to its rank; collective with the servers. */
int mpt_gp_slices_create(MPI_Comm comm, const mpt_gp_config *cfg, int dim, int64_t n_cand, mpt_gp_cand_fn fill,
                         void *ctx, mpt_gp_slices **out, mpt_error *err);
/* The same with slices of unequal sizes: rank r holds a share of the candidates proportional to shares[r] (comm
 * size values, each > 0; NULL: equal slices), e.g. a smaller slice for rank 0, which also does the ask's own work */
int mpt_gp_slices_create_shares(MPI_Comm comm, const mpt_gp_config *cfg, int dim, int64_t n_cand, const double *shares,
                                mpt_gp_cand_fn fill, void *ctx, mpt_gp_slices **out, mpt_error *err);
/* Rank 0: frees every rank's slice (the servers keep serving) */
void mpt_gp_slices_free(mpt_gp_slices *sl);
/* Ranks other than 0: serves rank 0's calls until mpt_gp_slices_quit; 0, or <0 when the communicator fails */
int mpt_gp_slices_serve(MPI_Comm comm, mpt_error *err);
/* Rank 0: ends every server's mpt_gp_slices_serve */
void mpt_gp_slices_quit(MPI_Comm comm);

/* Rank 0: the slices take gp's observations, outputs and hyperparameters */
int mpt_gp_slices_sync(mpt_gp_slices *sl, const mpt_gp *gp, mpt_error *err);
/* Rank 0: the best P candidates by EI (fb, xi as mpt_gp_ei_pool) among those with skip_a[c] == 0 and
 * skip_b[c] == 0 (either may be NULL), merged from every slice into pool (P items), sorted; *n_pool items,
 * *n_free the candidates not skipped. */
int mpt_gp_slices_pool(mpt_gp_slices *sl, const uint8_t *skip_a, const uint8_t *skip_b, double fb, double xi,
                       int P, mpt_gp_pool_item *pool, int *n_pool, int64_t *n_free, mpt_error *err);
/* Rank 0: the pool of a batch (gp/gp_slices_batch.c): the best P candidates by log EI alone
 * (mpt_gp_log_ei_pool's order, strategies/bo/bo_pool.c's), skips as above, merged into pool (P items) */
int mpt_gp_slices_batch_pool(mpt_gp_slices *sl, const uint8_t *skip_a, const uint8_t *skip_b, double fb, double xi,
                             int P, mpt_gp_pool_item *pool, int *n_pool, mpt_error *err);
/* Rank 0, right after a pool command that gave pool (n items), the slices unchanged since: each member's
 * column of V into V (n x n_obs floats, in the pool's order) and its A, B, var into abv (n x 3), from the
 * slice that holds it (gp/gp_pool.h, mpt_gp_pool_load_columns, takes them) */
int mpt_gp_slices_columns(mpt_gp_slices *sl, const mpt_gp_pool_item *pool, int n, float *V, double *abv,
                          mpt_error *err);
/* Rank 0: the same for any n candidates ids[0..n) (global ids, in any slices; the evaluations pending from
 * earlier asks): their columns of V into V (n x n_obs floats) and A, B, var into abv (n x 3), in ids' order,
 * as the slices hold them since the last sync (mpt_gp_pool_plan_columns takes them) */
int mpt_gp_slices_cand_columns(mpt_gp_slices *sl, const int64_t *ids, int n, float *V, double *abv, mpt_error *err);
/* Rank 0: candidate c's posterior mean and sd (mpt_gp_predict_block's) */
int mpt_gp_slices_predict(mpt_gp_slices *sl, int64_t c, double *mean, double *sd, mpt_error *err);
/* Rank 0: mpt_gp_variance_sum over every slice (skip as in mpt_gp_slices_pool, the sum of the slices' sums) */
int mpt_gp_slices_variance_sum(mpt_gp_slices *sl, const uint8_t *skip_a, const uint8_t *skip_b, double *sum,
                               int64_t *count, mpt_error *err);
/* Rank 0: the log marginal likelihood of the synced observations under the given hyperparameters, with
 * ScaLAPACK over every rank (mpt_gp_lml_fn's contract: > 0 when below the crossover, the serial path's);
 * mpt_gp_slices_sync's gp gets it as its backend with mpt_gp_set_lml_backend(gp, mpt_gp_slices_lml, sl). */
int mpt_gp_slices_lml(void *sl, const mpt_gp *gp, const double *ls, double variance, double noise, double *lml,
                      mpt_error *err);
/* Rank 0: the bytes of each rank's GP (bytes: comm size values), and each rank's peak RSS in KiB (rss) */
int mpt_gp_slices_memory(mpt_gp_slices *sl, int64_t *bytes, int64_t *rss, mpt_error *err);

/* The critical path of the commands (gp/gp_slices_path.c). In every command each rank measures its own compute:
 * its thread CPU time outside the MPI calls; the command's cost is the largest of them (one MPI_MAX reduction at
 * its end). Summed, with rank 0's own work between the commands, that is what the work would take on a machine
 * with a core per rank and no contention for memory bandwidth, measurable where ranks share cores: it counts
 * neither waiting for a core nor MPICH's busy polling. Inside the distributed log marginal likelihood
 * (ScaLAPACK), the library's own messages count as compute. Totals on rank 0 since the slices' creation: */
typedef struct mpt_gp_slices_path {
  int64_t steps;   /* commands measured */
  double inside_s; /* rank 0's thread CPU time inside them (its compute and its waits in MPI calls) */
  double rank0_s;  /* rank 0's compute inside them */
  double path_s;   /* the sum over the commands of the largest compute of any rank */
} mpt_gp_slices_path;
void mpt_gp_slices_path_get(const mpt_gp_slices *sl, mpt_gp_slices_path *out);
/* Rank 0: its thread CPU time with the time inside the commands replaced by their path (a clock: the difference
 * of two readings is the critical path of what rank 0 did in between) */
double mpt_gp_slices_path_clock(const mpt_gp_slices *sl);

#endif
