/* evaluators/replay/json_stream.h: reads a large JSON document (plain or gzip) piece by piece through a small
 * window: a first pass finds the top-level object's members (the small ones kept as text, the large one
 * located), a second pass hands out the elements of one array member (or the members of one object
 * member), each parsed by cJSON on its own. Neither the whole text nor one cJSON tree of it is ever in
 * memory: a brute-forced space file of 200 MB is read in a window of a few records. Used by the
 * replay loader (replay.c). */
#ifndef MPT_JSON_STREAM_H
#define MPT_JSON_STREAM_H
#include <stddef.h>
#include <cjson/cJSON.h>
#include <zlib.h>
#include "spaces/json/json_check.h"

typedef struct mpt_json_src {
  gzFile z;
  char *buf;
  size_t cap, pos, end; /* window [0, end) of the text, scan position pos */
  size_t keep;          /* bytes from keep on stay in the window when it is refilled */
  int hold;             /* 1: keep stays where it is (a value is being delimited); 0: follows pos */
  long long off;        /* text offset of buf[0] */
  int eof, err;         /* err: a read error (corrupt gzip data, an unreadable file) */
  char msg[160];        /* with err: what went wrong */
  mpt_json_check check; /* what JSON forbids and cJSON accepts, checked as the text is read (once) */
  int check_done;       /* the check has seen the whole text: a later pass does not feed it again */
} mpt_json_src;

/* opens path (gzip or plain, told apart by zlib); -1 with errno set when it cannot be opened */
int mpt_json_src_open(mpt_json_src *s, const char *path);
void mpt_json_src_close(mpt_json_src *s);
/* the whole text from the start, held in the window (*text, *len: not NUL-terminated), for a parse of
 * the whole document; -1 on a read error (s->err, s->msg) */
int mpt_json_src_whole(mpt_json_src *s, const char **text, size_t *len);

/* First pass, from the start: the top-level members named keys[0..n-1] (the first of each name, as
 * cJSON's lookup does). at[i] is the text offset of the value (-1 when absent); for big[i] == 0, text[i]
 * is a malloc'ed copy of the value's text (NULL when absent); for big[i] == 1, first[i] is its first
 * byte (0 when absent). Returns 0 with the position just past the object's '}' (mpt_json_src_end
 * checks what follows); 1 when the text ends (no read error) inside the value of big member *cut, or
 * right after it, before the object's '}': a document still being written, whose members before are
 * read; or -1 with *err_at the offset near the problem when the text is not an object of members this
 * scanner can delimit (or s->err on a read error). */
int mpt_json_members(mpt_json_src *s, const char *const *keys, int n, const int *big, char **text,
                     long long *at, char *first, long long *err_at, int *cut);

/* After the document, from the scan position (just past it: after mpt_json_members, or set by the
 * caller after a whole-text parse): 0 when only JSON whitespace (space, tab, newline, carriage return)
 * follows, else -1 with *err_at the offset of the first other byte (or s->err on a read error) */
int mpt_json_src_end(mpt_json_src *s, long long *err_at);

/* one array's elements or one object's members, one at a time */
typedef struct mpt_json_iter {
  mpt_json_src *src; /* stream mode */
  char close;        /* ']' or '}': an array's elements or an object's members */
  int count;         /* items returned so far */
  cJSON *tree;       /* tree mode: the container, its items detached one by one */
  int open_end;      /* set by the caller (stream mode): the text may end after any complete item, as a
                        document still being written does (mpt_json_members returned 1) */
  int cut;           /* with open_end: the text ended before the container closed (what followed the last
                        complete item, a part of one, is ignored) */
} mpt_json_iter;

/* stream mode: the container whose text starts at offset at (from mpt_json_members) is read again
 * from the start of the file; -1 (with s->err on a read error) when it is not an array or object */
int mpt_json_iter_open(mpt_json_iter *it, mpt_json_src *s, long long at);
/* tree mode over a parsed array or object (its items are detached and handed out) */
void mpt_json_iter_tree(mpt_json_iter *it, cJSON *container);
/* the next item, the caller's to cJSON_Delete (an object's member has its key in item->string):
 * 1, or 0 at the end (with open_end, also where the text ends before the container closes: it->cut set;
 * an item the text ends in, on the text's last line, or a number or literal at its very end, counts as
 * cut; one the text ends in that spans lines is malformed), or -1 on
 * malformed text (an item followed by other text counts, and one holding the fault src->check found:
 * *err_at is then src->check.bad_at) with *err_at the text offset near the error (or src->err on a read
 * error) */
int mpt_json_iter_next(mpt_json_iter *it, cJSON **item, long long *err_at);

/* the 1-based line and column (in bytes) of text offset `offset` of the file at path (gzip or plain),
 * for an error message: read again from the start; 0, or -1 when the file cannot be read that far */
int mpt_json_line_col(const char *path, long long offset, long long *line, long long *col);

/* Python's json writes NaN, Infinity and -Infinity (a Kernel Tuner cache may hold them, say in a
 * metric); cJSON reads none. Rewrites them in place, outside strings and keeping every offset: each
 * infinity as a number that overflows to one ("1e999   ", "-1e999   "), NaN as an empty array "[] "
 * (no number: a NaN objective fails as one that is missing). */
void mpt_json_nonfinite(char *text, size_t len);

#endif
