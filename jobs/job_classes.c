/* jobs/job_classes.c: the device classes of a run (jobs/job_classes.h): simulated classes and ranks
 * assigned to classes on the command line, and rank 0's class table (built, kept as text, printed). */
#include "jobs/job_classes.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "jobs/job.h"
#include "mpi/device.h"
#include "mpi/wire.h"

int mpt_job_sim_split(const char *value, char *cls, size_t cap, const char **file, mpt_error *err) {
  const char *eq = strchr(value, '=');
  struct stat sb;
  cls[0] = '\0';
  *file = value;
  if (!eq || memchr(value, '/', (size_t)(eq - value)) || stat(value, &sb) == 0) return 0; /* --simulate FILE */
  if (eq == value || !eq[1])
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate %s: expected FILE or CLASS=FILE", value);
  if ((size_t)(eq - value) >= cap || strcspn(value, "\t\n,") < (size_t)(eq - value))
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate %s: a class name has at most %zu characters, no tab, "
                         "newline or comma", value, cap - 1);
  snprintf(cls, cap, "%.*s", (int)(eq - value), value);
  *file = eq + 1;
  return 0;
}

/* the simulated class named name (len bytes), -1 when none */
static int sim_index(const mpt_job_options *o, const char *name, size_t len) {
  for (int i = 0; i < o->n_sim; i++)
    if (strlen(o->sim_class[i]) == len && strncmp(o->sim_class[i], name, len) == 0) return i;
  return -1;
}

/* whether --class-ranks value v lists rank (v: "CLASS=1,2,..."; a bad list lists nothing) */
static int lists_rank(const char *v, int rank) {
  const char *p = strchr(v, '=');
  while (p && *p) {
    char *end;
    long r = strtol(p + 1, &end, 10);
    if (end == p + 1) return 0;
    if (r == rank) return 1;
    p = *end == ',' ? end : NULL;
  }
  return 0;
}

/* the ranks of --class-ranks value v ("CLASS=1,2,...") marked in seen (size entries); 0 or an error */
static int mark_ranks(const char *v, int size, unsigned char *seen, mpt_error *err) {
  for (const char *p = strchr(v, '=') + 1; *p;) {
    char *end;
    long r = strtol(p, &end, 10);
    if (end == p || (*end && *end != ',') || r < 1 || r >= size)
      return mpt_error_set(err, MPT_ERR_VALUE, "--class-ranks %s: ranks are worker ranks 1..%d, separated by commas",
                           v, size - 1);
    if (seen[r]++) return mpt_error_set(err, MPT_ERR_VALUE, "--class-ranks %s: rank %ld is given a class twice", v, r);
    p = *end ? end + 1 : end;
  }
  return 0;
}

int mpt_job_class_ranks_check(const mpt_job_options *o, int size, mpt_error *err) {
  unsigned char *seen = calloc((size_t)size + 1, 1);
  if (!seen) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = 0;
  for (int i = 0; rc == 0 && i < o->n_class_ranks; i++) {
    const char *v = o->class_ranks[i], *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1] || strcspn(v, "\t\n") < strlen(v))
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--class-ranks %s: expected CLASS=RANK,RANK,...", v);
    else if (o->n_sim > 0 && sim_index(o, v, (size_t)(eq - v)) < 0)
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--class-ranks %s: no --simulate %.*s=FILE names that class", v,
                         (int)(eq - v), v);
    else
      rc = mark_ranks(v, size, seen, err);
  }
  free(seen);
  return rc;
}

int mpt_job_rank_class(const mpt_job_options *o, int rank, int size, char *cls, size_t cap) {
  cls[0] = '\0';
  for (int i = 0; i < o->n_class_ranks; i++) {
    const char *v = o->class_ranks[i];
    if (!lists_rank(v, rank)) continue;
    size_t len = strcspn(v, "=");
    snprintf(cls, cap, "%.*s", (int)len, v);
    return o->n_sim > 0 ? sim_index(o, v, len) : -1;
  }
  if (o->n_sim == 0) return -1;
  int k = size > 1 ? (rank - 1) % o->n_sim : 0; /* round-robin over the workers */
  snprintf(cls, cap, "%s", o->sim_class[k]);
  return k;
}

void mpt_job_sim_text(const mpt_job_options *o, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = '\0';
  if (o->n_sim == 0) {
    snprintf(buf, cap, "%s", o->simulate ? o->simulate : "");
    return;
  }
  for (int i = 0; i < o->n_sim && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%s=%s", i ? "," : "", o->sim_class[i], o->sim_file[i]);
}

/* the class named name, appended (with d's vendor, device and arch) when new; -1 when the table is full */
static int class_of(mpt_job_classes *t, const char *name, const mpt_device_info *d) {
  for (int k = 0; k < t->n; k++)
    if (strcmp(t->c[k].name, name) == 0) return k;
  if (t->n == MPT_JOB_MAX_CLASSES) return -1;
  mpt_job_class *c = &t->c[t->n];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  if (d) {
    snprintf(c->vendor, sizeof c->vendor, "%s", d->vendor);
    snprintf(c->device, sizeof c->device, "%s", d->name);
    snprintf(c->arch, sizeof c->arch, "%s", d->arch);
  }
  return t->n++;
}

/* the logged table: one class a line, its fields separated by tabs */
static void read_logged(mpt_job_classes *t, const char *text) {
  for (const char *line = text; line && *line && t->n < MPT_JOB_MAX_CLASSES;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[512], *f[4] = {buf, "", "", ""};
    snprintf(buf, sizeof buf, "%.*s", (int)len, line);
    for (int k = 1; k < 4; k++) {
      char *tab = strchr(f[k - 1], '\t');
      if (!tab) break;
      *tab = '\0';
      f[k] = tab + 1;
    }
    mpt_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.vendor, sizeof d.vendor, "%s", f[1]);
    snprintf(d.name, sizeof d.name, "%s", f[2]);
    snprintf(d.arch, sizeof d.arch, "%s", f[3]);
    if (buf[0]) class_of(t, buf, &d);
    line = nl ? nl + 1 : NULL;
  }
}

/* a replayed run of one class resumed with another replayed file (--simulate FILE, no class: the documented way
 * on with a file that has a configuration the first lacked, with a warning) goes on as that one class */
static const char *resumed_replay_class(const mpt_job_classes *t, const mpt_job_options *o, const mpt_device_info *devs,
                                        int n, const unsigned char *absent) {
  if (t->n != 1 || o->n_sim > 0 || !o->simulate || o->n_class_ranks > 0) return NULL;
  const char *key = NULL;
  for (int i = 0; i < n; i++) {
    if (devs[i].rank < 0 || (absent && absent[devs[i].rank])) continue;
    if (key && strcmp(key, devs[i].device_class) != 0) return NULL;
    key = devs[i].device_class;
  }
  return key ? t->c[0].name : NULL;
}

/* the classes new in this run in the order the command line names them (--simulate CLASS=FILE), then as their
 * first worker comes: each worker's rank added to its class */
int mpt_job_classes_build(mpt_job_classes *t, const char *logged, const mpt_job_options *o, const mpt_device_info *devs,
                          int n, const unsigned char *absent, mpt_error *err) {
  memset(t, 0, sizeof *t);
  read_logged(t, logged);
  for (int s = 0; s < o->n_sim; s++)
    for (int i = 0; i < n; i++)
      if (devs[i].rank >= 0 && !(absent && absent[devs[i].rank]) && strcmp(devs[i].device_class, o->sim_class[s]) == 0) {
        class_of(t, devs[i].device_class, &devs[i]);
        break;
      }
  const char *same = resumed_replay_class(t, o, devs, n, absent);
  for (int i = 0; i < n; i++) {
    if (devs[i].rank < 0 || (absent && absent[devs[i].rank])) continue;
    int k = class_of(t, same ? same : devs[i].device_class, &devs[i]);
    if (k < 0) return mpt_error_set(err, MPT_ERR_VALUE, "more than %d device classes", MPT_JOB_MAX_CLASSES);
    mpt_job_class *c = &t->c[k];
    int *r = realloc(c->ranks, sizeof *r * (size_t)(c->n_ranks + 1));
    if (!r) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    c->ranks = r;
    c->ranks[c->n_ranks++] = devs[i].rank;
  }
  return 0;
}

/* whether a worker rank of a run of size ranks is given simulated class s */
static int served(const mpt_job_options *o, int s, int size) {
  char cls[64];
  for (int r = size > 1 ? 1 : 0; r < size; r++)
    if (mpt_job_rank_class(o, r, size, cls, sizeof cls) == s) return 1;
  return 0;
}

int mpt_job_classes_check_sim(const mpt_job_classes *t, const mpt_job_options *o, int size, mpt_error *err) {
  int workers = size > 1 ? size - 1 : 1;
  for (int s = 0; s < o->n_sim; s++) {
    int k = 0;
    while (k < t->n && strcmp(t->c[k].name, o->sim_class[s]) != 0) k++;
    if (k == t->n && !served(o, s, size))
      return mpt_error_set(err, MPT_ERR_VALUE, "--simulate %s=%s: no worker rank serves class %s (%d worker%s for %d "
                           "simulated classes): start more ranks, or give it ranks with --class-ranks %s=R1,R2",
                           o->sim_class[s], o->sim_file[s], o->sim_class[s], workers, workers == 1 ? "" : "s", o->n_sim,
                           o->sim_class[s]);
  }
  return 0;
}

void mpt_job_classes_free(mpt_job_classes *t) {
  for (int k = 0; k < t->n; k++) free(t->c[k].ranks);
  memset(t, 0, sizeof *t);
}

char *mpt_job_classes_text(const mpt_job_classes *t) {
  size_t cap = 1 + (size_t)t->n * (sizeof t->c[0].name + sizeof t->c[0].vendor + sizeof t->c[0].device +
                                   sizeof t->c[0].arch + 4);
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t at = 0;
  s[0] = '\0';
  for (int k = 0; k < t->n; k++)
    at += (size_t)snprintf(s + at, cap - at, "%s\t%s\t%s\t%s\n", t->c[k].name, t->c[k].vendor, t->c[k].device,
                           t->c[k].arch);
  return s;
}

void mpt_job_classes_print(FILE *f, const mpt_job_classes *t, const mpt_device_info *devs, int n) {
  if (t->n <= 1) {
    mpt_device_table_print(f, devs, n);
    return;
  }
  mpt_device_info *rows = malloc(sizeof *rows * (size_t)(n > 0 ? n : 1));
  for (int k = 0; rows && k < t->n; k++) {
    int m = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < t->c[k].n_ranks; j++)
        if (devs[i].rank == t->c[k].ranks[j]) rows[m++] = devs[i];
    fprintf(f, "device class %d: %s, %d worker%s%s\n", k, t->c[k].name, m, m == 1 ? "" : "s",
            m ? "" : " (none in this session: its search waits)");
    if (m) mpt_device_table_print(f, rows, m);
  }
  free(rows);
}

int mpt_job_workers_gonogo(MPI_Comm comm, int is_worker, const char *cmd, int rc, unsigned char **absent,
                           mpt_error *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) return mpt_wire_gonogo(comm, rc, err);
  int failed = is_worker && rc < 0, n_failed = 0;
  MPI_Allreduce(&failed, &n_failed, 1, MPI_INT, MPI_SUM, comm);
  if (n_failed == size - 1) return mpt_wire_gonogo(comm, rc, err);
  enum { MSG = 512 };
  char mine[MSG] = "";
  if (failed) snprintf(mine, sizeof mine, "%s", err->msg[0] ? err->msg : "evaluator failed");
  char *msgs = rank == 0 ? calloc((size_t)size, MSG) : NULL;
  MPI_Gather(mine, MSG, MPI_CHAR, msgs, MSG, MPI_CHAR, 0, comm);
  if (rank != 0) return 0;
  *absent = calloc((size_t)size, 1);
  if (!msgs || !*absent) {
    free(msgs);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  for (int r = 1; r < size; r++) {
    const char *m = msgs + (size_t)r * MSG;
    (*absent)[r] = m[0] != 0;
    if (m[0]) fprintf(stderr, "mptune %s: warning: worker rank %d has no usable device (%s); it is left out, the run "
                      "goes on with the other workers\n", cmd, r, m);
  }
  free(msgs);
  return 0;
}

/* class k's seed stream: --seed itself for the first class (a run of one class is the run it always was),
 * a splitmix64 step of it and k for the others */
static uint64_t class_seed(uint64_t seed, int k) {
  if (k == 0) return seed;
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)k;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) % 1000000000000ull;
}

int mpt_job_classes_searches(const mpt_job_classes *t, const mpt_job_options *o, const mpt_space *space,
                             mpt_strategy *first, int64_t default_id, mpt_strategy **strats,
                             mpt_coord_search *searches, mpt_error *err) {
  for (int k = 0; k < t->n; k++) {
    const mpt_job_class *c = &t->c[k];
    if (k > 0 && !strats[k]) {
      int rc = mpt_strategy_create(first->type->name, space, o->opts, o->n_opts, class_seed(o->seed, k), o->budget,
                                   &strats[k], err);
      if (rc < 0) return rc;
    }
    searches[k] = (mpt_coord_search){c->name, k, 0, k ? strats[k] : first, o->budget, default_id, !o->collect,
                                     c->ranks, c->n_ranks, {0}, NULL, NULL, NULL, NULL, NULL, 0};
  }
  return 0;
}
