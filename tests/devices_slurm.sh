#!/usr/bin/env bash
# tests/devices_slurm.sh: the launch examples of examples/slurm/: every script parses (bash -n); every option their
# `mptune tune` command lines give is one `mptune tune --help` names; select_gcd.sh gives each Slurm task its GCD;
# and local-mix.sh runs for real, its MPMD form putting an NVIDIA worker (the stand-in driver tests/fake_cuda.c)
# and an AMD worker (the stand-in runtime tests/fake_hip.c) in one run, each with its own evaluator, then resumes
# it with a larger budget. Skipped (77) without NVRTC or hiprtc.
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${MPT_SOURCE_DIR:?}" "${MPT_BINARY_DIR:?}"
dir=$MPT_SOURCE_DIR/examples/slurm
tmp=$(mktemp -d /tmp/mpt_slurm_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$MPTUNE" tune --help >"$tmp/help.txt"
for f in "$dir"/*.sbatch "$dir"/*.sh; do
  bash -n "$f" || fail "$f does not parse"
  # the options of the tune_args=(...) array (it may span lines up to the closing parenthesis)
  opts=$(awk '/tune_args=\(/ { on = 1 } on { print } on && /\)/ { on = 0 }' "$f" | grep -oE -- '--[a-z][a-z-]+' || true)
  for o in $opts; do
    grep -qE -- "\[?$o[] =]" "$tmp/help.txt" || fail "$(basename "$f") uses $o, which mptune tune --help does not name"
  done
  echo "$(basename "$f"): parses; options: $(echo $opts)"
done
grep -q "tune_args" "$dir/das6.sbatch" || fail "das6.sbatch has no tune_args"

# select_gcd.sh: task 9 of a node with 8 GCDs sees GCD 1 only
got=$(SLURM_LOCALID=9 "$dir/select_gcd.sh" printenv ROCR_VISIBLE_DEVICES)
[ "$got" = 1 ] || fail "select_gcd.sh: task 9 got ROCR_VISIBLE_DEVICES=$got"

cat >"$tmp/fk.cu" <<'CU'
extern "C" __global__ void fk(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2;
}
CU
cat >"$tmp/fk.json" <<'T1'
{"General": {"BenchmarkName": "mix", "OutputFormat": "JSON"},
 "ConfigurationSpace": {"TuningParameters": [
   {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128, 256, 512, 1024]", "Default": 32}], "Conditions": []},
 "KernelSpecification": {"Language": "CUDA", "KernelName": "fk", "KernelFile": "fk.cu", "ProblemSize": [1000],
   "Arguments": [
     {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "FillType": "Constant",
      "FillValue": 0.0, "Size": 1000, "Output": 1},
     {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "FillType": "Random",
      "FillValue": 1.0, "Size": 1000},
     {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000}]}}
T1
# the stand-in HIP runtime forwards hiprtc to the system's ROCm 5 library
PATH=$PATH:/sbin:/usr/sbin ldconfig -p | grep -q "libamdhip64.so.5 " || { echo "SKIPPED: no libamdhip64.so.5 (hiprtc)"; exit 77; }
export MPT_CUDA_DRIVER_LIB=$MPT_BINARY_DIR/tests/libfake_cuda.so MPT_HIP_LIB=$MPT_BINARY_DIR/tests/libfake_hip.so
for ev in cuda hip; do
  if ! (cd "$tmp" && "$MPTUNE" devices fk.json --evaluator $ev) >"$tmp/probe.txt" 2>&1; then
    if grep -qE "NVRTC|hiprtc" "$tmp/probe.txt"; then cat "$tmp/probe.txt"; echo "SKIPPED: no run-time compiler"; exit 77; fi
  fi
done
mix() { # BUDGET: one run of local-mix.sh with one worker of each vendor
  (cd "$tmp" && NV=1 AMD=1 NV_GPUS=0 AMD_GPUS=0 STRATEGY=brute_force BUDGET=$1 MPTUNE=$MPTUNE MPIEXEC=$MPIEXEC \
    timeout 300 bash "$dir/local-mix.sh" fk.json mix.h5) >"$tmp/mix.out" 2>&1 || { cat "$tmp/mix.out"; fail "local-mix.sh failed"; }
  cat "$tmp/mix.out"
}
mix 4
grep -Eq "^1 .* NVIDIA .* sm_90 .* cuda$" "$tmp/mix.out" || fail "local-mix.sh: rank 1 is not the NVIDIA worker (cuda)"
grep -Eq "^2 .* AMD .* gfx90a .* hip$" "$tmp/mix.out" || fail "local-mix.sh: rank 2 is not the AMD worker (hip)"
for c in 0 1; do # two device classes, a search and a budget each
  grep -Eq "^class $c .*: 4 evaluations \(4 valid, 0 failed\)" "$tmp/mix.out" || fail "local-mix.sh: class $c not 4 valid evaluations"
done
mix 6 # the same command again: it resumes
for c in 0 1; do
  grep -Eq "^class $c .*: 6 evaluations \(6 valid, 0 failed\) of a budget of 6, 2 in this session" "$tmp/mix.out" ||
    fail "local-mix.sh did not resume class $c"
done
echo ok
