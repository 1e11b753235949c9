#!/bin/bash
# examples/slurm/local-mix.sh PROBLEM.json [LOG.h5]: one mptune run on a machine with NVIDIA and AMD GPUs (or over
# hosts given to mpiexec), in the MPMD form `mpiexec.mpich -n 1 mptune ... : -n 4 ... : -n 4 ...`: rank 0
# coordinates, NV workers see only the NVIDIA GPUs and AMD workers only the AMD ones (each part's environment
# hides the other vendor), and each picks its evaluator by the GPU it binds (--evaluator auto). A second run of
# the same command after the first ended early resumes it.
set -euo pipefail
problem=${1:?usage: local-mix.sh PROBLEM.json [LOG.h5]}
log=${2:-run-mix.h5}
MPTUNE=${MPTUNE:-mptune}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
NV=${NV:-4}             # NVIDIA workers (one per GPU)
AMD=${AMD:-4}           # AMD workers (one per GPU)
NV_GPUS=${NV_GPUS:-0,1,2,3}
AMD_GPUS=${AMD_GPUS:-0,1,2,3}
BUDGET=${BUDGET:-220}
tune_args=(tune "$problem" --strategy "${STRATEGY:-bo}" --budget "$BUDGET" --log "$log" --progress lines)
[ -e "$log" ] && tune_args+=(--resume)
# HIP also reads CUDA_VISIBLE_DEVICES unless HIP_VISIBLE_DEVICES is set: each part sets both vendors' variables
"$MPIEXEC" -n 1 "$MPTUNE" "${tune_args[@]}" : \
  -n "$NV" -env CUDA_VISIBLE_DEVICES "$NV_GPUS" -env ROCR_VISIBLE_DEVICES -1 "$MPTUNE" "${tune_args[@]}" : \
  -n "$AMD" -env CUDA_VISIBLE_DEVICES -1 -env HIP_VISIBLE_DEVICES "$AMD_GPUS" "$MPTUNE" "${tune_args[@]}"
