#!/usr/bin/env bash
# scripts/virtual-hotspot.sh: the projection of issue 32's goal row: WORKERS (256) workers, 1 s evaluations,
# a strategy (bo) on paper_hotspot up to BUDGET (5000) observations, on the virtual clock (`mptune tune
# --virtual-workers`). paper_hotspot has no brute-forced file: a synthetic one with every evaluation 1 s long
# (scripts/synthetic_space.py, seed 1, EVAL_MS 1000) is made once in DIR and reused. Rank 0's work counts its
# CPU time (--virtual-time cpu: a core of its own; VTIME=wall for wall time). Prints the summary's projection.
# A run stopped by SIGINT (e.g. `timeout -s INT 1200 scripts/virtual-hotspot.sh ...`) still prints the projection
# up to where it got.
#   usage: [VTIME=cpu|wall] scripts/virtual-hotspot.sh [BUILD_DIR] [BUDGET] [WORKERS] [STRATEGY] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; budget=${2:-5000}; workers=${3:-256}; strategy=${4:-bo}; dir=${5:-/tmp/mptune-virtual-hotspot}
data=${MPT_SHARED_DATA:-$(cd .. && pwd)/shared/data}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
problem=$data/t1/paper_hotspot.json
space=$dir/paper_hotspot_1s_T4.json.gz
mkdir -p "$dir"
if [ ! -s "$space" ]; then
  "$build/mptune" space "$problem" --list "$dir/valid.csv" >/dev/null
  /usr/bin/python3 scripts/synthetic_space.py "$dir/valid.csv" "$space.tmp" 1 1000
  mv "$space.tmp" "$space"
fi
"$build/mptune" tune "$problem" --simulate "$space" --virtual-workers "$workers" --virtual-time "${VTIME:-cpu}" \
  --strategy "$strategy" --budget "$budget" --seed 1 --log "$dir/run-$strategy-$workers-$budget.h5" --force \
  --progress lines
