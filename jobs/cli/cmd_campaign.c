/* jobs/cli/cmd_campaign.c: `mptune campaign FILE`: a campaign file (docs/CAMPAIGNS.md) run in one allocation
 * (jobs/campaign/campaign_run.h), or with --check read, checked and its plan printed, nothing run. With --check
 * the device classes present are the --classes given, else those the file's "simulate" names; without either
 * they are checked when the campaign runs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/campaign/campaign_file.h"
#include "jobs/campaign/campaign_plan.h"
#include "jobs/campaign/campaign_run.h"
#include "jobs/cli/commands.h"

enum { MAX_CLASSES = 256 };

static void usage(FILE *f) {
  fprintf(f, "usage: mpiexec.mpich -n N mptune campaign FILE.json [--resume] [--class-ranks CLASS=R1,R2,...]...\n"
             "                                    [--no-cross] [--progress auto|tty|lines|off | --no-progress]\n"
             "       mptune campaign FILE.json --check [--classes CLASS[,CLASS...]]\n"
             "Runs a campaign file (docs/CAMPAIGNS.md; schema docs/campaign-1.0.json) in one allocation: every job is\n"
             "opened on every rank (rank 0 coordinates and keeps one log per job, each worker opens an evaluator for\n"
             "each job its class runs), and one run serves every (job, device class) search, each with its job's\n"
             "strategy, seed, budget for that class and log. A worker serves its class in every job that runs it; when\n"
             "its job has no work left for it, it takes work from another job, so devices do not idle while work\n"
             "remains. The progress line shows each search as JOB/CLASS; at the end each job's summary follows as\n"
             "`tune` prints it. A job whose log exists is resumed (running the same command again continues the\n"
             "campaign; --resume says so explicitly); a job whose log is finished is reported and not run again,\n"
             "unless the file gives one of its classes a budget above the evaluations that class holds: then that\n"
             "class's search alone goes on. A job stops at its own \"time\", else the file's; the run ends when every\n"
             "job is done or out of time. The classes the jobs name are checked against the workers' before any log\n"
             "is written. SIGINT/SIGTERM stop every job (in-flight evaluations get the file's \"grace\" seconds, then\n"
             "they are logged as cancelled).\n"
             "--class-ranks CLASS=R1,R2: the worker ranks of a class (a simulated campaign's \"simulate\" classes;\n"
             "default: round-robin by rank, as tune). --no-cross: no portability evaluations of each class's best on\n"
             "the job's other classes.\n"
             "--check reads and checks the file (keys, values, problems, strategies and their options, job names,\n"
             "logs) and prints its plan: each job's problem and the size of its space, strategy, options, classes,\n"
             "budget per class, seed and log. Nothing runs and nothing is written. --classes: the device classes\n"
             "present (as `mptune devices` names them), to check the classes the jobs name against; without it the\n"
             "file's \"simulate\" classes, if any.\n");
}

/* --classes A,B,C split at commas into names (pointers into text) */
static int split_classes(char *text, const char **names, int cap, mpt_error *err) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(text, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (n == cap) return mpt_error_set(err, MPT_ERR_VALUE, "--classes: more than %d classes", cap);
    names[n++] = t;
  }
  if (n == 0) return mpt_error_set(err, MPT_ERR_VALUE, "--classes: expected CLASS[,CLASS...]");
  return n;
}

static int set_progress(const char *v, mpt_campaign_run_options *ro, mpt_error *err) {
  static const char *const names[] = {"auto", "tty", "lines", "off"};
  static const mpt_progress_mode modes[] = {MPT_PROGRESS_AUTO, MPT_PROGRESS_TTY, MPT_PROGRESS_LINES, MPT_PROGRESS_OFF};
  for (int k = 0; k < 4; k++)
    if (strcmp(v, names[k]) == 0) return ro->progress = modes[k], 0;
  return mpt_error_set(err, MPT_ERR_VALUE, "--progress %s: expected auto, tty, lines or off", v);
}

/* an option with a value (a is its name, v the value) */
static int take_value(const char *a, const char *v, char **classes, mpt_campaign_run_options *ro, mpt_error *err) {
  if (strcmp(a, "--classes") == 0) {
    *classes = (char *)v;
  } else if (strcmp(a, "--progress") == 0) {
    return set_progress(v, ro, err);
  } else { /* --class-ranks */
    if (ro->n_class_ranks >= MPT_JOB_MAX_CLASSES)
      return mpt_error_set(err, MPT_ERR_VALUE, "too many --class-ranks (max %d)", MPT_JOB_MAX_CLASSES);
    ro->class_ranks[ro->n_class_ranks++] = v;
  }
  return 0;
}

static int parse_args(int argc, char **argv, const char **file, int *check, char **classes,
                      mpt_campaign_run_options *ro, mpt_error *err) {
  static const char *const known[] = {"--check", "--classes", "--class-ranks", "--resume", "--no-cross", "--progress",
                                      "--no-progress", "--help", NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (*file) return mpt_error_set(err, MPT_ERR_VALUE, "unexpected argument '%s' (one campaign file only)", a);
      *file = a;
    } else if (mpt_cmd_known("campaign", a, known, err)) {
      return err->code;
    } else if (strcmp(a, "--check") == 0) {
      *check = 1;
    } else if (strcmp(a, "--resume") == 0) {
      continue; /* a campaign resumes every job whose log exists */
    } else if (strcmp(a, "--no-cross") == 0) {
      ro->no_cross = 1;
    } else if (strcmp(a, "--no-progress") == 0) {
      ro->progress = MPT_PROGRESS_OFF;
    } else {
      const char *v = mpt_cmd_value(argc, argv, &i, err);
      if (!v || take_value(a, v, classes, ro, err) < 0) return err->code;
    }
  }
  if (!*file) return mpt_error_set(err, MPT_ERR_VALUE, "missing the campaign file (mptune campaign FILE.json)");
  return 0;
}

static int check_campaign(const char *file, char *classes_arg, mpt_error *err) {
  mpt_campaign *c;
  int rc = mpt_campaign_load(file, &c, err);
  if (rc < 0) return rc;
  const char *classes[MAX_CLASSES];
  int n = classes_arg ? split_classes(classes_arg, classes, MAX_CLASSES, err)
                      : mpt_campaign_sim_classes(c, classes, MAX_CLASSES);
  rc = n < 0 ? n : mpt_campaign_plan(c, classes, n, stdout, err);
  if (rc == 0) printf("ok: %s is a valid campaign of %d job%s\n", file, c->n_jobs, c->n_jobs == 1 ? "" : "s");
  mpt_campaign_free(c);
  return rc;
}

int mpt_cmd_campaign(int argc, char **argv) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      if (rank == 0) usage(stdout);
      return 0;
    }
  const char *file = NULL;
  char *classes = NULL;
  int check = 0;
  mpt_campaign_run_options ro;
  memset(&ro, 0, sizeof ro);
  ro.progress = MPT_PROGRESS_AUTO;
  ro.argc = argc, ro.argv = argv;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = parse_args(argc, argv, &file, &check, &classes, &ro, &err);
  if (rc == 0 && check) {
    if (rank == 0) rc = check_campaign(file, classes, &err);
  } else if (rc == 0) {
    mpt_campaign *c; /* every rank reads the same file: all fail together */
    rc = mpt_campaign_load(file, &c, &err);
    if (rc == 0) {
      int status = mpt_campaign_run(c, &ro);
      mpt_campaign_free(c);
      return status;
    }
  }
  if (rc < 0 && rank == 0) fprintf(stderr, "mptune campaign: %s\n", err.msg);
  return rc < 0 ? 1 : 0;
}
