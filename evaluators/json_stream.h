/* evaluators/json_stream.h: walks a large JSON document piece by piece: the extents of the top-level
 * object's members, then the elements of one array member (or the members of one object member), each
 * parsed by cJSON on its own. A brute-forced space file of 200 MB is then never one cJSON tree (that
 * tree takes several times the text). Used by the replay loader (replay.c). */
#ifndef MPT_JSON_STREAM_H
#define MPT_JSON_STREAM_H
#include <stddef.h>
#include <cjson/cJSON.h>

/* Finds the top-level members named keys[0..n-1] (the first of each name, as cJSON's lookup does):
 * val[i] / val_end[i] delimit the value text, NULL when absent. Returns 0, or -1 when the text is not
 * an object of members this scanner can delimit (the caller then parses it whole: for cJSON's error
 * message, or for text cJSON accepts and the scanner does not, such as a leading UTF-8 byte-order mark). */
int mpt_json_members(const char *buf, size_t len, const char *const *keys, int n, const char **val,
                     const char **val_end);

/* one array's elements or one object's members, one at a time */
typedef struct mpt_json_iter {
  const char *p, *end; /* stream mode: the rest of the container text */
  char close;          /* ']' or '}': an array's elements or an object's members */
  int count;           /* items returned so far */
  cJSON *tree;         /* tree mode: the container, its items detached one by one */
} mpt_json_iter;

/* stream mode over the container text [v, v_end) (an array or object value from mpt_json_members);
 * returns -1 if it is neither */
int mpt_json_iter_text(mpt_json_iter *it, const char *v, const char *v_end);
/* tree mode over a parsed array or object (its items are detached and handed out) */
void mpt_json_iter_tree(mpt_json_iter *it, cJSON *container);
/* the next item, the caller's to cJSON_Delete (an object's member has its key in item->string):
 * 1, or 0 at the end, or -1 on malformed text with *err_at pointing near the error */
int mpt_json_iter_next(mpt_json_iter *it, cJSON **item, const char **err_at);

#endif
