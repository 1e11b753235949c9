/* jobs/bench/cmd_bench_outdir.c: `mptune bench`'s --out folder, checked on rank 0 before any run: created when
 * missing and writable, and no output in it that would replace an input. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jobs/output/outfile.h"
#include "jobs/bench/cmd_bench_impl.h"

int bench_mkdir_p(const char *dir, mpt_error *err) {
  char tmp[4096];
  if (strlen(dir) >= sizeof tmp) return mpt_error_set(err, MPT_ERR_VALUE, "--out: path too long");
  strcpy(tmp, dir);
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(tmp, 0777) && errno != EEXIST) return mpt_error_set(err, MPT_ERR_IO, "--out: cannot create %s: %s", tmp, strerror(errno));
    *p = '/';
  }
  if (mkdir(tmp, 0777) && errno != EEXIST) return mpt_error_set(err, MPT_ERR_IO, "--out: cannot create %s: %s", tmp, strerror(errno));
  struct stat st;
  if (stat(tmp, &st) || !S_ISDIR(st.st_mode)) return mpt_error_set(err, MPT_ERR_IO, "--out: %s is not a directory", tmp);
  if (access(tmp, W_OK)) return mpt_error_set(err, MPT_ERR_IO, "--out: directory %s is not writable (%s)", tmp, strerror(errno));
  return 0;
}

/* the files bench writes into --out: the CSVs (each first as a new NAME.tmp.XXXXXX, then renamed:
 * jobs/output/outfile.h); bench.png (by the plot script, unless --no-plot) last */
static const char *const out_names[] = {"curves.csv", "runs.csv", "summary.csv", "bench.png"};

/* rank 0, before --out is created or anything runs: an output that would replace an input (the problem, a
 * --space file or its own problem, the plot script) is refused */
typedef struct bench_input {
  const char *what, *path; /* path NULL: none */
} bench_input;

int bench_check_outputs(const bench_args *a, const bench_space *sp, int n_sp, const char *script, mpt_error *err) {
  bench_input in[2 + 2 * MAX_ITEMS] = {{"the problem file", a->problem}, {"the plot script", script}};
  int n_in = 2;
  for (int i = 0; i < n_sp; i++) {
    in[n_in++] = (bench_input){"the --space file", sp[i].data_path};
    in[n_in++] = (bench_input){"the problem of --space", sp[i].problem_path};
  }
  for (int o = 0; o < (a->no_plot ? 3 : 4); o++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", a->out, out_names[o]);
    for (int i = 0; i < n_in; i++)
      if (in[i].path && mpt_same_file(path, in[i].path))
        return mpt_error_set(err, MPT_ERR_VALUE, "--out %s: writing %s there would replace %s %s (choose another --out)",
                             a->out, out_names[o], in[i].what, in[i].path);
  }
  return 0;
}
