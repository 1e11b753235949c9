/* spaces/json_keys.c: misspelt-key check for T1 files (contract in spaces/json_keys.h) and the line and
 * column of a byte offset, shared by the T1 reader's messages. */
#include "spaces/json_keys.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
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

/* Byte offset of the first `"key"` followed by a colon in text, or -1 (keys with escapes are not
 * searched for). */
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

int mpt_json_check_keys(const cJSON *obj, const char *const *known, const char *path, const char *text,
                        const char *where, mpt_error *err) {
  if (!cJSON_IsObject(obj)) return 0;
  for (const cJSON *it = obj->child; it; it = it->next) {
    const char *key = it->string;
    if (!key) continue;
    int is_known = 0;
    for (const char *const *k = known; *k && !is_known; k++) is_known = strcmp(*k, key) == 0;
    if (is_known) continue;
    const char *meant = NULL;
    int best = INT_MAX;
    for (const char *const *k = known; *k; k++) {
      if (cJSON_GetObjectItemCaseSensitive(obj, *k)) continue; /* the key meant would be given twice */
      int lim = allowed_edits(*k), d = mpt_key_distance(key, *k, lim);
      if (d <= lim && d < best) {
        best = d;
        meant = *k;
      }
    }
    if (!meant) continue;
    long off = key_offset(text, key);
    char at[64] = "";
    if (off >= 0) {
      int line, col;
      mpt_text_line_col(text, (size_t)off, &line, &col);
      snprintf(at, sizeof at, ":%d:%d", line, col);
    }
    return mpt_error_set(err, MPT_ERR_NAME, "%s%s: %s%s%s: unknown key; did you mean '%s'?", path, at, where,
                         where[0] ? "." : "", key, meant);
  }
  return 0;
}
