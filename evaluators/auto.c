/* evaluators/auto.c: the `auto` evaluator, the default for a real run: it picks the evaluator each worker
 * needs when it opens, and becomes it. A problem whose KernelSpecification.Language is C or C++ (or that has no
 * KernelSpecification) gets `cpu`; a CUDA or HIP kernel gets `cuda` on a worker bound to an NVIDIA GPU and
 * `hip` (hiprtc compiles the CUDA-dialect source) on one bound to an AMD GPU. The worker's GPU is its
 * node-local rank modulo the node's GPUs of both vendors (NVIDIA first), listed in a child process
 * (evaluators/gpu/gpu_probe.h): the worker forks compiles and a device server, so it never initializes a GPU
 * runtime itself. A worker with no GPU gets an error saying why. With --simulate it is `sim`. Options: those of
 * the evaluator it picks. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <cjson/cJSON.h>
#include "evaluators/evaluator.h"
#include "evaluators/gpu/gpu_probe.h"

/* the problem's KernelSpecification.Language ("" when it has none) */
static const char *problem_language(const mpt_problem *p) {
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(p->json, "KernelSpecification");
  const cJSON *lang = ks ? cJSON_GetObjectItemCaseSensitive(ks, "Language") : NULL;
  return cJSON_IsString(lang) ? lang->valuestring : "";
}

/* the GPU evaluator of this worker: the type of the GPU it binds, and settings.local_rank set to that GPU's
 * ordinal in its runtime (so that the type binds exactly it) */
static int pick_gpu_type(mpt_evaluator *ev, const char *lang, const mpt_evaluator_type **out, mpt_error *err) {
  mpt_gpu_desc gpus[MPT_GPU_PROBE_MAX];
  char why[1024] = "";
  int n = mpt_gpu_probe(gpus, MPT_GPU_PROBE_MAX, why, sizeof why, err);
  if (n < 0) return n;
  int pick = mpt_gpu_bind_any(gpus, n, ev->settings.local_rank);
  if (pick < 0) {
    char reasons[1100] = "";
    for (char *save = NULL, *line = strtok_r(why, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
      snprintf(reasons + strlen(reasons), sizeof reasons - strlen(reasons), "%s%s", reasons[0] ? "; " : "", line);
    return mpt_error_set(err, MPT_ERR_DEVICE, "%s: KernelSpecification.Language is '%s': evaluator 'auto' binds a "
                         "GPU, and worker rank %d on %s has none (%s)", ev->problem->path, lang, ev->settings.rank,
                         ev->device.host, reasons[0] ? reasons : "no GPU runtime reports one");
  }
  ev->settings.local_rank = gpus[pick].index;
  *out = mpt_evaluator_find(gpus[pick].api);
  if (!*out) return mpt_error_set(err, MPT_ERR_INTERNAL, "no evaluator '%s'", gpus[pick].api);
  return 0;
}

static int auto_open(mpt_evaluator *ev, mpt_error *err) {
  const char *lang = problem_language(ev->problem);
  const mpt_evaluator_type *t = NULL;
  int rc = 0;
  if (ev->settings.simulate_path)
    t = mpt_evaluator_find("sim"); /* a replayed file: its device, whatever the kernel */
  else if (strcasecmp(lang, "CUDA") == 0 || strcasecmp(lang, "HIP") == 0)
    rc = pick_gpu_type(ev, lang, &t, err);
  else if (strcasecmp(lang, "OpenCL") == 0)
    rc = mpt_error_set(err, MPT_ERR_VALUE, "%s: KernelSpecification.Language is '%s': no evaluator runs OpenCL kernels "
                       "(cpu: C and C++; cuda, hip: CUDA and HIP)", ev->problem->path, lang);
  else
    t = mpt_evaluator_find("cpu"); /* C, C++, and a problem without a kernel: the cpu evaluator says what it lacks */
  if (rc == 0) rc = mpt_evaluator_become(ev, t, err); /* from here on the one picked: its compiles, evaluate, close */
  if (rc) return rc;
  return t->open(ev, err);
}

/* never called: open replaces the type */
static int auto_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err) {
  (void)ev, (void)id, (void)out;
  return mpt_error_set(err, MPT_ERR_INTERNAL, "evaluator 'auto' was not opened");
}

static const char *const auto_takes[] = {"cpu", "cuda", "hip", NULL};

const mpt_evaluator_type mpt_evaluator_auto = {
    .name = "auto",
    .summary = "the default: cpu for C and C++ kernels; for CUDA and HIP kernels cuda on a worker bound to an NVIDIA "
               "GPU, hip on one bound to an AMD GPU",
    .open = auto_open,
    .evaluate = auto_evaluate,
    .close = NULL,
    .takes_options_of = auto_takes,
};
