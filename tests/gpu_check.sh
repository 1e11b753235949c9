#!/usr/bin/env bash
# tests/gpu_check.sh: scripts/gpu-check.sh without a GPU. The pack step builds the self-contained folder and its
# .tar.xz from this build; unpacked elsewhere, every binary in it resolves each library it loads from the folder
# (ldd with LD_LIBRARY_PATH: no "not found", nothing but the C library from the system), and the check catches a
# library taken out of it. The folder's run step, here without a GPU, runs the host and compile tests, skips what
# needs a GPU, says so in its one report and exits 77.
set -u
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
script="$MPT_SOURCE_DIR/scripts/gpu-check.sh"

# xz -1: the default level (-6) takes minutes of CPU on two shared cores; what is packed is the same
GPU_CHECK_XZ_LEVEL=1 bash "$script" pack "$MPT_BINARY_DIR" "$work/pack" || fail "the pack step failed"
tarball="$work/pack/mptune-gpu-check.tar.xz"
[ -s "$tarball" ] || fail "no $tarball"
size=$(stat -c %s "$tarball")
echo "packed: $size bytes"
[ "$size" -lt $((64 << 20)) ] || fail "the packed folder is $size bytes (more than 64 MiB)"

mkdir "$work/unpacked"
tar -C "$work/unpacked" -xf "$tarball" || fail "cannot unpack $tarball"
d="$work/unpacked/mptune-gpu-check"
for f in bin/mptune bin/mpiexec.hydra bin/hydra_pmi_proxy bin/test_gpu_eval bin/bench_gpu_compile \
         examples/gpu/gemm.json examples/gpu/convolution.json gpu-check.sh gpu_crosscheck.py; do
  [ -e "$d/$f" ] || fail "the folder lacks $f"
done
for l in libmpich.so.12 libhdf5_mpich.so.103 libcjson.so.1; do
  [ -e "$d/lib/$l" ] || fail "the folder lacks lib/$l"
done
for b in "$d"/bin/*; do
  out=$(LD_LIBRARY_PATH="$d/lib" ldd "$b" 2>&1)
  ! grep -q "not found" <<<"$out" || fail "$b: $(grep "not found" <<<"$out")"
  if grep -q "libmpich.so" <<<"$out"; then
    grep -q "$d/lib/libmpich.so.12" <<<"$out" || fail "$b does not load MPICH from the folder"
  fi
done
LD_LIBRARY_PATH="$d/lib" ldd "$d/bin/mptune" | grep -q "$d/lib/libhdf5_mpich.so.103" ||
  fail "mptune does not load HDF5 from the folder"
bash "$d/gpu-check.sh" check "$d" || fail "the folder's check fails on the folder as packed"

# the check can fail: a library taken out of a copy is missed
cp -r "$d" "$work/broken"
rm "$work/broken/lib/libcjson.so.1"
if bash "$work/broken/gpu-check.sh" check "$work/broken" 2>"$work/broken.err"; then
  fail "the check passed a folder without libcjson.so.1"
fi
grep -q "libcjson.so.1" "$work/broken.err" || fail "the check did not name libcjson.so.1: $(cat "$work/broken.err")"

# the run step without a GPU: 77, one report
mkdir "$work/out"
(cd "$work" && env -u MPT_SOURCE_DIR -u MPTUNE OUT="$work/out" bash "$d/gpu-check.sh" run) >"$work/run.log" 2>&1
rc=$?
cat "$work/run.log"
[ $rc -eq 77 ] || fail "the run step without a GPU exited $rc, not 77"
report="$work/out/gpu-check-report.txt"
[ -s "$report" ] || fail "no report $report"
[ "$(ls "$work/out")" = "gpu-check-report.txt" ] || fail "more than one file in OUT: $(ls "$work/out")"
grep -q -- "-- folder: passed" "$report" || fail "the report does not say the folder check passed"
grep -q -- "-- host tests: passed" "$report" || fail "the host tests did not pass in the folder"
grep -q "no GPU" "$report" || fail "the report does not say there is no GPU"
! grep -q "FAILED" "$report" || fail "a step failed: $(grep FAILED "$report")"
echo "PASS"
