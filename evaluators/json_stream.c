/* evaluators/json_stream.c: delimits JSON values by scanning (strings, nesting) without building
 * them, so that a large document is parsed by cJSON one top-level member or one record at a time.
 * Whitespace is what cJSON skips (every byte <= 32). */
#include "evaluators/json_stream.h"
#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (unsigned char)*p <= 32) p++;
  return p;
}

/* p at '"': just past the closing quote, or NULL */
static const char *skip_string(const char *p, const char *e) {
  for (p++; p < e; p++) {
    if (*p == '\\') p++;
    else if (*p == '"') return p + 1;
  }
  return NULL;
}

/* just past the value starting at p, or NULL (the value's own syntax is left to cJSON) */
static const char *skip_value(const char *p, const char *e) {
  if (p >= e) return NULL;
  if (*p == '"') return skip_string(p, e);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < e) {
      char c = *p;
      if (c == '"') {
        if (!(p = skip_string(p, e))) return NULL;
        continue;
      }
      if (c == '{' || c == '[') depth++;
      else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
      p++;
    }
    return NULL;
  }
  const char *s = p;
  while (p < e && (unsigned char)*p > 32 && *p != ',' && *p != ']' && *p != '}') p++;
  return p > s ? p : NULL;
}

/* the key string at p (at '"'), unescaped, malloc'ed; *after just past it; NULL on error */
static char *read_key(const char *p, const char *e, const char **after) {
  const char *ke = skip_string(p, e);
  if (!ke) return NULL;
  *after = ke;
  size_t n = (size_t)(ke - p) - 2;
  if (!memchr(p + 1, '\\', n)) {
    char *k = malloc(n + 1);
    if (k) {
      memcpy(k, p + 1, n);
      k[n] = '\0';
    }
    return k;
  }
  cJSON *s = cJSON_ParseWithLength(p, (size_t)(ke - p));
  char *k = cJSON_IsString(s) ? malloc(strlen(s->valuestring) + 1) : NULL;
  if (k) strcpy(k, s->valuestring);
  cJSON_Delete(s);
  return k;
}

int mpt_json_members(const char *buf, size_t len, const char *const *keys, int n, const char **val,
                     const char **val_end) {
  const char *e = buf + len, *p = skip_ws(buf, e);
  for (int i = 0; i < n; i++) val[i] = val_end[i] = NULL;
  if (p >= e || *p != '{') return -1;
  p = skip_ws(p + 1, e);
  if (p < e && *p == '}') return 0;
  for (;;) {
    if (p >= e || *p != '"') return -1;
    const char *after;
    char *key = read_key(p, e, &after);
    if (!key) return -1;
    p = skip_ws(after, e);
    const char *v = p < e && *p == ':' ? skip_ws(p + 1, e) : NULL;
    const char *ve = v ? skip_value(v, e) : NULL;
    for (int i = 0; ve && i < n; i++)
      if (!val[i] && strcmp(keys[i], key) == 0) {
        val[i] = v;
        val_end[i] = ve;
      }
    free(key);
    if (!ve) return -1;
    p = skip_ws(ve, e);
    if (p < e && *p == ',') {
      p = skip_ws(p + 1, e);
      continue;
    }
    return p < e && *p == '}' ? 0 : -1;
  }
}

int mpt_json_iter_text(mpt_json_iter *it, const char *v, const char *v_end) {
  memset(it, 0, sizeof *it);
  if (!v || v >= v_end || (*v != '[' && *v != '{')) return -1;
  it->close = *v == '[' ? ']' : '}';
  it->p = v + 1;
  it->end = v_end;
  return 0;
}

void mpt_json_iter_tree(mpt_json_iter *it, cJSON *container) {
  memset(it, 0, sizeof *it);
  it->tree = container;
  it->close = cJSON_IsArray(container) ? ']' : '}';
}

int mpt_json_iter_next(mpt_json_iter *it, cJSON **item, const char **err_at) {
  *item = NULL;
  if (it->tree) {
    cJSON *c = it->tree->child;
    if (!c) return 0;
    *item = cJSON_DetachItemViaPointer(it->tree, c);
    it->count++;
    return 1;
  }
  const char *e = it->end, *p = skip_ws(it->p, e);
  if (p < e && *p == it->close) return 0;
  if (it->count > 0) {
    if (p >= e || *p != ',') goto bad;
    p = skip_ws(p + 1, e);
  }
  char *key = NULL;
  if (it->close == '}') {
    const char *after;
    if (p >= e || *p != '"' || !(key = read_key(p, e, &after))) goto bad;
    p = skip_ws(after, e);
    if (p >= e || *p != ':') {
      free(key);
      goto bad;
    }
    p = skip_ws(p + 1, e);
  }
  const char *ve = skip_value(p, e), *ep = NULL;
  cJSON *v = ve ? cJSON_ParseWithLengthOpts(p, (size_t)(ve - p), &ep, 0) : NULL;
  if (!v) {
    free(key);
    if (ep) p = ep;
    goto bad;
  }
  v->string = key; /* freed by cJSON_Delete (not marked constant) */
  it->p = ve;
  it->count++;
  *item = v;
  return 1;
bad:
  *err_at = p;
  return -1;
}
