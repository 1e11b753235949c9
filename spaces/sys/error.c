/* spaces/sys/error.c: formatting of mpt_error records. */
#include "spaces/sys/error.h"
#include <stdio.h>
#include <string.h>

int mpt_error_set(mpt_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

int mpt_error_prefix(mpt_error *err, const char *fmt, ...) {
  if (!err) return 0;
  char prefix[512], old[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
  return err->code;
}

void mpt_error_clear(mpt_error *err) {
  if (err) { err->code = 0; err->msg[0] = '\0'; }
}
