#!/usr/bin/env bash
# scripts/setup.sh: installs every Debian 12 package mptune's build, main job and tests need.
# Idempotent: when everything is present it only checks and returns in well under a second.
set -euo pipefail
PKGS=(build-essential cmake pkg-config mpich libmpich-dev libscalapack-mpich-dev
      libhdf5-mpich-dev hdf5-tools libopenblas-dev liblapacke-dev libcjson-dev zlib1g-dev
      libcmocka-dev python3 python3-jsonschema python3-h5py python3-numpy python3-matplotlib
      libamdhip64-dev rocm-device-libs
      clang libclang-rt-14-dev) # the libFuzzer smoke run of run-tests.sh (tests/fuzz/README.md)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
