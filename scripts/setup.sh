#!/usr/bin/env bash
# Installs what anatomy needs to build and test, from Debian packages only.
# Does nothing when everything is already there. Uses sudo when not root.
# scripts/run.sh and scripts/test.sh call it first; -q prints nothing when nothing is missing.
set -euo pipefail
quiet=0
[ "${1:-}" = "-q" ] && quiet=1

packages=(
  build-essential cmake ninja-build ccache git pkg-config clang-format clang
  libdlpack-dev libfmt-dev doctest-dev libopenblas-dev libcli11-dev
  nlohmann-json3-dev libbenchmark-dev pybind11-dev python3-dev python3-venv python3-jsonschema python3-matplotlib graphviz
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  [ "$quiet" = 1 ] || echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "setup: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
