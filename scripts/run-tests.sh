#!/usr/bin/env bash
# scripts/run-tests.sh: the README's test command. Installs what is needed, builds the release and the
# ASan/UBSan builds, runs the whole suite (ctest) on the first and the unit tests on the second.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
(cd build && ctest --output-on-failure --timeout 1500)
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DMPT_SANITIZE=ON
# LeakSanitizer on: any leak of mptune's fails its test; tests/lsan.supp names the library-internal ones.
supp="$PWD/tests/lsan.supp"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$supp:print_suppressions=0" \
  UBSAN_OPTIONS=print_stacktrace=1 ctest -L unit --output-on-failure --timeout 1500)
