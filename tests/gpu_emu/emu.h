// tests/gpu_emu/emu.h: runs the CUDA-style GPU example kernels on the CPU for tests/gpu_emulate.py:
// every block in turn, its threads as std::threads, __syncthreads() as a barrier and __shared__
// arrays as function statics (one block runs at a time). Checks the kernels' indexing, tiling and
// shared-memory logic for many configurations on a machine without a GPU; not a timing tool.
#include <barrier>
#include <cstddef>
#include <thread>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim, gridDim;
static std::barrier<> *emu_barrier;

#define __global__
#define __constant__
#define __shared__ static
#define __syncthreads() emu_barrier->arrive_and_wait()
template <class T> static T __ldg(const T *p) { return *p; }

template <class F> static void emu_launch(F kernel, dim3 grid, dim3 block) {
  gridDim = grid;
  blockDim = block;
  const unsigned n = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        blockIdx = {bx, by, bz};
        std::barrier<> bar(n);
        emu_barrier = &bar;
        std::vector<std::thread> threads;
        threads.reserve(n);
        for (unsigned tz = 0; tz < block.z; tz++)
          for (unsigned ty = 0; ty < block.y; ty++)
            for (unsigned tx = 0; tx < block.x; tx++)
              threads.emplace_back([=] {
                threadIdx = {tx, ty, tz};
                kernel();
              });
        for (auto &t : threads) t.join();
      }
}
