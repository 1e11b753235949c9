/* evaluators/gpu/gpu_probe.c: the node's GPUs listed in a one-shot child process (evaluators/isolate.h), and
 * the pick of a worker's GPU among all of them. See gpu_probe.h. */
#include "evaluators/gpu/gpu_probe.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/isolate.h"

typedef struct probe_answer {
  int n;
  mpt_gpu_desc gpus[MPT_GPU_PROBE_MAX];
  char why[1024];
} probe_answer;

/* in the child: the listing, which initializes the runtimes there only */
static long serve_probe(void *ctx, const void *req, size_t req_len, void *resp, size_t resp_cap) {
  (void)ctx, (void)req, (void)req_len;
  if (resp_cap < sizeof(probe_answer)) return -1;
  probe_answer *a = resp;
  memset(a, 0, sizeof *a);
  a->n = mpt_gpu_list_all(a->gpus, MPT_GPU_PROBE_MAX, a->why, sizeof a->why);
  if (a->n > MPT_GPU_PROBE_MAX) a->n = MPT_GPU_PROBE_MAX;
  return (long)sizeof *a;
}

int mpt_gpu_probe(mpt_gpu_desc *out, int cap, char *why, size_t why_cap, mpt_error *err) {
  mpt_isolate_opts o = {.mem_limit = 0, .one_shot = 1, .max_request = sizeof(probe_answer), .watch = {NULL, NULL}};
  mpt_isolate *iso = NULL;
  probe_answer *a = calloc(1, sizeof *a);
  if (!a) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_isolate_create(&o, serve_probe, NULL, NULL, &iso, err);
  size_t got = 0;
  mpt_isolate_result r;
  char req = 0;
  if (rc == 0) rc = mpt_isolate_call(iso, &req, 1, a, sizeof *a, &got, 120, &r, err);
  mpt_isolate_destroy(iso);
  if (rc == 0 && (r.outcome != MPT_ISO_OK || got < sizeof *a))
    rc = mpt_error_set(err, MPT_ERR_DEVICE, "listing the GPUs (in a child process) failed: %s", r.reason);
  if (rc == 0) {
    rc = a->n < cap ? a->n : cap;
    memcpy(out, a->gpus, (size_t)(rc > 0 ? rc : 0) * sizeof *out);
    if (why && why_cap) snprintf(why, why_cap, "%s", a->why);
  }
  free(a);
  return rc;
}

int mpt_gpu_bind_any(const mpt_gpu_desc *gpus, int n, int local_rank) {
  (void)gpus;
  return mpt_gpu_pick(local_rank, n);
}
