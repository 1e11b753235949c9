/* jobs/bench/cmd_bench_spaces.c: `mptune bench`'s spaces: each --space file with its T1 problem (built once
 * per problem), replayed and tabulated for the score (jobs/bench/bench.h), and the short label that names it
 * in the tables and CSVs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench.h"
#include "jobs/cli/commands.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "jobs/bench/cmd_bench_impl.h"

static const char *base_name(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

/* the last n '/'-separated components of path (its end when n is more than it has) */
static const char *path_tail(const char *path, int n) {
  const char *t = path + strlen(path);
  while (t > path && n > 0)
    if (*--t == '/' && --n == 0) return t + 1;
  return path;
}

/* labels of spaces that would share one (two files named convolution_A100_T4.json.gz in two folders, or
 * convolution_A100_T4 and _kerneltuner, both A100): the shortest path suffix (whole components, of the
 * real path) that tells each from the others of its group: x/convolution_A100_T4.json.gz, y/... The same
 * file given twice keeps its label and gets #N. */
static void distinguish_labels(bench_space *sp, int n) {
  char *real[MAX_ITEMS], fresh[MAX_ITEMS][sizeof sp[0].label];
  for (int i = 0; i < n; i++) {
    real[i] = realpath(sp[i].data_path, NULL);
    snprintf(fresh[i], sizeof fresh[i], "%s", sp[i].label);
  }
  for (int i = 0; i < n; i++) {
    const char *pi = real[i] ? real[i] : sp[i].data_path;
    for (int parts = 1;; parts++) {
      const char *ti = path_tail(pi, parts);
      int others = 0, clash = 0;
      for (int j = 0; j < n; j++) {
        const char *pj = real[j] ? real[j] : sp[j].data_path;
        if (j == i || strcmp(sp[i].label, sp[j].label) || !strcmp(pi, pj)) continue;
        others = 1;
        clash |= !strcmp(ti, path_tail(pj, parts));
      }
      if (!others) break; /* no other file has this label */
      if (!clash || ti == pi) {
        size_t len = strlen(ti), cap = sizeof fresh[i] - 1; /* too long: its end */
        snprintf(fresh[i], sizeof fresh[i], "%s", len > cap ? ti + len - cap : ti);
        break;
      }
    }
  }
  for (int i = 0; i < n; i++) {
    memcpy(sp[i].label, fresh[i], sizeof sp[i].label);
    free(real[i]);
  }
  for (int i = 0; i < n; i++) /* still equal: one file named twice */
    for (int j = 0; j < i; j++)
      if (!strcmp(sp[i].label, sp[j].label)) {
        char tmp[sizeof sp[i].label + 16];
        snprintf(tmp, sizeof tmp, "%s#%d", sp[j].label, i);
        snprintf(sp[i].label, sizeof sp[i].label, "%.*s", (int)sizeof sp[i].label - 1, tmp);
      }
}

/* labels: file base names without .gz/.json/_T4/_kerneltuner, then without a prefix shared by all
 * (up to and including an '_'), so convolution_A100_T4.json.gz, convolution_A4000... -> A100, A4000;
 * labels that would be equal are told apart by their paths (distinguish_labels) */
static void make_labels(bench_space *sp, int n) {
  static const char *suffixes[] = {".gz", ".json", "_T4", "_kerneltuner", "_cache"};
  for (int i = 0; i < n; i++) {
    snprintf(sp[i].label, sizeof sp[i].label, "%s", base_name(sp[i].data_path));
    for (size_t s = 0; s < sizeof suffixes / sizeof *suffixes; s++) {
      size_t l = strlen(sp[i].label), ls = strlen(suffixes[s]);
      if (l > ls && !strcmp(sp[i].label + l - ls, suffixes[s])) sp[i].label[l - ls] = '\0';
    }
  }
  if (n < 2) return;
  size_t common = strlen(sp[0].label);
  for (int i = 1; i < n; i++) {
    size_t k = 0;
    while (k < common && sp[i].label[k] == sp[0].label[k]) k++;
    common = k;
  }
  while (common > 0 && sp[0].label[common - 1] != '_') common--;
  for (int i = 0; i < n && common; i++)
    if (!sp[i].label[common]) common = 0; /* a label would become empty */
  for (int i = 0; i < n && common; i++) memmove(sp[i].label, sp[i].label + common, strlen(sp[i].label + common) + 1);
  distinguish_labels(sp, n);
}

int bench_file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int bench_setup_spaces(const bench_args *a, bench_space *sp, bench_problem *pr, int *n_pr, mpt_error *err) {
  *n_pr = 0;
  for (int i = 0; i < a->n_space_args; i++) {
    const char *arg = a->space_args[i];
    const char *colon = strchr(arg, ':');
    char *pp = NULL;
    if (colon) {
      pp = strndup(arg, (size_t)(colon - arg));
      if (!pp) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
      if (!bench_file_exists(pp)) {
        free(pp);
        pp = NULL; /* a ':' inside a file name */
      }
    }
    sp[i].problem_path = pp ? pp : a->problem;
    sp[i].data_path = pp ? colon + 1 : arg;
    if (!sp[i].problem_path)
      return mpt_error_set(err, MPT_ERR_VALUE, "--space %s: no T1 problem (give --problem FILE or --space PROBLEM.json:%s)", arg, arg);
    int k;
    for (k = 0; k < *n_pr; k++)
      if (!strcmp(pr[k].path, sp[i].problem_path)) break;
    if (k == *n_pr) {
      pr[k].path = sp[i].problem_path;
      int rc = mpt_cmd_load_problem(pr[k].path, &pr[k].p, err);
      if (!rc) rc = mpt_space_build(pr[k].p, &pr[k].s, err);
      (*n_pr)++;
      if (rc) return rc;
    }
    sp[i].problem = k;
    struct stat fs;
    if (stat(sp[i].data_path, &fs))
      return mpt_error_set(err, MPT_ERR_IO, "--space: cannot open brute-forced file %s: %s", sp[i].data_path, strerror(errno));
    if (!S_ISREG(fs.st_mode))
      return mpt_error_set(err, MPT_ERR_IO, "--space: %s is not a regular file", sp[i].data_path);
    int rc = mpt_replay_load(sp[i].data_path, pr[k].s, &sp[i].replay, err);
    if (!rc) rc = mpt_bench_ref_from_replay(&sp[i].ref, pr[k].s, sp[i].replay, err);
    if (!rc) rc = mpt_bench_ref_tabulate(&sp[i].ref, a->budget, err);
    if (rc) return mpt_error_prefix(err, "--space %s", sp[i].data_path);
  }
  make_labels(sp, a->n_space_args);
  return 0;
}
