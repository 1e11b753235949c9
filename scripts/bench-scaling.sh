#!/usr/bin/env bash
# scripts/bench-scaling.sh: scaling benchmark of distributed runs (mpi/, coordinator/). Replays the
# brute-forced A100 convolution space with --simulate-delay so every evaluation sleeps (recorded
# compile + benchmark time x DELAY; DELAY 0.018 gives ~50 ms on average), with 1, 2, 4, 8, 16 workers
# (mpiexec -n W+1: rank 0 coordinates), brute force over the same BUDGET configurations each time, and
# prints evaluations/s, parallel efficiency (rate_W / (W * rate_1)) and the coordinator's own cost per
# evaluation (wall time outside waiting, and CPU time of rank 0, logging included).
#   usage: scripts/bench-scaling.sh [BUILD_DIR] [BUDGET] [DELAY] [WORKERS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; budget=${2:-480}; delay=${3:-0.018}; shift 3 || shift $#
workers=("$@"); [ ${#workers[@]} -gt 0 ] || workers=(1 2 4 8 16)
data=${MPT_SHARED_DATA:-$(cd .. && pwd)/shared/data}
mpiexec=${MPIEXEC:-mpiexec.mpich}
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| workers | ranks | evaluations | wall (s) | eval/s | efficiency vs 1 worker | workers busy | coordinator busy (us/eval) | coordinator CPU (us/eval) |\n'
printf '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
rate1=""
for w in "${workers[@]}"; do
  n=$((w + 1))
  out=$("$mpiexec" -bind-to none -n "$n" "$build/mptune" tune "$data/t1/convolution_milo.json" \
        --strategy brute_force --budget "$budget" --simulate "$data/brute-forced/convolution_A100_T4.json.gz" \
        --simulate-delay "$delay" --log "$tmp/w$w.h5" --progress off)
  line=$(grep '^rate:' <<<"$out")
  # rate: R evaluations/s over T s with W workers; coordinator busy B us/evaluation, cpu C us/evaluation
  read -r rate wall busy cpu util < <(sed -E 's/^rate: ([0-9.]+) evaluations\/s over ([0-9.]+) s .*coordinator busy ([0-9.]+) us\/evaluation, cpu ([0-9.]+) us\/evaluation; workers busy ([0-9.]+) %.*/\1 \2 \3 \4 \5/' <<<"$line")
  [ -n "$rate1" ] || rate1=$(awk -v r="$rate" -v w="$w" 'BEGIN{print r / w}')
  eff=$(awk -v r="$rate" -v r1="$rate1" -v w="$w" 'BEGIN{printf "%.1f %%", 100 * r / (w * r1)}')
  evals=$(grep -oE '^evaluations: [0-9]+' <<<"$out" | grep -oE '[0-9]+')
  printf '| %d | %d | %s | %s | %s | %s | %s %% | %s | %s |\n' "$w" "$n" "$evals" "$wall" "$rate" "$eff" "$util" "$busy" "$cpu"
done
