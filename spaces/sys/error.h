/* spaces/sys/error.h: the error record every mptune function fills on failure (message with file, field,
 * column), and the negative return codes. Only main() prints and exits. */
#ifndef MPT_ERROR_H
#define MPT_ERROR_H
#include <stdarg.h>

enum {
  MPT_ERR_IO = -1,       /* missing/unreadable file */
  MPT_ERR_PARSE = -2,    /* malformed input (JSON, expression syntax) */
  MPT_ERR_NAME = -3,     /* unknown name (parameter, option, strategy…) */
  MPT_ERR_VALUE = -4,    /* bad value (type, range, impossible budget) */
  MPT_ERR_EVAL = -5,     /* run-time error while evaluating an expression */
  MPT_ERR_NOMEM = -6,
  MPT_ERR_STATE = -7,    /* wrong state (resume of finished run, not an mptune log) */
  MPT_ERR_DEVICE = -8,   /* no device / driver */
  MPT_ERR_INTERNAL = -9,
  MPT_ERR_STOPPED = -10,  /* given up because the run is stopping (a signal, the time budget) */
};

typedef struct mpt_error {
  int code;            /* one of MPT_ERR_*, 0 when no error */
  char msg[2048];      /* complete, user-facing message (may span lines: expression + caret) */
} mpt_error;

/* Sets err->code and formats err->msg; returns code so callers can `return mpt_error_set(...)`.
 * err may be NULL. */
int mpt_error_set(mpt_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message (adds context such as the file name). */
int mpt_error_prefix(mpt_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mpt_error_clear(mpt_error *err);

#endif
