/* spaces/json/json_check.h: what JSON forbids and cJSON accepts, found in one pass over the bytes of a text
 * (whole, or fed in pieces as a stream reads it): invalid UTF-8 or a raw control character (a byte below
 * 0x20) inside a string, a raw control character between values (cJSON skips every byte up to 0x20 as
 * whitespace; JSON allows only space, tab, LF and CR; after the document the readers report any such
 * byte as extra data), a number with a leading zero (012), and nesting deeper than MPT_JSON_MAX_DEPTH
 * (where cJSON stops with no reason given). And what JSON allows but no double holds: a number beyond
 * DBL_MAX (1e999, -1e400: cJSON reads them as infinities; a number so small that it underflows is read as
 * strtod reads it, 1e-400 as 0). It does not check the rest of the syntax: cJSON does. Used
 * by the T1 reader (spaces/t1.c) and the replay reader's stream (evaluators/replay/json_stream.c). */
#ifndef MPT_JSON_CHECK_H
#define MPT_JSON_CHECK_H
#include <stddef.h>

enum { MPT_JSON_MAX_DEPTH = 1000 }; /* cJSON's own limit (CJSON_NESTING_LIMIT) */

/* a number read so far, as far as its range goes (json_check.c) */
typedef struct mpt_json_number {
  long long len;          /* bytes */
  long long int_digits;   /* digits before the point from the first nonzero one */
  long long lead_zeros;   /* zeros after the point before the first nonzero digit (integer part 0) */
  long long exp;          /* the exponent's value, saturated */
  long long n_sig;        /* significant digits (from the first nonzero one) */
  signed char cmp;        /* those digits against the digits of the least value that overflows: -1, 0, 1 */
  unsigned char part;     /* where the next byte stands: sign, integer, fraction, exponent sign or digits */
  unsigned char exp_neg;
  char text[28];          /* the first bytes, for the message */
} mpt_json_number;

typedef struct mpt_json_check {
  long long off;      /* text offset of the next byte fed */
  long long bad_at;   /* text offset of the first fault, -1 while there is none */
  long long seq_at;   /* offset of the first byte of the UTF-8 sequence being read */
  int depth;          /* open objects and arrays */
  unsigned char in_str, esc;
  unsigned char need, lo, hi; /* continuation bytes still due in the sequence; the next one's range */
  unsigned char num;  /* outside strings: where in a number (see json_check.c) */
  unsigned char closed; /* the top-level object or array has closed: what follows is the readers' extra data */
  unsigned char out_of_range; /* with bad_at >= 0: the fault is a number no double holds (the text is JSON) */
  unsigned char num_begun;    /* the number has bytes in pieces fed before: read into num_read */
  long long num_at;   /* in a number: the text offset of its first byte */
  mpt_json_number num_read;
  char what[128];     /* with bad_at >= 0: what is wrong, e.g. "invalid UTF-8 in a string" */
} mpt_json_check;

void mpt_json_check_init(mpt_json_check *c);
/* Feeds the next n bytes of the text; returns n, or at the first fault the number of bytes fed before
 * the one that showed it (c->bad_at and c->what then say where the fault is and what it is). Feeding after
 * a fault returns 0. */
size_t mpt_json_check_feed(mpt_json_check *c, const char *buf, size_t n);

#endif
