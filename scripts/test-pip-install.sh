#!/usr/bin/env bash
# `pip install .` as a user runs it (scikit-build-core in pip's isolated build environment), into
# a temporary folder, then the Python tests (tests/python) against the installed package rather
# than the build tree's. CPU only (--config-settings=cmake.define.ANATOMY_CUDA=OFF): the wheel's own build of
# the library leaves out the CUDA kernels, which take most of a CUDA build's time. The build folder
# (build-wheel/, pyproject.toml) stays, so a second run is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
python=.venv/bin/python
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
"$python" -m pip install -q --disable-pip-version-check --target "$target" \
  --config-settings=cmake.define.ANATOMY_CUDA=OFF .
# Outside the source tree, so that `import anatomy` can only find the installed package.
(cd "$target" && PYTHONPATH="$target" "$OLDPWD/$python" -c \
  'import anatomy, sys; assert anatomy.__file__.startswith(sys.argv[1]), anatomy.__file__' "$target")
PYTHONPATH="$target" "$python" -m pytest -q -p no:cacheprovider tests/python
