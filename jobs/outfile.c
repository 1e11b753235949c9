/* jobs/outfile.c: output files written as PATH.tmp and renamed over PATH when complete (jobs/outfile.h);
 * used by the T4 export and by mptune bench's CSVs. */
#include "jobs/outfile.h"
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mpt_outfile_special(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

char *mpt_outfile_tmp_name(const char *path) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 5);
  if (tmp) {
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
  }
  return tmp;
}

FILE *mpt_outfile_open(const char *path, mpt_error *err) {
  if (mpt_outfile_special(path)) {
    FILE *f = fopen(path, "wb");
    if (!f) mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return f;
  }
  char *tmp = mpt_outfile_tmp_name(path);
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
  if (mpt_outfile_special(path)) {
    int bad = ferror(f) != 0 || fflush(f) != 0, e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    return keep && bad ? mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(e)) : 0;
  }
  char *tmp = mpt_outfile_tmp_name(path);
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

/* the absolute path a file has or would have (its directory resolved, for one not written yet); malloc'd */
static char *canonical(const char *path) {
  char *r = realpath(path, NULL);
  if (r) return r;
  char *copy = strdup(path), *dir_copy = strdup(path);
  if (!copy || !dir_copy) { free(copy); free(dir_copy); return NULL; }
  char *dir = realpath(dirname(dir_copy), NULL);
  const char *base = basename(copy);
  char *out = dir ? malloc(strlen(dir) + strlen(base) + 2) : NULL;
  if (out) sprintf(out, "%s/%s", dir, base);
  free(dir);
  free(dir_copy);
  free(copy);
  return out;
}

int mpt_same_file(const char *a, const char *b) {
  if (!a || !b) return 0;
  if (strcmp(a, b) == 0) return 1;
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char *ca = canonical(a), *cb = canonical(b);
  int same = ca && cb && strcmp(ca, cb) == 0;
  free(ca);
  free(cb);
  return same;
}
