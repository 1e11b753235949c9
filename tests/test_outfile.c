/* tests/test_outfile.c: output files (jobs/output/outfile.c) under signals. A SIGINT, SIGTERM or SIGHUP that reaches the process while
 * the writing thread holds the signals back (its file created, its table entry not yet written) waits for
 * that thread even when another thread could take it (OpenBLAS's and MPICH's threads block no signal); once
 * let through, it removes the temporary file and ends the process as the signal does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "jobs/output/outfile.h"

static void *idle_thread(void *arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

/* the entries of dir other than . and .. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

/* the child: an output being written, the signals held as the writer holds them, sig sent to the process
 * (Linux gives it to the idle thread, the only one that lets it through); "held" is written to fd if the
 * process lives through the hold, then the signals are let through */
static void child(const char *path, int fd, int sig) {
  signal(sig, SIG_DFL);
  mpt_outfile_remove_on_signal();
  pthread_t t;
  if (pthread_create(&t, NULL, idle_thread, NULL)) _exit(3);
  mpt_error err;
  FILE *f = mpt_outfile_open(path, &err);
  if (!f) _exit(4);
  fputs("a,b\n1,2\n", f);
  fflush(f);
  sigset_t s, old;
  sigemptyset(&s);
  sigaddset(&s, sig);
  pthread_sigmask(SIG_BLOCK, &s, &old);
  kill(getpid(), sig);
  struct timespec ts = {0, 300 * 1000 * 1000};
  nanosleep(&ts, NULL);
  if (write(fd, "held", 4) != 4) _exit(5);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  for (int i = 0; i < 50; i++) nanosleep(&ts, NULL);
  _exit(6); /* the signal never came */
}

static void signal_while_held(int sig) {
  char dir[] = "/tmp/mpt_outfile_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/list.csv", dir);
  int p[2];
  assert_int_equal(pipe(p), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(p[0]);
    child(path, p[1], sig);
  }
  close(p[1]);
  char buf[8] = {0};
  ssize_t n = read(p[0], buf, 4); /* 0 when the child died during the hold */
  close(p[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  int left = entries(dir);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  if (n != 4) fail_msg("signal %d: the process ended while the writer held it back (another thread took it)", sig);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
    fail_msg("the child did not end by signal %d (status %#x)", sig, status);
  assert_int_equal(left, 0); /* the temporary file removed, nothing renamed into place */
}

static void test_signal_while_held(void **state) {
  (void)state;
  signal_while_held(SIGINT);
  signal_while_held(SIGTERM);
  signal_while_held(SIGHUP);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_signal_while_held)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
