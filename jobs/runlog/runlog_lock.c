/* jobs/runlog/runlog_lock.c: one writer per run log: the lock on PATH.lock that mptune tune/collect hold while
 * they write a log (jobs/runlog/runlog_lock.h). Two writers would each rename their own copy over the log and
 * append to a file the other had replaced, losing what they logged. */
#include "jobs/runlog/runlog_lock.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* an exclusive lock on the whole file: open-file-description locks where the kernel has them (two opens
 * in one process conflict too, and closing another descriptor of the file does not drop them), else
 * classic POSIX locks (per process; NFS and Lustre support both through the same lock manager) */
static int lock_whole(int fd) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
#ifdef F_OFD_SETLK
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return 0;
  if (errno != EINVAL) return -1;
#endif
  return fcntl(fd, F_SETLK, &fl);
}

/* PATH.lock, malloc'd */
static char *lock_name(const char *path) {
  size_t cap = strlen(path) + 6;
  char *name = malloc(cap);
  if (name) snprintf(name, cap, "%s.lock", path);
  return name;
}

int mpt_runlog_lock(const char *path, int *fd_out, mpt_error *err) {
  *fd_out = -1;
  char *name = lock_name(path);
  if (!name) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int unlocked = 0; /* given up on a lock, knowingly */
  for (int attempt = 0; attempt < 8; attempt++) {
    /* 0666 less the umask: in a shared directory (umask 002) the group's other writers can lock it too */
    int created = 1, fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) created = 0, fd = open(name, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      char *dir = strdup(path);
      int dir_writable = dir && access(dirname(dir), W_OK) == 0;
      free(dir);
      /* a missing or read-only directory: writing the log fails there anyway, with its message */
      if (!dir_writable) { unlocked = 1; break; }
      if (e == ENOENT) continue; /* removed by its holder in between */
      /* never written unlocked where another writer may hold it (a lock file of another user's run) */
      mpt_error_set(err, MPT_ERR_STATE, "run log %s: cannot open its lock file %s: %s; a log has one writer at a time: "
                    "if no run is writing it, remove %s", path, name, strerror(e), name);
      free(name);
      return MPT_ERR_STATE;
    }
    if (lock_whole(fd) != 0) {
      int e = errno;
      if (e == EAGAIN || e == EACCES) {
        char who[256] = "";
        ssize_t n = pread(fd, who, sizeof who - 1, 0);
        who[n > 0 ? n : 0] = '\0';
        who[strcspn(who, "\n")] = '\0';
        close(fd);
        mpt_error_set(err, MPT_ERR_STATE, "run log %s is being written by another mptune%s%s%s: a log has one writer at "
                      "a time; wait for that run to end or stop it first (%s)", path, who[0] ? " (" : "", who,
                      who[0] ? ")" : "", name);
        free(name);
        return MPT_ERR_STATE;
      }
      close(fd);
      if (created) unlink(name);
      unlocked = 1;
      /* ENOSYS, ENOLCK, EOPNOTSUPP: this file system has no locks; written unlocked, as said */
      fprintf(stderr, "warning: run log %s is written without a lock (%s: %s): make sure no other run writes it\n", path,
              name, strerror(e));
      break;
    }
    /* the lock must be on the file that has the name now: a holder that just released it removed it */
    struct stat a, b;
    if (fstat(fd, &a) != 0 || stat(name, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
      close(fd);
      continue;
    }
    char host[128] = "?", when[40] = "?", who[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int len = snprintf(who, sizeof who, "pid %ld on %s, since %s\n", (long)getpid(), host, when);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, who, (size_t)len, 0) != len) { /* the lock holds all the same */ }
    free(name);
    *fd_out = fd;
    return 0;
  }
  if (!unlocked) { /* the lock file was replaced under it at every attempt */
    mpt_error_set(err, MPT_ERR_STATE, "run log %s: could not take the lock %s (replaced at each of 8 attempts): is another "
                  "run starting on it?", path, name);
    free(name);
    return MPT_ERR_STATE;
  }
  free(name);
  return 0;
}

void mpt_runlog_unlock(const char *path, int fd) {
  if (fd < 0) return;
  char *name = lock_name(path);
  if (name) {
    unlink(name); /* while still holding it: a process waiting on this file then sees it renamed away */
    free(name);
  }
  close(fd);
}
