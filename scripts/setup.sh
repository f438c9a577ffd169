#!/usr/bin/env bash
# Installs what anatomy needs to build and test: C and C++ libraries and tools from Debian's
# packages, then the project's virtual environment (.venv, Debian's python3) with the Python
# packages of scripts/python-requirements.txt from PyPI. Does nothing when everything is already
# there. Uses sudo when not root.
# scripts/run.sh and scripts/test.sh call it first; -q prints nothing when nothing is missing.
set -euo pipefail
quiet=0
[ "${1:-}" = "-q" ] && quiet=1

packages=(
  build-essential cmake ninja-build ccache git pkg-config clang-format clang
  libdlpack-dev libfmt-dev doctest-dev libopenblas-dev libdnnl-dev libcli11-dev
  nlohmann-json3-dev libbenchmark-dev pybind11-dev python3-dev python3-venv python3-jsonschema python3-matplotlib graphviz
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  [ "$quiet" = 1 ] || echo "setup: all ${#packages[@]} packages present"
else
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The virtual environment, on Debian's interpreter (whose headers python3-dev installed): made
# once, and brought up to date whenever the requirements file changes (a stamp holds its hash).
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv
requirements=$root/scripts/python-requirements.txt
stamp=$venv/.requirements.sha256
wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -x "$venv/bin/python" ]; then
  [ "$quiet" = 1 ] || echo "setup: .venv up to date"
  exit 0
fi
echo "setup: making .venv from scripts/python-requirements.txt"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
echo "$wanted" >"$stamp"
