#!/usr/bin/env bash
# scripts/gpu-check.sh: the on-device suite for a machine that has only a GPU driver, CUDA (NVRTC) and a python3 with
# numpy and CuPy (docs/GPU.md, "The on-device suite").
#
#   bash scripts/gpu-check.sh pack [BUILD_DIR [OUT_DIR]]
#       from a release build (default build/): a self-contained folder OUT_DIR/mptune-gpu-check (default
#       BUILD_DIR/gpu-check, git-ignored) holding mptune, the test and benchmark binaries, mpiexec.hydra and
#       hydra_pmi_proxy, every shared library they load that is not the C library's (as ldd lists them: MPICH,
#       HDF5, OpenBLAS, cJSON, cmocka ...), the examples, the test kernels and this script; packed as
#       OUT_DIR/mptune-gpu-check.tar.xz (xz -6, about 24 MB; GPU_CHECK_XZ_LEVEL=N sets another level). Checks that
#       every binary resolves all its libraries from the folder.
#   bash mptune-gpu-check/gpu-check.sh run [OUT]      (on the GPU machine, from the unpacked folder)
#       sets LD_LIBRARY_PATH and HYDRA_LAUNCHER=fork, lists the devices, runs the on-device tests
#       (test_gpu_eval --device, test_gpu_compile), tunes examples/gpu/gemm.json and convolution.json with 1 and 3
#       workers, cross-checks the best and the default configuration's times with an independent CuPy timing
#       (scripts/gpu_crosscheck.py: cupy.RawModule + CUDA events, median of 50) and writes ONE report,
#       OUT/gpu-check-report.txt (OUT: $OUT, else the current directory). Exit status: 0 when every step passed,
#       77 when there is no GPU (the steps that need one are skipped, said in the report, the others still run),
#       1 when a step failed.
set -uo pipefail

# the C library's own: present on every Linux machine, and bound to its kernel and loader
system_lib() {
  case "$(basename "$1")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|libutil.so.*|ld-linux*|linux-vdso*) return 0 ;;
  esac
  return 1
}

# the libraries ldd resolves for binary $1: "name path" lines
resolved_libs() { ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'; }

pack() {
  local build=${1:-build} out=${2:-}
  build=$(cd "$build" && pwd) || { echo "gpu-check pack: no build directory ${1:-build}" >&2; return 1; }
  out=${out:-$build/gpu-check}
  mkdir -p "$out" && out=$(cd "$out" && pwd)
  local src; src=$(cd "$(dirname "$0")/.." && pwd)
  local d=$out/mptune-gpu-check
  rm -rf "$d" && mkdir -p "$d/bin" "$d/lib" "$d/scripts" "$d/tests"
  [ -x "$build/mptune" ] || { echo "gpu-check pack: $build/mptune is missing: build first (scripts/build.sh)" >&2; return 1; }
  cp "$build/mptune" "$d/bin/"
  for f in "$build"/tests/test_* "$build"/tests/bench_*; do
    [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$d/bin/"
  done
  local hydra; hydra=$(readlink -f "$(command -v mpiexec.mpich || command -v mpiexec.hydra)")
  cp "$hydra" "$d/bin/mpiexec.hydra"
  cp "$(command -v hydra_pmi_proxy)" "$d/bin/"
  for b in "$d"/bin/*; do
    resolved_libs "$b" | while read -r name path; do
      system_lib "$name" || [ -e "$d/lib/$name" ] || cp -L "$path" "$d/lib/$name"
    done
  done
  # the libraries' own dependencies (ldd lists them already: one more pass catches a library only a library loads)
  for l in "$d"/lib/*; do
    resolved_libs "$l" | while read -r name path; do
      system_lib "$name" || [ -e "$d/lib/$name" ] || cp -L "$path" "$d/lib/$name"
    done
  done
  cp -r "$src/examples" "$d/"
  cp -r "$src/tests/kernels" "$d/tests/"
  cp "$src/scripts/gpu-check.sh" "$src/scripts/gpu_crosscheck.py" "$d/"
  (cd "$d/.." && git -C "$src" rev-parse HEAD > "$d/COMMIT" 2>/dev/null; true)
  check_folder "$d" || return 1
  tar -C "$out" -cf - mptune-gpu-check | xz "-${GPU_CHECK_XZ_LEVEL:-6}" -T2 > "$out/mptune-gpu-check.tar.xz.tmp" &&
    mv "$out/mptune-gpu-check.tar.xz.tmp" "$out/mptune-gpu-check.tar.xz" || return 1
  echo "gpu-check: $out/mptune-gpu-check.tar.xz ($(du -h "$out/mptune-gpu-check.tar.xz" | cut -f1)); on the GPU machine:"
  echo "  tar xf mptune-gpu-check.tar.xz && bash mptune-gpu-check/gpu-check.sh run \$OUT"
}

# every binary and library of folder $1 resolves each library it needs from the folder (or the C library's)
check_folder() {
  local d=$1 bad=0 name path b out
  for b in "$d"/bin/* "$d"/lib/*; do
    local out; out=$(LD_LIBRARY_PATH="$d/lib" ldd "$b" 2>&1)
    if grep -q "not found" <<<"$out"; then
      echo "gpu-check: $b: $(grep "not found" <<<"$out" | tr -s ' \t' ' ' | paste -sd';')" >&2
      bad=1
    fi
    while read -r name path; do
      system_lib "$name" || case "$path" in "$d"/lib/*) ;; *) echo "gpu-check: $b loads $name from $path, not from the folder" >&2; bad=1 ;; esac
    done < <(LD_LIBRARY_PATH="$d/lib" resolved_libs "$b")
  done
  return $bad
}

# ---- on the GPU machine ----

REPORT=
FAILED=0
say() { echo "$*" | tee -a "$REPORT"; }

# step NAME COMMAND...: runs it, its output into the report; 77 counts as skipped
step() {
  local name=$1; shift
  say ""
  say "== $name: $*"
  local t0=$SECONDS
  "$@" >>"$REPORT" 2>&1
  local rc=$?
  case $rc in
    0) say "-- $name: passed ($((SECONDS - t0)) s)" ;;
    77) say "-- $name: skipped (no device)" ;;
    *) say "-- $name: FAILED (exit status $rc, $((SECONDS - t0)) s)"; FAILED=1 ;;
  esac
  return $rc
}

# the best and the default configuration of a run log (mptune show --json): "label {config} objective_ms" lines
configs_of() {
  "$D/bin/mptune" show "$1" --json --top 1 | python3 -c '
import json, sys
dev = json.load(sys.stdin)["devices"][0]
for label, c in (("best", dev["top"][0] if dev.get("top") else None), ("default", dev.get("default"))):
    if c and c.get("objective") is not None:
        print(label, json.dumps(c["configuration"], separators=(",", ":")), c["objective"])
'
}

# the CuPy timing of a run's best and default configurations beside mptune's
crosscheck() {
  local problem=$1 log=$2
  configs_of "$log" | while read -r label cfg ms; do
    local cupy; cupy=$(python3 "$D/gpu_crosscheck.py" "$problem" "$cfg" 50) || { echo "$label: CuPy timing failed"; return 1; }
    python3 - "$label" "$ms" "$cupy" <<'EOF'
import json, sys
label, ms, cupy = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
d = 100 * (ms / cupy["median_ms"] - 1)
print("%s: mptune %.4f ms (mean of its timed runs), CuPy %.4f ms (median of %d; mean %.4f): %+.1f %%"
      % (label, ms, cupy["median_ms"], cupy["runs"], cupy["mean_ms"], d))
EOF
  done
}

run() {
  D=$(cd "$(dirname "$0")" && pwd)
  local out=${1:-${OUT:-.}}
  mkdir -p "$out"
  REPORT=$(cd "$out" && pwd)/gpu-check-report.txt
  : >"$REPORT"
  export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" HYDRA_LAUNCHER=fork PATH="$D/bin:$PATH"
  export MPT_SOURCE_DIR="$D" MPTUNE="$D/bin/mptune" MPIEXEC="$D/bin/mpiexec.hydra"
  local work; work=$(mktemp -d)
  say "mptune gpu-check $(cat "$D/COMMIT" 2>/dev/null) on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >>"$REPORT" 2>&1
  step "folder" check_folder "$D"
  step "devices" "$D/bin/mptune" devices
  local gpu=1
  grep -q "NVIDIA" <("$D/bin/mptune" devices 2>/dev/null) || gpu=0
  step "host tests" "$D/bin/test_gpu_eval"
  step "compile tests" "$D/bin/test_gpu_compile"
  if [ $gpu = 0 ]; then
    say ""
    say "no GPU: mptune devices lists no NVIDIA device; the on-device tests, the tuning runs and the CuPy"
    say "cross-check need one and were skipped"
    rm -rf "$work"
    [ $FAILED = 0 ] && return 77 || return 1
  fi
  step "on-device tests" "$D/bin/test_gpu_eval" --device
  for ex in gemm convolution; do
    for w in 1 3; do
      step "tune $ex, $w worker(s)" "$D/bin/mpiexec.hydra" -n $((w + 1)) "$D/bin/mptune" tune "$D/examples/gpu/$ex.json" \
        --evaluator cuda --strategy random --budget 60 --seed 1 --log "$work/$ex-$w.h5" --progress off
    done
    step "cross-check $ex (1 worker's best and default against CuPy)" crosscheck "$D/examples/gpu/$ex.json" "$work/$ex-1.h5"
  done
  rm -rf "$work"
  say ""
  [ $FAILED = 0 ] && say "gpu-check: every step passed" || say "gpu-check: a step FAILED (see above)"
  return $FAILED
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  check) shift; check_folder "$@" ;;
  *) echo "usage: $0 pack [BUILD_DIR [OUT_DIR]] | run [OUT] | check FOLDER" >&2; exit 2 ;;
esac
