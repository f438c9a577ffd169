#!/usr/bin/env bash
# The caching allocator under ThreadSanitizer.
#
#   scripts/test-tsan.sh [build-dir]          the allocator alone (what CI runs, scripts/test.sh):
#       the anatomy_alloc_tsan_tests target of an ordinary build (./build by default, configured
#       as scripts/build.sh does when missing): alloc/ and its thread test compiled with
#       -fsanitize=thread, with only the core and dispatch files they need. Seconds, with ccache.
#   scripts/test-tsan.sh --autograd [build-dir]   autograd from 8 threads over shared leaves
#       (tests/autograd/test_autograd_threads.cpp): the library built with -DANATOMY_SANITIZE=thread,
#       CPU only (./build-tsan by default), and that one test binary. CI runs it (scripts/test.sh).
#       OpenBLAS is kept to one thread: its own threads are not anatomy's to check.
#   scripts/test-tsan.sh --full [build-dir]   the whole library and test binary built with
#       -DANATOMY_SANITIZE=thread, CPU only (./build-tsan by default), running the allocator
#       tests (-tc="*alloc*"), those that dispatch operators included. The rest of the suite stays
#       out: OpenBLAS's and OpenMP's own threads make TSan report races that are not anatomy's.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"

configure_full() {
  if [ ! -f "$1/CMakeCache.txt" ]; then
    cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DANATOMY_CUDA=OFF -DANATOMY_SANITIZE=thread \
      -DANATOMY_BUILD_BENCHMARKS=OFF -DANATOMY_BUILD_TOOLS=OFF
  fi
}

if [ "${1:-}" = "--full" ]; then
  build_dir=${2:-build-tsan}
  configure_full "$build_dir"
  cmake --build "$build_dir" --target anatomy_tests -j "$jobs"
  exec "$build_dir/tests/anatomy_tests" -tc="*alloc*"
fi

if [ "${1:-}" = "--autograd" ]; then
  build_dir=${2:-build-tsan}
  configure_full "$build_dir"
  cmake --build "$build_dir" --target anatomy_autograd_threads_tests -j "$jobs"
  OPENBLAS_NUM_THREADS=1 exec "$build_dir/tests/anatomy_autograd_threads_tests"
fi

build_dir=${1:-build}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
if ! grep -q '^ANATOMY_HAVE_TSAN:INTERNAL=1' "$build_dir/CMakeCache.txt"; then
  echo "error: the compiler cannot build with -fsanitize=thread (or $build_dir is a sanitizer build)" >&2
  exit 1
fi
cmake --build "$build_dir" --target anatomy_alloc_tsan_tests -j "$jobs"
exec "$build_dir/tests/anatomy_alloc_tsan_tests"
