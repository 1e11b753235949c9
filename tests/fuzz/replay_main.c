/* tests/fuzz/replay_main.c: the standalone driver of a fuzz harness, for every build (gcc has no
 * libFuzzer): runs LLVMFuzzerTestOneInput once on each file named on the command line and on each file
 * under each directory named (recursively, in name order), after LLVMFuzzerInitialize. Arguments that
 * start with '-' are libFuzzer's options and are skipped, so one command line serves both. Exit status 0
 * when every input ran; 1 when a path cannot be read or no input was found (a missing seed corpus fails
 * instead of passing without running anything). A finding aborts in the harness, after the name of the
 * input was printed. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tests/fuzz/fuzz.h"

typedef struct run_count {
  long inputs;
  long failures;
} run_count;

static int read_file(const char *path, uint8_t **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0;
  int nomem = 0;
  for (;;) {
    if (len == cap) {
      size_t nc = cap ? cap * 2 : 65536;
      uint8_t *nb = realloc(buf, nc);
      if (!nb) {
        nomem = 1;
        errno = ENOMEM;
        break;
      }
      buf = nb;
      cap = nc;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int bad = nomem || ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return -1;
  }
  *data = buf;
  *size = len;
  return 0;
}

static void run_file(const char *path, run_count *c) {
  uint8_t *data = NULL;
  size_t size = 0;
  if (read_file(path, &data, &size) < 0) {
    fprintf(stderr, "replay_main: cannot read %s: %s\n", path, strerror(errno));
    c->failures++;
    return;
  }
  fprintf(stderr, "replay_main: %s (%zu bytes)\n", path, size);
  LLVMFuzzerTestOneInput(data, size);
  free(data);
  c->inputs++;
}

static void run_path(const char *path, run_count *c);

static void run_dir(const char *path, run_count *c) {
  struct dirent **entries = NULL;
  int n = scandir(path, &entries, NULL, alphasort);
  if (n < 0) {
    fprintf(stderr, "replay_main: cannot read the directory %s: %s\n", path, strerror(errno));
    c->failures++;
    return;
  }
  for (int i = 0; i < n; i++) {
    if (entries[i]->d_name[0] != '.') {
      size_t len = strlen(path) + strlen(entries[i]->d_name) + 2;
      char *child = malloc(len);
      if (child) {
        snprintf(child, len, "%s/%s", path, entries[i]->d_name);
        run_path(child, c);
        free(child);
      } else {
        c->failures++;
      }
    }
    free(entries[i]);
  }
  free(entries);
}

static void run_path(const char *path, run_count *c) {
  struct stat st;
  if (stat(path, &st) < 0) {
    fprintf(stderr, "replay_main: %s: %s\n", path, strerror(errno));
    c->failures++;
  } else if (S_ISDIR(st.st_mode)) {
    run_dir(path, c);
  } else {
    run_file(path, c);
  }
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  run_count c = {0, 0};
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-') run_path(argv[i], &c);
  fprintf(stderr, "replay_main: %ld inputs run, %ld paths not read\n", c.inputs, c.failures);
  if (c.inputs == 0) fprintf(stderr, "replay_main: no input found\n");
  return c.failures == 0 && c.inputs > 0 ? 0 : 1;
}
