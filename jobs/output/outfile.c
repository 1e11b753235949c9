/* jobs/output/outfile.c: output files written as PATH.tmp.XXXXXX (a name of their own, so that two writers of one
 * PATH never write into one file) and renamed over PATH when complete, a symbolic link's
 * target in its place, this process's own descriptors (/dev/stdout) where they stand (jobs/output/outfile.h);
 * used by the T4 export, space --list and mptune bench's CSVs. */
#include "jobs/output/outfile.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the descriptor a name gives of this process's own: "-", /dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N, /proc/PID/fd/N with PID this process; -1 for any other name or a closed descriptor */
static int fd_name(const char *name) {
  if (strcmp(name, "-") == 0 || strcmp(name, "/dev/stdout") == 0) return STDOUT_FILENO;
  if (strcmp(name, "/dev/stderr") == 0) return STDERR_FILENO;
  char own[64];
  snprintf(own, sizeof own, "/proc/%ld/fd/", (long)getpid());
  const char *num = strncmp(name, "/dev/fd/", 8) == 0 ? name + 8
                    : strncmp(name, "/proc/self/fd/", 14) == 0 ? name + 14
                    : strncmp(name, own, strlen(own)) == 0 ? name + strlen(own) : NULL;
  if (!num || !isdigit((unsigned char)*num)) return -1;
  char *end;
  long fd = strtol(num, &end, 10);
  return *end == '\0' && fd <= INT_MAX && fcntl((int)fd, F_GETFD) != -1 ? (int)fd : -1;
}

/* replaces name (PATH_MAX bytes) by what the symbolic link of that name leads to (relative to the link's
 * directory); -1 when name is not a link */
static int follow_link(char *name) {
  char link[PATH_MAX];
  ssize_t n = readlink(name, link, sizeof link - 1);
  if (n <= 0) return -1;
  link[n] = '\0';
  char *slash = strrchr(name, '/');
  size_t dl = link[0] == '/' || !slash ? 0 : (size_t)(slash - name) + 1;
  if (dl + (size_t)n + 1 > PATH_MAX) return -1;
  memcpy(name + dl, link, (size_t)n + 1);
  return 0;
}

/* the descriptor path stands for, itself or through the symbolic links leading to it (a link to
 * /dev/stdout, which links to /proc/self/fd/1), or -1 */
static int own_fd(const char *path) {
  char name[PATH_MAX];
  snprintf(name, sizeof name, "%s", path);
  for (int hop = 0; hop < 16; hop++) {
    int fd = fd_name(name);
    if (fd >= 0 || follow_link(name) < 0) return fd;
  }
  return -1;
}

/* 1 when path exists and is not a regular file (a device, a pipe) */
static int not_regular(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

int mpt_outfile_special(const char *path) { return own_fd(path) >= 0 || not_regular(path); }

char *mpt_outfile_resolve(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode)) return strdup(path);
  char *r = realpath(path, NULL);
  if (r) return r;
  char name[PATH_MAX]; /* a link to a file not there yet: followed by hand */
  snprintf(name, sizeof name, "%s", path);
  for (int hop = 0; hop < 16 && follow_link(name) == 0; hop++) continue;
  return strdup(name);
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

/* the temporary files being written, by their streams (a command writes one or two at a time) */
static struct {
  FILE *f;
  char *tmp;
} pending[16];

/* The signals that remove the temporary files (mpt_outfile_remove_on_signal) held back while a file and its
 * entry in the table change together: one arriving between them left the file behind */
static void hold_exit_signals(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &s, old);
}
static void release_exit_signals(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

/* target.tmp.XXXXXX created (mode 0666 less the umask, as fopen would) and opened; NULL with err set */
static FILE *open_unique_tmp(const char *target, mpt_error *err) {
  int slot = 0;
  while (slot < 16 && pending[slot].f) slot++;
  size_t n = strlen(target);
  char *tmp = slot < 16 ? malloc(n + 12) : NULL;
  if (!tmp) {
    mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  memcpy(tmp, target, n);
  memcpy(tmp + n, ".tmp.XXXXXX", 12);
  sigset_t held;
  hold_exit_signals(&held);
  int fd = mkstemp(tmp);
  FILE *f = NULL;
  if (fd >= 0) {
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(f = fdopen(fd, "wb"))) {
      int e = errno;
      close(fd);
      unlink(tmp);
      errno = e;
    }
  }
  if (!f) {
    int e = errno;
    release_exit_signals(&held);
    mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", tmp, strerror(e));
    free(tmp);
    return NULL;
  }
  pending[slot].tmp = tmp;
  pending[slot].f = f;
  release_exit_signals(&held);
  return f;
}

/* the thread that writes the outputs (it installed the handler). A signal sent to the process goes to any
 * thread that does not block it, and the library threads (OpenBLAS's, MPICH's) block none: while this thread
 * holds the signals back (a file created but not yet in the table), Linux gave the signal to one of them, whose
 * handler found the table empty and ended the process with the file left behind (space_cli, under load) */
static pthread_t owner;
static volatile sig_atomic_t owner_set;

static void remove_pending(int sig) {
  if (owner_set && !pthread_equal(pthread_self(), owner) && pthread_kill(owner, sig) == 0)
    return; /* pthread_kill is async-signal-safe: handled there once it lets the signal through */
  for (int i = 0; i < 16; i++) /* unlink is async-signal-safe; the table holds no half-written name */
    if (pending[i].f && pending[i].tmp) unlink(pending[i].tmp);
  signal(sig, SIG_DFL);
  raise(sig);
}

void mpt_outfile_remove_on_signal(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  owner = pthread_self();
  owner_set = 1;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa, old;
    sigaction(sigs[i], NULL, &old);
    if (old.sa_handler == SIG_IGN) continue; /* a signal the caller ignores stays ignored (nohup, &) */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_pending;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* a thread that passes the signal on goes on with what it was doing */
    sigaction(sigs[i], &sa, NULL);
  }
}

/* the slot of stream f in the table; -1 if f has none */
static int pending_slot(FILE *f) {
  for (int i = 0; i < 16; i++)
    if (pending[i].f == f) return i;
  return -1;
}

FILE *mpt_outfile_open(const char *path, mpt_error *err) {
  int fd = own_fd(path);
  if (fd >= 0) { /* an open descriptor (stdout redirected to a file): written where it stands, never reopened */
    int fl = fcntl(fd, F_GETFL);
    if (fl == -1 || (fl & O_ACCMODE) == O_RDONLY) { /* closed when mptune started (then maybe reused for reading) */
      mpt_error_set(err, MPT_ERR_IO, "cannot write %s: descriptor %d (%s) is closed or not open for writing", path, fd,
                    fd == STDOUT_FILENO ? "the standard output" : fd == STDERR_FILENO ? "the standard error" : "this process's own");
      return NULL;
    }
    fflush(stdout);
    fflush(stderr);
    int d = dup(fd);
    FILE *f = d >= 0 ? fdopen(d, "wb") : NULL;
    if (!f) {
      mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
      if (d >= 0) close(d);
    }
    return f;
  }
  if (not_regular(path)) {
    FILE *f = fopen(path, "wb");
    if (!f) mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return f;
  }
  char *target = mpt_outfile_resolve(path);
  FILE *f = target ? open_unique_tmp(target, err) : NULL;
  if (!target) mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  free(target);
  return f;
}

int mpt_outfile_close(FILE *f, const char *path, int keep, mpt_error *err) {
  if (mpt_outfile_special(path)) {
    int bad = ferror(f) != 0 || fflush(f) != 0, e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    return keep && bad ? mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(e)) : 0;
  }
  /* a symbolic link stays: the file it leads to is replaced */
  /* the file stays in the table (a signal removes it) until it is renamed or removed */
  char *target = mpt_outfile_resolve(path);
  int slot = pending_slot(f);
  int bad = !keep || ferror(f) != 0 || !target, e = target ? errno : ENOMEM;
  if (!bad && (fflush(f) != 0 || (fsync(fileno(f)) != 0 && errno != EINVAL))) bad = 1, e = errno;
  if (fclose(f) != 0 && !bad) bad = 1, e = errno;
  if (slot < 0) {
    free(target);
    return keep ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
  }
  char *tmp = pending[slot].tmp;
  sigset_t held;
  hold_exit_signals(&held);
  if (!bad && rename(tmp, target) != 0) bad = 1, e = errno;
  if (bad) unlink(tmp);
  pending[slot].f = NULL;
  pending[slot].tmp = NULL;
  release_exit_signals(&held);
  free(tmp);
  free(target);
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

int mpt_outfile_is_stdout(const char *path) { return strcmp(path, "-") == 0 || mpt_same_file(path, "/dev/stdout"); }

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
