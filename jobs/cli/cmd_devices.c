/* jobs/cli/cmd_devices.c: `mptune devices [FILE.json [--evaluator NAME] [--simulate FILE]]`: prints the
 * device table a tuning run would print, grouped by device class, without tuning. Every worker rank (1..N-1, or
 * rank 0 alone with -n 1) takes its node-local rank among the workers; without a problem it reports the GPU that
 * local rank picks (after *_VISIBLE_DEVICES) among the node's GPUs of both vendors, as `--evaluator auto` binds,
 * else the CPU; with a problem it opens the evaluator exactly as `mptune tune` does (mpt_job_open_evaluator) and
 * reports what it is bound to. Each worker's class is its device's key or the name MPTUNE_DEVICE_CLASS gives it
 * (mpi/device_class.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/evaluator.h"
#include "evaluators/gpu/gpu_devices.h"
#include "evaluators/gpu/gpu_probe.h"
#include "jobs/cli/commands.h"
#include "jobs/job.h"
#include "mpi/device.h"
#include "mpi/device_class.h"
#include "mpi/wire.h"
#include "spaces/space.h"
#include "spaces/t1.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpiexec.mpich -n N mptune devices [FILE.json [--evaluator NAME] [--simulate FILE]]\n"
          "Prints what each worker rank is bound to (host, vendor, device, architecture, memory).\n"
          "Without FILE.json: the GPU each worker's node-local rank picks among the node's GPUs, NVIDIA\n"
          "first, then AMD (as --evaluator auto binds), else the CPU. With FILE.json: the evaluator (default\n"
          "'sim' with --simulate, else 'auto') is opened as for a run.\n"
          "Workers are grouped by device class: vendor, device name and architecture, or the name the\n"
          "environment variable MPTUNE_DEVICE_CLASS of a worker's process gives it. threads/blk and\n"
          "shared/blk are the device's limits per block.\n");
}

#define MAX_GPUS 64

/* the command line: FILE.json, --evaluator and --simulate, or --help */
typedef struct devices_args {
  const char *problem, *evaluator, *simulate;
  int help; /* --help or -h: the usage, nothing else */
} devices_args;

/* what a worker opened to describe its device with a problem (NULL where not opened) */
typedef struct devices_opened {
  mpt_problem *prob;
  mpt_space *space;
  mpt_evaluator *ev;
} devices_opened;

/* reads the arguments into a (the evaluator defaulting to 'sim' with --simulate, else 'auto'); an unknown
 * option, a second FILE.json and --evaluator/--simulate without one are errors */
static int parse_devices_args(int argc, char **argv, devices_args *a, mpt_error *err) {
  memset(a, 0, sizeof *a);
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      a->help = 1;
      return 0;
    }
    if (o[0] != '-') {
      if (a->problem) rc = mpt_error_set(err, MPT_ERR_VALUE, "unexpected argument '%s'", o);
      a->problem = o;
    } else if (strcmp(o, "--evaluator") == 0 || strcmp(o, "--simulate") == 0) {
      const char **dst = strcmp(o, "--evaluator") == 0 ? &a->evaluator : &a->simulate;
      if (!(*dst = mpt_cmd_value(argc, argv, &i, err))) rc = err->code;
    } else rc = mpt_error_set(err, MPT_ERR_NAME, "unknown option '%s' (see mptune devices --help)", o);
  }
  if (rc == 0 && (a->evaluator || a->simulate) && !a->problem)
    rc = mpt_error_set(err, MPT_ERR_VALUE,
                       "--evaluator/--simulate need the T1 problem file (mptune devices FILE.json ...)");
  if (!a->evaluator) a->evaluator = a->simulate ? "sim" : "auto";
  return rc;
}

/* with a problem: the evaluator opened exactly as `mptune tune` opens it (mpt_job_open_evaluator), and what it is
 * bound to in mine */
static int describe_opened_evaluator(const devices_args *a, int rank, int local_rank, devices_opened *opened,
                                     mpt_device_info *mine, mpt_error *err) {
  int rc = mpt_cmd_load_problem(a->problem, &opened->prob, err);
  if (rc == 0) rc = mpt_space_build(opened->prob, &opened->space, err);
  if (rc == 0) {
    mpt_job_options o = {.evaluator = a->evaluator, .simulate = a->simulate};
    rc = mpt_job_open_evaluator(&o, opened->prob, opened->space, rank, local_rank, (mpt_watch){NULL, NULL},
                                &opened->ev, err);
  }
  if (rc == 0) mpt_device_describe(opened->ev, rank, mine);
  return rc;
}

/* without a problem: the GPU local_rank picks as `--evaluator auto` binds (mpt_gpu_bind_any: over the node's GPUs of
 * both vendors), else the CPU; its class assigned; why: the reasons for a runtime without GPUs */
static void describe_bound_gpu(int rank, int local_rank, mpt_device_info *mine, char *why, size_t why_cap) {
  mpt_gpu_desc gpus[MAX_GPUS];
  int n = mpt_gpu_list_all(gpus, MAX_GPUS, why, why_cap);
  if (n > MAX_GPUS) n = MAX_GPUS;
  int pick = mpt_gpu_bind_any(gpus, n, local_rank);
  if (pick < 0) {
    mpt_device_cpu(mine, rank, "cpu");
  } else {
    mpt_device_cpu(mine, rank, gpus[pick].api); /* host */
    mine->index = gpus[pick].index;
    snprintf(mine->vendor, sizeof mine->vendor, "%s", gpus[pick].vendor);
    snprintf(mine->name, sizeof mine->name, "%s", gpus[pick].name);
    snprintf(mine->arch, sizeof mine->arch, "%s", gpus[pick].arch);
    mine->memory_gib = gpus[pick].memory_gib;
    mine->max_threads_per_block = gpus[pick].max_threads_per_block;
    mine->max_shared_per_block = gpus[pick].max_shared_per_block;
  }
  mpt_device_class_assign(mine, NULL);
}

/* rank 0's reasons for a runtime without GPUs on its node, when rank 0 is no worker */
static void rank0_why(char *why, size_t why_cap) {
  mpt_gpu_desc *g = calloc(MAX_GPUS, sizeof *g);
  if (g) mpt_gpu_list_all(g, MAX_GPUS, why, why_cap);
  free(g);
}

/* rank 0: the header, the workers' devices grouped by class (all: every rank's; NULL when out of memory), and
 * without a problem, when the first worker has no GPU, rank 0's view of why (rank 0 itself is a worker only with
 * -n 1) */
static void print_devices(int size, const mpt_device_info *all, const devices_args *a, char *why) {
  int first = size == 1 ? 0 : 1;
  char vis[256];
  mpt_device_visible(vis, sizeof vis);
  int classes = all ? mpt_device_class_count(all + first, size - first) : 0;
  printf("devices: %d worker%s in %d device class%s (rank 0 %s)%s%s\n", size - first, size - first == 1 ? "" : "s",
         classes, classes == 1 ? "" : "es", size == 1 ? "coordinates and evaluates" : "coordinates", vis[0] ? "; " : "",
         vis);
  if (all) mpt_device_table_print_classes(stdout, all + first, size - first);
  if (!a->problem && why[0] && (!all || strcmp(all[first].vendor, "CPU") == 0))
    for (char *line = strtok(why, "\n"); line; line = strtok(NULL, "\n"))
      if (line[0]) printf("no GPU: %s\n", line);
  fflush(stdout);
}

/* every rank's device gathered on rank 0 (collective), printed there */
static void gather_and_print(MPI_Comm comm, int rank, int size, mpt_device_info *mine, const devices_args *a,
                             char *why) {
  mpt_device_info *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
  mpt_wire_gather_devices(comm, mine, all ? all : mine);
  if (rank == 0) print_devices(size, all, a, why);
  free(all);
}

int mpt_cmd_devices(int argc, char **argv) {
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int is_worker = size == 1 || rank > 0;
  mpt_error err;
  mpt_error_clear(&err);
  devices_args a;
  int rc = parse_devices_args(argc, argv, &a, &err);
  if (a.help) {
    if (rank == 0) usage(stdout);
    return 0;
  }
  int local_rank = -1, local_count = 0;
  if (mpt_device_local_rank(comm, is_worker, &local_rank, &local_count) != 0 && rc == 0)
    rc = mpt_error_set(&err, MPT_ERR_INTERNAL, "cannot determine the node-local rank");
  devices_opened opened = {NULL, NULL, NULL};
  mpt_device_info mine;
  memset(&mine, 0, sizeof mine);
  mine.rank = -1;
  char why[512] = "";
  if (rc == 0 && is_worker) {
    if (a.problem) rc = describe_opened_evaluator(&a, rank, local_rank, &opened, &mine, &err);
    else describe_bound_gpu(rank, local_rank, &mine, why, sizeof why);
  }
  if (rc == 0 && !a.problem && rank == 0 && !is_worker) rank0_why(why, sizeof why); /* explains a GPU-less node */
  rc = mpt_wire_gonogo(comm, rc, &err);
  if (rc < 0) {
    if (rank == 0) fprintf(stderr, "mptune devices: %s\n", err.msg);
  } else {
    gather_and_print(comm, rank, size, &mine, &a, why);
  }
  if (opened.ev) mpt_evaluator_close(opened.ev);
  if (opened.space) mpt_space_free(opened.space);
  if (opened.prob) mpt_problem_free(opened.prob);
  return rc < 0 ? 1 : 0;
}
