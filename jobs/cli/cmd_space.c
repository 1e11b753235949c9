/* jobs/cli/cmd_space.c: `mptune space FILE.json [--json] [--list FILE.csv] [--repeat N]`: builds the search
 * space of a T1 file and prints its parameters, constraints, Cartesian size, valid count, density,
 * construction time and memory (or one JSON object), optionally writing the valid configurations as CSV.
 * Runs on rank 0 only when started under mpiexec. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"
#include "spaces/space.h"

static void space_usage(FILE *f) {
  fprintf(f,
          "usage: mptune space FILE.json [--json] [--list FILE.csv] [--repeat N]\n"
          "  Builds the set of valid configurations of a T1 problem and prints its statistics.\n"
          "  --json         print one JSON object (cartesian, valid, density, seconds, bytes, params, ...)\n"
          "  --list FILE    write the valid configurations as CSV (header = parameter names; '-' or\n"
          "                 /dev/stdout = stdout, the report then on stderr)\n"
          "  --repeat N     build the space N times and report the median construction time\n");
}

static const char *ptype_name(mpt_ptype t) {
  switch (t) {
    case MPT_P_INT: return "int";
    case MPT_P_UINT: return "uint";
    case MPT_P_FLOAT: return "float";
    case MPT_P_BOOL: return "bool";
    case MPT_P_STRING: return "string";
  }
  return "?";
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* s as a CSV field (Python's csv.writer, QUOTE_MINIMAL); alone: the only field of its row, where an empty
 * one is written "" (else the row would be an empty line, which CSV readers skip) */
static char *csv_field(const char *s, int alone) {
  int quote = strpbrk(s, ",\"\r\n") != NULL || (alone && !s[0]);
  size_t n = strlen(s);
  char *o = malloc(2 * n + 3);
  if (!o) return NULL;
  size_t k = 0;
  if (quote) o[k++] = '"';
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') o[k++] = '"';
    o[k++] = s[i];
  }
  if (quote) o[k++] = '"';
  o[k] = '\0';
  return o;
}


static int write_list(const mpt_space *s, const char *path, mpt_error *err) {
  const mpt_problem *p = mpt_space_problem(s);
  int d = p->n_params, rc = 0;
  /* whole or not at all (a new PATH.tmp.XXXXXX renamed), a device or pipe in place; "-" (standard output) through a
   * stream of its own on a copy of the descriptor: MPICH's MPI_Init leaves stdout unbuffered (setbuf(stdout,
   * NULL)), and writing the list there would make one write() per field (50x slower into a pipe) */
  FILE *f = mpt_outfile_open(path, err);
  if (!f) return err->code;
  char ***txt = calloc((size_t)d, sizeof(char **));
  int *idx = malloc(sizeof(int) * (size_t)d);
  if (!txt || !idx) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); goto out; }
  for (int i = 0; i < d; i++) {
    txt[i] = calloc((size_t)p->params[i].n_values, sizeof(char *));
    if (!txt[i]) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); goto out; }
    for (int v = 0; v < p->params[i].n_values; v++) {
      char sb[1024];
      int need = mpt_value_str_repr(&p->params[i].values[v], sb, sizeof sb);
      char *b = sb;
      if (need >= (int)sizeof sb) {
        if (!(b = malloc((size_t)need + 1))) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); goto out; }
        mpt_value_str_repr(&p->params[i].values[v], b, need + 1);
      }
      txt[i][v] = csv_field(b, d == 1);
      if (b != sb) free(b);
      if (!txt[i][v]) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); goto out; }
    }
  }
  for (int i = 0; i < d; i++) {
    char *h = csv_field(p->params[i].name, d == 1);
    if (!h) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); goto out; }
    fprintf(f, "%s%s", i ? "," : "", h);
    free(h);
  }
  fputc('\n', f);
  int64_t n = mpt_space_size(s);
  for (int64_t id = 0; id < n; id++) {
    mpt_space_config(s, id, idx);
    for (int i = 0; i < d; i++) {
      if (i) fputc(',', f);
      fputs(txt[i][idx[i]], f);
    }
    fputc('\n', f);
  }
out:
  if (txt)
    for (int i = 0; i < d; i++) {
      if (txt[i])
        for (int v = 0; v < p->params[i].n_values; v++) free(txt[i][v]);
      free(txt[i]);
    }
  free(txt);
  free(idx);
  int closed = mpt_outfile_close(f, path, rc == 0, err); /* no cut list left; after another error err keeps it */
  if (!rc) rc = closed;
  return rc;
}

static void value_text(const mpt_value *v, char *buf, int cap) { mpt_value_repr(v, buf, cap); }

/* a bad option value: its message, exit status 2 (a usage error) */
static int option_error(const mpt_error *err) {
  fprintf(stderr, "mptune space: %s\n", err->msg);
  return 2;
}

/* the command line of `mptune space` */
typedef struct space_args {
  const char *file, *list;
  int json, repeat;
} space_args;

/* --repeat's value (a positive int) into a->repeat; -1, or the exit status of a bad value */
static int parse_repeat(int argc, char **argv, int *i, space_args *a, mpt_error *err) {
  const char *v = mpt_cmd_value(argc, argv, i, err);
  int64_t r = 0;
  if (!v || mpt_cmd_parse_int("--repeat", v, 1, &r, err)) return option_error(err);
  if (r > INT_MAX) {
    mpt_error_set(err, MPT_ERR_VALUE, "--repeat: bad value '%s' (at most %d)", v, INT_MAX);
    return option_error(err);
  }
  a->repeat = (int)r;
  return -1;
}

/* the options and the file: -1 to go on, else the exit status (0 after --help, 2 for a usage error) */
static int parse_space_args(int argc, char **argv, space_args *a, mpt_error *err) {
  *a = (space_args){NULL, NULL, 0, 1};
  for (int i = 1; i < argc; i++) {
    int rc = -1;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { space_usage(stdout); return 0; }
    else if (!strcmp(argv[i], "--json")) a->json = 1;
    else if (!strcmp(argv[i], "--list")) {
      if (!(a->list = mpt_cmd_value(argc, argv, &i, err))) return option_error(err);
    } else if (!strcmp(argv[i], "--repeat")) {
      if ((rc = parse_repeat(argc, argv, &i, a, err)) >= 0) return rc;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "mptune space: unknown option '%s'\n", argv[i]);
      space_usage(stderr);
      return 2;
    } else if (!a->file) a->file = argv[i];
    else { fprintf(stderr, "mptune space: more than one file given ('%s')\n", argv[i]); return 2; }
  }
  if (!a->file) { space_usage(stderr); return 2; }
  return -1;
}

/* --list, before the work: not the problem file, and a place it can be written; -1 to go on, else the
 * exit status */
static int check_list_output(const space_args *a, mpt_error *err) {
  if (a->list && strcmp(a->list, "-") != 0 && mpt_same_file(a->list, a->file)) {
    fprintf(stderr, "mptune space: --list %s is the problem file: it would be replaced by the list\n", a->list);
    return 2;
  }
  if (a->list && strcmp(a->list, "-") != 0 && mpt_cmd_check_output("--list", a->list, err)) {
    fprintf(stderr, "mptune space: %s\n", err->msg);
    return 1;
  }
  return -1;
}

/* the space built `repeat` times (times[r]: each construction's seconds, sorted), the last one kept in *s;
 * 0 or nonzero (the message printed, *s freed) */
static int build_timed(const mpt_problem *p, int repeat, double *times, mpt_space **s, mpt_error *err) {
  *s = NULL;
  for (int r = 0; r < repeat; r++) {
    mpt_space_free(*s);
    *s = NULL;
    if (mpt_cmd_build_space("space", 1, p, s, err)) {
      fprintf(stderr, "mptune space: %s\n", err->msg);
      return 1;
    }
    mpt_space_stats st;
    mpt_space_stats_get(*s, &st);
    times[r] = st.seconds;
  }
  qsort(times, (size_t)repeat, sizeof(double), cmp_double);
  return 0;
}

/* what the report says of the space beyond the problem */
typedef struct space_report {
  mpt_space_stats st;
  double density, median, min;  /* valid / cartesian; construction seconds */
  int repeat;
  int64_t def;                   /* the default configuration's id, or -1 */
} space_report;

static void report_json(FILE *rep, const mpt_problem *p, const space_report *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "problem", p->name);
  cJSON_AddStringToObject(o, "file", p->path);
  cJSON *pa = cJSON_AddArrayToObject(o, "params");
  for (int i = 0; i < p->n_params; i++) {
    const mpt_param *par = &p->params[i];
    char a[256], b[256];
    value_text(&par->values[0], a, sizeof a);
    value_text(&par->values[par->n_values - 1], b, sizeof b);
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "name", par->name);
    cJSON_AddStringToObject(q, "type", ptype_name(par->type));
    cJSON_AddNumberToObject(q, "n_values", par->n_values);
    cJSON_AddStringToObject(q, "first", a);
    cJSON_AddStringToObject(q, "last", b);
    cJSON_AddItemToArray(pa, q);
  }
  cJSON *ca = cJSON_AddArrayToObject(o, "conditions");
  for (int k = 0; k < p->n_conditions; k++) cJSON_AddItemToArray(ca, cJSON_CreateString(p->conditions[k].source));
  cJSON_AddNumberToObject(o, "cartesian", r->st.cartesian);
  cJSON_AddNumberToObject(o, "valid", (double)r->st.valid);
  cJSON_AddNumberToObject(o, "density", r->density);
  cJSON_AddNumberToObject(o, "seconds", r->median);
  cJSON_AddNumberToObject(o, "seconds_min", r->min);
  cJSON_AddNumberToObject(o, "repeat", r->repeat);
  cJSON_AddNumberToObject(o, "bytes", (double)r->st.bytes);
  cJSON_AddNumberToObject(o, "eval_errors", (double)r->st.eval_errors);
  cJSON_AddNumberToObject(o, "default_id", (double)r->def);
  char *txt = cJSON_PrintUnformatted(o);
  if (txt) fprintf(rep, "%s\n", txt);
  free(txt);
  cJSON_Delete(o);
}

/* the parameters, one a line: name, type, number of values, first .. last */
static void report_params(FILE *rep, const mpt_problem *p) {
  fprintf(rep, "parameters: %d\n", p->n_params);
  int w = 4;
  for (int i = 0; i < p->n_params; i++) {
    int l = (int)strlen(p->params[i].name);
    if (l > w) w = l;
  }
  for (int i = 0; i < p->n_params; i++) {
    const mpt_param *par = &p->params[i];
    char a[256], b[256];
    value_text(&par->values[0], a, sizeof a);
    value_text(&par->values[par->n_values - 1], b, sizeof b);
    fprintf(rep, "  %-*s %-6s %6d values  %s .. %s\n", w, par->name, ptype_name(par->type), par->n_values, a, b);
  }
}

/* the default configuration: valid (its id), not valid, or none (the parameters without a default, by name) */
static void report_default(FILE *rep, const mpt_problem *p, int64_t def) {
  int missing = 0;
  for (int i = 0; i < p->n_params; i++) missing += p->params[i].default_index < 0;
  if (def >= 0) fprintf(rep, "default: valid (id %lld)\n", (long long)def);
  else if (missing) {
    fprintf(rep, "default: none: no default value (or one not among the values) for");
    for (int i = 0, k = 0; i < p->n_params; i++)
      if (p->params[i].default_index < 0) fprintf(rep, "%s %s", k++ ? "," : "", p->params[i].name);
    fprintf(rep, "\n");
  } else fprintf(rep, "default: not a valid configuration\n");
}

static void report_text(FILE *rep, const mpt_problem *p, const space_report *r) {
  fprintf(rep, "problem: %s (%s)\n", p->name, p->path);
  report_params(rep, p);
  fprintf(rep, "constraints: %d\n", p->n_conditions);
  for (int k = 0; k < p->n_conditions; k++) fprintf(rep, "  [%d] %s\n", k, p->conditions[k].source);
  fprintf(rep, "cartesian: %.0f\n", r->st.cartesian);
  fprintf(rep, "valid: %lld\n", (long long)r->st.valid);
  fprintf(rep, "density: %.6g%%\n", 100.0 * r->density);
  if (r->repeat > 1)
    fprintf(rep, "construction: %.3f ms (median of %d, min %.3f ms)\n", r->median * 1e3, r->repeat, r->min * 1e3);
  else
    fprintf(rep, "construction: %.3f ms\n", r->median * 1e3);
  fprintf(rep, "memory: %lld bytes (%.2f MiB)\n", (long long)r->st.bytes, (double)r->st.bytes / 1048576.0);
  report_default(rep, p, r->def);
  if (r->st.eval_errors) /* not configurations: one evaluation of a condition over few parameters covers many */
    fprintf(rep, "condition evaluations that raised an error: %lld\n", (long long)r->st.eval_errors);
}

/* the report of the space s (built `repeat` times, times sorted) and its --list; the exit status */
static int report_space(const space_args *a, const mpt_problem *p, const mpt_space *s, const double *times,
                        mpt_error *err) {
  space_report r;
  int repeat = a->repeat;
  r.repeat = repeat;
  r.median = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  r.min = times[0];
  mpt_space_stats_get(s, &r.st);
  if (mpt_space_eval_warning(s)) fprintf(stderr, "mptune space: warning: %s\n", mpt_space_eval_warning(s));
  r.density = r.st.cartesian > 0 ? (double)r.st.valid / r.st.cartesian : 0;
  r.def = mpt_space_default_id(s);
  /* with --list - (or a name of standard output: /dev/stdout, the file or pipe it is) the list is standard
   * output, and the report goes to standard error */
  FILE *rep = a->list && mpt_outfile_is_stdout(a->list) ? stderr : stdout;
  if (a->json) report_json(rep, p, &r);
  else report_text(rep, p, &r);
  fflush(rep);
  if (a->list && write_list(s, a->list, err)) {
    fprintf(stderr, "mptune space: %s\n", err->msg);
    return 1;
  }
  return 0;
}

int mpt_cmd_space(int argc, char **argv) {
  mpt_outfile_remove_on_signal(); /* no cut temporary output left by Ctrl-C */
  int rank = 0;
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;

  space_args a;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = parse_space_args(argc, argv, &a, &err);
  if (rc < 0) rc = check_list_output(&a, &err);
  if (rc >= 0) return rc;

  mpt_error_clear(&err);
  mpt_problem *p = NULL;
  if (mpt_cmd_load_problem(a.file, &p, &err)) {
    fprintf(stderr, "mptune space: %s\n", err.msg);
    mpt_problem_free(p);
    return 1;
  }
  for (int i = 0; i < p->n_warnings; i++) fprintf(stderr, "mptune space: warning: %s\n", p->warnings[i]);
  double *times = malloc(sizeof(double) * (size_t)a.repeat);
  if (!times) { mpt_problem_free(p); fprintf(stderr, "mptune space: out of memory\n"); return 1; }
  mpt_space *s = NULL;
  rc = build_timed(p, a.repeat, times, &s, &err);
  if (rc == 0) rc = report_space(&a, p, s, times, &err);
  free(times);
  mpt_space_free(s);
  mpt_problem_free(p);
  return rc;
}
