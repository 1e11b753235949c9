/* spaces/json/json_keys.h: catches misspelt keys in a T1 file and locates a field's value in it (for messages). A key that mptune does not read but that is one
 * or two edits from one it does (or differs from it only in case) is an error that names the file, line,
 * column, the field and the key meant; keys far from every known one (other tools' extensions such as
 * General.Comment or KernelSpecification.Misc) are left alone, as the T1 schema allows. */
#ifndef MPT_JSON_KEYS_H
#define MPT_JSON_KEYS_H
#include <stddef.h>
#include "spaces/sys/error.h"

struct cJSON;

/* Checks the keys of the object obj, found at `where` (e.g. "KernelSpecification.Arguments[2]"; "" for
 * the document itself) in the file `path` whose text is `text` (for the line and column; may be NULL).
 * known: the keys read there, NULL-terminated. Returns 0, or MPT_ERR_NAME with err set:
 *   "FILE:LINE:COL: WHERE.KEY: unknown key; did you mean 'KNOWN'?"
 * or MPT_ERR_VALUE when a known key is given twice (cJSON would keep the first silently):
 *   "FILE:LINE:COL: WHERE.KEY: key given twice in one object" */
int mpt_json_check_keys(const struct cJSON *obj, const char *const *known, const char *path, const char *text,
                        const char *where, mpt_error *err);

/* Edit distance (Damerau: a swap of neighbours is one edit) between a and b, ignoring case; stops
 * counting at limit + 1. */
int mpt_key_distance(const char *a, const char *b, int limit);
/* The "did you mean" of a misspelt option name: called once per candidate, in order, with *meant NULL and
 * *best 3 before the first. The candidate becomes *meant when it is within two edits of key and nearer
 * than the best so far, or when none is meant yet and key (at least min_len long) is a prefix of it. */
void mpt_key_consider(const char *key, const char *cand, size_t min_len, const char **meant, int *best);

/* Writes "PATH:LINE:COL" to out (n bytes): the position in text of the value at field, a path such as
 * "ConfigurationSpace.TuningParameters[2].Values" (anything from its first space on, e.g. a label
 * " (block_size_x)", is ignored), or of the nearest enclosing value when that one is absent (the document
 * itself when no part of field is in it); with col >= 0 and a string value, of that byte of the string as
 * read (an escape counts as what it decodes to). Just "PATH" when text is NULL or not well formed. */
void mpt_json_locate(const char *path, const char *text, const char *field, int col, char *out, size_t n);

/* The byte offset in text of the value at field (a path as for mpt_json_locate), or -1 */
long mpt_json_value_offset(const char *text, const char *field);

/* The path of the value that starts at byte off of text ("ConfigurationSpace.TuningParameters[0].Default",
 * "" for the document itself) to out (n bytes): 0, or -1 when no value starts there (or text is not well
 * formed up to it, or nests deeper than the paths followed here). */
int mpt_json_path_at(const char *text, long off, char *out, size_t n);

/* Line and column (1-based) of byte offset off in text. */
void mpt_text_line_col(const char *text, size_t off, int *line, int *col);

#endif
