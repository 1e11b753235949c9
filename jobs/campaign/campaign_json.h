/* jobs/campaign/campaign_json.h: what the campaign reader needs of its JSON, private to jobs/campaign/: errors at
 * a field's line and column, strict key checks (every key known: a campaign file has no extensions), typed
 * values, and strings the campaign owns (paths resolved against the campaign file's folder). */
#ifndef MPT_CAMPAIGN_JSON_H
#define MPT_CAMPAIGN_JSON_H
#include <cjson/cJSON.h>
#include <stdint.h>
#include "jobs/campaign/campaign_file.h"

/* the document and every string the campaign owns */
typedef struct camp_owned {
  cJSON *json;
  char *dir;          /* the campaign file's folder ("." when it has none) */
  char **strs;
  int n, cap;
} camp_owned;

/* "FILE:LINE:COL: FIELD: ..." (the place of field's value; of its nearest enclosing value when absent) */
int camp_error(const mpt_campaign *c, mpt_error *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* every key of obj (at field) is one of known (NULL-terminated) and none is given twice; an unknown key names
 * the known one meant when it is near one, else the known keys */
int camp_check_keys(const mpt_campaign *c, const cJSON *obj, const char *field, const char *const *known,
                    mpt_error *err);
/* a copy of s the campaign owns; NULL when out of memory */
const char *camp_keep(mpt_campaign *c, const char *s);
/* s resolved against the campaign file's folder (absolute paths as they are), owned; NULL when out of memory */
const char *camp_path(mpt_campaign *c, const char *s);

/* the value of key in obj at field (field.key in messages): a non-empty string, an integer >= lo, a finite
 * number >= lo (> lo when strict); 0 and *out, 1 when absent (nothing set), <0 with err when of another type */
int camp_string(const mpt_campaign *c, const cJSON *obj, const char *field, const char *key, const char **out,
                mpt_error *err);
int camp_int(const mpt_campaign *c, const cJSON *v, const char *field, int64_t lo, int64_t *out, mpt_error *err);
int camp_number(const mpt_campaign *c, const cJSON *obj, const char *field, const char *key, double lo, int strict,
                double *out, mpt_error *err);
/* 0 when path names a regular file, else an error at field */
int camp_file(const mpt_campaign *c, const char *path, const char *field, const char *what, mpt_error *err);

#endif
