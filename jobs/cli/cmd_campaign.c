/* jobs/cli/cmd_campaign.c: `mptune campaign FILE --check [--classes A,B,...]`: a campaign file (docs/CAMPAIGNS.md)
 * read, checked and its plan printed (jobs/campaign/), nothing run. The device classes present are the
 * --classes given, else those the file's "simulate" names; without either they are checked when the campaign
 * runs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/campaign/campaign_file.h"
#include "jobs/campaign/campaign_plan.h"
#include "jobs/cli/commands.h"

enum { MAX_CLASSES = 256 };

static void usage(FILE *f) {
  fprintf(f, "usage: mptune campaign FILE.json --check [--classes CLASS[,CLASS...]]\n"
             "Reads a campaign file (docs/CAMPAIGNS.md; schema docs/campaign-1.0.json), checks it (keys, values,\n"
             "problems, strategies and their options, job names, logs) and prints its plan: each job's problem and\n"
             "the size of its space, strategy, options, classes, budget per class, seed and log. Nothing runs and\n"
             "nothing is written. --classes: the device classes present (as `mptune devices` names them), to check\n"
             "the classes the jobs name against; without it the file's \"simulate\" classes, if any.\n"
             "This version checks and plans campaigns; running one (one allocation, a search per job and class)\n"
             "comes with the coordinator's searches per class.\n");
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

static int parse_args(int argc, char **argv, const char **file, int *check, char **classes, mpt_error *err) {
  static const char *const known[] = {"--check", "--classes", "--help", NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (*file) return mpt_error_set(err, MPT_ERR_VALUE, "unexpected argument '%s' (one campaign file only)", a);
      *file = a;
    } else if (mpt_cmd_known("campaign", a, known, err)) {
      return err->code;
    } else if (strcmp(a, "--check") == 0) {
      *check = 1;
    } else {
      const char *v = mpt_cmd_value(argc, argv, &i, err);
      if (!v) return err->code;
      *classes = (char *)v;
    }
  }
  if (!*file) return mpt_error_set(err, MPT_ERR_VALUE, "missing the campaign file (mptune campaign FILE.json --check)");
  if (!*check)
    return mpt_error_set(err, MPT_ERR_VALUE, "this version checks and plans a campaign: give --check (see mptune "
                         "campaign --help)");
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
  mpt_error err;
  mpt_error_clear(&err);
  int rc = parse_args(argc, argv, &file, &check, &classes, &err);
  if (rc == 0 && rank == 0) rc = check_campaign(file, classes, &err);
  if (rc < 0 && rank == 0) fprintf(stderr, "mptune campaign: %s\n", err.msg);
  return rc < 0 ? 1 : 0;
}
