/* spaces/json/json_check.c: the one-pass check of what JSON forbids and cJSON accepts (contract in
 * spaces/json/json_check.h): a byte-at-a-time state machine, so that a stream can feed it piece by piece. */
#include "spaces/json/json_check.h"

#include <stdio.h>
#include <string.h>

/* outside strings, where the bytes stand in a number */
enum { NUM_NONE, NUM_MINUS, NUM_ZERO, NUM_IN };

void mpt_json_check_init(mpt_json_check *c) {
  memset(c, 0, sizeof *c);
  c->bad_at = -1;
}

static void fault(mpt_json_check *c, long long at, const char *what) {
  c->bad_at = at;
  snprintf(c->what, sizeof c->what, "%s", what);
}

/* the first byte b of a UTF-8 sequence of more than one byte: what the next ones must be; 0 when b starts
 * none (a stray continuation byte, an overlong form, beyond U+10FFFF) */
static int utf8_lead(mpt_json_check *c, unsigned char b) {
  c->lo = 0x80;
  c->hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) c->need = 1;
  else if (b >= 0xE0 && b <= 0xEF) c->need = 2;
  else if (b >= 0xF0 && b <= 0xF4) c->need = 3;
  else return 0;
  if (b == 0xE0) c->lo = 0xA0;      /* overlong */
  else if (b == 0xED) c->hi = 0x9F; /* UTF-16 surrogates */
  else if (b == 0xF0) c->lo = 0x90; /* overlong */
  else if (b == 0xF4) c->hi = 0x8F; /* beyond U+10FFFF */
  return 1;
}

/* the bytes that need nothing but skipping, as a table (one load instead of a chain of compares: the check
 * reads every byte of brute-forced files of hundreds of MB) */
enum {
  PLAIN_IN_STRING = 1, /* printable ASCII but the quote and the backslash */
  PLAIN_OUTSIDE = 2,   /* outside strings: what ends a number and needs nothing else (JSON's whitespace:
                        * space, tab, LF, CR; ',', ':'). Other bytes below 0x20, which cJSON skips as
                        * whitespace too, are faults */
  NUMBER_REST = 4      /* inside a number past its leading zero, if any: digits, '.', 'e', 'E', '+', '-' */
};
#define CLASS(b)                                                                                              \
  (((b) >= 0x20 && (b) < 0x80 && (b) != '"' && (b) != '\\' ? PLAIN_IN_STRING : 0) |                          \
   ((b) == ' ' || (b) == '\t' || (b) == '\n' || (b) == '\r' || (b) == ',' || (b) == ':' ? PLAIN_OUTSIDE : 0) | \
   (((b) >= '0' && (b) <= '9') || (b) == '.' || (b) == 'e' || (b) == 'E' || (b) == '+' || (b) == '-' ? NUMBER_REST : 0))
#define CLASS4(b) CLASS(b), CLASS((b) + 1), CLASS((b) + 2), CLASS((b) + 3)
#define CLASS16(b) CLASS4(b), CLASS4((b) + 4), CLASS4((b) + 8), CLASS4((b) + 12)
#define CLASS64(b) CLASS16(b), CLASS16((b) + 16), CLASS16((b) + 32), CLASS16((b) + 48)
static const unsigned char byte_class[256] = {CLASS64(0), CLASS64(64), CLASS64(128), CLASS64(192)};

static int is_digit(unsigned char b) { return b >= '0' && b <= '9'; }

/* a raw control character b at offset at, in a string or between values; returns 1 */
static int control_fault(mpt_json_check *c, unsigned char b, long long at, int in_string) {
  char what[96];
  if (in_string)
    snprintf(what, sizeof what, "raw control character U+%04X in a string (escape it as \\u%04X)", b, b);
  else
    snprintf(what, sizeof what, "raw control character U+%04X between values (JSON allows only space, tab, LF, CR)", b);
  return fault(c, at, what), 1;
}

/* the byte b at text offset at inside a string (not a plain one): 0, or 1 for a fault */
static int string_byte(mpt_json_check *c, unsigned char b, long long at) {
  if (c->need) {
    if (b < c->lo || b > c->hi) return fault(c, c->seq_at, "invalid UTF-8 in a string"), 1;
    c->need--;
    c->lo = 0x80;
    c->hi = 0xBF;
  } else if (c->esc) {
    c->esc = 0; /* what may follow a backslash is cJSON's to check */
  } else if (b == '"') {
    c->in_str = 0;
  } else if (b == '\\') {
    c->esc = 1;
  } else if (b < 0x20) {
    return control_fault(c, b, at, 1);
  } else if (b >= 0x80) {
    if (!utf8_lead(c, b)) return fault(c, at, "invalid UTF-8 in a string"), 1;
    c->seq_at = at;
  }
  return 0;
}

/* the byte b at text offset at outside strings: 0, or 1 for a fault */
static int outside_byte(mpt_json_check *c, unsigned char b, long long at) {
  if (is_digit(b)) {
    /* a digit after a number's lone leading 0: 012, -012 (an exponent's zeros, 1e012, are allowed) */
    if (c->num == NUM_ZERO) return fault(c, at - 1, "a number with a leading zero (JSON has none: 12, not 012)"), 1;
    c->num = c->num == NUM_IN || b != '0' ? NUM_IN : NUM_ZERO;
  } else if (b == '-') {
    c->num = c->num == NUM_NONE ? NUM_MINUS : NUM_IN;
  } else if (b == '.' || b == '+' || b == 'e' || b == 'E') {
    if (c->num != NUM_NONE) c->num = NUM_IN;
  } else if (b < 0x20 && !(byte_class[b] & PLAIN_OUTSIDE) && !c->closed) { /* not tab, LF or CR */
    return control_fault(c, b, at, 0);
  } else {
    c->num = NUM_NONE;
    if (b == '"') {
      c->in_str = 1;
    } else if (b == '{' || b == '[') {
      if (++c->depth > MPT_JSON_MAX_DEPTH) {
        char what[96];
        snprintf(what, sizeof what, "nested too deeply (more than %d levels)", MPT_JSON_MAX_DEPTH);
        return fault(c, at, what), 1;
      }
    } else if ((b == '}' || b == ']') && c->depth > 0) {
      c->closed = --c->depth == 0;
    }
  }
  return 0;
}

size_t mpt_json_check_feed(mpt_json_check *c, const char *buf, size_t n) {
  if (c->bad_at >= 0) return 0;
  const unsigned char *s = (const unsigned char *)buf;
  size_t i = 0;
  while (i < n) {
    /* runs of the common bytes in tight loops: most of a brute-forced file is indentation and digits */
    if (c->in_str) {
      if (!c->need && !c->esc)
        while (i < n && byte_class[s[i]] & PLAIN_IN_STRING) i++;
    } else if (byte_class[s[i]] & PLAIN_OUTSIDE) {
      c->num = NUM_NONE;
      while (++i < n && byte_class[s[i]] & PLAIN_OUTSIDE) {}
    } else if (c->num == NUM_IN) {
      while (i < n && byte_class[s[i]] & NUMBER_REST) i++;
    }
    if (i == n) break;
    if (c->in_str ? string_byte(c, s[i], c->off + (long long)i) : outside_byte(c, s[i], c->off + (long long)i))
      return i;
    i++;
  }
  c->off += (long long)n;
  return n;
}
