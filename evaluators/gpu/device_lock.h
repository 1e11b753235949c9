/* evaluators/gpu/device_lock.h: exclusive timing on a GPU that several workers of one node share. Workers bound
 * to the same GPU compile at the same time, but only one of them loads, launches and times on it at a time: a
 * node-local lock file per physical device (flock), in /dev/shm (else /tmp), named by host, runtime and the
 * device as the node knows it (its entry in *_VISIBLE_DEVICES, else its index). */
#ifndef MPT_DEVICE_LOCK_H
#define MPT_DEVICE_LOCK_H
#include <stddef.h>
#include "spaces/sys/watch.h"

/* the lock file's path for device `index` (after *_VISIBLE_DEVICES) of runtime api ("cuda", "hip") */
void mpt_device_lock_path(const char *api, int index, char *path, size_t cap);
/* opens (creating it, readable and writable by everyone: workers of other users share the device too) the
 * lock file: its descriptor, -1 when it cannot be opened (then timing is not exclusive) */
int mpt_device_lock_open(const char *api, int index);
/* takes the lock, asking watch (may be NULL) at least every 100 ms while another worker holds it: 0 when taken
 * (or fd < 0: no lock), 1 when the watch said stop first */
int mpt_device_lock_take(int fd, const mpt_watch *watch);
void mpt_device_lock_release(int fd);

#endif
