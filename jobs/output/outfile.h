/* jobs/output/outfile.h: output files that appear whole or not at all: written as PATH.tmp.XXXXXX and renamed over PATH
 * once complete and on disk, so a full disk or an error never leaves a cut file under the real name.
 * A PATH that exists and is not a regular file (/dev/null, a pipe), or that names one of this process's
 * descriptors (/dev/stdout, even when it is redirected to a file), is written in place. */
#ifndef MPT_OUTFILE_H
#define MPT_OUTFILE_H
#include <stdio.h>
#include "spaces/sys/error.h"

/* 1 when PATH names one of this process's descriptors ("-", /dev/stdout, /dev/fd/N, /proc/self/fd/N, or a
 * symbolic link to one: written through the open descriptor, at its position, even when it leads to a
 * regular file) or exists and is not a regular file (/dev/null, a pipe: opened and written in place);
 * such a PATH is never replaced */
int mpt_outfile_special(const char *path);
/* the file an output PATH replaces (malloc'd; NULL when out of memory): the target of a symbolic link
 * (which itself stays), else PATH */
char *mpt_outfile_resolve(const char *path);
/* "PATH.tmp" (malloc'd; NULL when out of memory): where the run log (jobs/runlog/runlog.c), which holds its lock,
 * writes a rewrite before it is renamed to PATH */
char *mpt_outfile_tmp_name(const char *path);
/* opens a new PATH.tmp.XXXXXX for writing (a special PATH itself); NULL with err set */
FILE *mpt_outfile_open(const char *path, mpt_error *err);
/* keep = 1: flushes, syncs and closes the temporary file and renames it to PATH; 0 or MPT_ERR_IO (err set,
 * the temporary file removed). keep = 0: closes and removes it (after another error; err untouched),
 * returns 0. */
int mpt_outfile_close(FILE *f, const char *path, int keep, mpt_error *err);
/* 1 when path a and path b name the same file (the same path, or both exist with the same device and
 * inode): an output that would replace one of the command's inputs */
int mpt_same_file(const char *a, const char *b);
/* 1 when PATH is "-" or names standard output (/dev/stdout, or the file or pipe it is): a document there
 * stands alone, and the command's report goes to standard error */
int mpt_outfile_is_stdout(const char *path);
/* For commands without signal handling of their own (space, export, bench): SIGINT, SIGTERM or SIGHUP
 * first removes the temporary files being written (a --list of gigabytes cut short), then ends the
 * process as the signal would have. The calling thread is the one that writes the outputs: a signal another
 * thread receives is passed on to it. */
void mpt_outfile_remove_on_signal(void);

#endif
