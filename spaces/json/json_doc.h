/* spaces/json/json_doc.h: a JSON document read strictly, for every reader of a JSON input file (T1 problems,
 * campaign files): one object and nothing after it, no fault that cJSON lets through and JSON forbids
 * (json_check.h), no \u0000 in a string; each fault "FILE:LINE:COL: malformed JSON: what" (near the bytes found
 * there), a number out of range named by its field. */
#ifndef MPT_JSON_DOC_H
#define MPT_JSON_DOC_H
#include <cjson/cJSON.h>
#include "spaces/sys/error.h"

/* *out: the document of text (read from path, for messages); the caller cJSON_Deletes it. 0, or <0 with err
 * set and *out NULL. */
int mpt_json_parse_document(const char *text, const char *path, cJSON **out, mpt_error *err);

#endif
