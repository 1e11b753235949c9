/* spaces/json/json_keys.c: misspelt-key check for T1 files (contract in spaces/json/json_keys.h), the position of a
 * field's value, and the line and column of a byte offset: what the T1 reader's messages point at. */
#include "spaces/json/json_keys.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void mpt_text_line_col(const char *text, size_t off, int *line, int *col) {
  int l = 1, c = 1;
  for (size_t i = 0; i < off && text[i]; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

int mpt_key_distance(const char *a, const char *b, int limit) {
  enum { MAXK = 64 };
  size_t n = strlen(a), m = strlen(b);
  if (n >= MAXK || m >= MAXK) return strcasecmp(a, b) == 0 ? 0 : limit + 1;
  if ((n > m ? n - m : m - n) > (size_t)limit) return limit + 1;
  int d[MAXK + 1][MAXK + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
      int v = d[i - 1][j - 1] + (ca != cb);
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
          d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m] > limit ? limit + 1 : d[n][m];
}

/* Edits allowed for a misspelling of `known`: none for short keys (X, Name: only case may differ), one
 * up to 7 characters, two from 8 on. */
static int allowed_edits(const char *known) {
  size_t l = strlen(known);
  return l < 4 ? 0 : l < 8 ? 1 : 2;
}

void mpt_key_consider(const char *key, const char *cand, size_t min_len, const char **meant, int *best) {
  size_t kl = strlen(key);
  int d = mpt_key_distance(key, cand, 2);
  if (d < *best || (!*meant && kl >= min_len && strncmp(key, cand, kl) == 0)) *best = d, *meant = cand;
}

/* Byte offset of the first `"key"` followed by a colon in text, or -1 (keys with escapes are not
 * searched for). The fallback of key_offset_at. */
static long key_offset(const char *text, const char *key) {
  if (!text || strpbrk(key, "\"\\")) return -1;
  size_t kl = strlen(key);
  for (const char *s = strchr(text, '"'); s; s = strchr(s + 1, '"')) {
    if (strncmp(s + 1, key, kl) != 0 || s[kl + 1] != '"') continue;
    const char *t = s + kl + 2;
    while (*t == ' ' || *t == '\t' || *t == '\r' || *t == '\n') t++;
    if (*t == ':') return (long)(s - text);
  }
  return -1;
}

/* a step of a `where` path: a member name (name, len) or an array index (name NULL) */
typedef struct path_step {
  const char *name;
  size_t len;
  long idx;
} path_step;

/* an open container while scanning: an object with its current member key, or an array with the index of
 * its current element; want_val: a value comes next (after an object's ':', an array's '[' or ',') */
typedef struct scan_frame {
  int is_obj, want_key, want_val;
  const char *key;
  size_t klen;
  long idx;
} scan_frame;

enum { MAX_STEPS = 16, MAX_DEPTH = 64 };

/* splits where ("KernelSpecification.Arguments[2]") into steps; -1 when it has more than MAX_STEPS or a
 * malformed index */
static int parse_where(const char *where, path_step *st) { /* up to its first space: a label such as " (x)" */
  int n = 0;
  for (const char *w = where; *w && *w != ' ';) {
    if (n == MAX_STEPS) return -1;
    if (*w == '[') {
      char *end;
      st[n].name = NULL;
      st[n].idx = strtol(w + 1, &end, 10);
      if (*end != ']') return -1;
      w = end + 1;
    } else {
      if (*w == '.') w++;
      size_t l = strcspn(w, ".[ ");
      st[n].name = w;
      st[n].len = l;
      w += l;
    }
    n++;
  }
  return n;
}

/* 1 when the path of the open frames fr[0 .. depth - 1] (each one's current key or index) ends in the n
 * steps st (the tail: a path given without its outer objects still matches) */
static int frames_match(const scan_frame *fr, int depth, const path_step *st, int n) {
  if (n > depth) return 0;
  for (int k = 0; k < n; k++) {
    const scan_frame *f = &fr[depth - 1 - k];
    const path_step *p = &st[n - 1 - k];
    if (f->is_obj ? !p->name || p->len != f->klen || strncmp(p->name, f->key, p->len) != 0
                  : p->name || p->idx != f->idx)
      return 0;
  }
  return 1;
}

/* what scan_path looks for: with key, the member `"key"` of the object at the steps st (n = 0: the document
 * itself); else with at >= 0, the value that starts at byte at, whose path it writes to out (as
 * "ConfigurationSpace.TuningParameters[0].Default"); else the value at st */
typedef struct scan_goal {
  const path_step *st;
  int n;
  const char *key;
  long at;
  char *out;
  size_t out_n;
} scan_goal;

/* the path of the open frames fr[0 .. depth - 1] (each one's current key or index) to out */
static void frames_path(const scan_frame *fr, int depth, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int k = 0; k < depth && len < n; k++) {
    int w = fr[k].is_obj ? snprintf(out + len, n - len, "%s%.*s", k ? "." : "", (int)fr[k].klen, fr[k].key)
                         : snprintf(out + len, n - len, "[%ld]", fr[k].idx);
    if (w < 0) break;
    len += (size_t)w;
  }
}

/* 1 when the value starting at byte off, inside the open frames fr[0 .. depth - 1], is the one g looks for */
static int value_is_goal(const scan_goal *g, const scan_frame *fr, int depth, long off) {
  if (g->key) return 0;
  if (g->at < 0) return depth ? frames_match(fr, depth, g->st, g->n) : g->n == 0;
  if (off != g->at) return 0;
  frames_path(fr, depth, g->out, g->out_n);
  return 1;
}

/* Scans text following the nesting of objects and arrays for what g names: the byte offset of the key, or of
 * the value (its first character). -1 when not found or the text is not well formed. */
static long scan_path(const char *text, const scan_goal *g) {
  scan_frame fr[MAX_DEPTH];
  int depth = 0, root_val = 1;
  const path_step *st = g->st;
  int n = g->n;
  const char *key = g->key;
  size_t kl = key ? strlen(key) : 0;
  for (const char *s = text; *s; s++) {
    scan_frame *top = depth ? &fr[depth - 1] : NULL;
    if (g->at >= 0 && s - text > g->at) return -1;
    if (!strchr(" \t\r\n,:]}", *s) && (top ? top->want_val : root_val)) { /* a value starts here */
      if (value_is_goal(g, fr, depth, (long)(s - text))) return (long)(s - text);
      if (top) top->want_val = 0;
      root_val = 0;
    }
    switch (*s) {
    case '{':
    case '[':
      if (depth == MAX_DEPTH) return -1;
      fr[depth++] = (scan_frame){.is_obj = *s == '{', .want_key = *s == '{', .want_val = *s == '[', .key = "",
                                 .klen = 0, .idx = 0};
      break;
    case '}':
    case ']':
      if (depth) depth--;
      break;
    case ':':
      if (top && top->is_obj) top->want_val = 1;
      break;
    case ',':
      if (top && top->is_obj) top->want_key = 1;
      else if (top) top->idx++, top->want_val = 1;
      break;
    case '"': {
      const char *q = s + 1;
      while (*q && *q != '"') q += q[0] == '\\' && q[1] ? 2 : 1;
      if (!*q) return -1;
      if (top && top->is_obj && top->want_key) {
        top->want_key = 0;
        top->key = s + 1;
        top->klen = (size_t)(q - s - 1);
        if (key && top->klen == kl && strncmp(top->key, key, kl) == 0 &&
            (n == 0 ? depth == 1 : frames_match(fr, depth - 1, st, n)))
          return (long)(s - text);
      }
      s = q;
      break;
    }
    default: break;
    }
  }
  return -1;
}

/* Byte offset of `"key"` as a member of the object at `where`; the first occurrence anywhere when the
 * path cannot be followed. */
static long key_offset_at(const char *text, const char *where, const char *key) {
  path_step st[MAX_STEPS];
  int n = text ? parse_where(where, st) : -1;
  if (n < 0 || strpbrk(key, "\"\\")) return key_offset(text, key);
  long off = scan_path(text, &(scan_goal){.st = st, .n = n, .key = key, .at = -1});
  return off >= 0 ? off : key_offset(text, key);
}

/* the offset in text of byte col of the JSON string starting at s (its opening quote), decoded as cJSON
 * decodes it (an escape gives one byte, \uXXXX one to three, a surrogate pair four); stops at the string's
 * end */
static long string_byte_offset(const char *text, const char *s, int col) {
  const char *t = s + 1;
  for (int d = 0; *t && *t != '"' && d < col;) {
    if (*t != '\\' || !t[1]) {
      t++;
      d++;
    } else if (t[1] != 'u') {
      t += 2;
      d++;
    } else {
      unsigned cp = 0;
      int k = 0;
      for (; k < 4 && isxdigit((unsigned char)t[2 + k]); k++)
        cp = cp * 16 + (unsigned)(isdigit((unsigned char)t[2 + k]) ? t[2 + k] - '0' : tolower((unsigned char)t[2 + k]) - 'a' + 10);
      t += 2 + k;
      if (cp >= 0xD800 && cp < 0xDC00 && t[0] == '\\' && t[1] == 'u') {
        t += 2;
        for (k = 0; k < 4 && isxdigit((unsigned char)*t); k++) t++;
        d += 4;
      } else {
        d += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
      }
    }
  }
  return (long)(t - text);
}

long mpt_json_value_offset(const char *text, const char *field) {
  if (!text) return -1;
  path_step st[MAX_STEPS];
  int ns = parse_where(field, st);
  return ns > 0 ? scan_path(text, &(scan_goal){.st = st, .n = ns, .at = -1}) : -1;
}

int mpt_json_path_at(const char *text, long off, char *out, size_t n) {
  if (!text || off < 0 || n == 0) return -1;
  return scan_path(text, &(scan_goal){.at = off, .out = out, .out_n = n}) == off ? 0 : -1;
}

void mpt_json_locate(const char *path, const char *text, const char *field, int col, char *out, size_t n) {
  snprintf(out, n, "%s", path);
  if (!text) return;
  path_step st[MAX_STEPS];
  int ns = parse_where(field, st);
  if (ns < 0) return;
  for (; ns >= 0; ns--) { /* the value named, else the nearest enclosing one (the document itself, last) */
    long off = scan_path(text, &(scan_goal){.st = st, .n = ns, .at = -1});
    if (off < 0) continue;
    if (col >= 0 && text[off] == '"') off = string_byte_offset(text, text + off, col);
    int line, c;
    mpt_text_line_col(text, (size_t)off, &line, &c);
    snprintf(out, n, "%s:%d:%d", path, line, c);
    return;
  }
}

/* ":LINE:COL" of the key in the object at where (the first such key), or "" when it is not found */
static void key_position(const char *text, const char *where, const char *key, char *at, size_t n) {
  long off = key_offset_at(text, where, key);
  at[0] = '\0';
  if (off < 0) return;
  int line, col;
  mpt_text_line_col(text, (size_t)off, &line, &col);
  snprintf(at, n, ":%d:%d", line, col);
}

/* the index of key in known (NULL-terminated), or -1 */
static int known_index(const char *const *known, const char *key) {
  for (int k = 0; known[k]; k++)
    if (strcmp(known[k], key) == 0) return k;
  return -1;
}

int mpt_json_check_keys(const cJSON *obj, const char *const *known, const char *path, const char *text,
                        const char *where, mpt_error *err) {
  if (!cJSON_IsObject(obj)) return 0;
  int n_known = 0;
  while (known[n_known]) n_known++;
  /* how often each known key is given (up to 2), counted once: an object of thousands of other keys costs
   * thousands of lookups among the known keys, not thousands times its size */
  unsigned char *given = calloc((size_t)n_known + 1, 1);
  if (!given) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (const cJSON *it = obj->child; it; it = it->next) {
    int k = it->string ? known_index(known, it->string) : -1;
    if (k >= 0 && given[k] < 2) given[k]++;
  }
  int rc = 0;
  for (const cJSON *it = obj->child; it; it = it->next) {
    const char *key = it->string;
    if (!key) continue;
    int k = known_index(known, key);
    if (k >= 0) {
      if (given[k] < 2) continue;
      /* cJSON would read the first and drop the second without a word: refuse the ambiguity */
      char at[64];
      key_position(text, where, key, at, sizeof at);
      rc = mpt_error_set(err, MPT_ERR_VALUE, "%s%s: %s%s%s: key given twice in one object", path, at, where,
                         where[0] ? "." : "", key);
      break;
    }
    const char *meant = NULL;
    int best = INT_MAX;
    for (int c = 0; c < n_known; c++) {
      if (given[c]) continue; /* the key meant would be given twice */
      int lim = allowed_edits(known[c]), d = mpt_key_distance(key, known[c], lim);
      if (d <= lim && d < best) {
        best = d;
        meant = known[c];
      }
    }
    if (!meant) continue;
    char at[64];
    key_position(text, where, key, at, sizeof at);
    rc = mpt_error_set(err, MPT_ERR_NAME, "%s%s: %s%s%s: unknown key; did you mean '%s'?", path, at, where,
                       where[0] ? "." : "", key, meant);
    break;
  }
  free(given);
  return rc;
}
