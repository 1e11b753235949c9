/* jobs/bench/cmd_bench_plot.c: `mptune bench`'s bench.png: the plot script found before any run, and run on
 * curves.csv at the end (scripts/plot_bench.py through $PYTHON or /usr/bin/python3). */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "jobs/bench/cmd_bench_impl.h"

extern char **environ;

/* the plot script: --plot-script, else $MPT_PLOT_BENCH, else scripts/plot_bench.py next to the binary or under
 * $MPT_SOURCE_DIR. 0 with its path in out, else an error naming the path (or places) tried */
int bench_find_plot_script(const bench_args *a, char *out, size_t cap, mpt_error *err) {
  const char *env = getenv("MPT_PLOT_BENCH");
  const char *given = a->plot_script ? a->plot_script : env && *env ? env : NULL;
  if (given) {
    snprintf(out, cap, "%s", given);
    if (bench_file_exists(out)) return 0;
    return mpt_error_set(err, MPT_ERR_IO, "plot: %s (%s) not found (use --no-plot to skip the PNG)", given,
                         a->plot_script ? "--plot-script" : "$MPT_PLOT_BENCH");
  }
  char exe[4096], tried[4096] = "";
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    const char *rel[] = {"../scripts/plot_bench.py", "scripts/plot_bench.py", "../share/mptune/plot_bench.py"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
      snprintf(out, cap, "%s/%s", exe, rel[i]);
      if (bench_file_exists(out)) return 0;
      size_t len = strlen(tried);
      snprintf(tried + len, sizeof tried - len, "%s%s", len ? ", " : "", out);
    }
  }
  const char *src = getenv("MPT_SOURCE_DIR");
  if (src) {
    snprintf(out, cap, "%s/scripts/plot_bench.py", src);
    if (bench_file_exists(out)) return 0;
    size_t len = strlen(tried);
    snprintf(tried + len, sizeof tried - len, "%s%s", len ? ", " : "", out);
  }
  return mpt_error_set(err, MPT_ERR_IO, "plot: plot_bench.py not found (tried %s; set MPT_PLOT_BENCH or --plot-script, "
                       "or use --no-plot)", tried[0] ? tried : "nothing");
}

int bench_run_plot(const char *script, const char *csv, const char *png, mpt_error *err) {
  const char *py = getenv("PYTHON");
  if (!py || !*py) py = "/usr/bin/python3";
  char *argv[] = {(char *)py, (char *)script, (char *)csv, (char *)png, NULL};
  pid_t pid;
  fflush(stdout);
  fflush(stderr);
  int rc = posix_spawn(&pid, py, NULL, NULL, argv, environ);
  if (rc) return mpt_error_set(err, MPT_ERR_IO, "plot: cannot run %s: %s", py, strerror(rc));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return mpt_error_set(err, MPT_ERR_IO, "plot: waitpid: %s", strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status))
    return mpt_error_set(err, MPT_ERR_IO, "plot: %s %s failed (status %d); %s is written", py, script,
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, csv);
  if (!bench_file_exists(png)) return mpt_error_set(err, MPT_ERR_IO, "plot: %s did not write %s", script, png);
  return 0;
}
