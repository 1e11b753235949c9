# tests/synthetic_common.sh: sourced by the script tests that replay spaces made by
# scripts/synthetic_space.py (synthetic_space.sh, bo_feasibility_fallback.sh): fail(), the environment
# ctest passes (MPTUNE, MPT_SHARED_DATA, MPT_SOURCE_DIR, PYTHON), a scratch folder $T removed on exit,
# one OpenBLAS thread, and the generator's path $G.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MPTUNE:?}" "${MPT_SHARED_DATA:?}" "${MPT_SOURCE_DIR:?}"
PY=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OPENBLAS_NUM_THREADS=1
G=$MPT_SOURCE_DIR/scripts/synthetic_space.py
