#!/usr/bin/env bash
# Configures anatomy (Release, CUDA backend when a CUDA compiler is present) in ./build, or in the
# folder given as the first argument, when that folder has no configuration yet; then builds
# every target, or only those named with --target (and what they depend on). The other arguments
# go to CMake's configure step. The build's output, errors included, goes to stdout.
#
#   scripts/build.sh [DIR] [--target NAME]... [CMAKE_ARG]...
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build_dir=$1
  shift
fi
targets=()
configure_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --target ]; then
    if [ $# -lt 2 ]; then
      echo "scripts/build.sh: --target needs a target name" >&2
      exit 2
    fi
    targets+=("$2")
    shift 2
  else
    configure_args+=("$1")
    shift
  fi
done
jobs=$(nproc 2>/dev/null || echo 2)
# ccache keys on paths relative to the checkout, so every clone (CI's included) shares one cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${configure_args[@]}"
fi
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
else
  cmake --build "$build_dir" -j "$jobs"
fi
