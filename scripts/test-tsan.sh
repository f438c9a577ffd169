#!/usr/bin/env bash
# The caching allocator's tests under ThreadSanitizer: a CPU-only build with
# -DANATOMY_SANITIZE=thread (in ./build-tsan, or the folder given as $1) of the test binary alone,
# then the allocator tests only (-tc="*alloc*": 8 threads allocating and freeing at once, with and
# without the memory history, and the rest of the allocator suite). The rest of the suite stays
# out: OpenBLAS's and OpenMP's own threads make TSan report races that are not anatomy's.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-tsan}
jobs=$(nproc 2>/dev/null || echo 2)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DANATOMY_CUDA=OFF -DANATOMY_SANITIZE=thread \
    -DANATOMY_BUILD_BENCHMARKS=OFF -DANATOMY_BUILD_TOOLS=OFF
fi
cmake --build "$build_dir" --target anatomy_tests -j "$jobs"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  "$build_dir/tests/anatomy_tests" -tc="*alloc*"
