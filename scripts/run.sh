#!/usr/bin/env bash
# The main job: builds if needed, then runs gpu-anatomy on cuda:0 when a GPU is there, else on
# the CPU. Arguments are passed to gpu-anatomy (default: `suite --quick`, every experiment at small
# sizes, its report in build/gpu-anatomy-suite.json and its figures in build/plots; docs/cli.md).
# Installs what is missing first (scripts/setup.sh; nothing when everything is there).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -q
scripts/build.sh build >/dev/null
tool=build/tools/gpu-anatomy
if [ $# -gt 0 ]; then
  exec "$tool" "$@"
fi
device=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then device=cuda:0; fi
"$tool" suite --quick --device "$device" --json build/gpu-anatomy-suite.json
/usr/bin/python3 scripts/plot-report.py build/gpu-anatomy-suite.json build/plots
