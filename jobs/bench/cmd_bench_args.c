/* jobs/bench/cmd_bench_args.c: `mptune bench`'s command line: the --help text, the options into bench_args,
 * the --strategy lists into their variants (NAME:key=value,...) and every --option given to the strategies
 * that have it. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "jobs/cli/commands.h"
#include "strategies/strategy.h"
#include "jobs/bench/cmd_bench_impl.h"

void bench_usage(FILE *f) {
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

int bench_parse_args(int argc, char **argv, bench_args *a, mpt_error *err) {
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
int bench_parse_strategies(const bench_args *a, bench_strategy *st, int *n_st, mpt_error *err) {
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
int bench_apply_global_options(const bench_args *a, bench_strategy *st, int n_st, mpt_error *err) {
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
