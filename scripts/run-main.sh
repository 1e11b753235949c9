#!/usr/bin/env bash
# scripts/run-main.sh: the README's main job. Installs what is needed, builds, and runs mptune.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
build/mptune space ../shared/data/t1/paper_hotspot.json
