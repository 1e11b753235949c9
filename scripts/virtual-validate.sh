#!/usr/bin/env bash
# scripts/virtual-validate.sh: checks the virtual clock (`tune --virtual-workers N`) against real runs. For each
# strategy and worker count W it runs the same tuning run twice on the brute-forced A100 convolution space with
# --simulate-delay DELAY (each evaluation: recorded compile + benchmark time x DELAY): for real under
# `mpiexec.mpich -n W+1` (workers sleep, so 16 fit on 2 cores), and projected with --virtual-workers W on one
# rank. It prints measured utilization (the real run's "workers busy": sum of evaluation wall times / (W x loop
# wall time)), projected utilization (rank 0's ask, log and tell wall time on the clock: like for like), their
# difference in points (goal: within 5), evaluations/s of both, and the projection with rank 0's CPU time on the
# clock (--virtual-time cpu: what rank 0 would take on a core of its own; on a machine shared with other work the
# real run's rank 0 gets less than a core, so this one is higher there). REPEATS=R (default 1) runs each pair R
# times, one row each: on a shared machine the load changes between the runs of a pair. The real run's workers
# run under `nice -n WORKER_NICE` (default 10; 0: not at all; MPMD form `mpiexec -n 1 mptune ... : -n W nice ...`):
# on a cluster rank 0 has a core of its own, here its 16 workers share the 2 cores with it; they sleep through their
# evaluations, so their priority changes little of their own busy time.
#   usage: [REPEATS=R] [WORKER_NICE=N] scripts/virtual-validate.sh [BUILD_DIR] [BUDGET] [DELAY] [STRATEGIES] [WORKERS...]
#   e.g.   scripts/virtual-validate.sh build 240 0.018 random,bo 4 16
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; budget=${2:-240}; delay=${3:-0.018}; strategies=${4:-random,bo}; shift 4 || shift $#
workers=("$@"); [ ${#workers[@]} -gt 0 ] || workers=(4 16)
data=${MPT_SHARED_DATA:-$(cd .. && pwd)/shared/data}
mpiexec=${MPIEXEC:-mpiexec.mpich}
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problem=$data/t1/convolution_milo.json
space=$data/brute-forced/convolution_A100_T4.json.gz

# the rate line's figures: "EVALS_PER_S WALL_S BUSY_PERCENT"
rate_of() {
  sed -nE 's/^rate: ([0-9.]+) evaluations\/s over ([0-9.]+) s .*workers busy ([0-9.]+) %.*/\1 \2 \3/p' <<<"$1"
}

printf '| strategy | workers | evaluations | measured busy | projected busy | difference (points) | measured eval/s | projected eval/s | measured wall (s) | projected makespan (s) | projection took (s) | projected busy, CPU-time clock |\n'
printf '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
for strategy in ${strategies//,/ }; do
  for w in "${workers[@]}"; do
   for _ in $(seq "${REPEATS:-1}"); do
    common=(tune "$problem" --strategy "$strategy" --budget "$budget" --seed 1 --simulate "$space"
            --simulate-delay "$delay" --progress off --force)
    real=$("$mpiexec" -bind-to none -n 1 "$build/mptune" "${common[@]}" --log "$tmp/real.h5" \
           : -n "$w" nice -n "${WORKER_NICE:-10}" "$build/mptune" "${common[@]}" --log "$tmp/real.h5")
    virt=$("$build/mptune" "${common[@]}" --virtual-workers "$w" --log "$tmp/virtual.h5")
    cpu=$("$build/mptune" "${common[@]}" --virtual-workers "$w" --virtual-time cpu --log "$tmp/virtual.h5")
    read -r r_rate r_wall r_busy < <(rate_of "$real")
    read -r v_rate v_wall v_busy < <(rate_of "$virt")
    read -r _ _ c_busy < <(rate_of "$cpu")
    took=$(sed -nE 's/.*projection took ([0-9.]+) s.*/\1/p' <<<"$virt")
    evals=$(grep -oE '^evaluations: [0-9]+' <<<"$real" | grep -oE '[0-9]+')
    diff=$(awk -v a="$r_busy" -v b="$v_busy" 'BEGIN{printf "%+.1f", b - a}')
    printf '| %s | %d | %s | %s %% | %s %% | %s | %s | %s | %s | %s | %s | %s %% |\n' "$strategy" "$w" "$evals" "$r_busy" \
      "$v_busy" "$diff" "$r_rate" "$v_rate" "$r_wall" "$v_wall" "$took" "$c_busy"
   done
  done
done
