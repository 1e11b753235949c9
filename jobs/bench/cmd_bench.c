/* jobs/bench/cmd_bench.c: `mptune bench`: runs strategies (and option variants of them) R times on replayed
 * brute-forced spaces, in process (ask/tell against mpt_replay_get), the (space, strategy, repeat)
 * jobs spread round-robin over the MPI ranks and gathered on rank 0 one (space, strategy) at a time; rank 0
 * scores them (jobs/bench/bench.h) and writes their rows of curves.csv and runs.csv, then prints the tables and
 * writes summary.csv and bench.png (scripts/plot_bench.py).
 * Before any run, rank 0 finds the plot script and refuses an --out where an output would replace an input
 * or that cannot be written. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "coordinator/progress.h"
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench.h"
#include "jobs/bench/bench_transfer.h"
#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "strategies/strategy.h"

extern char **environ;

#define MAX_ITEMS 64
#define MAX_OPTS 32

typedef struct bench_space {
  const char *problem_path, *data_path;
  char label[128];
  int problem;          /* index into problems */
  mpt_replay *replay;
  mpt_bench_ref ref;
} bench_space;

typedef struct bench_problem {
  const char *path;
  mpt_problem *p;
  mpt_space *s;
} bench_problem;

typedef struct bench_strategy {
  char label[256];
  char name[64];
  char *opts[MAX_OPTS];
  int n_opts;
  char buf[256];
} bench_strategy;

typedef struct bench_args {
  const char *problem;
  const char *space_args[MAX_ITEMS];
  int n_space_args;
  const char *strategy_args[MAX_ITEMS];
  int n_strategy_args;
  const char *options[MAX_OPTS];
  int n_options;
  int64_t repeats, budget, batch, step;
  uint64_t seed;
  const char *out;
  const char *plot_script;
  int no_plot, progress, help; /* progress: -1 on a terminal only (default), 0 off, 1 on */
  int prior_others, online;    /* --prior-from-others, --transfer online */
  double progress_every;
} bench_args;

static void usage(FILE *f) {
  fprintf(f,
    "usage: [mpiexec.mpich -n P] mptune bench --problem T1.json --space DATA.json.gz [--space ...]\n"
    "         --strategy NAME[,NAME[:key=value[,key=value]]...] [--strategy ...] [--option key=value]...\n"
    "         [--repeats R] [--budget N] [--batch B] [--step K] [--seed S] [--out DIR] [--no-plot]\n"
    "         [--plot-script FILE] [--progress | --no-progress] [--progress-every S]\n"
    "         [--prior-from-others | --transfer online|none]\n"
    "Runs every strategy R times on every replayed brute-forced space (T4 or Kernel Tuner cache file,\n"
    "gzip or plain) and scores the runs against random search.\n"
    "  --problem FILE   T1 problem of the spaces (required unless every --space names its own)\n"
    "  --space FILE...  brute-forced file(s) of the problem (repeatable; files up to the next option); PROBLEM.json:FILE\n"
    "                   gives a space its own problem\n"
    "  --strategy LIST  comma-separated strategy names; a variant is NAME:key=value with more options\n"
    "                   after further commas (ga,ga:constraint_aware=0,de:popsize=30,F=0.5,pso)\n"
    "  --option k=v     passed to every selected strategy that has option k (error if none has it);\n"
    "                   a variant's own options take precedence\n"
    "  --repeats R      runs per strategy and space (default 10); run r uses seed S + r\n"
    "  --budget N       evaluations per run (default 220)\n"
    "  --batch B        rounds of ask(B) then tell of all B (default 1): batched strategies\n"
    "  --seed S         base seed (default 1): repeat r of every strategy and space uses S + r\n"
    "  --step K         score terms every K evaluations (default 20, as below)\n"
    "  --out DIR        where curves.csv, runs.csv, summary.csv and bench.png go (default bench-out;\n"
    "                   created if missing)\n"
    "  --no-plot        skip the PNG (scripts/plot_bench.py through $PYTHON or /usr/bin/python3; the\n"
    "                   script is found via $MPT_PLOT_BENCH, --plot-script FILE, or next to the binary)\n"
    "  --progress       rank 0 prints its progress on stderr: its runs done, runs per second, elapsed\n"
    "                   time and ETA (the other ranks have as many runs); by default only when stderr\n"
    "                   is a terminal (--no-progress: never)\n"
    "  --progress-every S  seconds between progress lines (default 5; 0: after every run)\n"
    "  --prior-from-others  transfer offline: a run on one --space is first told every other --space's\n"
    "                   records as related observations (one source per file, as `mptune tune --prior`)\n"
    "  --transfer online  a joint campaign: repeat r of a strategy runs on every --space at once, one\n"
    "                   instance per space (seed S + r each, as independent runs), in lockstep: each\n"
    "                   round every space asks and is told its own observations, then the others' as\n"
    "                   related ones (as the device classes of one run); none (default): independent\n"
    "  (both need the --space files to be of one problem; strategies without transfer ignore it)\n"
    "Under mpiexec the (space, strategy, repeat) jobs go round-robin to the ranks; results do not\n"
    "depend on the number of ranks (only the ask times do).\n"
    "Score of a run: mean over k = K, 2K, ... up to the budget (20, 40, ..., 220 by default) of\n"
    "(E_random(k) - best(k)) / (E_random(k) - optimum),\n"
    "E_random(k) the exact expected best of k draws of random search without replacement over the\n"
    "space's configurations; invalid, failed and unrecorded configurations count as evaluations and are\n"
    "never best; while a run (or a random draw) has no valid objective its best is the worst valid\n"
    "objective of the space. 1 = optimum at once, 0 = random search, < 0 = worse (see jobs/bench/bench.h).\n"
    "A space so small that random search is expected to find its optimum by the first term has no\n"
    "score (n/a, with a warning; the mean row is over the spaces that have one).\n"
    "Reported per strategy and space: mean score, mean best after 20/60/100/220 evaluations, runs that\n"
    "found the optimum, mean failed evaluations, median time per ask.\n");
}

static int parse_args(int argc, char **argv, bench_args *a, mpt_error *err) {
  memset(a, 0, sizeof *a);
  a->repeats = 10;
  a->budget = 220;
  a->batch = 1;
  a->step = 20;
  a->seed = 1;
  a->out = "bench-out";
  a->progress = -1;
  a->progress_every = 5;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) { a->help = 1; return 0; }
    if (!strcmp(o, "--no-plot")) { a->no_plot = 1; continue; }
    if (!strcmp(o, "--progress")) { a->progress = 1; continue; }
    if (!strcmp(o, "--no-progress")) { a->progress = 0; continue; }
    if (!strcmp(o, "--prior-from-others")) { a->prior_others = 1; continue; }
    if (o[0] != '-') return mpt_error_set(err, MPT_ERR_VALUE, "unexpected argument '%s' (see mptune bench --help)", o);
    static const char *const known[] = {"--problem", "--space", "--strategy", "--option", "--repeats", "--budget",
                                        "--batch", "--step", "--seed", "--out", "--plot-script", "--progress-every",
                                        "--no-plot", "--progress", "--no-progress", "--help", "--transfer",
                                        "--prior-from-others", NULL};
    if (mpt_cmd_known("bench", o, known, err)) return err->code;
    const char *v = mpt_cmd_value(argc, argv, &i, err);
    if (!v) return err->code;
    int rc = 0;
    if (!strcmp(o, "--problem")) a->problem = v;
    else if (!strcmp(o, "--space")) {
      for (;;) { /* --space A B C (a shell's brace expansion): every file up to the next option */
        if (a->n_space_args == MAX_ITEMS) return mpt_error_set(err, MPT_ERR_VALUE, "at most %d --space", MAX_ITEMS);
        a->space_args[a->n_space_args++] = v;
        if (i + 1 >= argc || argv[i + 1][0] == '-') break;
        v = argv[++i];
      }
    } else if (!strcmp(o, "--strategy")) {
      if (a->n_strategy_args == MAX_ITEMS) return mpt_error_set(err, MPT_ERR_VALUE, "at most %d --strategy", MAX_ITEMS);
      a->strategy_args[a->n_strategy_args++] = v;
    } else if (!strcmp(o, "--option")) {
      if (!strchr(v, '=') || v[0] == '=')
        return mpt_error_set(err, MPT_ERR_VALUE, "--option: expected key=value, got '%s'", v);
      if (a->n_options == MAX_OPTS) return mpt_error_set(err, MPT_ERR_VALUE, "at most %d --option", MAX_OPTS);
      a->options[a->n_options++] = v;
    } else if (!strcmp(o, "--repeats")) rc = mpt_cmd_parse_int(o, v, 1, &a->repeats, err);
    else if (!strcmp(o, "--budget")) rc = mpt_cmd_parse_int(o, v, 1, &a->budget, err);
    else if (!strcmp(o, "--batch")) rc = mpt_cmd_parse_int(o, v, 1, &a->batch, err);
    else if (!strcmp(o, "--step")) rc = mpt_cmd_parse_int(o, v, 1, &a->step, err);
    else if (!strcmp(o, "--seed")) {
      int64_t s = 0;
      rc = mpt_cmd_parse_int(o, v, 0, &s, err);
      a->seed = (uint64_t)s;
    } else if (!strcmp(o, "--out")) a->out = v;
    else if (!strcmp(o, "--plot-script")) a->plot_script = v;
    else if (!strcmp(o, "--transfer")) {
      if (strcmp(v, "online") && strcmp(v, "none"))
        return mpt_error_set(err, MPT_ERR_VALUE, "--transfer: expected online or none, got '%s'", v);
      a->online = !strcmp(v, "online");
    }
    else if (!strcmp(o, "--progress-every")) rc = mpt_cmd_parse_num(o, v, 0, 1e6, &a->progress_every, err);
    else return mpt_error_set(err, MPT_ERR_VALUE, "unknown option '%s' (see mptune bench --help)", o);
    if (rc) return rc;
  }
  if (!a->n_space_args) return mpt_error_set(err, MPT_ERR_VALUE, "no --space given (see mptune bench --help)");
  if (!a->n_strategy_args) return mpt_error_set(err, MPT_ERR_VALUE, "no --strategy given (see mptune bench --help)");
  if (a->online && a->prior_others)
    return mpt_error_set(err, MPT_ERR_VALUE, "--transfer online and --prior-from-others exclude each other");
  if (a->batch > INT_MAX) return mpt_error_set(err, MPT_ERR_VALUE, "--batch: too large");
  if (a->budget > 100000000) return mpt_error_set(err, MPT_ERR_VALUE, "--budget: too large");
  return 0;
}

/* "ga,ga:constraint_aware=0,popsize=30,de": a token with '=' and no ':' continues the previous variant */
static int parse_strategies(const bench_args *a, bench_strategy *st, int *n_st, mpt_error *err) {
  *n_st = 0;
  for (int i = 0; i < a->n_strategy_args; i++) {
    char list[1024];
    if (strlen(a->strategy_args[i]) >= sizeof list)
      return mpt_error_set(err, MPT_ERR_VALUE, "--strategy: list too long");
    strcpy(list, a->strategy_args[i]);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      int cont = strchr(tok, '=') && !strchr(tok, ':');
      if (cont) {
        if (!*n_st || !strchr(st[*n_st - 1].label, ':'))
          return mpt_error_set(err, MPT_ERR_VALUE,
                               "--strategy: '%s' is an option but follows no NAME:key=value variant", tok);
        bench_strategy *b = &st[*n_st - 1];
        size_t len = strlen(b->label);
        if (len + 1 + strlen(tok) >= sizeof b->label) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy: variant too long");
        b->label[len] = ',';
        strcpy(b->label + len + 1, tok);
        continue;
      }
      if (*n_st == MAX_ITEMS) return mpt_error_set(err, MPT_ERR_VALUE, "at most %d strategies", MAX_ITEMS);
      if (strlen(tok) >= sizeof st[0].label) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy: '%s' too long", tok);
      memset(&st[*n_st], 0, sizeof st[0]);
      strcpy(st[*n_st].label, tok);
      (*n_st)++;
    }
  }
  if (!*n_st) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy: no strategy named");
  for (int i = 0; i < *n_st; i++) {
    bench_strategy *b = &st[i];
    strcpy(b->buf, b->label);
    char *colon = strchr(b->buf, ':');
    if (colon) *colon = '\0';
    if (!b->buf[0] || strlen(b->buf) >= sizeof b->name)
      return mpt_error_set(err, MPT_ERR_VALUE, "--strategy: bad strategy name in '%s'", b->label);
    strcpy(b->name, b->buf);
    if (colon) {
      char *save = NULL;
      for (char *tok = strtok_r(colon + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strchr(tok, '=')) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy %s: '%s' is not key=value", b->label, tok);
        if (b->n_opts == MAX_OPTS) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy %s: too many options", b->label);
        b->opts[b->n_opts++] = tok;
      }
      if (!b->n_opts) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy %s: no key=value after ':'", b->label);
    }
    for (int j = 0; j < i; j++)
      if (!strcmp(st[j].label, b->label)) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy: '%s' named twice", b->label);
  }
  return 0;
}

/* t's name of the option whose key is the klen bytes at key (ours, or Kernel Tuner's name of one of ours):
 * ours, or NULL when t has no such option */
static const char *option_key(const mpt_strategy_type *t, const char *key, size_t klen) {
  char k[128];
  snprintf(k, sizeof k, "%.*s", (int)(klen < sizeof k ? klen : sizeof k - 1), key);
  const char *ours = mpt_strategy_option_alias(t, k);
  for (const mpt_option_spec *o = t->options; o && o->key; o++)
    if (strcmp(o->key, k) == 0 || (ours && strcmp(o->key, ours) == 0)) return o->key;
  return NULL;
}

/* --option k=v goes to every strategy with option k whose variant does not set k itself */
static int apply_global_options(const bench_args *a, bench_strategy *st, int n_st, mpt_error *err) {
  for (int i = 0; i < n_st; i++) {
    const mpt_strategy_type *t = mpt_strategy_find(st[i].name);
    if (!t) {
      char names[1024];
      mpt_strategy_names(names, sizeof names);
      return mpt_error_set(err, MPT_ERR_NAME, "--strategy: unknown strategy '%s' (known: %s)", st[i].name, names);
    }
    snprintf(st[i].name, sizeof st[i].name, "%s", t->name); /* ours, where Kernel Tuner's was given */
  }
  for (int g = 0; g < a->n_options; g++) {
    const char *kv = a->options[g];
    size_t klen = (size_t)(strchr(kv, '=') - kv);
    int used = 0;
    for (int i = 0; i < n_st; i++) {
      const mpt_strategy_type *t = mpt_strategy_find(st[i].name);
      const char *key = option_key(t, kv, klen);
      if (!key) continue;
      used = 1;
      int own = 0;
      for (int j = 0; j < st[i].n_opts; j++) {
        const char *eq = strchr(st[i].opts[j], '=');
        const char *their = eq ? option_key(t, st[i].opts[j], (size_t)(eq - st[i].opts[j])) : NULL;
        if (their && strcmp(their, key) == 0) own = 1;
      }
      if (own) continue;
      if (st[i].n_opts == MAX_OPTS) return mpt_error_set(err, MPT_ERR_VALUE, "--strategy %s: too many options", st[i].label);
      st[i].opts[st[i].n_opts++] = (char *)kv;
    }
    if (!used) return mpt_error_set(err, MPT_ERR_NAME, "--option %s: no selected strategy has option '%.*s'", kv, (int)klen, kv);
  }
  return 0;
}

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

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int setup_spaces(const bench_args *a, bench_space *sp, bench_problem *pr, int *n_pr, mpt_error *err) {
  *n_pr = 0;
  for (int i = 0; i < a->n_space_args; i++) {
    const char *arg = a->space_args[i];
    const char *colon = strchr(arg, ':');
    char *pp = NULL;
    if (colon) {
      pp = strndup(arg, (size_t)(colon - arg));
      if (!pp) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
      if (!file_exists(pp)) {
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

/* ---- output ---- */

static int mkdir_p(const char *dir, mpt_error *err) {
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

static int check_outputs(const bench_args *a, const bench_space *sp, int n_sp, const char *script, mpt_error *err) {
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

/* dir/name, opened as a jobs/output/outfile.h output (a temporary name until close_out renames it) */
static FILE *open_out(const char *dir, const char *name, char *path, size_t cap, mpt_error *err) {
  snprintf(path, cap, "%s/%s", dir, name);
  return mpt_outfile_open(path, err);
}

static int close_out(FILE *f, const char *path, mpt_error *err) { return mpt_outfile_close(f, path, 1, err); }

/* the CSV field of a label: quoted (labels hold commas: ga:a=1,b=2) */
static void csv_label(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* the plot script: --plot-script, else $MPT_PLOT_BENCH, else scripts/plot_bench.py next to the binary or under
 * $MPT_SOURCE_DIR. 0 with its path in out, else an error naming the path (or places) tried */
static int find_plot_script(const bench_args *a, char *out, size_t cap, mpt_error *err) {
  const char *env = getenv("MPT_PLOT_BENCH");
  const char *given = a->plot_script ? a->plot_script : env && *env ? env : NULL;
  if (given) {
    snprintf(out, cap, "%s", given);
    if (file_exists(out)) return 0;
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
      if (file_exists(out)) return 0;
      size_t len = strlen(tried);
      snprintf(tried + len, sizeof tried - len, "%s%s", len ? ", " : "", out);
    }
  }
  const char *src = getenv("MPT_SOURCE_DIR");
  if (src) {
    snprintf(out, cap, "%s/scripts/plot_bench.py", src);
    if (file_exists(out)) return 0;
    size_t len = strlen(tried);
    snprintf(tried + len, sizeof tried - len, "%s%s", len ? ", " : "", out);
  }
  return mpt_error_set(err, MPT_ERR_IO, "plot: plot_bench.py not found (tried %s; set MPT_PLOT_BENCH or --plot-script, "
                       "or use --no-plot)", tried[0] ? tried : "nothing");
}

static int run_plot(const char *script, const char *csv, const char *png, mpt_error *err) {
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
  if (!file_exists(png)) return mpt_error_set(err, MPT_ERR_IO, "plot: %s did not write %s", script, png);
  return 0;
}

/* ---- the run ---- */

enum { REC_JOB, REC_RC, REC_EVALS, REC_FAILED, REC_ASKS, REC_STRAT_S, REC_HEAD };

typedef struct bench_ctx {
  bench_args a;
  bench_space sp[MAX_ITEMS];
  bench_problem pr[MAX_ITEMS];
  int n_sp, n_pr;
  bench_strategy st[MAX_ITEMS];
  int n_st;
  char plot_script[4096]; /* rank 0, unless --no-plot: found before any run */
  /* --transfer online: this rank's joint campaigns, run (s, r) once for every space: runs[(s R + r) n_sp + p] */
  mpt_bench_run *joint;
  uint8_t *joint_done;
} bench_ctx;

/* rank 0's progress line: its runs are 1/size of all, the other ranks run as many */
static void print_progress(int64_t done, int64_t mine, double elapsed) {
  char el[32], eta[32];
  double rate = elapsed > 0 ? (double)done / elapsed : 0;
  mpt_progress_duration(elapsed, el, sizeof el);
  mpt_progress_duration(rate > 0 ? (double)(mine - done) / rate : NAN, eta, sizeof eta);
  fprintf(stderr, "mptune bench: rank 0: %lld/%lld runs (%.0f%%) | %.3g runs/s | elapsed %s ETA %s\n", (long long)done,
          (long long)mine, mine > 0 ? 100.0 * (double)done / (double)mine : 100.0, rate, el, eta);
}

/* a table cell: n/a where a space has no score (its optimum is found by random search at once) */
static void print_score(double v) {
  if (isnan(v)) printf(" n/a |");
  else printf(" %.3f |", v);
}

static void print_tables(const bench_ctx *c, const mpt_bench_summary *sum) {
  const bench_args *a = &c->a;
  int S = c->n_st;
  printf("## Scores (%lld repeats, budget %lld, batch %lld, seeds %llu..%llu; 1 = optimum at once, 0 = random search)\n\n",
         (long long)a->repeats, (long long)a->budget, (long long)a->batch, (unsigned long long)a->seed,
         (unsigned long long)(a->seed + (uint64_t)a->repeats - 1));
  printf("| space |");
  for (int s = 0; s < S; s++) printf(" %s |", c->st[s].label);
  printf("\n| --- |");
  for (int s = 0; s < S; s++) printf(" ---: |");
  printf("\n");
  for (int p = 0; p < c->n_sp; p++) {
    printf("| %s |", c->sp[p].label);
    for (int s = 0; s < S; s++) print_score(sum[p * S + s].score_mean);
    printf("\n");
  }
  printf("| mean |");
  for (int s = 0; s < S; s++) { /* over the spaces that have a score */
    double m = 0;
    int n = 0;
    for (int p = 0; p < c->n_sp; p++)
      if (!isnan(sum[p * S + s].score_mean)) m += sum[p * S + s].score_mean, n++;
    print_score(n ? m / n : NAN);
  }
  printf("\n\n");
  for (int p = 0; p < c->n_sp; p++) {
    const bench_space *b = &c->sp[p];
    printf("### %s: %lld configurations, %lld valid, optimum %.6g, E_random(%lld) %.6g\n\n", b->label,
           (long long)b->ref.n, (long long)b->ref.n_valid, mpt_bench_optimum(&b->ref), (long long)a->budget,
           mpt_bench_expected_random(&b->ref, a->budget));
    const mpt_bench_summary *s0 = &sum[p * S];
    printf("| strategy | score | sd |");
    for (int k = 0; k < s0->n_checkpoints; k++) printf(" best@%lld |", (long long)s0->checkpoint[k]);
    printf(" optimum found | failed evals (mean) | ask ms (median) | strategy s/run |\n| --- | ---: | ---: |");
    for (int k = 0; k < s0->n_checkpoints; k++) printf(" ---: |");
    printf(" ---: | ---: | ---: | ---: |\n");
    for (int s = 0; s < S; s++) {
      const mpt_bench_summary *m = &sum[p * S + s];
      printf("| %s |", c->st[s].label);
      print_score(m->score_mean);
      print_score(m->score_sd);
      for (int k = 0; k < m->n_checkpoints; k++) printf(" %.6g |", m->best_mean[k]);
      printf(" %d/%d | %.1f | %.3g | %.3g |\n", m->found_optimum, m->n_runs, m->failed_mean, 1e3 * m->ask_median_s,
             m->strategy_mean_s);
    }
    printf("\n");
  }
  fflush(stdout);
}

/* rank 0's curves.csv and runs.csv, written one (space, strategy) group at a time as its runs arrive
 * (write_group), so that only one group's traces are held; summary.csv at the end (write_summary) */
typedef struct bench_writer {
  FILE *curves, *runs;
  char curves_path[4096], runs_path[4096];
  double *col; /* R: one evaluation count's best of every run of a group */
} bench_writer;

/* keep = 0: the temporary files removed (after an error; err untouched) */
static int close_writer(bench_writer *w, int keep, mpt_error *err) {
  int rc = 0;
  if (w->curves && mpt_outfile_close(w->curves, w->curves_path, keep, err) < 0) rc = err->code, keep = 0;
  if (w->runs && mpt_outfile_close(w->runs, w->runs_path, keep, err) < 0 && !rc) rc = err->code;
  free(w->col);
  w->curves = w->runs = NULL; /* the paths stay: curves_path is the plot's input */
  w->col = NULL;
  return rc;
}

static int open_writer(const bench_ctx *c, bench_writer *w, mpt_error *err) {
  memset(w, 0, sizeof *w);
  if (!(w->col = malloc((size_t)c->a.repeats * sizeof *w->col)))
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (!(w->curves = open_out(c->a.out, "curves.csv", w->curves_path, sizeof w->curves_path, err)) ||
      !(w->runs = open_out(c->a.out, "runs.csv", w->runs_path, sizeof w->runs_path, err))) {
    close_writer(w, 0, err);
    return err->code;
  }
  fprintf(w->curves, "space,strategy,evaluations,median,q25,q75,mean,min,max,e_random,optimum\n");
  fprintf(w->runs, "space,strategy,repeat,seed,score,best,found_optimum,evaluations,failed,asks,ask_median_ms,strategy_s\n");
  return 0;
}

/* the curves.csv rows (quantiles over the runs at every evaluation count) and runs.csv rows of group
 * g = space * S + strategy, runs[r] and scores[r] its repeat r */
static int write_group(const bench_ctx *c, bench_writer *w, int64_t g, const mpt_bench_run *runs,
                       const double *scores, mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t R = a->repeats, B = a->budget;
  const bench_space *sp = &c->sp[g / c->n_st];
  const bench_strategy *st = &c->st[g % c->n_st];
  const mpt_bench_ref *ref = &sp->ref;
  double *col = w->col;
  for (int64_t k = 1; k <= B; k++) {
    double mean = 0;
    for (int64_t r = 0; r < R; r++) {
      double b = runs[r].best[k - 1];
      col[r] = isfinite(b) ? b : mpt_bench_worst(ref);
      mean += col[r] / (double)R;
    }
    double q25 = mpt_bench_quantile(col, R, 0.25), med = mpt_bench_quantile(col, R, 0.5),
           q75 = mpt_bench_quantile(col, R, 0.75);
    csv_label(w->curves, sp->label);
    fputc(',', w->curves);
    csv_label(w->curves, st->label);
    fprintf(w->curves, ",%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", (long long)k, med, q25, q75, mean, col[0],
            col[R - 1], mpt_bench_expected_random(ref, k), mpt_bench_optimum(ref));
  }
  for (int64_t r = 0; r < R; r++) {
    const mpt_bench_run *run = &runs[r];
    double *t = malloc((size_t)(run->n_asks > 0 ? run->n_asks : 1) * sizeof *t);
    if (!t) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    memcpy(t, run->ask_s, (size_t)run->n_asks * sizeof *t);
    double med = mpt_bench_quantile(t, run->n_asks, 0.5);
    free(t);
    double best = run->best[B - 1];
    csv_label(w->runs, sp->label);
    fputc(',', w->runs);
    csv_label(w->runs, st->label);
    fprintf(w->runs, ",%lld,%llu,%.9g,%.9g,%d,%lld,%lld,%d,%.6g,%.6g\n", (long long)r,
            (unsigned long long)(a->seed + (uint64_t)r), scores[r], isfinite(best) ? best : NAN,
            best <= mpt_bench_optimum(ref), (long long)run->n_evals, (long long)run->n_failed, run->n_asks, 1e3 * med,
            run->strategy_s);
  }
  return 0;
}

static int write_summary(const bench_ctx *c, const mpt_bench_summary *sum, mpt_error *err) {
  int S = c->n_st;
  char path[4096];
  FILE *f = open_out(c->a.out, "summary.csv", path, sizeof path, err);
  if (!f) return err->code;
  fprintf(f, "space,strategy,runs,score_mean,score_sd");
  for (int k = 0; k < sum[0].n_checkpoints; k++) fprintf(f, ",best_mean_%lld", (long long)sum[0].checkpoint[k]);
  fprintf(f, ",found_optimum,failed_mean,ask_median_ms,strategy_mean_s\n");
  for (int p = 0; p < c->n_sp; p++)
    for (int s = 0; s < S; s++) {
      const mpt_bench_summary *m = &sum[p * S + s];
      csv_label(f, c->sp[p].label);
      fputc(',', f);
      csv_label(f, c->st[s].label);
      fprintf(f, ",%d,%.9g,%.9g", m->n_runs, m->score_mean, m->score_sd);
      for (int k = 0; k < m->n_checkpoints; k++) fprintf(f, ",%.9g", m->best_mean[k]);
      fprintf(f, ",%d,%.9g,%.6g,%.6g\n", m->found_optimum, m->failed_mean, 1e3 * m->ask_median_s, m->strategy_mean_s);
    }
  return close_out(f, path, err) < 0 ? err->code : 0;
}

/* the jobs of group g (j = g R + r, r < R) that rank q of size runs (j % size == q): their number, the first
 * in *first, the others every size after it */
static int64_t group_jobs(int64_t g, int64_t R, int q, int size, int64_t *first) {
  int64_t lo = g * R;
  *first = lo + ((q - lo) % size + size) % size;
  return *first < lo + R ? (lo + R - 1 - *first) / size + 1 : 0;
}

/* --transfer online: the run of strategy s, repeat r on space p out of its joint campaign over every space (run
 * once on this rank, kept for the other spaces' jobs); NULL and err on error */
static const mpt_bench_run *joint_run(const bench_ctx *c, int64_t p, int64_t s, int64_t r, mpt_error *err) {
  const bench_args *a = &c->a;
  mpt_bench_run *runs = c->joint + (s * a->repeats + r) * c->n_sp;
  uint8_t *done = &c->joint_done[s * a->repeats + r];
  if (!*done) {
    const mpt_replay *rep[MAX_ITEMS];
    for (int q = 0; q < c->n_sp; q++) rep[q] = c->sp[q].replay;
    int rc = mpt_bench_run_joint(c->pr[c->sp[0].problem].s, rep, c->n_sp, c->st[s].name,
                                 (const char *const *)c->st[s].opts, c->st[s].n_opts, a->seed + (uint64_t)r,
                                 a->budget, (int)a->batch, runs, err);
    if (rc) return NULL;
    *done = 1;
  }
  return &runs[p];
}

/* the run of strategy s, repeat r on space p: independent, with the other spaces as priors, or out of a joint
 * campaign (joint: *run points into the cache, not to be freed); 0 or an error */
static int run_one(const bench_ctx *c, int64_t p, int64_t s, int64_t r, mpt_bench_run *run, int *joint,
                   mpt_error *err) {
  const bench_args *a = &c->a;
  const bench_space *b = &c->sp[p];
  const char *const *opts = (const char *const *)c->st[s].opts;
  *joint = a->online;
  if (a->online) {
    const mpt_bench_run *j = joint_run(c, p, s, r, err);
    if (j) *run = *j;
    return j ? 0 : err->code ? err->code : MPT_ERR_VALUE;
  }
  if (!a->prior_others)
    return mpt_bench_run_strategy(c->pr[b->problem].s, b->replay, c->st[s].name, opts, c->st[s].n_opts,
                                  a->seed + (uint64_t)r, a->budget, (int)a->batch, run, err);
  const mpt_replay *priors[MAX_ITEMS];
  int sources[MAX_ITEMS], n = 0;
  for (int q = 0; q < c->n_sp; q++)
    if (q != p) { sources[n] = q; priors[n++] = c->sp[q].replay; }
  return mpt_bench_run_with_priors(c->pr[b->problem].s, b->replay, priors, sources, n, c->st[s].name, opts,
                                   c->st[s].n_opts, a->seed + (uint64_t)r, a->budget, (int)a->batch, run, err);
}

/* runs job j into its record o (REC_HEAD values, then best-so-far and ask times, budget each) */
static int run_job(const bench_ctx *c, int64_t j, double *o, mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t S = c->n_st, R = a->repeats, B = a->budget;
  int64_t p = j / (S * R), s = (j / R) % S, r = j % R;
  const bench_space *b = &c->sp[p];
  mpt_bench_run run;
  memset(&run, 0, sizeof run);
  int joint = 0;
  int rc = run_one(c, p, s, r, &run, &joint, err);
  if (rc) mpt_error_prefix(err, "%s on %s, repeat %lld", c->st[s].label, b->label, (long long)r);
  o[REC_JOB] = (double)j;
  o[REC_RC] = rc;
  o[REC_EVALS] = (double)run.n_evals;
  o[REC_FAILED] = (double)run.n_failed;
  o[REC_ASKS] = run.n_asks;
  o[REC_STRAT_S] = run.strategy_s;
  if (!rc) {
    memcpy(o + REC_HEAD, run.best, (size_t)B * sizeof *o);
    memcpy(o + REC_HEAD + B, run.ask_s, (size_t)run.n_asks * sizeof *o);
  }
  if (!joint) mpt_bench_run_free(&run);
  return rc;
}

/* rank 0, the R gathered records of group g in rec (in rank order): runs[r] and scores[r] of repeat r (the
 * runs' best and ask_s point into rec), the group's summary, its rows of curves.csv and runs.csv */
static int finish_group(const bench_ctx *c, int64_t g, double *rec, mpt_bench_run *runs, double *scores,
                        const int64_t *cps, int n_cps, mpt_bench_summary *sum, bench_writer *w, mpt_error *err) {
  int64_t R = c->a.repeats, B = c->a.budget, L = REC_HEAD + 2 * B;
  const mpt_bench_ref *ref = &c->sp[g / c->n_st].ref;
  for (int64_t i = 0; i < R; i++) {
    double *o = rec + i * L;
    int64_t r = (int64_t)o[REC_JOB] - g * R;
    mpt_bench_run *run = &runs[r];
    run->n_evals = (int64_t)o[REC_EVALS];
    run->n_failed = (int64_t)o[REC_FAILED];
    run->n_asks = (int)o[REC_ASKS];
    run->strategy_s = o[REC_STRAT_S];
    run->best = o + REC_HEAD;
    run->ask_s = o + REC_HEAD + B;
    scores[r] = mpt_bench_score(ref, run->best, run->n_evals, B, c->a.step);
  }
  int rc = mpt_bench_summarize(ref, runs, scores, (int)R, B, cps, n_cps, sum, err);
  return rc ? rc : write_group(c, w, g, runs, scores, err);
}

static void free_ctx(bench_ctx *c) {
  for (int i = 0; i < c->a.n_space_args; i++) {
    mpt_replay_free(c->sp[i].replay);
    mpt_bench_ref_free(&c->sp[i].ref);
    /* problem paths of PROBLEM:DATA arguments were strndup'ed, one per --space */
    if (c->sp[i].problem_path && c->sp[i].problem_path != c->a.problem) free((char *)c->sp[i].problem_path);
  }
  for (int64_t i = 0; c->joint && i < (int64_t)c->n_st * c->a.repeats * c->n_sp; i++) mpt_bench_run_free(&c->joint[i]);
  free(c->joint);
  free(c->joint_done);
  for (int i = 0; i < c->n_pr; i++) {
    mpt_space_free(c->pr[i].s);
    mpt_problem_free(c->pr[i].p);
  }
}

/* --prior-from-others, --transfer online: at least two spaces, all of one problem (config ids name the same
 * configurations), and the cache of joint campaigns; 0 or an error */
static int setup_transfer(bench_ctx *c, mpt_error *err) {
  const bench_args *a = &c->a;
  if (!a->online && !a->prior_others) return 0;
  const char *opt = a->online ? "--transfer online" : "--prior-from-others";
  if (c->n_sp < 2) return mpt_error_set(err, MPT_ERR_VALUE, "%s: needs at least two --space files", opt);
  for (int i = 1; i < c->n_sp; i++)
    if (c->sp[i].problem != c->sp[0].problem)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s: --space %s has another problem (%s) than --space %s (%s)", opt,
                           c->sp[i].data_path, c->sp[i].problem_path, c->sp[0].data_path, c->sp[0].problem_path);
  if (!a->online) return 0;
  int64_t n = (int64_t)c->n_st * a->repeats;
  c->joint = calloc((size_t)(n * c->n_sp), sizeof *c->joint);
  c->joint_done = calloc((size_t)n, 1);
  if (!c->joint || !c->joint_done) return mpt_error_set(err, MPT_ERR_NOMEM, "bench: out of memory");
  return 0;
}

/* the strategies and their options, the spaces, and every variant created once (its options checked by the
 * strategy) before any run; 0 or an error */
static int setup_bench(bench_ctx *c, mpt_error *err) {
  const bench_args *a = &c->a;
  int rc = parse_strategies(a, c->st, &c->n_st, err);
  if (!rc) rc = apply_global_options(a, c->st, c->n_st, err);
  if (!rc) {
    c->n_sp = a->n_space_args;
    rc = setup_spaces(a, c->sp, c->pr, &c->n_pr, err);
  }
  for (int s = 0; !rc && s < c->n_st; s++) {
    mpt_strategy *t = NULL;
    const bench_space *b = &c->sp[0];
    rc = mpt_strategy_create(c->st[s].name, c->pr[b->problem].s, (const char *const *)c->st[s].opts,
                             c->st[s].n_opts, a->seed, a->budget, &t, err);
    if (rc) mpt_error_prefix(err, "--strategy %s", c->st[s].label);
    mpt_strategy_destroy(t);
  }
  return rc ? rc : setup_transfer(c, err);
}

/* rank 0, before --out is created: the plot script, no output replacing an input, a writable --out; then
 * (every rank) a gather that fits an int, and (rank 0) the CSV writer open; 0 or an error */
static int prepare_outputs(bench_ctx *c, int rank, bench_writer *w, mpt_error *err) {
  const bench_args *a = &c->a;
  int rc = 0;
  if (rank == 0 && !a->no_plot) rc = find_plot_script(a, c->plot_script, sizeof c->plot_script, err);
  if (!rc && rank == 0) rc = check_outputs(a, c->sp, c->n_sp, a->no_plot ? NULL : c->plot_script, err);
  if (!rc && rank == 0) rc = mkdir_p(a->out, err);
  int64_t R = a->repeats, L = REC_HEAD + 2 * a->budget;
  if (!rc && R * L > INT_MAX)
    rc = mpt_error_set(err, MPT_ERR_VALUE, "too many repeats x budget for one gather (%lld values)", (long long)(R * L));
  if (!rc && rank == 0) rc = open_writer(c, w, err);
  return rc;
}

/* go/no-go: every rank stops on any rank's setup error (rc), said once: rank 0's message when the same bad
 * input fails on every rank, else the failing rank's. 1 when the run stops */
static int setup_failed(int rc, int rank, const mpt_error *err) {
  int bad = rc != 0, any_bad = 0, bad0 = bad;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Bcast(&bad0, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (any_bad && rc && (rank == 0 || !bad0)) fprintf(stderr, "mptune bench: %s\n", err->msg);
  return any_bad;
}

/* rank 0: a file that does not cover its space exactly is scored all the same, but said once; a space whose
 * optimum random search is expected to find at the first score term has no score */
static void warn_about_spaces(const bench_ctx *c) {
  for (int i = 0; i < c->n_sp; i++) {
    char msg[1024];
    const char *in_progress = mpt_replay_in_progress(c->sp[i].replay);
    if (in_progress[0]) fprintf(stderr, "mptune bench: warning: %s\n", in_progress);
    if (mpt_replay_coverage(c->sp[i].replay, "they count as failed evaluations", msg, sizeof msg))
      fprintf(stderr, "mptune bench: warning: --space %s: %s\n", c->sp[i].data_path, msg);
    /* E_random(k) only decreases with k: equal to the optimum at the first score term, it is at every one */
    const mpt_bench_ref *ref = &c->sp[i].ref;
    int64_t k0 = c->a.budget < c->a.step ? c->a.budget : c->a.step;
    if (ref->n_valid > 0 && isnan(mpt_bench_score_at(ref, k0, mpt_bench_optimum(ref))))
      fprintf(stderr,
              "mptune bench: warning: --space %s: no score: random search is expected to find the optimum "
              "within %lld evaluations (%lld configurations); its best@k columns are still shown\n",
              c->sp[i].data_path, (long long)k0, (long long)ref->n);
  }
}

/* the summary's checkpoints: 20, 60, 100 and 220 evaluations within the budget B, and B; their count */
static int summary_checkpoints(int64_t B, int64_t cps[5]) {
  static const int64_t checkpoints[] = {20, 60, 100, 220};
  int n_cps = 0;
  for (int k = 0; k < 4; k++)
    if (checkpoints[k] <= B) cps[n_cps++] = checkpoints[k];
  if (!n_cps || cps[n_cps - 1] != B) cps[n_cps++] = B;
  return n_cps;
}

/* The runs: jobs j = group * R + repeat (group = space * S + strategy), j % size == rank, as one round-robin
 * over all of them; one group at a time: every rank runs its jobs of the group, rank 0 gathers them, scores
 * them (sum[g]) and writes the group's rows, so that it holds R traces (best-so-far and ask times, 2 x budget
 * doubles each), not those of every group. Rank 0 writes its records straight into the first block of the
 * gather buffer (MPI_IN_PLACE). 0 or this rank's error; *any_bad: some rank failed; *elapsed: seconds */
static int run_groups(const bench_ctx *c, int rank, int size, bench_writer *w, mpt_bench_summary *sum, int *any_bad,
                      double *elapsed, mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t S = c->n_st, R = a->repeats, B = a->budget;
  int64_t n_groups = (int64_t)c->n_sp * S, n_jobs = n_groups * R, L = REC_HEAD + 2 * B;
  int rc = 0;
  int64_t mine = n_jobs > rank ? (n_jobs - rank + size - 1) / size : 0;
  int64_t n_rec = (rank == 0 ? R : (R + size - 1) / size) * L;
  double *rec = calloc((size_t)n_rec, sizeof *rec);
  mpt_bench_run *runs = rank == 0 ? calloc((size_t)R, sizeof *runs) : NULL;
  double *scores = rank == 0 ? malloc((size_t)R * sizeof *scores) : NULL;
  int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
  int *displs = rank == 0 ? malloc((size_t)size * sizeof *displs) : NULL;
  if (!rec || (rank == 0 && (!runs || !scores || !sum || !counts || !displs)))
    rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int64_t cps[5];
  int n_cps = summary_checkpoints(B, cps);
  double t_start = MPI_Wtime(), t_last = t_start;
  int show = rank == 0 && (a->progress == 1 || (a->progress < 0 && mpt_progress_terminal(stderr)));
  int64_t done = 0;
  *any_bad = 0;
  for (int64_t g = 0; g < n_groups; g++) {
    int64_t first, n_mine = group_jobs(g, R, rank, size, &first);
    for (int64_t i = 0; !rc && i < n_mine; i++, done++) {
      rc = run_job(c, first + i * size, rec + i * L, err);
      if (show && (MPI_Wtime() - t_last >= a->progress_every || done + 1 == mine)) {
        t_last = MPI_Wtime();
        print_progress(done + 1, mine, t_last - t_start);
      }
    }
    /* rank 0's rc also says that the last group could not be scored or written */
    int bad = rc != 0;
    MPI_Allreduce(&bad, any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (*any_bad) break;
    if (rank == 0)
      for (int q = 0, off = 0; q < size; q++) {
        int64_t unused;
        counts[q] = (int)(group_jobs(g, R, q, size, &unused) * L);
        displs[q] = off;
        off += counts[q];
      }
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : rec, (int)(n_mine * L), MPI_DOUBLE, rec, counts, displs, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    if (rank == 0) rc = finish_group(c, g, rec, runs, scores, cps, n_cps, &sum[g], w, err);
  }
  *elapsed = MPI_Wtime() - t_start;
  free(rec);
  free(runs); /* their best and ask_s pointed into rec */
  free(scores);
  free(counts);
  free(displs);
  return rc;
}

/* rank 0, after every group: curves.csv and runs.csv closed, the tables, summary.csv, the closing line and
 * the plot; 0 or an error */
static int report_results(const bench_ctx *c, const mpt_bench_summary *sum, bench_writer *w, int size, double elapsed,
                          mpt_error *err) {
  const bench_args *a = &c->a;
  int64_t n_jobs = (int64_t)c->n_sp * c->n_st * a->repeats;
  int rc = close_writer(w, 1, err);
  if (!rc) {
    print_tables(c, sum);
    rc = write_summary(c, sum, err);
  }
  if (!rc) {
    printf("%lld runs on %d rank%s in %.1f s; wrote %s/curves.csv, runs.csv, summary.csv", (long long)n_jobs, size,
           size > 1 ? "s" : "", elapsed, a->out);
    if (!a->no_plot) {
      char png[4096];
      snprintf(png, sizeof png, "%s/bench.png", a->out);
      rc = run_plot(c->plot_script, w->curves_path, png, err);
      if (!rc) printf(", bench.png");
    }
    printf("\n");
  }
  return rc;
}

int mpt_cmd_bench(int argc, char **argv) {
  mpt_outfile_remove_on_signal(); /* no cut temporary output left by Ctrl-C */
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bench_ctx *c = calloc(1, sizeof *c);
  mpt_error err;
  mpt_error_clear(&err);
  if (!c) {
    if (rank == 0) fprintf(stderr, "mptune bench: out of memory\n");
    return 1;
  }
  int rc = parse_args(argc, argv, &c->a, &err);
  if (!rc && c->a.help) {
    if (rank == 0) usage(stdout);
    free(c);
    return 0;
  }
  if (!rc) rc = setup_bench(c, &err);
  bench_writer w = {0};
  if (!rc) rc = prepare_outputs(c, rank, &w, &err);
  if (setup_failed(rc, rank, &err)) {
    close_writer(&w, 0, &err);
    free_ctx(c);
    free(c);
    return 1;
  }
  if (rank == 0) warn_about_spaces(c);

  int64_t n_groups = (int64_t)c->n_sp * c->n_st;
  mpt_bench_summary *sum = rank == 0 ? calloc((size_t)n_groups, sizeof *sum) : NULL;
  int any_bad = 0;
  double elapsed = 0;
  rc = run_groups(c, rank, size, &w, sum, &any_bad, &elapsed, &err);
  if (rc) fprintf(stderr, "mptune bench: %s\n", err.msg);
  if (rank != 0 || any_bad || rc) {
    close_writer(&w, 0, &err);
    free(sum);
    free_ctx(c);
    free(c);
    return any_bad || rc ? 1 : 0;
  }
  rc = report_results(c, sum, &w, size, elapsed, &err);
  if (rc) fprintf(stderr, "mptune bench: %s\n", err.msg);
  free(sum);
  free_ctx(c);
  free(c);
  return rc ? 1 : 0;
}
