/* jobs/job_classes.h: the device classes of a run: the workers left out (no usable device), the simulated
 * classes of the command line (--simulate CLASS=FILE, repeatable) and which worker rank serves which class
 * (--class-ranks CLASS=R1,R2,..., else round-robin by rank), on rank 0 the searches, one per class, and the
 * run's class table: the workers grouped by their device_class
 * (the logged classes of a resumed run first, in their logged order, so that a record's class index keeps
 * its meaning), printed grouped by class and kept in the run log as text (one class a line:
 * "name<TAB>vendor<TAB>device<TAB>arch"). */
#ifndef MPT_JOB_CLASSES_H
#define MPT_JOB_CLASSES_H
#include <mpi.h>
#include <stdio.h>
#include "coordinator/coordinator.h"
#include "evaluators/evaluator.h"
#include "spaces/sys/error.h"

#define MPT_JOB_MAX_CLASSES 32

typedef struct mpt_job_options mpt_job_options;

typedef struct mpt_job_class {
  char name[64], vendor[32], device[128], arch[32];
  int *ranks;                  /* its workers in this session (none: it waits) */
  int n_ranks;
} mpt_job_class;

typedef struct mpt_job_classes {
  mpt_job_class c[MPT_JOB_MAX_CLASSES];
  int n;
} mpt_job_classes;

/* Splits a --simulate value: "CLASS=FILE" (CLASS without '/', and the whole value no existing file) into
 * its class and file (class NULL: the plain form, one class named by its device). 0, or an error naming
 * the value. */
int mpt_job_sim_split(const char *value, char *cls, size_t cap, const char **file, mpt_error *err);

/* Checks the --class-ranks values of o against the simulated classes and the number of ranks (each rank
 * 1..size-1 at most once; with simulated classes each CLASS one of them). 0 or an error naming the value. */
int mpt_job_class_ranks_check(const mpt_job_options *o, int size, mpt_error *err);

/* The class a worker rank serves by the command line: the class name (into cls, "" when none is given:
 * its device's own key) and, with simulated classes, the index of its --simulate CLASS=FILE (else -1). */
int mpt_job_rank_class(const mpt_job_options *o, int rank, int size, char *cls, size_t cap);

/* "CLASS=FILE,CLASS=FILE" of the simulated classes (the log's simulate attribute), or o->simulate. */
void mpt_job_sim_text(const mpt_job_options *o, char *buf, size_t cap);

/* Rank 0: the class table of devs[0..n) (rank < 0 or absent[rank]: left out), after the logged table text
 * (NULL or "": none); new classes in the order of o's simulated classes, then of their first worker's rank.
 * 0, or an error (more than MPT_JOB_MAX_CLASSES classes). */
int mpt_job_classes_build(mpt_job_classes *t, const char *logged, const mpt_job_options *o, const mpt_device_info *devs,
                          int n, const unsigned char *absent, mpt_error *err);
/* An error when no worker rank of a run of size ranks is given a simulated class of o and it is not a logged
 * class either (a logged one waits; one whose workers could not open is left out, said before). */
int mpt_job_classes_check_sim(const mpt_job_classes *t, const mpt_job_options *o, int size, mpt_error *err);
void mpt_job_classes_free(mpt_job_classes *t);
/* The table as the log keeps it (malloc'd text). */
char *mpt_job_classes_text(const mpt_job_classes *t);
/* The evaluators' go/no-go (collective over comm; rc: this rank's opening of its evaluator, err its message):
 * with one rank, or when no worker could open its evaluator, every rank fails together (rank 0 says why, as
 * mpt_wire_gonogo does); otherwise a worker without a usable device is left out: rank 0 warns on stderr ("mptune
 * CMD: warning: worker rank N has no usable device (...)") and gets *absent (malloc'd, per rank, 1 for one left
 * out). 0, or the error every rank returns. */
int mpt_job_workers_gonogo(MPI_Comm comm, int is_worker, const char *cmd, int rc, unsigned char **absent,
                           mpt_error *err);

/* Rank 0: one search per class of t (job 0, the class index its device_class): the first class's strategy is
 * `first`, each other class k gets a strategy of the same type and options (strats[k], the caller destroys it)
 * seeded by a splitmix64 step of o->seed and k; o's budget each; the default configuration first in a tune
 * run. 0 or the error of a strategy's creation. */
int mpt_job_classes_searches(const mpt_job_classes *t, const mpt_job_options *o, const mpt_space *space,
                             mpt_strategy *first, int64_t default_id, mpt_strategy **strats,
                             mpt_coord_search *searches, mpt_error *err);

/* The device table devs[0..n), grouped by class (one class: the plain table). */
void mpt_job_classes_print(FILE *f, const mpt_job_classes *t, const mpt_device_info *devs, int n);

#endif
