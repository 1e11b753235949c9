/* spaces/json/json_check.h: what JSON forbids and cJSON accepts, found in one pass over the bytes of a text
 * (whole, or fed in pieces as a stream reads it): invalid UTF-8 or a raw control character (a byte below
 * 0x20) inside a string, a raw control character between values (cJSON skips every byte up to 0x20 as
 * whitespace; JSON allows only space, tab, LF and CR; after the document the readers report any such
 * byte as extra data), a number with a leading zero (012), and nesting deeper than MPT_JSON_MAX_DEPTH
 * (where cJSON stops with no reason given). It does not check the rest of the syntax: cJSON does. Used
 * by the T1 reader (spaces/t1.c) and the replay reader's stream (evaluators/replay/json_stream.c). */
#ifndef MPT_JSON_CHECK_H
#define MPT_JSON_CHECK_H
#include <stddef.h>

enum { MPT_JSON_MAX_DEPTH = 1000 }; /* cJSON's own limit (CJSON_NESTING_LIMIT) */

typedef struct mpt_json_check {
  long long off;      /* text offset of the next byte fed */
  long long bad_at;   /* text offset of the first fault, -1 while there is none */
  long long seq_at;   /* offset of the first byte of the UTF-8 sequence being read */
  int depth;          /* open objects and arrays */
  unsigned char in_str, esc;
  unsigned char need, lo, hi; /* continuation bytes still due in the sequence; the next one's range */
  unsigned char num;  /* outside strings: where in a number (see json_check.c) */
  unsigned char closed; /* the top-level object or array has closed: what follows is the readers' extra data */
  char what[96];      /* with bad_at >= 0: what is wrong, e.g. "invalid UTF-8 in a string" */
} mpt_json_check;

void mpt_json_check_init(mpt_json_check *c);
/* Feeds the next n bytes of the text; returns n, or at the first fault the number of bytes fed before
 * the one that showed it (c->bad_at and c->what then say where the fault is and what it is). Feeding after
 * a fault returns 0. */
size_t mpt_json_check_feed(mpt_json_check *c, const char *buf, size_t n);

#endif
