#!/usr/bin/env bash
# The main job: builds what it runs, then runs gpu-anatomy on cuda:0 when a GPU is there, else on
# the CPU. Arguments are passed to gpu-anatomy (default: `suite --quick`, every experiment at small
# sizes, its report in build/gpu-anatomy-suite.json and its figures in build/plots; docs/cli.md).
# Installs what is missing first (scripts/setup.sh; nothing when everything is there). Only the
# tool is built (with the --peer torch module where the build has libtorch): the tests,
# benchmarks and Python module are scripts/test.sh's; the figures need Debian's python3 and
# matplotlib, which the set-up installs. The build's progress and errors go to stderr, so that
# stdout holds the tool's output alone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -q
scripts/build.sh build --target gpu-anatomy >&2
tool=build/tools/gpu-anatomy
if [ $# -gt 0 ]; then
  exec "$tool" "$@"
fi
device=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then device=cuda:0; fi
"$tool" suite --quick --device "$device" --json build/gpu-anatomy-suite.json
/usr/bin/python3 scripts/plot-report.py build/gpu-anatomy-suite.json build/plots
