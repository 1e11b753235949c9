/* jobs/cli/cmd_tune.c: `mptune tune` and `mptune collect` on the command line: their options parsed
 * (cmd_tune_args.c) into a job's (jobs/job.h: the distributed run itself, its log and its report), --help
 * (cmd_tune_help.c), the model ranks split off, and the job opened, run, reported and closed, its errors said on
 * rank 0. `collect` is a brute-force run over the whole valid set. */
#include <mpi.h>
#include <stdio.h>
#include "coordinator/signals.h"
#include "gp/gp_slices.h"
#include "jobs/cli/cmd_tune.h"
#include "jobs/cli/commands.h"
#include "jobs/job.h"
#include "mpi/wire.h"

/* --model-ranks K: the job's communicator (rank 0 and the workers) and the model's (rank 0 and the last K
 * ranks), split from MPI_COMM_WORLD on every rank; *serving: this rank is a model rank */
static int split_model_ranks(mpt_job_options *o, int *serving, mpt_error *err) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  *serving = 0;
  if (o->model_ranks <= 0) return 0;
  if (o->model_ranks >= size)
    return mpt_error_set(err, MPT_ERR_VALUE, "--model-ranks %d: needs more than %d ranks (rank 0 coordinates, the last %d "
                         "serve the model; mpiexec.mpich -n %d or more)", o->model_ranks, o->model_ranks, o->model_ranks,
                         o->model_ranks + 1);
  int model = rank >= size - o->model_ranks;
  MPI_Comm_split(MPI_COMM_WORLD, model, rank, &o->comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || model ? 0 : MPI_UNDEFINED, rank, &o->model_comm);
  *serving = model;
  return 0;
}

/* the job on rank 0 and the workers: opened, run, reported, closed; the exit status */
static int run_job(const char *cmd, mpt_job_options *o, int rc, mpt_error *err) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_job *job = NULL;
  if (rc < 0) rc = mpt_wire_gonogo(MPI_COMM_WORLD, rc, err); /* every rank read the same options: all stop */
  else rc = mpt_job_open(o, &job, err);
  if (rc < 0) {
    if (rank == 0) fprintf(stderr, "mptune %s: %s\n", cmd, err->msg);
    return rc == MPT_ERR_STOPPED ? 128 + mpt_signals_last() : 1; /* a signal stopped the set-up */
  }
  if (mpt_job_run(job, err) < 0) fprintf(stderr, "mptune %s: %s\n", cmd, err->msg); /* rank 0 only */
  if (mpt_job_report(job, err) < 0) fprintf(stderr, "mptune %s: %s\n", cmd, err->msg);
  int status = mpt_job_exit_status(job);
  mpt_job_close(job);
  return status;
}

static int run(int argc, char **argv, int collect) {
  const char *cmd = collect ? "collect" : "tune";
  int rank, serving = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_signals_install();
  mpt_error err;
  mpt_error_clear(&err);
  mpt_job_options o;
  int want_help;
  int rc = mpt_tune_parse_args(argc, argv, collect, &o, &want_help, &err);
  if (rc == 0 && want_help) return mpt_tune_help(argc, argv, collect, rank);
  if (rc == 0) rc = split_model_ranks(&o, &serving, &err);
  if (serving) { /* a model rank: serves rank 0 until it quits */
    rc = mpt_gp_slices_serve(o.model_comm, &err);
    if (rc < 0) fprintf(stderr, "mptune %s: model rank %d: %s\n", cmd, rank, err.msg);
    return rc < 0 ? 1 : 0;
  }
  int status = run_job(cmd, &o, rc, &err);
  if (rank == 0 && o.model_ranks > 0 && rc == 0) mpt_gp_slices_quit(o.model_comm); /* the model ranks are done */
  return status;
}

int mpt_cmd_tune(int argc, char **argv) { return run(argc, argv, 0); }
int mpt_cmd_collect(int argc, char **argv) { return run(argc, argv, 1); }
