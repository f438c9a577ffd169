#!/usr/bin/env bash
# The main job: builds if needed, then runs gpu-anatomy on cuda:0 when a GPU is there, else on
# the CPU. Arguments are passed to gpu-anatomy (default: the device, then chapter 01's layout
# table and contiguity benchmark at small sizes, then the dispatch trace; docs/cli.md).
# Installs what is missing first (scripts/setup.sh; nothing when everything is there).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -q
scripts/build.sh build >/dev/null
tool=build/tools/gpu-anatomy
if [ $# -gt 0 ]; then
  exec "$tool" "$@"
fi
device=cpu size=256 iters=5
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then device=cuda:0 size=2048 iters=50; fi
"$tool" c00 device-info
"$tool" c01 layout --device "$device"
"$tool" c01 contiguity-bench --device "$device" --m "$size" --n "$size" --k "$size" --iters "$iters"
"$tool" c06 dispatch-trace --device "$device"
