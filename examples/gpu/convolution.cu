/* examples/gpu/convolution.cu: a tunable 2-D convolution (image 4096x4096, filter 15x15 in constant
 * memory), one source for CUDA (NVRTC) and HIP (hiprtc). Tunable parameters arrive as -D defines:
 * block_size_x/y (threads), tile_size_x/y (outputs per thread), use_shmem (stage the input tile in
 * shared memory), use_padding (one padding column in shared memory against bank conflicts),
 * read_only (loads through the read-only cache, __ldg). Each output sums its 225 products in the same
 * order in every configuration, so all variants give the same result bit for bit. */
#ifndef image_width
#define image_width 4096
#endif
#ifndef image_height
#define image_height 4096
#endif
#define border_w (filter_width - 1)
#define border_h (filter_height - 1)
#define input_width (image_width + border_w)
#define input_height (image_height + border_h)

#if read_only == 1
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

/* the tile of the input a block needs */
#define TILE_W (block_size_x * tile_size_x + border_w)
#define TILE_H (block_size_y * tile_size_y + border_h)
#if use_padding == 1
#define SH_W (TILE_W + 1)
#else
#define SH_W TILE_W
#endif

__constant__ float d_filter[filter_height * filter_width];

extern "C" __global__ void convolution_kernel(float *output, const float *input) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * block_size_x * tile_size_x;
  const int y0 = blockIdx.y * block_size_y * tile_size_y;
  float sum[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++) sum[i][j] = 0.0f;

#if use_shmem == 1
  __shared__ float sh[TILE_H][SH_W];
  for (int i = ty; i < TILE_H; i += block_size_y)
    for (int j = tx; j < TILE_W; j += block_size_x) {
      const int y = y0 + i, x = x0 + j;
      sh[i][j] = (y < input_height && x < input_width) ? LOAD(input + (size_t)y * input_width + x) : 0.0f;
    }
  __syncthreads();
  for (int fi = 0; fi < filter_height; fi++)
    for (int fj = 0; fj < filter_width; fj++) {
      const float w = d_filter[fi * filter_width + fj];
#pragma unroll
      for (int i = 0; i < tile_size_y; i++)
#pragma unroll
        for (int j = 0; j < tile_size_x; j++)
          sum[i][j] += sh[ty + i * block_size_y + fi][tx + j * block_size_x + fj] * w;
    }
#else
  for (int fi = 0; fi < filter_height; fi++)
    for (int fj = 0; fj < filter_width; fj++) {
      const float w = d_filter[fi * filter_width + fj];
#pragma unroll
      for (int i = 0; i < tile_size_y; i++)
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
          const int y = y0 + ty + i * block_size_y + fi, x = x0 + tx + j * block_size_x + fj;
          if (y < input_height && x < input_width)
            sum[i][j] += LOAD(input + (size_t)y * input_width + x) * w;
        }
    }
#endif

#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++) {
      const int y = y0 + ty + i * block_size_y, x = x0 + tx + j * block_size_x;
      if (y < image_height && x < image_width) output[(size_t)y * image_width + x] = sum[i][j];
    }
}
