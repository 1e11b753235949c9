#!/usr/bin/env bash
# scripts/run-main.sh: the README's main job. Installs what is needed, builds, and runs a real tuning
# run: 1 coordinator + 3 workers tune the tiled CPU matrix multiply (examples/cpu/matmul.json) with
# Bayesian optimization, compiling and timing every variant on the CPU evaluator. Prints the device
# table, progress, the best configuration, its speed-up over the default one and where the log is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
export OPENBLAS_NUM_THREADS=1
mpiexec.mpich -n 4 build/mptune tune examples/cpu/matmul.json --strategy bo --budget 100 --seed 1 \
  --log build/run-matmul.h5 --t4 build/run-matmul_T4.json --force
