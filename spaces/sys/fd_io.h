/* spaces/sys/fd_io.h: a whole buffer written to or read from a file descriptor (a pipe or socket between a
 * worker and a child it forked), going on after EINTR and short counts. */
#ifndef MPT_FD_IO_H
#define MPT_FD_IO_H
#include <stddef.h>

/* writes all n bytes of buf to fd: 0, or -1 on an error or a closed reader */
int mpt_fd_write_all(int fd, const void *buf, size_t n);
/* reads exactly n bytes from fd into buf: 0, or -1 on an error or end of file first */
int mpt_fd_read_all(int fd, void *buf, size_t n);

#endif
