#!/usr/bin/env bash
# scripts/run-tests.sh: the README's test command. Installs what is needed, builds the release and the
# ASan/UBSan builds, runs the whole suite (ctest) on both, then each libFuzzer fuzzer for a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# the tests read the project's shared data beside this clone: without it most of them would fail one by one
if [ ! -d ../shared/data/t1 ] || [ ! -d ../shared/data/brute-forced ]; then
  echo "run-tests.sh: the shared test data is missing: $(cd .. && pwd)/shared/data (t1/, brute-forced/, schemas/);" \
    "clone this repository beside the project's shared/ folder" >&2
  exit 1
fi
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
(cd build && ctest --output-on-failure --timeout 1500)
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DMPT_SANITIZE=ON
# LeakSanitizer on: any leak of mptune's fails its test; tests/lsan.supp names the library-internal ones.
# HWLOC_COMPONENTS=-pci: MPICH's MPI_Init loads hwloc's PCI plugin, which leaks 1016 bytes and is unloaded
# before the leak check, so no suppression can name it (mptune does not use hwloc's PCI data).
supp="$PWD/tests/lsan.supp"
(cd build-asan && HWLOC_COMPONENTS=-pci ASAN_OPTIONS=detect_leaks=1 \
  LSAN_OPTIONS="suppressions=$supp:print_suppressions=0" UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure --timeout 1500)
# the libFuzzer smoke run (tests/fuzz/README.md): each fuzzer 5 s from its seeds, built by clang in build-fuzz
if command -v clang >/dev/null 2>&1; then
  bash tests/fuzz/fuzz.sh 5
else
  echo "run-tests.sh: no clang, so no libFuzzer smoke run (the fuzz harnesses' seed replays ran under ctest)"
fi
