/* jobs/cli/main.c: the mptune executable: initializes MPI and dispatches to a sub-command. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jobs/cli/commands.h"
#include "jobs/runlog/runlog.h"

const mpt_command mpt_commands[] = {
  {"space", "build a search space from a T1 file and print its statistics", mpt_cmd_space},
  {"tune", "run a distributed tuning job (mpiexec -n N): strategy, budget, run log", mpt_cmd_tune},
  {"collect", "evaluate every valid configuration across all workers (resumable)", mpt_cmd_collect},
  {"devices", "print the device each worker rank is bound to", mpt_cmd_devices},
  {"export", "write a run log as a T4 results file (--t4 FILE) or its best configuration as a C header (--header FILE)",
   mpt_cmd_export},
  {"show", "print a run log at a glance: the best configurations, the failures, per device", mpt_cmd_show},
  {"bench", "score strategies on replayed brute-forced spaces (mpiexec spreads the runs)", mpt_cmd_bench},
  {"campaign", "run a campaign file of many jobs in one allocation (--check: check it, print its plan)", mpt_cmd_campaign},
  {NULL, NULL, NULL},
};

static void usage(FILE *f) {
  fprintf(f, "usage: mptune COMMAND [ARGS]   (mptune COMMAND --help for details)\n\ncommands:\n");
  for (const mpt_command *c = mpt_commands; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
  fprintf(f, "\nmptune --version prints the version.\n");
}

/* After a damaged run log was refused (its message printed), libhdf5 may print two lines of its own
 * when it shuts down (jobs/runlog/runlog.h, mpt_runlog_hdf5_failed): standard error is closed for that. */
static void quiet_hdf5_shutdown(void) {
  fflush(stderr);
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, STDERR_FILENO);
    close(null);
  }
}

/* --name=value is --name value, for every sub-command: a copy of argv (to free) with such arguments split
 * in two where they are (the '=' becomes the end of the name; name: a letter, then letters, digits, '-'
 * or '_'), or NULL when out of memory. A file whose name looks like that is given as ./--name=value. */
static char **split_long_options(int argc, char **argv, int *argc_out) {
  char **out = calloc((size_t)(2 * argc + 1), sizeof *out);
  if (!out) return NULL;
  int n = 0;
  for (int i = 0; i < argc; i++) {
    char *a = argv[i], *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : 0;
    int split = i > 0 && eq && a[0] == '-' && a[1] == '-' && isalpha((unsigned char)a[2]);
    for (size_t k = 3; split && k < len; k++)
      split = isalnum((unsigned char)a[k]) || a[k] == '-' || a[k] == '_';
    if (!split) {
      out[n++] = argv[i];
      continue;
    }
    *eq = '\0';
    out[n++] = a;
    out[n++] = eq + 1;
  }
  *argc_out = n;
  return out;
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
      int n_args;
      char **args = split_long_options(argc - 1, argv + 1, &n_args);
      if (!args) {
        fprintf(stderr, "mptune %s: out of memory\n", c->name);
        MPI_Finalize();
        return 1;
      }
      int rc = c->run(n_args, args);
      free(args);
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
