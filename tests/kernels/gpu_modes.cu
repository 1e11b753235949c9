/* tests/kernels/gpu_modes.cu: a purpose-made GPU kernel whose `mode` parameter selects a failure:
 * 0 correct, 1 compile error, 2 wrong result, 3 memory fault (runtime error), 4 hang (timeout),
 * 5 too many threads per block (launch error, see gpu_modes.json). Used by tests/test_gpu_eval.c. */
extern "C" __global__ void modes(float *out, const float *in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if mode == 1
  this_is_not_valid_code;
#endif
  if (i >= n) return;
#if mode == 2
  out[i] = in[i] * 2.0f + 1.0f;
#elif mode == 3
  ((float *)(size_t)16)[i] = in[i];
#elif mode == 4
  float x = in[i];
  while (x >= 0.0f) x = x * 0.5f + in[i] * 0.5f + 1.0f; /* in[i] >= 0: never ends */
  out[i] = x;
#else
  out[i] = in[i] * 2.0f;
#endif
}
