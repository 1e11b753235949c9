/* spaces/json/json_check.c: the one-pass check of what JSON forbids and cJSON accepts (contract in
 * spaces/json/json_check.h): a byte-at-a-time state machine, so that a stream can feed it piece by piece; and the
 * range of the numbers, read exactly (no rounding) only where one may overflow: with an exponent, or longer
 * than any double's integer part. */
#include "spaces/json/json_check.h"

#include <stdio.h>
#include <string.h>

/* outside strings, where the bytes stand in a number: NUM_EXP past its 'e' */
enum { NUM_NONE, NUM_MINUS, NUM_ZERO, NUM_IN, NUM_EXP };

/* The least value that overflows a double: 2^1024 - 2^970, halfway between DBL_MAX and 2^1024, where a tie
 * rounds to even (up: DBL_MAX's last mantissa bit is 1). Its 309 digits; a number of 309 integer digits
 * overflows when its digits are these or more. */
static const char overflow_digits[] =
    "1797693134862315807937289714053034150799341327100378269361737789804449682927647509466490179775872070963"
    "3028641669288791094655554785194040263065748867150582068190890200070838367627385484581771153176447573027"
    "0069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
enum { OVERFLOW_DIGITS = sizeof overflow_digits - 1 };

/* the parts of a number, in order */
enum { PART_SIGN, PART_INT, PART_FRAC, PART_EXP_SIGN, PART_EXP, PART_AFTER };

static void number_start(mpt_json_number *r) {
  memset(r, 0, sizeof *r);
}

/* one digit d of the mantissa: a significant one from the first nonzero digit on */
static void mantissa_digit(mpt_json_number *r, int d, int in_fraction) {
  if (r->n_sig == 0 && d == 0) {
    r->lead_zeros += in_fraction;
    return;
  }
  if (!in_fraction) r->int_digits++;
  if (r->cmp == 0) {
    int o = r->n_sig < OVERFLOW_DIGITS ? overflow_digits[r->n_sig] - '0' : 0;
    r->cmp = (signed char)(d > o ? 1 : d < o ? -1 : 0);
  }
  r->n_sig++;
}

/* reads n more bytes of a number as strtod would (JSON's grammar, leniently: what strtod stops at, and all
 * after it, is no part of the value) */
static void number_bytes(mpt_json_number *r, const unsigned char *b, size_t n) {
  for (size_t k = 0; k < n; k++, r->len++) {
    unsigned char x = b[k];
    if ((size_t)r->len < sizeof r->text - 1) r->text[r->len] = (char)x;
    int digit = x >= '0' && x <= '9';
    switch (r->part) {
    case PART_SIGN:
      r->part = PART_INT;
      if (x == '-' || x == '+') break;
      /* fall through */
    case PART_INT:
    case PART_FRAC:
      if (digit) mantissa_digit(r, x - '0', r->part == PART_FRAC);
      else if (x == '.' && r->part == PART_INT) r->part = PART_FRAC;
      else r->part = (x == 'e' || x == 'E') ? PART_EXP_SIGN : PART_AFTER;
      break;
    case PART_EXP_SIGN:
      r->part = PART_EXP;
      if (x == '-' || x == '+') {
        r->exp_neg = x == '-';
        break;
      }
      /* fall through */
    case PART_EXP:
      if (!digit) r->part = PART_AFTER;
      else if (r->exp < 1000000000000LL) r->exp = r->exp * 10 + (x - '0'); /* stops there: far past any text */
      break;
    default: break;
    }
  }
}

/* 1 when the number read overflows a double: its value has more than 309 integer digits, or 309 that are the
 * overflow digits or more */
static int number_overflows(const mpt_json_number *r) {
  if (r->n_sig == 0) return 0; /* zero, whatever its exponent */
  long long e = r->exp_neg ? -r->exp : r->exp;
  long long mag = (r->int_digits ? r->int_digits : -r->lead_zeros) + e; /* 10^(mag-1) <= |value| < 10^mag */
  if (mag != OVERFLOW_DIGITS) return mag > OVERFLOW_DIGITS;
  return r->cmp > 0 || (r->cmp == 0 && r->n_sig >= OVERFLOW_DIGITS);
}

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
  NUMBER_REST = 4,     /* inside a number past its leading zero, if any: digits, '.', 'e', 'E', '+', '-' */
  MANTISSA_REST = 8    /* the same but 'e' and 'E', which make a number one to read for its range */
};
#define CLASS(b)                                                                                              \
  (((b) >= 0x20 && (b) < 0x80 && (b) != '"' && (b) != '\\' ? PLAIN_IN_STRING : 0) |                          \
   ((b) == ' ' || (b) == '\t' || (b) == '\n' || (b) == '\r' || (b) == ',' || (b) == ':' ? PLAIN_OUTSIDE : 0) | \
   (((b) >= '0' && (b) <= '9') || (b) == '.' || (b) == 'e' || (b) == 'E' || (b) == '+' || (b) == '-' ? NUMBER_REST : 0) | \
   (((b) >= '0' && (b) <= '9') || (b) == '.' || (b) == '+' || (b) == '-' ? MANTISSA_REST : 0))
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
    if (c->num == NUM_NONE) c->num_at = at;
    if (c->num != NUM_EXP) c->num = c->num == NUM_IN || b != '0' ? NUM_IN : NUM_ZERO;
  } else if (b == '-') {
    if (c->num == NUM_NONE) c->num_at = at;
    if (c->num != NUM_EXP) c->num = c->num == NUM_NONE ? NUM_MINUS : NUM_IN;
  } else if (b == 'e' || b == 'E') {
    if (c->num != NUM_NONE) c->num = NUM_EXP;
  } else if (b == '.' || b == '+') {
    if (c->num != NUM_NONE && c->num != NUM_EXP) c->num = NUM_IN;
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

/* the bytes of the number in the piece s (of which byte 0 is at text offset c->off) before byte i, read on
 * from those of earlier pieces */
static void number_piece(mpt_json_check *c, const unsigned char *s, size_t i) {
  size_t from = c->num_at > c->off ? (size_t)(c->num_at - c->off) : 0;
  if (!c->num_begun) number_start(&c->num_read);
  number_bytes(&c->num_read, s + from, i - from);
}

/* 1 when the number in progress, ending before byte i of the piece being fed, is to be read for its range (or
 * has bytes read from earlier pieces): only one with an exponent, or with as many digits as DBL_MAX's integer
 * part, can overflow; the others, most numbers, are not read again */
static inline int number_to_read(const mpt_json_check *c, size_t i) {
  return c->num == NUM_EXP || c->num_begun || c->off + (long long)i - c->num_at >= OVERFLOW_DIGITS;
}

/* the number in progress ends before byte i of the piece s (number_to_read said so): 0, or 1 when no double
 * holds it (a fault at its first byte). One after the document (the readers' extra data) is not judged. */
static int number_end(mpt_json_check *c, const unsigned char *s, size_t i) {
  int may_overflow = (c->num == NUM_EXP || c->off + (long long)i - c->num_at >= OVERFLOW_DIGITS) && !c->closed;
  if (may_overflow) number_piece(c, s, i);
  c->num_begun = 0;
  if (!may_overflow || !number_overflows(&c->num_read)) return 0;
  const mpt_json_number *r = &c->num_read;
  int shown = r->len < (long long)sizeof r->text - 1 ? (int)r->len : (int)sizeof r->text - 5;
  snprintf(c->what, sizeof c->what, "number %.*s%s is out of range (not representable as a double)", shown, r->text,
           shown < r->len ? "..." : "");
  c->bad_at = c->num_at;
  c->out_of_range = 1;
  return 1;
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
      if (c->num != NUM_NONE && number_to_read(c, i) && number_end(c, s, i)) return i;
      c->num = NUM_NONE;
      while (++i < n && byte_class[s[i]] & PLAIN_OUTSIDE) {}
    } else if (c->num == NUM_IN) {
      while (i < n && byte_class[s[i]] & MANTISSA_REST) i++;
    } else if (c->num == NUM_EXP) {
      while (i < n && byte_class[s[i]] & NUMBER_REST) i++;
    }
    if (i == n) break;
    if (c->num != NUM_NONE && !c->in_str && !(byte_class[s[i]] & NUMBER_REST) && number_to_read(c, i) &&
        number_end(c, s, i))
      return i;
    if (c->in_str ? string_byte(c, s[i], c->off + (long long)i) : outside_byte(c, s[i], c->off + (long long)i))
      return i;
    i++;
  }
  if (c->num != NUM_NONE) { /* a number goes on in the next piece: what it has so far, read */
    number_piece(c, s, n);
    c->num_begun = 1;
  }
  c->off += (long long)n;
  return n;
}
