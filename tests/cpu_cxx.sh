#!/usr/bin/env bash
# tests/cpu_cxx.sh: C++ kernels on the cpu evaluator through `mptune tune` under mpiexec.mpich -n 2:
# (1) a C++ vector add (a function template, std::transform) declared extern "C" tunes, every configuration
# valid; (2) the same kernel without extern "C" is refused with the hint that a C++ kernel needs it; (3) the
# compiler: $CXX compiles a C++ kernel and $CC its C call wrapper, KernelSpecification.Compiler wins over $CXX, a
# compiler that cannot be run is named with its place in the file; (4) "-x c++" in CompilerOptions of a C kernel
# compiles the kernel as C++ and no longer the call wrapper's object file.
# Needs MPTUNE, MPIEXEC, MPT_SOURCE_DIR (set by ctest).
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${MPT_SOURCE_DIR:?}"
export OPENBLAS_NUM_THREADS=1
unset CC CXX
tmp=$(mktemp -d /tmp/mpt_cpu_cxx_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
kernels="$MPT_SOURCE_DIR/tests/kernels"
cp "$kernels/vector_add_cxx.cpp" "$kernels/vector_add_cxx.json" "$tmp/"

tune() { # name, problem, extra mptune args...: runs `mptune tune` in $tmp, output in $tmp/NAME.out, returns its status
  local name=$1 problem=$2
  shift 2
  (cd "$tmp" && timeout 300 "$MPIEXEC" -n 2 "$MPTUNE" tune "$problem" --strategy brute_force --budget 4 \
    --log "$name.h5" --progress off "$@") >"$tmp/$name.out" 2>&1
}
all_valid() { # name: the run evaluated the 4 configurations, all valid
  grep -q "^evaluations: 4 (4 valid, 0 failed)" "$tmp/$1.out" || { cat "$tmp/$1.out"; echo "$1: not every configuration valid"; exit 1; }
}

# ---- (1) a C++ kernel, extern "C" ----
tune cxx vector_add_cxx.json || { cat "$tmp/cxx.out"; echo "cxx: the run failed"; exit 1; }
all_valid cxx
echo "C++ kernel: 4 of 4 configurations valid"

# ---- (2) without extern "C": its symbol is mangled, the kernel is not found, and the message says why ----
sed 's/^extern "C" //' "$tmp/vector_add_cxx.cpp" >"$tmp/mangled.cpp"
grep -q '^void vector_add(' "$tmp/mangled.cpp" || { echo "mangled: the edit did not apply"; exit 1; }
sed 's/"vector_add_cxx.cpp"/"mangled.cpp"/' "$tmp/vector_add_cxx.json" >"$tmp/mangled.json"
if tune mangled mangled.json; then cat "$tmp/mangled.out"; echo "mangled: exit status 0"; exit 1; fi
grep -qF "KernelSpecification.KernelName: kernel 'vector_add' not found in" "$tmp/mangled.out" &&
  grep -qF 'a C++ kernel must be declared extern "C"' "$tmp/mangled.out" ||
  { cat "$tmp/mangled.out"; echo "mangled: no extern \"C\" hint"; exit 1; }
[ ! -e "$tmp/mangled.h5" ] || { echo "mangled: a run log was left behind"; exit 1; }
echo "C++ kernel without extern \"C\": refused with the hint"

# ---- (3) which compiler: stand-ins that log each input file they are given, then run the real one ----
mkdir "$tmp/bin"
for name in my-cc my-cxx other-cxx; do
  real=cc
  [ "$name" = my-cc ] || real=c++
  cat >"$tmp/bin/$name" <<EOF
#!/bin/sh
for a in "\$@"; do case "\$a" in *.c|*.cpp) echo "\$a" >>"$tmp/$name.log";; esac; done
exec $real "\$@"
EOF
  chmod +x "$tmp/bin/$name"
done
CC="$tmp/bin/my-cc" CXX="$tmp/bin/my-cxx" tune env_cxx vector_add_cxx.json || { cat "$tmp/env_cxx.out"; exit 1; }
all_valid env_cxx
grep -q '/vector_add_cxx\.cpp$' "$tmp/my-cxx.log" || { echo "\$CXX did not compile the C++ kernel"; exit 1; }
grep -q '/launch\.c$' "$tmp/my-cc.log" || { echo "\$CC did not compile the call wrapper"; exit 1; }
! grep -q 'vector_add_cxx\.cpp' "$tmp/my-cc.log" || { echo "\$CC compiled the C++ kernel"; exit 1; }
# the problem's Compiler before $CXX
sed "s|\"Language\": \"C++\",|\"Language\": \"C++\", \"Compiler\": \"$tmp/bin/other-cxx\",|" "$tmp/vector_add_cxx.json" \
  >"$tmp/named.json"
rm -f "$tmp/my-cxx.log"
CXX="$tmp/bin/my-cxx" tune named named.json || { cat "$tmp/named.out"; exit 1; }
all_valid named
grep -q '/vector_add_cxx\.cpp$' "$tmp/other-cxx.log" && [ ! -e "$tmp/my-cxx.log" ] ||
  { echo "KernelSpecification.Compiler did not take precedence over \$CXX"; exit 1; }
# a compiler that cannot be run: named with its line and column
sed 's|"Language": "C++",|"Language": "C++", "Compiler": "no-such-compiler-mptune",|' "$tmp/vector_add_cxx.json" \
  >"$tmp/nocc.json"
if tune nocc nocc.json; then cat "$tmp/nocc.out"; echo "nocc: exit status 0"; exit 1; fi
grep -Eq "nocc\.json:8:[0-9]+: KernelSpecification\.Compiler: cannot run no-such-compiler-mptune" "$tmp/nocc.out" ||
  { cat "$tmp/nocc.out"; echo "nocc: the compiler and its place not named"; exit 1; }
echo "compilers: \$CXX, \$CC for the wrapper, Compiler before \$CXX, a missing one named"

# ---- (4) Language C with "-x c++" in CompilerOptions (the way to a C++ kernel before "C++"): the kernel is
# compiled as C++, the call wrapper's launch.o stays an object file ----
sed 's|"Language": "C++",|"Language": "C", "CompilerOptions": ["-x", "c++"],|' "$tmp/vector_add_cxx.json" >"$tmp/xcxx.json"
tune xcxx xcxx.json || { cat "$tmp/xcxx.out"; echo "xcxx: the run failed"; exit 1; }
all_valid xcxx
echo "Language C with -x c++: 4 of 4 configurations valid"
echo "cpu_cxx: ok"
