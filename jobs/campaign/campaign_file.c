/* jobs/campaign/campaign_file.c: a campaign file read and checked (see jobs/campaign/campaign_file.h): the
 * document, its shared settings, its jobs (campaign_job.c), the classes they name against those present. */
#include "jobs/campaign/campaign_file.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/evaluator.h"
#include "jobs/campaign/campaign_job.h"
#include "jobs/campaign/campaign_json.h"
#include "spaces/json/json_doc.h"

static const char *const root_keys[] = {"schema_version", "name", "log_dir", "seed", "time", "grace", "evaluator",
                                        "simulate", "simulate_delay", "jobs", NULL};

static int read_version(mpt_campaign *c, const cJSON *root, mpt_error *err) {
  const char *v = NULL;
  int rc = camp_string(c, root, "", "schema_version", &v, err);
  if (rc == 1) return camp_error(c, err, MPT_ERR_VALUE, "", "missing \"schema_version\": \"%s\"", MPT_CAMPAIGN_SCHEMA_VERSION);
  if (rc == 0 && strcmp(v, MPT_CAMPAIGN_SCHEMA_VERSION) != 0)
    return camp_error(c, err, MPT_ERR_VALUE, "schema_version", "'%s': this mptune reads campaign files of version %s", v,
                      MPT_CAMPAIGN_SCHEMA_VERSION);
  return rc;
}

/* "name" (else the file's base name without .json), "log_dir" (else the file's folder) */
static int read_names(mpt_campaign *c, const cJSON *root, mpt_error *err) {
  camp_owned *o = c->owned;
  const char *name = NULL, *dir = NULL;
  int rc = camp_string(c, root, "", "name", &name, err);
  if (rc < 0 || (rc = camp_string(c, root, "", "log_dir", &dir, err)) < 0) return rc;
  if (!name) {
    const char *slash = strrchr(c->path, '/');
    char base[512];
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : c->path);
    size_t l = strlen(base);
    if (l > 5 && strcmp(base + l - 5, ".json") == 0) base[l - 5] = '\0';
    name = base;
    c->name = camp_keep(c, base);
  } else {
    c->name = name;
  }
  c->log_dir = dir ? camp_path(c, dir) : o->dir;
  return c->name && c->log_dir ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
}

/* "seed", "time", "grace", "evaluator", "simulate_delay" */
static int read_settings(mpt_campaign *c, const cJSON *root, mpt_error *err) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "seed");
  int64_t seed = 0;
  int rc = s ? camp_int(c, s, "seed", 0, &seed, err) : 0;
  if (rc < 0) return rc;
  c->seed = (uint64_t)seed;
  c->seed_given = s != NULL;
  c->grace_s = 20;
  if ((rc = camp_number(c, root, "", "time", 0, 1, &c->time_budget, err)) < 0) return rc;
  if ((rc = camp_number(c, root, "", "grace", 0, 0, &c->grace_s, err)) < 0) return rc;
  if ((rc = camp_number(c, root, "", "simulate_delay", 0, 0, &c->simulate_delay, err)) < 0) return rc;
  if ((rc = camp_string(c, root, "", "evaluator", &c->evaluator, err)) < 0) return rc;
  if (c->evaluator && !mpt_evaluator_find(c->evaluator))
    return camp_error(c, err, MPT_ERR_NAME, "evaluator", "unknown evaluator '%s'", c->evaluator);
  return 0;
}

/* "simulate": {"CLASS": "FILE", ...}: the replayed file of each simulated class (each a file) */
static int read_simulate(mpt_campaign *c, const cJSON *root, mpt_error *err) {
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(root, "simulate");
  if (!sim) return 0;
  int n = cJSON_IsObject(sim) ? cJSON_GetArraySize(sim) : 0;
  if (n == 0) return camp_error(c, err, MPT_ERR_VALUE, "simulate", "expected an object of device class: replayed file");
  if (!(c->sims = calloc((size_t)n, sizeof *c->sims))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (const cJSON *v = sim->child; v; v = v->next) {
    char f[300];
    snprintf(f, sizeof f, "simulate.%s", v->string);
    if (!cJSON_IsString(v) || !v->valuestring[0]) return camp_error(c, err, MPT_ERR_VALUE, f, "expected a replayed file");
    for (int k = 0; k < c->n_sims; k++)
      if (strcmp(c->sims[k].device_class, v->string) == 0)
        return camp_error(c, err, MPT_ERR_VALUE, f, "key given twice in one object");
    mpt_campaign_sim *s = &c->sims[c->n_sims++];
    s->device_class = v->string;
    if (!(s->path = camp_path(c, v->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    int rc = camp_file(c, s->path, f, "the replayed file", err);
    if (rc < 0) return rc;
  }
  return 0;
}

/* two jobs never write one log */
static int check_logs(const mpt_campaign *c, mpt_error *err) {
  for (int i = 0; i < c->n_jobs; i++)
    for (int k = 0; k < i; k++)
      if (strcmp(c->jobs[i].opts.log, c->jobs[k].opts.log) == 0) {
        char f[64];
        snprintf(f, sizeof f, "jobs[%d].log", i);
        return camp_error(c, err, MPT_ERR_VALUE, f, "jobs '%s' and '%s' would both write the log %s", c->jobs[k].name,
                          c->jobs[i].name, c->jobs[i].opts.log);
      }
  return 0;
}

static int read_jobs(mpt_campaign *c, const cJSON *root, mpt_error *err) {
  const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
  if (!jobs) return camp_error(c, err, MPT_ERR_VALUE, "", "missing \"jobs\" (a list of jobs)");
  int n = cJSON_IsArray(jobs) ? cJSON_GetArraySize(jobs) : 0;
  if (n == 0) return camp_error(c, err, MPT_ERR_VALUE, "jobs", "expected a non-empty list of jobs");
  if (!(c->jobs = calloc((size_t)n, sizeof *c->jobs))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int i = 0;
  for (const cJSON *j = jobs->child; j; j = j->next, i++) {
    c->n_jobs = i + 1;
    int rc = camp_read_job(c, i, j, err);
    if (rc < 0) return rc;
  }
  return check_logs(c, err);
}

/* the campaign file's folder, for relative paths */
static char *folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  char *d = strdup(path);
  if (d) d[slash - path] = '\0';
  return d;
}

int mpt_campaign_parse(const char *text, const char *path, mpt_campaign **out, mpt_error *err) {
  *out = NULL;
  mpt_campaign *c = calloc(1, sizeof *c);
  camp_owned *o = calloc(1, sizeof *o);
  if (c) c->owned = o;
  if (!c || !o || !(c->path = strdup(path)) || !(c->text = strdup(text)) || !(o->dir = folder_of(path))) {
    mpt_campaign_free(c);
    if (!c) free(o);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  int rc = mpt_json_parse_document(text, path, &o->json, err);
  if (rc == 0) rc = camp_check_keys(c, o->json, "", root_keys, err);
  if (rc == 0) rc = read_version(c, o->json, err);
  if (rc == 0) rc = read_names(c, o->json, err);
  if (rc == 0) rc = read_settings(c, o->json, err);
  if (rc == 0) rc = read_simulate(c, o->json, err);
  if (rc == 0) rc = read_jobs(c, o->json, err);
  if (rc < 0) {
    mpt_campaign_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int mpt_campaign_load(const char *path, mpt_campaign **out, mpt_error *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return mpt_error_set(err, MPT_ERR_IO, "%s: cannot open the campaign file: %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap + 1);
  for (size_t r = 1; buf && r > 0;) {
    if (len == cap) {
      char *b = realloc(buf, 2 * cap + 1);
      if (!b) break;
      buf = b, cap *= 2;
    }
    len += r = fread(buf + len, 1, cap - len, f);
  }
  int bad = ferror(f) || !buf;
  fclose(f);
  if (bad) {
    free(buf);
    return mpt_error_set(err, buf ? MPT_ERR_IO : MPT_ERR_NOMEM, "%s: cannot read the campaign file", path);
  }
  buf[len] = '\0';
  if (strlen(buf) != len) {
    free(buf);
    return mpt_error_set(err, MPT_ERR_PARSE, "%s: malformed JSON: a NUL byte in the file", path);
  }
  int rc = mpt_campaign_parse(buf, path, out, err);
  free(buf);
  return rc;
}

void mpt_campaign_free(mpt_campaign *c) {
  if (!c) return;
  camp_owned *o = c->owned;
  for (int i = 0; i < c->n_jobs; i++) {
    free(c->jobs[i].classes);
    free(c->jobs[i].class_budgets);
  }
  free(c->jobs);
  free(c->sims);
  if (o) {
    for (int i = 0; i < o->n; i++) free(o->strs[i]);
    free(o->strs);
    free(o->dir);
    cJSON_Delete(o->json);
    free(o);
  }
  free(c->path);
  free(c->text);
  free(c);
}
