#!/usr/bin/env bash
# The test command (CI runs exactly this). It
#   0. installs what is missing (scripts/setup.sh; nothing when everything is there), checks
#      that includes across folders go in the allowed directions (scripts/check-includes.py) and
#      that the sources follow .clang-format (scripts/format.sh --check);
#   1. builds with the CUDA backend when a CUDA compiler is present (compile and link; PTX only
#      where no GPU is present) and runs every test (GPU tests report as skipped where no GPU is
#      present);
#   2. builds the library (CPU only) with ThreadSanitizer and runs the thread tests against it:
#      the caching allocator and autograd, each from 8 threads (scripts/test-tsan.sh);
#   3. builds a CPU-only configuration with AddressSanitizer + UndefinedBehaviorSanitizer and
#      runs the tests there;
#   4. installs the package into a temporary prefix, then builds and runs tests/consumer (a
#      separate CMake project that does find_package(anatomy)) against it;
#   5. installs the Python package with `pip install .` (CPU only) into a temporary folder and
#      runs the Python tests against it (scripts/test-pip-install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export CTEST_OUTPUT_ON_FAILURE=1
# OpenBLAS starts a pool of threads when it is loaded, and they spin (sched_yield) for about
# 0.1 s before they sleep; anatomy never hands OpenBLAS a thread (Note [One thread pool for
# products]), so in each of the 2,000-odd test processes they would only take a core from the
# other test running beside it: 85 ms of CPU per process, 160 ms under ASan.
export OPENBLAS_NUM_THREADS=1

step() { printf '\n==== %s ====\n' "$*"; }

step "set-up"
scripts/setup.sh
step "include directions"
scripts/check-includes.py
step "format"
scripts/format.sh --check
step "build (Release, CUDA when available)"
# Where no GPU is present the CUDA backend is compiled and linked but cannot run, and its kernels
# are compiled to PTX only (compute_90, which a driver would compile for its GPU when it loads
# them): nvcc's front end and cicc check every kernel as they would for sm_90, and ptxas, a third
# of a kernel file's compile, is left to the GPU machines, which build sm_90 code and run it
# (scripts/gpu-check.sh). This applies only when the test command configures the folder.
cuda_archs=()
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then cuda_archs=(-DCMAKE_CUDA_ARCHITECTURES=90-virtual); fi
scripts/build.sh build "${cuda_archs[@]}"
step "tests"
(cd build && ctest -j "$jobs")

step "the caching allocator and autograd from several threads under ThreadSanitizer"
scripts/test-tsan.sh build-tsan

step "build (ASan + UBSan, CPU only)"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DANATOMY_CUDA=OFF \
  "-DANATOMY_SANITIZE=address;undefined" -DANATOMY_BUILD_BENCHMARKS=OFF -DANATOMY_BUILD_TOOLS=OFF
step "tests under ASan + UBSan"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -j "$jobs")

step "install and build the consumer project"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix/install" >/dev/null
cmake -S tests/consumer -B "$prefix/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
cmake --build "$prefix/consumer" -j "$jobs"
(cd "$prefix/consumer" && ctest)

step "pip install . and the Python tests against the installed package"
scripts/test-pip-install.sh
