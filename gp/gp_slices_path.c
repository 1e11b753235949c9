/* gp/gp_slices_path.c: the critical path of the sliced GP's commands (gp/gp_slices.h): each command's start on
 * rank 0, the largest compute of any rank reduced to rank 0 at its end, and rank 0's totals and clock. */
#include "gp/gp_slices_impl.h"

void mpt_gp_slices_step_begin(mpt_gp_slices *sl) {
  sl->step_t0 = mpt_clock_thread_cpu_s();
  sl->work = 0;
}

void mpt_gp_slices_step_end(mpt_gp_slices *sl) {
  double most = 0;
  MPI_Reduce(&sl->work, &most, 1, MPI_DOUBLE, MPI_MAX, 0, sl->comm);
  if (sl->rank == 0) {
    sl->path.steps++;
    sl->path.inside_s += mpt_clock_thread_cpu_s() - sl->step_t0;
    sl->path.rank0_s += sl->work;
    sl->path.path_s += most;
  }
  sl->work = 0;
}

void mpt_gp_slices_path_get(const mpt_gp_slices *sl, mpt_gp_slices_path *out) { *out = sl->path; }

double mpt_gp_slices_path_clock(const mpt_gp_slices *sl) {
  return mpt_clock_thread_cpu_s() - sl->path.inside_s + sl->path.path_s;
}
