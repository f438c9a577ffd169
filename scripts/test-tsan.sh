#!/usr/bin/env bash
# The thread tests under ThreadSanitizer.
#
#   scripts/test-tsan.sh [build-dir]          what CI runs (scripts/test.sh): the library built
#       with -DANATOMY_SANITIZE=thread, CPU only, at -O1 (./build-tsan by default), and the thread
#       tests against it (anatomy_thread_tests): the caching allocator from 8 threads and autograd
#       from 8 threads over shared leaves. OPENBLAS_NUM_THREADS=1 keeps OpenBLAS from starting a
#       pool of its own at load (anatomy computes products on its own pool anyway): OpenBLAS's
#       threads are not anatomy's to check.
#   scripts/test-tsan.sh --full [build-dir]   the same build, and the whole test binary running
#       the allocator tests (-tc="*alloc*"), those that dispatch operators included. The rest of
#       the suite stays out: OpenBLAS's and OpenMP's own threads make TSan report races that are
#       not anatomy's.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export OPENBLAS_NUM_THREADS=1

full=0
if [ "${1:-}" = "--full" ]; then full=1; shift; fi
build_dir=${1:-build-tsan}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  # -O1, as ThreadSanitizer's documentation suggests: a third less compile time than -O3 and
  # the same reports.
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
    -DANATOMY_CUDA=OFF -DANATOMY_SANITIZE=thread -DANATOMY_BUILD_BENCHMARKS=OFF -DANATOMY_BUILD_TOOLS=OFF
fi
if [ "$full" = 1 ]; then
  cmake --build "$build_dir" --target anatomy_tests -j "$jobs"
  exec "$build_dir/tests/anatomy_tests" -tc="*alloc*"
fi
cmake --build "$build_dir" --target anatomy_thread_tests -j "$jobs"
exec "$build_dir/tests/anatomy_thread_tests"
