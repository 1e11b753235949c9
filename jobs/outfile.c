/* jobs/outfile.c: output files written as PATH.tmp and renamed over PATH when complete (jobs/outfile.h);
 * used by the T4 export and by mptune bench's CSVs. */
#include "jobs/outfile.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* PATH exists and is not a regular file (/dev/null, /dev/stdout, a pipe): written in place, never replaced */
static int special(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

static char *tmp_name(const char *path) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 5);
  if (tmp) {
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
  }
  return tmp;
}

FILE *mpt_outfile_open(const char *path, mpt_error *err) {
  if (special(path)) {
    FILE *f = fopen(path, "wb");
    if (!f) mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return f;
  }
  char *tmp = tmp_name(path);
  if (!tmp) {
    mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  FILE *f = fopen(tmp, "wb");
  if (!f) mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
  free(tmp);
  return f;
}

int mpt_outfile_close(FILE *f, const char *path, int keep, mpt_error *err) {
  if (special(path)) {
    int bad = ferror(f) != 0 || fflush(f) != 0, e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    return keep && bad ? mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(e)) : 0;
  }
  char *tmp = tmp_name(path);
  int bad = !keep || ferror(f) != 0, e = errno;
  if (!bad && (fflush(f) != 0 || (fsync(fileno(f)) != 0 && errno != EINVAL))) bad = 1, e = errno;
  if (fclose(f) != 0 && !bad) bad = 1, e = errno;
  if (!tmp) return keep ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
  if (!bad && rename(tmp, path) != 0) bad = 1, e = errno;
  if (bad) unlink(tmp);
  free(tmp);
  if (!keep) return 0;
  return bad ? mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(e)) : 0;
}
