/* evaluators/cpu/cpu_compile_reason.c: a compiler's output as a failure reason (the lines saying what went
 * wrong, the linker's included, then the last line), and the CompilerOptions entry a compiler's message names. */
#include <stdio.h>
#include <string.h>
#include "evaluators/cpu/cpu_internal.h"

/* Compiler output as a failure reason: its first few lines that say what went wrong, then its last line */
enum { REASON_LINES = 3 };

/* the linker names itself first: "/usr/bin/ld: cannot find -lfoo", "ld.bfd: ...", "x86_64-linux-gnu-ld: ..." */
static int linker_line(const char *line, size_t len) {
  const char *colon = memchr(line, ':', len);
  if (!colon) return 0;
  const char *base = colon;
  while (base > line && base[-1] != '/') base--;
  size_t n = (size_t)(colon - base);
  for (size_t k = 0; k + 2 <= n; k++) /* "ld" as the name or its last part, with a ".bfd"-like suffix */
    if (base[k] == 'l' && base[k + 1] == 'd' && (k == 0 || base[k - 1] == '-') && (k + 2 == n || base[k + 2] == '.'))
      return 1;
  return 0;
}

/* a line saying what went wrong: one naming an error, or the linker's; source excerpts and carets (indented)
 * and "In function" lines are context */
static int diagnostic_line(const char *line, size_t len) {
  if (len == 0 || line[0] == ' ' || line[0] == '\t') return 0;
  for (size_t k = 0; k + 5 <= len; k++)
    if (strncmp(line + k, "error", 5) == 0) return 1;
  return linker_line(line, len);
}

static void append_line(char *dst, size_t cap, size_t *n, const char *line, size_t len, int first) {
  if (*n + 1 >= cap) return;
  int w = snprintf(dst + *n, cap - *n, "%s%.*s", first ? "" : "\n", (int)len, line);
  if (w > 0) *n = *n + (size_t)w < cap ? *n + (size_t)w : cap - 1;
}

/* prefix, the first REASON_LINES diagnostic lines of out (or, when none is, its first unindented ones) and the
 * last unindented line ("collect2: error: ld returned 1 exit status") when it is not among them */
void mpt_cpu_compiler_reason(char *dst, size_t cap, const char *prefix, const char *out) {
  size_t n = 0;
  append_line(dst, cap, &n, prefix, strlen(prefix), 1);
  int any_diag = 0;
  for (const char *p = out; *p;) {
    size_t len = strcspn(p, "\n");
    if (diagnostic_line(p, len)) any_diag = 1;
    p += len + (p[len] == '\n');
  }
  int shown = 0;
  const char *last = NULL, *last_shown = NULL;
  size_t last_len = 0;
  for (const char *p = out; *p;) {
    size_t len = strcspn(p, "\n");
    if (len > 0 && p[0] != ' ' && p[0] != '\t') last = p, last_len = len;
    if (shown < REASON_LINES && (any_diag ? diagnostic_line(p, len) : (len > 0 && p[0] != ' ' && p[0] != '\t'))) {
      append_line(dst, cap, &n, p, len, shown == 0);
      last_shown = p;
      shown++;
    }
    p += len + (p[len] == '\n');
  }
  if (last && last != last_shown) append_line(dst, cap, &n, last, last_len, shown == 0);
}

/* the CompilerOptions entry the compiler's message names as a whole word (an unknown flag, a -l library it
 * cannot find), -1 when none */
static int word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_-=+./,", c); }

int mpt_cpu_option_named(const mpt_kernel_spec *ks, const char *msg) {
  for (int i = 0; i < ks->n_options; i++) {
    const char *o = ks->options[i];
    size_t n = strlen(o);
    if (n < 2) continue;
    for (const char *p = strstr(msg, o); p; p = strstr(p + 1, o))
      if ((p == msg || !word_char(p[-1])) && (!p[n] || !word_char(p[n]))) return i;
  }
  return -1;
}
