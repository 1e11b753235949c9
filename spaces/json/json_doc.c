/* spaces/json/json_doc.c: a JSON document read strictly (see spaces/json/json_doc.h). */
#include "spaces/json/json_doc.h"
#include <stdio.h>
#include <string.h>
#include "spaces/json/json_check.h"
#include "spaces/json/json_keys.h"

/* the offset of the first \u0000 escape inside a JSON string of text, or -1: cJSON ends the decoded string
 * there, so "x > 1\u0000 or True" would be read as "x > 1" (Python refuses such source) */
static long nul_escape_at(const char *text) {
  int in_string = 0;
  for (long i = 0; text[i]; i++) {
    if (!in_string) {
      in_string = text[i] == '"';
    } else if (text[i] == '"') {
      in_string = 0;
    } else if (text[i] == '\\') {
      if (text[i + 1] == 'u' && strncmp(text + i + 2, "0000", 4) == 0) return i;
      if (text[i + 1]) i++;
    }
  }
  return -1;
}

/* up to 16 bytes of s, to the end of its line, for a message: control characters (below 0x20, DEL) as \xNN,
 * which raw made 'near' show nothing or reached the terminal (data after the document is not checked) */
static void near_excerpt(const char *s, char *out, size_t cap) {
  size_t n = 0;
  out[0] = '\0';
  for (int k = 0; k < 16 && s[k] && s[k] != '\n' && s[k] != '\r'; k++) {
    unsigned char b = (unsigned char)s[k];
    int w = b < 0x20 || b == 0x7f ? snprintf(out + n, cap - n, "\\x%02X", b) : snprintf(out + n, cap - n, "%c", b);
    if (w < 0 || (size_t)w >= cap - n) break;
    n += (size_t)w;
  }
}

/* the fault the JSON check found in text, as "FILE:LINE:COL: malformed JSON: what"; a number out of range as
 * "FILE:LINE:COL: FIELD: number 1e999 is out of range (...)", FIELD the path of that value */
static int check_fault(const char *text, const char *path, const mpt_json_check *check, mpt_error *err) {
  int line, col;
  mpt_text_line_col(text, (size_t)check->bad_at, &line, &col);
  if (!check->out_of_range)
    return mpt_error_set(err, MPT_ERR_PARSE, "%s:%d:%d: malformed JSON: %s", path, line, col, check->what);
  char field[512];
  if (mpt_json_path_at(text, (long)check->bad_at, field, sizeof field) != 0 || !field[0])
    return mpt_error_set(err, MPT_ERR_VALUE, "%s:%d:%d: %s", path, line, col, check->what);
  return mpt_error_set(err, MPT_ERR_VALUE, "%s:%d:%d: %s: %s", path, line, col, field, check->what);
}

/* "FILE:LINE:COL: malformed JSON..." for text that cJSON refused at end (NULL: before it read anything), what
 * saying why when it is known, near the bytes found there */
static int malformed_json_error(const char *text, const char *path, const char *end, const char *what,
                                mpt_error *err) {
  size_t off = end ? (size_t)(end - text) : 0;
  int line, col;
  mpt_text_line_col(text, off, &line, &col);
  char near[72] = "";
  if (end && *end) near_excerpt(end, near, sizeof near);
  return mpt_error_set(err, MPT_ERR_PARSE, "%s:%d:%d: malformed JSON%s%s%s%s", path, line, col, what,
                       near[0] ? " near '" : (end && *end ? "" : " (unexpected end of file)"), near,
                       near[0] ? "'" : "");
}

/* *out from text: one JSON object and nothing after it, with no fault cJSON lets through (the JSON check's
 * first fault, unless cJSON stopped before it) and no \u0000 in a string */
static int parse_strict(const char *text, const char *path, cJSON **out, mpt_error *err) {
  mpt_json_check check; /* what cJSON accepts and JSON does not */
  mpt_json_check_init(&check);
  mpt_json_check_feed(&check, text, strlen(text));
  const char *end = NULL;
  cJSON *json = cJSON_ParseWithOpts(text, &end, 0);
  const char *what = "";
  if (json) { /* the document must be all there is (Python: "Extra data") */
    end += strspn(end, " \t\r\n");
    if (*end) {
      cJSON_Delete(json);
      json = NULL;
      what = ": data after the end of the document,";
    }
  }
  if (check.bad_at >= 0 && (json || !end || check.bad_at <= end - text)) {
    cJSON_Delete(json);
    return check_fault(text, path, &check, err);
  }
  if (!json) return malformed_json_error(text, path, end, what, err);
  *out = json;
  if (!cJSON_IsObject(json))
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: the document is not a JSON object", path);
  long nul = nul_escape_at(text);
  if (nul >= 0) {
    int line, col;
    mpt_text_line_col(text, (size_t)nul, &line, &col);
    return mpt_error_set(err, MPT_ERR_PARSE, "%s:%d:%d: a string holds \\u0000 (a NUL character), which no name, "
                         "expression or file name can hold", path, line, col);
  }
  return 0;
}

int mpt_json_parse_document(const char *text, const char *path, cJSON **out, mpt_error *err) {
  *out = NULL;
  int rc = parse_strict(text, path, out, err);
  if (rc < 0) {
    cJSON_Delete(*out);
    *out = NULL;
  }
  return rc;
}
