#!/usr/bin/env bash
# scripts/build.sh [BUILD_DIR] [extra cmake args...]: configures (MPICH explicitly) and builds mptune.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}; shift || true
cmake -S . -B "$dir" -DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
