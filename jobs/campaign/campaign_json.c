/* jobs/campaign/campaign_json.c: errors, key checks, typed values and owned strings of the campaign reader (see
 * jobs/campaign/campaign_json.h). */
#include "jobs/campaign/campaign_json.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "spaces/json/json_keys.h"

int camp_error(const mpt_campaign *c, mpt_error *err, int code, const char *field, const char *fmt, ...) {
  char at[1200], msg[800];
  mpt_json_locate(c->path, c->text, field, -1, at, sizeof at);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mpt_error_set(err, code, "%s: %s: %s", at, field[0] ? field : "(the document)", msg);
}

static int is_known(const char *key, const char *const *known) {
  for (int i = 0; known[i]; i++)
    if (strcmp(key, known[i]) == 0) return 1;
  return 0;
}

/* "did you mean 'K'?" or "known keys: A, B, C" */
static void key_hint(const char *key, const char *const *known, char *out, size_t cap) {
  const char *meant = NULL;
  int best = 3;
  for (int i = 0; known[i]; i++) mpt_key_consider(key, known[i], 3, &meant, &best);
  if (meant) {
    snprintf(out, cap, "did you mean '%s'?", meant);
    return;
  }
  size_t n = (size_t)snprintf(out, cap, "known keys:");
  for (int i = 0; known[i] && n < cap; i++) n += (size_t)snprintf(out + n, cap - n, "%s %s", i ? "," : "", known[i]);
}

int camp_check_keys(const mpt_campaign *c, const cJSON *obj, const char *field, const char *const *known,
                    mpt_error *err) {
  for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
    char at[600], hint[400];
    snprintf(at, sizeof at, "%s%s%s", field, field[0] ? "." : "", it->string);
    if (!is_known(it->string, known)) {
      key_hint(it->string, known, hint, sizeof hint);
      return camp_error(c, err, MPT_ERR_NAME, at, "unknown key; %s", hint);
    }
    for (const cJSON *o = obj->child; o != it; o = o->next)
      if (strcmp(o->string, it->string) == 0) return camp_error(c, err, MPT_ERR_VALUE, at, "key given twice in one object");
  }
  return 0;
}

const char *camp_keep(mpt_campaign *c, const char *s) {
  camp_owned *o = c->owned;
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 32;
    char **strs = realloc(o->strs, sizeof *strs * (size_t)cap);
    if (!strs) return NULL;
    o->strs = strs;
    o->cap = cap;
  }
  char *copy = strdup(s);
  if (copy) o->strs[o->n++] = copy;
  return copy;
}

const char *camp_path(mpt_campaign *c, const char *s) {
  camp_owned *o = c->owned;
  if (s[0] == '/' || strcmp(o->dir, ".") == 0) return camp_keep(c, s);
  size_t len = strlen(o->dir) + strlen(s) + 2;
  char *buf = malloc(len);
  if (!buf) return NULL;
  snprintf(buf, len, "%s/%s", o->dir, s);
  const char *kept = camp_keep(c, buf);
  free(buf);
  return kept;
}

int camp_string(const mpt_campaign *c, const cJSON *obj, const char *field, const char *key, const char **out,
                mpt_error *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return 1;
  char at[600];
  snprintf(at, sizeof at, "%s%s%s", field, field[0] ? "." : "", key);
  if (!cJSON_IsString(v) || !v->valuestring[0]) return camp_error(c, err, MPT_ERR_VALUE, at, "expected a non-empty string");
  *out = v->valuestring;
  return 0;
}

int camp_int(const mpt_campaign *c, const cJSON *v, const char *field, int64_t lo, int64_t *out, mpt_error *err) {
  double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (!isfinite(d) || d != floor(d) || d < (double)lo || d > 9007199254740992.0)
    return camp_error(c, err, MPT_ERR_VALUE, field, "expected an integer >= %lld", (long long)lo);
  *out = (int64_t)d;
  return 0;
}

int camp_number(const mpt_campaign *c, const cJSON *obj, const char *field, const char *key, double lo, int strict,
                double *out, mpt_error *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) return 1;
  char at[600];
  snprintf(at, sizeof at, "%s%s%s", field, field[0] ? "." : "", key);
  double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (!isfinite(d) || d < lo || (strict && d == lo))
    return camp_error(c, err, MPT_ERR_VALUE, at, "expected a number %s %g", strict ? ">" : ">=", lo);
  *out = d;
  return 0;
}

int camp_file(const mpt_campaign *c, const char *path, const char *field, const char *what, mpt_error *err) {
  struct stat sb;
  if (stat(path, &sb) != 0) return camp_error(c, err, MPT_ERR_IO, field, "%s %s: %s", what, path, strerror(errno));
  if (!S_ISREG(sb.st_mode)) return camp_error(c, err, MPT_ERR_IO, field, "%s %s is not a file", what, path);
  return 0;
}
