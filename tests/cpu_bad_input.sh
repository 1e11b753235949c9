#!/usr/bin/env bash
# tests/cpu_bad_input.sh: bad input to `mptune tune` with the cpu evaluator under mpiexec.mpich -n 3: a
# missing kernel file, a kernel name that is not in the file, an argument size expression that fails,
# a non-C language, a misspelt key. Each: non-zero exit, one clear message naming the field, no run log left behind.
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${MPT_SOURCE_DIR:?}"
tmp=$(mktemp -d /tmp/mpt_cpu_bad_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$MPT_SOURCE_DIR/tests/kernels/failing.c" "$tmp/"
src="$MPT_SOURCE_DIR/tests/kernels/failing.json"

check() { # name, sed expression, expected message part
  local name=$1 expr=$2 want=$3
  sed "$expr" "$src" >"$tmp/$name.json"
  cmp -s "$src" "$tmp/$name.json" && { echo "$name: the edit did not apply"; exit 1; }
  set +e
  (cd "$tmp" && timeout 120 "$MPIEXEC" -n 3 "$MPTUNE" tune "$name.json" --budget 5 --log "$name.h5") >"$tmp/$name.out" 2>&1
  local rc=$?
  set -e
  cat "$tmp/$name.out"
  [ "$rc" -ne 0 ] || { echo "$name: exit status 0"; exit 1; }
  [ "$rc" -ne 124 ] || { echo "$name: hung"; exit 1; }
  grep -qF -- "$want" "$tmp/$name.out" || { echo "$name: message lacks '$want'"; exit 1; }
  [ ! -e "$tmp/$name.h5" ] || { echo "$name: a run log was left behind"; exit 1; }
  echo "$name: ok (exit $rc)"
}
check missing_file 's/"KernelFile": "failing.c"/"KernelFile": "nothere.c"/' \
  "KernelSpecification.KernelFile: cannot read"
check missing_kernel 's/"KernelName": "twice"/"KernelName": "thrice"/' \
  "KernelSpecification.KernelName: kernel 'thrice' not found in"
check bad_size 's|"Size": "ProblemSize\[0\]", "FillType": "Generator"|"Size": "ProblemSize[0] // (len(mode) - 7)", "FillType": "Generator"|' \
  "KernelSpecification.Arguments[1].Size: 'ProblemSize[0] // (len(mode) - 7)' failed: ZeroDivisionError"
check not_c 's/"Language": "C"/"Language": "CUDA"/' "the cpu evaluator runs C kernels"
check misspelt_key 's/"Arguments"/"Argumnets"/' \
  "KernelSpecification.Argumnets: unknown key; did you mean 'Arguments'?"
echo "cpu_bad_input: ok"
