/* spaces/sys/signame.h: the name of a signal as messages give it ("SIGSEGV"), for the parts that report
 * signals (a crashed variant, a worker's own stop, the run's exit). */
#ifndef MPT_SIGNAME_H
#define MPT_SIGNAME_H

/* "SIGSEGV", "SIGKILL"… ("signal 42" for unknown ones); thread-local storage, valid until the next call */
const char *mpt_signal_name(int sig);

#endif
