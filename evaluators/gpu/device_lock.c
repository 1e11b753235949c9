/* evaluators/gpu/device_lock.c: the node-local lock of one GPU for exclusive timing (see device_lock.h). */
#include "evaluators/gpu/device_lock.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the node's name for the device: entry `index` of the visibility list when one is set, else the index */
static void physical_device(const char *api, int index, char *out, size_t cap) {
  const char *var = strcmp(api, "hip") == 0 ? (getenv("ROCR_VISIBLE_DEVICES") ? "ROCR_VISIBLE_DEVICES"
                                               : getenv("HIP_VISIBLE_DEVICES") ? "HIP_VISIBLE_DEVICES"
                                                                                : "CUDA_VISIBLE_DEVICES")
                                            : "CUDA_VISIBLE_DEVICES";
  const char *list = getenv(var);
  snprintf(out, cap, "%d", index);
  for (int k = 0; list && *list; k++) {
    size_t n = strcspn(list, ",");
    if (k == index) {
      snprintf(out, cap, "%.*s", (int)n, list);
      break;
    }
    list += n + (list[n] == ',');
  }
  for (char *c = out; *c; c++) /* a file name: no '/' */
    if (*c == '/' || *c == ' ') *c = '_';
}

void mpt_device_lock_path(const char *api, int index, char *path, size_t cap) {
  char host[64] = "host", dev[64];
  gethostname(host, sizeof host);
  host[sizeof host - 1] = '\0';
  physical_device(api, index, dev, sizeof dev);
  struct stat st;
  const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
  snprintf(path, cap, "%s/mptune-gpu-%s-%s-%s.lock", dir, host, api, dev);
}

int mpt_device_lock_open(const char *api, int index) {
  char path[512];
  mpt_device_lock_path(api, index, path, sizeof path);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) fchmod(fd, 0666); /* whatever the umask: another user's worker may share the device */
  return fd;
}

int mpt_device_lock_take(int fd, const mpt_watch *watch) {
  if (fd < 0) return 0;
  struct timespec nap = {0, 200000}; /* 0.2 ms: the next variant starts right after the other worker's */
  for (int k = 0;; k++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    if (errno != EWOULDBLOCK && errno != EINTR) return 0; /* no lock to be had: timing goes on unguarded */
    if (k % 500 == 0 && mpt_watch_call(watch, "waiting for the device", -1)) return 1;
    nanosleep(&nap, NULL);
  }
}

void mpt_device_lock_release(int fd) {
  if (fd >= 0) flock(fd, LOCK_UN);
}
