/* evaluators/cpu/cpu_scratch.c: the cpu evaluator's scratch directory: made in --workdir, $TMPDIR or /tmp with a
 * marker naming its owner process, removed at close; at open those whose owner is provably gone (a killed run's)
 * are removed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "evaluators/cpu/cpu_internal.h"

/* ---- scratch directories: each carries its owner's identity (OWNER_MARKER), so that those of a worker that
 * was killed (SIGKILL leaves them: close never ran) are found and removed by the next open ---- */

#define SCRATCH_PREFIX "mptune-cpu-r"
#define OWNER_MARKER "mptune-owner"
#define OWNER_MAGIC "mptune cpu scratch 1"

/* A process as it can be told from another one with the same pid: the machine and its boot, the pid
 * namespace, the pid and the process's start time (clock ticks after boot, /proc/PID/stat field 22). */
typedef struct proc_identity {
  char host[256];
  char boot[64];
  char pidns[64];
  long pid;
  unsigned long long start;
} proc_identity;

/* the first line of a small file, without its newline ("" when unreadable) */
static void read_first_line(const char *path, char *out, size_t cap) {
  out[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  if (fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = '\0';
  fclose(f);
}

/* the start time of process pid: 0, 1 when there is no such process or it has ended (a zombie its parent has
 * not reaped yet), -1 when it cannot be read */
static int process_start(long pid, unsigned long long *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 1 : -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
  if (!p) return -1;
  p++;
  while (*p == ' ') p++;
  if (*p == 'Z' || *p == 'X') return 1; /* the state: exited */
  for (int field = 3; field < 22; field++) { /* after ')': field 3 (the state) on */
    while (*p == ' ') p++;
    p += strcspn(p, " ");
    if (!*p) return -1;
  }
  char *end;
  *start = strtoull(p, &end, 10);
  return end > p ? 0 : -1;
}

static int self_identity(proc_identity *id) {
  memset(id, 0, sizeof *id);
  if (gethostname(id->host, sizeof id->host - 1) != 0) return -1;
  read_first_line("/proc/sys/kernel/random/boot_id", id->boot, sizeof id->boot);
  ssize_t n = readlink("/proc/self/ns/pid", id->pidns, sizeof id->pidns - 1);
  id->pidns[n > 0 ? n : 0] = '\0';
  id->pid = (long)getpid();
  return process_start(id->pid, &id->start) == 0 && id->boot[0] && id->pidns[0] ? 0 : -1;
}

/* writes dir/OWNER_MARKER: this process is the directory's owner */
static int write_owner_marker(const char *dir, mpt_error *err) {
  proc_identity me;
  char path[PATH_MAX + 32], text[600];
  snprintf(path, sizeof path, "%s/" OWNER_MARKER, dir);
  if (self_identity(&me) != 0) /* no /proc: no marker, and such a directory is never taken for stale */
    return 0;
  snprintf(text, sizeof text, OWNER_MAGIC "\nhost %s\nboot %s\npidns %s\npid %ld\nstart %llu\n", me.host, me.boot,
           me.pidns, me.pid, me.start);
  if (mpt_cpu_write_text(path, text) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

/* reads an owner marker (fd: the directory); 0 when it is one of mptune's, complete */
static int read_owner_marker(int dir_fd, proc_identity *owner) {
  memset(owner, 0, sizeof *owner);
  int fd = openat(dir_fd, OWNER_MARKER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "r");
  if (!f) {
    close(fd);
    return -1;
  }
  char line[320];
  int magic = 0, have = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (strcmp(line, OWNER_MAGIC) == 0) magic = 1;
    else if (sscanf(line, "host %255s", owner->host) == 1) have |= 1;
    else if (sscanf(line, "boot %63s", owner->boot) == 1) have |= 2;
    else if (sscanf(line, "pidns %63s", owner->pidns) == 1) have |= 4;
    else if (sscanf(line, "pid %ld", &owner->pid) == 1) have |= 8;
    else if (sscanf(line, "start %llu", &owner->start) == 1) have |= 16;
  }
  fclose(f);
  return magic && have == 31 && owner->pid > 0 ? 0 : -1;
}

/* 1 only when the owner is provably gone: on this host, the machine booted since, or in this pid namespace no
 * process has its pid or the one that has it started at another time (the pid was reused). Another host or
 * namespace, or a process that cannot be read: 0, kept. */
static int owner_gone(const proc_identity *owner, const proc_identity *me) {
  if (strcmp(owner->host, me->host) != 0) return 0;
  if (strcmp(owner->boot, me->boot) != 0) return 1;
  if (strcmp(owner->pidns, me->pidns) != 0) return 0;
  unsigned long long start = 0;
  int rc = process_start(owner->pid, &start);
  return rc == 1 || (rc == 0 && start != owner->start);
}

/* removes the entries of directory fd, and of its subdirectories `depth` levels down (a scratch directory
 * holds files and cc-tmp/); symbolic links are removed, never followed */
static void remove_entries(int fd, int depth) {
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0 || depth <= 0) continue;
    int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    remove_entries(sub, depth - 1);
    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
  }
  closedir(d);
}

/* base/name when it is a scratch directory of this user whose marker's owner is gone: removed; 1 when it was */
static int remove_if_stale(int base_fd, const char *name, const proc_identity *me) {
  int fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat sb;
  proc_identity owner;
  if (fstat(fd, &sb) != 0 || sb.st_uid != getuid() || read_owner_marker(fd, &owner) != 0 || !owner_gone(&owner, me)) {
    close(fd);
    return 0;
  }
  remove_entries(fd, 2); /* through the descriptor: a new directory given the same name meanwhile is not this one */
  struct stat now;
  if (fstatat(base_fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != sb.st_ino || now.st_dev != sb.st_dev)
    return 0;
  return unlinkat(base_fd, name, AT_REMOVEDIR) == 0;
}

/* the scratch directories in base left by workers that were killed: removed, said in one line on stderr */
static void remove_stale_scratch(const char *base, int rank) {
  proc_identity me;
  if (self_identity(&me) != 0) return; /* whose owner is gone cannot be told */
  int base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base_fd < 0) return;
  DIR *d = fdopendir(base_fd);
  if (!d) {
    close(base_fd);
    return;
  }
  int removed = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) == 0) removed += remove_if_stale(dirfd(d), e->d_name, &me);
  closedir(d);
  if (removed > 0)
    fprintf(stderr, "mptune: cpu evaluator (rank %d): removed %d scratch director%s of killed runs (their process is "
            "gone) in %s\n", rank, removed, removed == 1 ? "y" : "ies", base);
}

/* the worker's scratch directory in --workdir, else $TMPDIR, else /tmp (after removing the stale ones there):
 * its owner marker, an absolute path, and the compiler's TMPDIR (cc-tmp) in it */
int mpt_cpu_make_scratch_dir(cpu_state *st, const mpt_eval_settings *settings, mpt_error *err) {
  const char *base = settings->workdir;
  if (!base || !*base) base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  remove_stale_scratch(base, settings->rank);
  snprintf(st->dir, sizeof st->dir, "%s/" SCRATCH_PREFIX "%d-XXXXXX", base, settings->rank);
  if (!mkdtemp(st->dir)) {
    int rc = mpt_error_set(err, MPT_ERR_IO, "cannot create a scratch directory in %s: %s", base, strerror(errno));
    st->dir[0] = 0;
    return rc;
  }
  int rc = write_owner_marker(st->dir, err);
  if (rc) return rc;
  if (st->dir[0] != '/') { /* absolute: a variant that changes directory must not lose the next one's path */
    char abs[PATH_MAX];
    if (realpath(st->dir, abs) && strlen(abs) < sizeof st->dir) snprintf(st->dir, sizeof st->dir, "%s", abs);
  }
  snprintf(st->cc_tmp, sizeof st->cc_tmp, "%s/cc-tmp", st->dir);
  if (mkdir(st->cc_tmp, 0700) != 0) {
    rc = mpt_error_set(err, MPT_ERR_IO, "cannot create %s: %s", st->cc_tmp, strerror(errno));
    st->cc_tmp[0] = 0;
    return rc;
  }
  return 0;
}

/* the scratch directory and what it holds (the call wrapper, the owner marker, the shared objects, cc-tmp and
 * what a killed compile left there) removed */
void mpt_cpu_remove_scratch_dir(cpu_state *st) {
  if (!st->dir[0]) return;
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/launch.c", st->dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/" OWNER_MARKER, st->dir);
  unlink(path);
  unlink(st->launch_obj);
  int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) remove_entries(fd, 2); /* the shared objects, cc-tmp and what a killed compile left there */
  rmdir(st->dir);
}
