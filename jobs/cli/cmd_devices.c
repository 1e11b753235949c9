/* jobs/cli/cmd_devices.c: `mptune devices [FILE.json [--evaluator NAME] [--simulate FILE]]`: prints the
 * device table a tuning run would print, without tuning. Every worker rank (1..N-1, or rank 0 alone
 * with -n 1) takes its node-local rank among the workers; without a problem it reports the GPU that
 * local rank picks (after *_VISIBLE_DEVICES) among the GPUs of one runtime, as a run binds: NVIDIA's
 * when the node has any (the cuda evaluator's), else AMD's (hip), else the CPU; with a problem it
 * opens the evaluator exactly as `mptune tune` does (mpt_job_open_evaluator) and reports what it is bound to. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/evaluator.h"
#include "evaluators/gpu/gpu_devices.h"
#include "jobs/cli/commands.h"
#include "jobs/job.h"
#include "mpi/device.h"
#include "mpi/wire.h"
#include "spaces/space.h"
#include "spaces/t1.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpiexec.mpich -n N mptune devices [FILE.json [--evaluator NAME] [--simulate FILE]]\n"
          "Prints what each worker rank is bound to (host, vendor, device, architecture, memory).\n"
          "Without FILE.json: the GPU each worker's node-local rank picks among the NVIDIA GPUs (as\n"
          "--evaluator cuda binds), else among the AMD GPUs (--evaluator hip), else the CPU.\n"
          "With FILE.json: the evaluator (default 'sim' with --simulate, else 'cpu') is opened as for a run.\n");
}

#define MAX_GPUS 64

int mpt_cmd_devices(int argc, char **argv) {
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int is_worker = size == 1 || rank > 0;
  const char *problem = NULL, *evaluator = NULL, *simulate = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      if (rank == 0) usage(stdout);
      return 0;
    }
    if (o[0] != '-') {
      if (problem) rc = mpt_error_set(&err, MPT_ERR_VALUE, "unexpected argument '%s'", o);
      problem = o;
    } else if (strcmp(o, "--evaluator") == 0 || strcmp(o, "--simulate") == 0) {
      const char **dst = strcmp(o, "--evaluator") == 0 ? &evaluator : &simulate;
      if (!(*dst = mpt_cmd_value(argc, argv, &i, &err))) rc = err.code;
    } else rc = mpt_error_set(&err, MPT_ERR_NAME, "unknown option '%s' (see mptune devices --help)", o);
  }
  if (rc == 0 && (evaluator || simulate) && !problem)
    rc = mpt_error_set(&err, MPT_ERR_VALUE, "--evaluator/--simulate need the T1 problem file (mptune devices FILE.json ...)");
  if (!evaluator) evaluator = simulate ? "sim" : "cpu";

  int local_rank = -1, local_count = 0;
  if (mpt_device_local_rank(comm, is_worker, &local_rank, &local_count) != 0 && rc == 0)
    rc = mpt_error_set(&err, MPT_ERR_INTERNAL, "cannot determine the node-local rank");

  mpt_problem *prob = NULL;
  mpt_space *space = NULL;
  mpt_evaluator *ev = NULL;
  mpt_device_info mine;
  memset(&mine, 0, sizeof mine);
  mine.rank = -1;
  char why[512] = "";
  if (rc == 0 && is_worker) {
    if (problem) {
      rc = mpt_cmd_load_problem(problem, &prob, &err);
      if (rc == 0) rc = mpt_space_build(prob, &space, &err);
      if (rc == 0) {
        mpt_job_options o = {.evaluator = evaluator, .simulate = simulate};
        rc = mpt_job_open_evaluator(&o, prob, space, rank, local_rank, (mpt_watch){NULL, NULL}, &ev, &err);
      }
      if (rc == 0) mpt_device_describe(ev, rank, &mine);
    } else {
      mpt_gpu_desc gpus[MAX_GPUS];
      int n = mpt_gpu_list_all(gpus, MAX_GPUS, why, sizeof why);
      if (n > MAX_GPUS) n = MAX_GPUS;
      int pick = mpt_gpu_bind(gpus, n, local_rank);
      if (pick >= 0) {
        mpt_device_cpu(&mine, rank, gpus[pick].api); /* host */
        mine.index = gpus[pick].index;
        snprintf(mine.vendor, sizeof mine.vendor, "%s", gpus[pick].vendor);
        snprintf(mine.name, sizeof mine.name, "%s", gpus[pick].name);
        snprintf(mine.arch, sizeof mine.arch, "%s", gpus[pick].arch);
        mine.memory_gib = gpus[pick].memory_gib;
      } else {
        mpt_device_cpu(&mine, rank, "cpu");
      }
    }
  }
  int n_other = 0; /* rank 0's node: GPUs of the runtime a plain `devices` does not bind over */
  const char *other = NULL;
  if (rc == 0 && !problem && rank == 0) { /* rank 0 explains a GPU-less node and names the other runtime */
    mpt_gpu_desc *g = calloc(MAX_GPUS, sizeof *g);
    int n = g ? mpt_gpu_list_all(g, MAX_GPUS, why, sizeof why) : 0;
    for (int i = 0; i < n && i < MAX_GPUS; i++)
      if (strcmp(g[i].api, g[0].api) != 0) n_other++, other = g[i].api;
    free(g);
  }
  rc = mpt_wire_gonogo(comm, rc, &err);
  int exit_code = 1;
  if (rc < 0) {
    if (rank == 0) fprintf(stderr, "mptune devices: %s\n", err.msg);
  } else {
    mpt_device_info *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    mpt_wire_gather_devices(comm, &mine, all ? all : &mine);
    if (rank == 0) {
      int first = size == 1 ? 0 : 1;
      char vis[256];
      mpt_device_visible(vis, sizeof vis);
      printf("devices: %d worker%s (rank 0 %s)%s%s\n", size - first, size - first == 1 ? "" : "s",
             size == 1 ? "coordinates and evaluates" : "coordinates", vis[0] ? "; " : "", vis);
      if (all) mpt_device_table_print(stdout, all + first, size - first);
      if (n_other > 0)
        printf("also %d %s GPU%s on rank 0's node: `mptune devices FILE.json --evaluator %s` shows their binding\n",
               n_other, strcmp(other, "hip") == 0 ? "AMD" : "NVIDIA", n_other == 1 ? "" : "s", other);
      if (!problem && why[0] && (!all || strcmp(all[first].vendor, "CPU") == 0)) {
        /* rank 0's view of why there is no GPU (rank 0 itself is a worker only with -n 1) */
        for (char *line = strtok(why, "\n"); line; line = strtok(NULL, "\n"))
          if (line[0]) printf("no GPU: %s\n", line);
      }
      fflush(stdout);
    }
    free(all);
    exit_code = 0;
  }
  if (ev) mpt_evaluator_close(ev);
  if (space) mpt_space_free(space);
  if (prob) mpt_problem_free(prob);
  return exit_code;
}
