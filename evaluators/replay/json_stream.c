/* evaluators/replay/json_stream.c: delimits JSON values by scanning (strings, nesting) through a window over
 * the (inflated) text, without building them: a value being delimited stays in the window, everything
 * before it may be dropped at the next refill. Whitespace is what cJSON skips (every byte <= 32). The
 * first pass over the text feeds it to the check of what cJSON accepts and JSON does not
 * (spaces/json/json_check.h). */
#include "evaluators/replay/json_stream.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WINDOW0 = 1 << 16 };

int mpt_json_src_open(mpt_json_src *s, const char *path) {
  memset(s, 0, sizeof *s);
  s->buf = malloc(WINDOW0);
  if (!s->buf) {
    errno = ENOMEM;
    return -1;
  }
  s->cap = WINDOW0;
  mpt_json_check_init(&s->check);
  s->z = gzopen(path, "rb");
  if (!s->z) {
    free(s->buf);
    s->buf = NULL;
    return -1;
  }
  gzbuffer(s->z, 1 << 17);
  return 0;
}

void mpt_json_src_close(mpt_json_src *s) {
  if (s->z) gzclose(s->z);
  free(s->buf);
  memset(s, 0, sizeof *s);
}

/* a read error: what zlib (or the system, for Z_ERRNO) says */
static int read_failed(mpt_json_src *s, int zerr, const char *zmsg) {
  s->err = 1;
  if (zerr == Z_ERRNO) snprintf(s->msg, sizeof s->msg, "%s", strerror(errno));
  else snprintf(s->msg, sizeof s->msg, "corrupt or truncated data (%s)", zmsg && *zmsg ? zmsg : "gzip error");
  return -1;
}

/* more text into the window (dropping what lies before keep): > 0, 0 at the end, -1 on an error */
static int fill(mpt_json_src *s) {
  if (s->eof || s->err) return s->err ? -1 : 0;
  if (!s->hold) s->keep = s->pos;
  if (s->keep > 0) {
    memmove(s->buf, s->buf + s->keep, s->end - s->keep);
    s->off += (long long)s->keep;
    s->pos -= s->keep;
    s->end -= s->keep;
    s->keep = 0;
  }
  if (s->end == s->cap) {
    char *nb = realloc(s->buf, 2 * s->cap);
    if (!nb) {
      s->err = 1;
      snprintf(s->msg, sizeof s->msg, "out of memory for a %zu-byte record", 2 * s->cap);
      return -1;
    }
    s->buf = nb;
    s->cap *= 2;
  }
  size_t want = s->cap - s->end;
  int n = gzread(s->z, s->buf + s->end, (unsigned)(want < (1u << 30) ? want : (1u << 30)));
  if (n <= 0) {
    int zerr = Z_OK;
    const char *zmsg = gzerror(s->z, &zerr);
    s->eof = 1;
    /* n < 0: unreadable or corrupt; n == 0 with an error: a gzip stream cut short (Z_BUF_ERROR) */
    if (n < 0 || zerr != Z_OK) return read_failed(s, n < 0 && zerr == Z_OK ? Z_ERRNO : zerr, zmsg);
    s->check_done = 1;
    return 0;
  }
  if (!s->check_done) mpt_json_check_feed(&s->check, s->buf + s->end, (size_t)n);
  s->end += (size_t)n;
  return n;
}

/* the byte at pos, or -1 at the end of the text (or on an error) */
static int peek(mpt_json_src *s) {
  while (s->pos >= s->end)
    if (fill(s) <= 0) return -1;
  return (unsigned char)s->buf[s->pos];
}

static int skip_ws(mpt_json_src *s) {
  int c;
  while ((c = peek(s)) >= 0 && c <= 32) s->pos++;
  return c;
}

/* pos at '"': just past the closing quote; -1 when the text ends first */
static int scan_string(mpt_json_src *s) {
  s->pos++;
  for (;;) {
    int c = peek(s);
    if (c < 0) return -1;
    s->pos++;
    if (c == '\\') {
      if (peek(s) < 0) return -1;
      s->pos++;
    } else if (c == '"') {
      return 0;
    }
  }
}

/* pos at a value: just past it (its own syntax is left to cJSON); -1 when it cannot be delimited */
static int scan_value(mpt_json_src *s) {
  int c = peek(s);
  if (c < 0) return -1;
  if (c == '"') return scan_string(s);
  if (c == '{' || c == '[') {
    int depth = 0;
    for (;;) {
      c = peek(s);
      if (c < 0) return -1;
      if (c == '"') {
        if (scan_string(s) < 0) return -1;
        continue;
      }
      s->pos++;
      if (c == '{' || c == '[') depth++;
      else if ((c == '}' || c == ']') && --depth == 0) return 0;
    }
  }
  long long start = s->off + (long long)s->pos;
  while ((c = peek(s)) > 32 && c != ',' && c != ']' && c != '}') s->pos++;
  return s->off + (long long)s->pos > start ? 0 : -1;
}

/* delimits the value at pos and keeps it in the window: *start is its index in buf afterwards */
static int hold_value(mpt_json_src *s, size_t *start, int string_only) {
  s->hold = 1;
  s->keep = s->pos;
  long long at = s->off + (long long)s->pos;
  int rc = string_only ? (peek(s) == '"' ? scan_string(s) : -1) : scan_value(s);
  *start = (size_t)(at - s->off);
  return rc;
}

static void release(mpt_json_src *s) { s->hold = 0; }

/* the key string at pos, unescaped, malloc'ed, pos just past it; NULL on error */
static char *read_key(mpt_json_src *s) {
  size_t start;
  char *k = NULL;
  if (hold_value(s, &start, 1) == 0) {
    const char *p = s->buf + start;
    size_t n = s->pos - start - 2;
    if (!memchr(p + 1, '\\', n)) {
      if ((k = malloc(n + 1)) != NULL) {
        memcpy(k, p + 1, n);
        k[n] = '\0';
      }
    } else {
      cJSON *v = cJSON_ParseWithLength(p, n + 2);
      if (cJSON_IsString(v) && (k = malloc(strlen(v->valuestring) + 1)) != NULL) strcpy(k, v->valuestring);
      cJSON_Delete(v);
    }
  }
  release(s);
  return k;
}

/* the text has ended here (no read error): nothing more to scan */
static int at_end(mpt_json_src *s) { return peek(s) < 0 && !s->err; }

int mpt_json_members(mpt_json_src *s, const char *const *keys, int n, const int *big, char **text,
                     long long *at, char *first, long long *err_at, int *cut) {
  *cut = -1;
  for (int i = 0; i < n; i++) {
    text[i] = NULL;
    at[i] = -1;
    first[i] = 0;
  }
  int c = skip_ws(s);
  if (c != '{') goto bad;
  s->pos++;
  if ((c = skip_ws(s)) == '}') {
    s->pos++;
    return 0;
  }
  for (;;) {
    if (c != '"') goto bad;
    char *key = read_key(s);
    if (!key) goto bad;
    int i = 0;
    while (i < n && (strcmp(keys[i], key) != 0 || text[i] || at[i] >= 0)) i++;
    free(key);
    if (skip_ws(s) != ':') goto bad;
    s->pos++;
    if ((c = skip_ws(s)) < 0) goto bad;
    if (i < n) at[i] = s->off + (long long)s->pos;
    if (i < n && big[i]) first[i] = (char)c;
    if (i < n && !big[i]) {
      size_t start;
      int rc = hold_value(s, &start, 0);
      if (rc == 0 && (text[i] = malloc(s->pos - start + 1)) != NULL) {
        memcpy(text[i], s->buf + start, s->pos - start);
        text[i][s->pos - start] = '\0';
      }
      release(s);
      if (!text[i]) goto bad;
    } else if (scan_value(s) < 0) {
      if (i < n && big[i] && at_end(s)) break; /* in a big member still being written */
      goto bad;
    }
    c = skip_ws(s);
    if (c < 0 && i < n && big[i] && at_end(s)) break; /* after it, the document not yet closed */
    if (c == ',') {
      s->pos++;
      c = skip_ws(s);
      continue;
    }
    if (c == '}') {
      s->pos++;
      return 0;
    }
    goto bad;
  }
  for (int i = 0; i < n; i++) /* the loop breaks only at the end of the text, in or after a big member */
    if (big[i] && at[i] >= 0 && (*cut < 0 || at[i] > at[*cut])) *cut = i;
  return 1;
bad:
  *err_at = s->off + (long long)s->pos;
  return -1;
}

int mpt_json_src_end(mpt_json_src *s, long long *err_at) {
  int c;
  /* JSON's whitespace only (RFC 8259): a NUL padding or a stray control byte is extra data */
  while ((c = peek(s)) == ' ' || c == '\t' || c == '\n' || c == '\r') s->pos++;
  if (c < 0) return s->err ? -1 : 0;
  *err_at = s->off + (long long)s->pos;
  return -1;
}

/* back to the start of the text, with an empty window */
static int restart(mpt_json_src *s) {
  if (gzrewind(s->z) != 0) {
    int zerr = Z_OK;
    const char *zmsg = gzerror(s->z, &zerr);
    return read_failed(s, zerr, zmsg);
  }
  s->pos = s->end = s->keep = 0;
  s->off = 0;
  s->hold = 0;
  s->eof = 0;
  if (!s->check_done) mpt_json_check_init(&s->check); /* fed again from the start */
  return 0;
}

void mpt_json_nonfinite(char *text, size_t len) {
  static const struct { const char *tok, *as; } subst[] = {{"NaN", "[] "}, {"Infinity", "1e999   "}, {"-Infinity", "-1e999   "}};
  int in_str = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') in_str = 0;
      continue;
    }
    if (c == '"') {
      in_str = 1;
      continue;
    }
    if (c != 'N' && c != 'I' && c != '-') continue;
    for (size_t k = 0; k < sizeof subst / sizeof subst[0]; k++) {
      size_t n = strlen(subst[k].tok);
      if (n <= len - i && memcmp(text + i, subst[k].tok, n) == 0) {
        memcpy(text + i, subst[k].as, n);
        i += n - 1;
        break;
      }
    }
  }
}

int mpt_json_src_whole(mpt_json_src *s, const char **text, size_t *len) {
  if (restart(s) < 0) return -1;
  s->hold = 1; /* keep = 0: nothing is dropped, the window grows to the whole text */
  int n;
  while ((n = fill(s)) > 0) {}
  mpt_json_nonfinite(s->buf, s->end);
  *text = s->buf;
  *len = s->end;
  return n < 0 ? -1 : 0;
}

int mpt_json_iter_open(mpt_json_iter *it, mpt_json_src *s, long long at) {
  memset(it, 0, sizeof *it);
  it->src = s;
  /* the text again from the start: the window is emptied and refilled up to the value */
  if (restart(s) < 0) return -1;
  while (s->off + (long long)s->end <= at) {
    s->pos = s->end;
    if (fill(s) <= 0) return -1;
  }
  s->pos = (size_t)(at - s->off);
  int c = peek(s);
  if (c != '[' && c != '{') return -1;
  it->close = c == '[' ? ']' : '}';
  s->pos++;
  return 0;
}

void mpt_json_iter_tree(mpt_json_iter *it, cJSON *container) {
  memset(it, 0, sizeof *it);
  it->tree = container;
  it->close = cJSON_IsArray(container) ? ']' : '}';
}

/* with open_end: the text has ended here */
static int open_ended(const mpt_json_iter *it) { return it->open_end && at_end(it->src); }

/* the text ends before the container closes: the items so far are what there is */
static int cut_here(mpt_json_iter *it) {
  it->cut = 1;
  return 0;
}

int mpt_json_iter_next(mpt_json_iter *it, cJSON **item, long long *err_at) {
  *item = NULL;
  if (it->tree) {
    cJSON *c = it->tree->child;
    if (!c) return 0;
    *item = cJSON_DetachItemViaPointer(it->tree, c);
    it->count++;
    return 1;
  }
  mpt_json_src *s = it->src;
  int c = skip_ws(s);
  if (c < 0 && open_ended(it)) return cut_here(it);
  if (c == it->close) return 0;
  if (it->count > 0) {
    if (c != ',') goto bad;
    s->pos++;
    c = skip_ws(s);
    if (c < 0 && open_ended(it)) return cut_here(it);
  }
  long long item_at = s->off + (long long)s->pos;
  char *key = NULL;
  if (it->close == '}') {
    if (c != '"' || !(key = read_key(s))) {
      if (open_ended(it)) return cut_here(it);
      goto bad;
    }
    if (skip_ws(s) != ':') {
      free(key);
      if (open_ended(it)) return cut_here(it);
      goto bad;
    }
    s->pos++;
    skip_ws(s);
  }
  size_t start;
  const char *ep = NULL;
  cJSON *v = NULL;
  char opener = 0;
  if (hold_value(s, &start, 0) == 0) {
    opener = s->buf[start];
    mpt_json_nonfinite(s->buf + start, s->pos - start);
    v = cJSON_ParseWithLengthOpts(s->buf + start, s->pos - start, &ep, 0);
    /* the whole delimited text is the value: "12abc" is not 12 */
    if (v && ep != s->buf + s->pos) {
      cJSON_Delete(v);
      v = NULL;
    }
    if (!v && ep) s->pos = (size_t)(ep - s->buf);
  } else if (open_ended(it) && !memchr(s->buf + start, '\n', s->end - start)) {
    /* the text ends inside the item, which began on its last line: a record being written (Kernel Tuner writes
     * one a line); an item open across lines (a record that lost its closing brace, say) is malformed */
    release(s);
    free(key);
    return cut_here(it);
  }
  release(s);
  if (v && !strchr("{[\"", opener) && open_ended(it)) { /* a number or literal the end of the text may have cut */
    cJSON_Delete(v);
    free(key);
    return cut_here(it);
  }
  if (v && s->check.bad_at >= item_at && s->check.bad_at < s->off + (long long)s->pos) { /* the item holds the fault */
    cJSON_Delete(v);
    free(key);
    *err_at = s->check.bad_at;
    return -1;
  }
  if (!v) {
    free(key);
    goto bad;
  }
  v->string = key; /* freed by cJSON_Delete (not marked constant) */
  it->count++;
  *item = v;
  return 1;
bad:
  *err_at = s->off + (long long)s->pos;
  return -1;
}

int mpt_json_line_col(const char *path, long long offset, long long *line, long long *col) {
  *line = 1;
  *col = offset + 1;
  if (offset < 0) return -1;
  gzFile z = gzopen(path, "rb");
  if (!z) return -1;
  char buf[1 << 15];
  long long at = 0, line_start = 0;
  int rc = -1;
  while (at < offset) {
    long long want = offset - at < (long long)sizeof buf ? offset - at : (long long)sizeof buf;
    int got = gzread(z, buf, (unsigned)want);
    if (got <= 0) break;
    for (int i = 0; i < got; i++)
      if (buf[i] == '\n') {
        (*line)++;
        line_start = at + i + 1;
      }
    at += got;
  }
  if (at == offset) {
    *col = offset - line_start + 1;
    rc = 0;
  }
  gzclose(z);
  return rc;
}
