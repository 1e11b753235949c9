/* jobs/main.c: the mptune executable: initializes MPI and dispatches to a sub-command. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "jobs/commands.h"
#include "jobs/runlog.h"

const mpt_command mpt_commands[] = {
  {"space", "build a search space from a T1 file and print its statistics", mpt_cmd_space},
  {"tune", "run a distributed tuning job (mpiexec -n N): strategy, budget, run log", mpt_cmd_tune},
  {"collect", "evaluate every valid configuration across all workers (resumable)", mpt_cmd_collect},
  {"devices", "print the device each worker rank is bound to", mpt_cmd_devices},
  {"export", "write a run log as a T4 results file (--t4 FILE)", mpt_cmd_export},
  {"bench", "score strategies on replayed brute-forced spaces (mpiexec spreads the runs)", mpt_cmd_bench},
  {NULL, NULL, NULL},
};

static void usage(FILE *f) {
  fprintf(f, "usage: mptune COMMAND [ARGS]   (mptune COMMAND --help for details)\n\ncommands:\n");
  for (const mpt_command *c = mpt_commands; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
  fprintf(f, "\nmptune --version prints the version.\n");
}

/* After a damaged run log was refused (its message printed), libhdf5 may print two lines of its own
 * when it shuts down (jobs/runlog.h, mpt_runlog_hdf5_failed): standard error is closed for that. */
static void quiet_hdf5_shutdown(void) {
  fflush(stderr);
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, STDERR_FILENO);
    close(null);
  }
}

int main(int argc, char **argv) {
  signal(SIGXFSZ, SIG_IGN); /* past a file-size limit (ulimit -f) writes fail with EFBIG, reported as errors */
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("mptune %s\n", MPT_VERSION);
    return 0;
  }
  for (const mpt_command *c = mpt_commands; c->name; c++) {
    if (strcmp(argv[1], c->name) == 0) {
      int provided;
      MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
      int rc = c->run(argc - 1, argv + 1);
      errno = 0;
      if (fflush(stdout) != 0 || ferror(stdout)) { /* a report that did not arrive (a full disk, a closed pipe) */
        fprintf(stderr, "mptune %s: cannot write the standard output%s%s\n", c->name, errno ? ": " : "",
                errno ? strerror(errno) : "");
        if (rc == 0) rc = 1;
      }
      if (mpt_runlog_hdf5_failed()) quiet_hdf5_shutdown();
      MPI_Finalize();
      return rc;
    }
  }
  fprintf(stderr, "mptune: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
