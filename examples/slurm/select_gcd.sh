#!/bin/bash
# examples/slurm/select_gcd.sh COMMAND...: runs COMMAND with ROCR_VISIBLE_DEVICES set to this Slurm task's GCD (its
# node-local task id), so that each rank sees one AMD GPU (LUMI-G: 8 GCDs per node, --ntasks-per-node=8). A node
# with fewer GCDs than tasks shares them round-robin. Used by lumi-g.sbatch and hetjob.sbatch.
set -euo pipefail
gcds=${GCDS_PER_NODE:-8}
export ROCR_VISIBLE_DEVICES=$(( ${SLURM_LOCALID:?not run by srun} % gcds ))
exec "$@"
