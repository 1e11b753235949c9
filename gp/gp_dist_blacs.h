/* gp/gp_dist_blacs.h: the BLACS and ScaLAPACK routines gp/gp_dist*.c call (Debian's libscalapack-mpich
 * ships no C header: the Fortran routines take every argument by reference and carry a trailing
 * underscore), and the distributed matrix they share. Private to gp/gp_dist*.c. */
#ifndef MPT_GP_DIST_BLACS_H
#define MPT_GP_DIST_BLACS_H
#include <mpi.h>

int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja, const int *desca, int *info);
void pdpotri_(const char *uplo, const int *n, double *a, const int *ia, const int *ja, const int *desca, int *info);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *ia, const int *ja,
              const int *desca, double *b, const int *ib, const int *jb, const int *descb, int *info);
void pdtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca, double *b,
             const int *ib, const int *jb, const int *descb);

/* the covariance, block-cyclic (column-major local blocks, leading dimension lld) */
struct mpt_gp_dist {
  MPI_Comm comm;
  int handle, ctxt;        /* the BLACS system handle of comm, the grid's context */
  int nprow, npcol, myrow, mycol;
  int n, nb;
  int mloc, nloc, lld;     /* local rows and columns */
  int desc[9];
  double *A;               /* the covariance, then its lower Cholesky factor */
  int factored;
  double noise_eff;        /* the diagonal's noise (jitter and retries included) of the last factor */
};

/* the global row / column of local row li / column lj */
int mpt_gp_dist_row(const struct mpt_gp_dist *d, int li);
int mpt_gp_dist_col(const struct mpt_gp_dist *d, int lj);
/* squared scaled distance, summed as gp/gp_factor.c's */
double mpt_gp_dist_dist2(const double *a, const double *b, const double *inv_ls, int dim);

#endif
