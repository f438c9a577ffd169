#!/usr/bin/env bash
# The whole GPU check in one command, for the GPU test machine (docs: shared GPU.md):
#   configure and build (CUDA on, sm_90), run the GPU tests (ctest -L gpu), run them again under
#   compute-sanitizer memcheck and racecheck, record `gpu-anatomy c00 device-info --json FILE`, run
#   gpu-anatomy's suite --quick, c01 contiguity-bench at three sizes, c08 dlpack from 1 KiB to 1 GiB
#   c09 graphs, c10 profile and c11 memory-format (reports, trace and figures; c11's torch twin
#   where torch imports) and, where the Python package imports, bench/python/dlpack_exchange.py, run
#   every anatomy_bench* benchmark that was built, with JSON output, and run anatomy_peer_torch
#   (anatomy next to libtorch, built when torch is importable) into peer-report.md, and measure the
#   Python package's call overhead beside torch's (bench/python/overhead.py, step `python`) and
#   the CPU rows of bench/python/cpu_rows.py (same step).
#
#   scripts/gpu-check.sh [OUT_DIR]      (default: $OUT, else ./gpu-check-out)
#
# Logs and JSON go to OUT_DIR; a summary is printed at the end and written to summary.txt. The
# script fails when the build fails, when any GPU test fails, when a sanitizer reports an error,
# or when a GPU test was skipped although nvidia-smi shows a GPU. Where no GPU is present (a
# development machine) GPU tests may be skipped and the sanitizer steps are skipped.
#
# Environment: ANATOMY_BUILD_DIR (default build-gpu), CUDA_ARCHS (default 90), ANATOMY_CMAKE_ARGS
# (extra configure arguments, split on spaces), GPU_CHECK_SKIP (step names not to run, e.g.
# "memcheck racecheck benchmarks"; configure and build always run), BENCH_MIN_TIME (passed to
# every benchmark as --benchmark_min_time, e.g. 0.1s, for a quicker and noisier run),
# GPU_CHECK_SANITIZER_JOBS (sanitizer processes at a time; default half the cores, at most 8),
# GPU_CHECK_SANITIZER_TESTS (doctest test-case filters: only those tests run under the sanitizers),
# GPU_CHECK_TEST_JOBS (GPU test processes at a time, default 1; failures rerun alone).

# shellcheck disable=SC2317  # the step functions are called through run_step
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

out=${1:-${OUT:-./gpu-check-out}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${ANATOMY_BUILD_DIR:-build-gpu}
archs=${CUDA_ARCHS:-90}
jobs=$(nproc 2>/dev/null || echo 4)
gpu_tests="$build/tests/anatomy_gpu_tests"

has_gpu=false
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then has_gpu=true; fi

# ---- steps: each runs with errexit in a subshell; exit status 0 ok, 3 skipped, other failed ----

step_environment() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "host: $(uname -a)"
    echo "cores: $jobs"
    echo "gpu present: $has_gpu"
    echo; nvidia-smi 2>&1 || true
    echo; command -v nvcc >/dev/null && nvcc --version || /usr/local/cuda/bin/nvcc --version 2>&1 || true
    echo; cmake --version | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1 || true
  } >"$out/environment.txt" 2>&1
}

step_configure() {
  # CMAKE_PREFIX_PATH is a ;-list: .deps/usr (the DLPack header) and torch's CMake package, which
  # turns on the benchmarks against libtorch (bench/peer, ANATOMY_BUILD_PEER=AUTO).
  local prefixes=() prefix_args=() torch_prefix
  if [ -d "$root/.deps/usr" ]; then prefixes+=("$root/.deps/usr"); fi
  if torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) &&
    [ -n "$torch_prefix" ]; then
    prefixes+=("$torch_prefix")
  fi
  if [ "${#prefixes[@]}" -gt 0 ]; then prefix_args=("-DCMAKE_PREFIX_PATH=$(IFS=';'; echo "${prefixes[*]}")"); fi
  # cuDNN (backends/cuda/conv/): the CUDA Toolkit's when it has one, else the one PyTorch's wheel
  # brings (nvidia-cudnn: include/ and lib/ under its package folder). oneDNN for the CPU
  # convolutions comes from .deps/usr like DLPack when the system lacks it (cmake/onednn.cmake).
  local cudnn_root
  if [ ! -f /usr/local/cuda/include/cudnn.h ] &&
    cudnn_root=$(python3 -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null) &&
    [ -f "$cudnn_root/include/cudnn.h" ]; then
    prefix_args+=("-DANATOMY_CUDNN_ROOT=$cudnn_root")
  fi
  local generator=()
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
  # shellcheck disable=SC2086  # ANATOMY_CMAKE_ARGS is a list of words on purpose
  # Without precompiled headers: this build (16 cores, no ccache to keep) also checks that every
  # file includes what it uses (cmake/precompiled.h).
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DANATOMY_CUDA=ON \
    -DANATOMY_PRECOMPILED_HEADERS=OFF -DCMAKE_CUDA_ARCHITECTURES="$archs" "${prefix_args[@]}" ${ANATOMY_CMAKE_ARGS:-} \
    >"$out/configure.log" 2>&1
}

step_build() {
  # Ninja keeps going after a file that fails (-k 0), so that one run shows every compile error.
  local keep_going=()
  if [ -f "$build/build.ninja" ]; then keep_going=(-- -k 0); fi
  cmake --build "$build" -j "$jobs" "${keep_going[@]}" >"$out/build.log" 2>&1
}

# GPU_CHECK_TEST_JOBS > 1 runs that many GPU test processes at once on the one device, then
# reruns the tests that failed one at a time: a test that passes alone failed from its
# neighbours (device memory, timings), and is listed as such; only a test that fails alone fails
# the step.
step_gpu_tests() {
  local log="$out/ctest-gpu.log" rc=0 test_jobs=${GPU_CHECK_TEST_JOBS:-1}
  (cd "$build" && ctest -L gpu -j "$test_jobs" --output-on-failure --no-tests=error --output-junit "$out/ctest-gpu.xml") \
    >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$test_jobs" -gt 1 ]; then
    echo "---- rerunning the failed tests one at a time" >>"$log"
    rc=0
    (cd "$build" && ctest --rerun-failed --output-on-failure) >>"$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then echo "every test that failed under -j $test_jobs passed alone" >>"$log"; fi
  fi
  local skipped
  skipped=$(grep -cE 'Test +#[0-9]+: .*Skipped' "$log" || true)
  echo "gpu tests skipped: $skipped" >>"$log"
  if [ "$rc" -ne 0 ]; then return "$rc"; fi
  if $has_gpu && [ "$skipped" -gt 0 ]; then
    echo "error: $skipped GPU tests were skipped although nvidia-smi shows a GPU" | tee -a "$log" >&2
    return 1
  fi
  if ! $has_gpu; then return 3; fi
}

# compute-sanitizer runs the test binary itself (not through ctest), one process per GPU test
# case, $sanitizer_jobs at a time: the tools' cost is mostly per kernel and on the host, so
# processes sharing the GPU finish far sooner than one process running every test. Each test's
# log is sanitizer-TOOL/NAME.log; sanitizer-TOOL.log gets every test's result line (status,
# seconds) and the ends of the logs of the tests that failed. Every test but those named in $2
# (doctest wildcards, comma-separated) runs.
sanitizer_jobs=${GPU_CHECK_SANITIZER_JOBS:-$(( jobs / 2 > 8 ? 8 : (jobs / 2 < 1 ? 1 : jobs / 2) ))}
# Tests that take minutes under racecheck (measured on an H100: the op-table sweep 7 min, the
# int8 products' long sums and the 2^31-element tests 4-6): started first so that the others
# fill the remaining processes meanwhile.
sanitizer_slow_first=("op table*" "cuda lt*" "cuda topk*" "cuda sort*" "*backward*" "*checkpoint*")
# Tests that hold over 10 GiB of device memory (tensors past 2^31 elements): one at a time, so
# that several of them next to the tools' own memory do not run the device out.
sanitizer_serial=("cuda large*")
# Tests named "...driver refuses..." make CUDA calls fail on purpose (an out-of-memory cudaMalloc),
# which the sanitizer counts as errors: they run in the gpu-tests step only.
sanitizer_always_exclude="*driver refuses*"

# The names of the tests that run under a sanitizer with `exclude`, the slow ones first.
sanitized_test_names() {
  local exclude=$1 names pattern
  names=$("$gpu_tests" --list-test-cases ${GPU_CHECK_SANITIZER_TESTS:+"--test-case=$GPU_CHECK_SANITIZER_TESTS"} \
    --test-case-exclude="$sanitizer_always_exclude${exclude:+,$exclude}" |
    grep -v -e '^\[doctest\]' -e '^====')
  for pattern in "${sanitizer_slow_first[@]}"; do
    # shellcheck disable=SC2053  # $pattern is a glob on purpose
    while IFS= read -r name; do [[ ${name,,} == ${pattern,,} ]] && echo "$name"; done <<<"$names"
  done
  while IFS= read -r name; do
    local slow=false
    for pattern in "${sanitizer_slow_first[@]}"; do [[ ${name,,} == ${pattern,,} ]] && slow=true; done
    $slow || echo "$name"
  done <<<"$names"
}

sanitize_test() {
  local tool=$1 name=$2 sanitizer=$3 log=$4
  shift 4
  local started=$SECONDS rc=0
  # doctest splits filters at commas: a name's commas become the one-character wildcard.
  "$sanitizer" --tool "$tool" --error-exitcode 1 "$@" "$gpu_tests" --test-case="${name//,/?}" >"$log" 2>&1 || rc=$?
  # A GPU test that skipped under the sanitizer did not check anything; one that ran no test
  # matched nothing.
  # A test that made no CUDA call the tool instruments (it checks host-side code) has nothing to
  # check; the tool then fails with this message although the test passed.
  if [ "$rc" -ne 0 ] && grep -q 'terminated before first instrumented API call' "$log" &&
    grep -q 'Status: SUCCESS' "$log"; then
    rc=0
  fi
  if [ "$rc" -eq 0 ] && grep -q '\[anatomy-skip\]' "$log"; then rc=98; fi
  if [ "$rc" -eq 0 ] && ! grep -q 'test cases: *1 |' "$log"; then rc=99; fi
  printf '%-8s %5ss  %s\n' "$([ "$rc" -eq 0 ] && echo ok || echo "rc=$rc")" $((SECONDS - started)) "$name"
  return "$rc"
}

sanitize() {
  local tool=$1 exclude=$2
  shift 2
  if ! $has_gpu; then return 3; fi
  local sanitizer dir="$out/sanitizer-$tool" summary="$out/sanitizer-$tool.log" name running=0 failed=0 count=0
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  mkdir -p "$dir"
  echo "compute-sanitizer --tool $tool, one process per test, $sanitizer_jobs at a time" >"$summary"
  local serial=() parallel=() pattern is_serial
  while IFS= read -r name; do
    is_serial=false
    # shellcheck disable=SC2053  # $pattern is a glob on purpose
    for pattern in "${sanitizer_serial[@]}"; do [[ ${name,,} == ${pattern,,} ]] && is_serial=true; done
    if $is_serial; then serial+=("$name"); else parallel+=("$name"); fi
  done < <(sanitized_test_names "$exclude")
  # The tests that need much device memory run one after another, in one of the slots.
  if [ "${#serial[@]}" -gt 0 ]; then
    (
      rc=0
      for name in "${serial[@]}"; do
        count=$((count + 1))
        sanitize_test "$tool" "$name" "$sanitizer" "$dir/s$(printf '%02d' "$count")-${name//[^A-Za-z0-9]/_}.log" "$@" || rc=1
      done
      exit "$rc"
    ) >>"$summary" &
    running=1
    count=${#serial[@]}
  fi
  for name in "${parallel[@]}"; do
    count=$((count + 1))
    sanitize_test "$tool" "$name" "$sanitizer" "$dir/$(printf '%03d' "$count")-${name//[^A-Za-z0-9]/_}.log" "$@" \
      >>"$summary" &
    running=$((running + 1))
    if [ "$running" -ge "$sanitizer_jobs" ]; then
      wait -n || failed=$((failed + 1))
      running=$((running - 1))
    fi
  done
  while [ "$running" -gt 0 ]; do
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  done
  # Each test's result line is in the summary (the serial ones' job counts once in $failed).
  failed=$(grep -c '^rc=' "$summary" || true)
  echo "tests: $count, failed: $failed" >>"$summary"
  if [ "$count" -eq 0 ]; then return 1; fi
  if [ "$failed" -gt 0 ]; then
    local log
    for log in "$dir"/*.log; do
      if ! grep -q -e 'ERROR SUMMARY: 0 errors' -e 'RACECHECK SUMMARY: 0 hazards' "$log" ||
        ! grep -q 'Status: SUCCESS' "$log"; then
        printf '\n---- %s\n' "$log" >>"$summary"
        tail -n 60 "$log" >>"$summary"
      fi
    done
    return 1
  fi
}
step_memcheck() { sanitize memcheck "" --leak-check full; }
# cuBLAS's fp16 and TF32 kernels (nvjet_sm90_hsh_*, nvjet_sm90_tst_*) order their shared memory
# with hardware barriers that racecheck does not model, and it reports hazards inside them that
# are not anatomy's (excluding those kernels by name, --kernel-name-exclude, makes the sanitizer
# fail on a hardware exception instead). The tests whose products take those kernels run
# plainly and under memcheck, not under racecheck; every other test, the exact integer product's
# shared-memory kernel included, does.
racecheck_exclude="cuda matmul: mm matches*,cuda matmul: misaligned*,cuda matmul: odd leading*,cuda matmul: bmm and baddbmm*"
racecheck_exclude+=",cuda matmul: the TF32 switch*,cuda matmul: fp16 accumulation*"
# cuDNN's Hopper convolution kernels (sm90_xmma_*_warpgroupsize*, the fp32/TF32 dgrad of "cuda
# convolution: cuDNN matches...") synchronize their warpgroups the same way, and racecheck reports
# a hazard inside them (H200, cuDNN 9 of torch 2.11's wheel); the convolution tests that sweep
# cuDNN's engines run plainly and under memcheck, the others under racecheck too.
racecheck_exclude+=",cuda convolution: cuDNN matches*,cuda convolution: the benchmark mode*"
# The stream, event and pinned-copy tests keep a stream busy for a long time with large
# element-wise kernels and fp32 products to observe the ordering of work; under racecheck that
# takes many minutes, and those kernels use no shared memory: they run plainly and under
# memcheck only.
racecheck_exclude+=",cuda pinned: a *,cuda streams*,cuda events*,cuda autograd streams*"
# The training tests run 400 optimizer steps (thousands of small kernels, each instrumented);
# their kernels' own tests run under racecheck.
racecheck_exclude+=",cuda training: a two-layer*,cuda training: the same MLP*"
# The sort and topk sweeps (every dtype over many shapes, rows up to 150,000 long) run CUB's
# radix passes, whose shared-memory traffic makes each take over ten minutes under racecheck; "cuda
# sort and topk: each kernel once per key width" runs every one of those kernels there instead,
# and "cuda sort: every dtype, ties and special values ..." every dtype.
racecheck_exclude+=",cuda topk: every dtype*,cuda sort: long rows*"
step_racecheck() { sanitize racecheck "$racecheck_exclude"; }

step_device_info() {
  "$build/tools/gpu-anatomy" c00 device-info --json "$out/device-info.json" >"$out/device-info.log" 2>&1
}

# gpu-anatomy's experiments on the GPU: suite --quick, then c01 contiguity-bench at three sizes
# (fp16 2048, bf16 4096, fp32 8192), both with --peer torch where the build has the peer module
# (PyTorch's figure beside each of ours), c08 dlpack over its full range (1 KiB to 1 GiB), c09
# graphs, c10 profile (with its trace and timeline) and c11 memory-format (with
# bench/python/memory_format.py, its torch twin, where torch imports, and the speed-up figure of
# both) with their defaults (their figures replace the suite's quick ones), with their reports and
# figures (docs/cli.md); then the same exchange from Python against torch, where the package built
# here imports.
step_suite() {
  if ! $has_gpu; then return 3; fi
  local tool="$build/tools/gpu-anatomy" rc=0 dtype n peer=()
  # PyTorch's figures beside ours wherever the build has the peer module (torch found at configure).
  if [ -f "$build/tools/gpu-anatomy-peer-torch.so" ]; then peer=(--peer torch); fi
  "$tool" suite --quick --device cuda:0 "${peer[@]}" --json "$out/gpu-anatomy-suite.json" >"$out/suite.log" 2>&1 || rc=1
  for cfg in "fp16 2048" "bf16 4096" "fp32 8192"; do
    read -r dtype n <<<"$cfg"
    "$tool" c01 contiguity-bench --device cuda:0 --dtype "$dtype" --m "$n" --n "$n" --k "$n" --iters 50 "${peer[@]}" \
      --json "$out/c01-contiguity-$dtype-$n.json" >>"$out/suite.log" 2>&1 || rc=1
  done
  "$tool" c08 dlpack --device cuda:0 --json "$out/c08-dlpack.json" >>"$out/suite.log" 2>&1 || rc=1
  "$tool" c09 graphs --device cuda:0 --json "$out/c09-graphs.json" >>"$out/suite.log" 2>&1 || rc=1
  # c10 draws its timeline beside the trace (c10-trace.svg, .png) and fails when it cannot.
  "$tool" c10 profile --device cuda:0 --trace "$out/c10-trace.json" --json "$out/c10-profile.json" \
    >>"$out/suite.log" 2>&1 || rc=1
  "$tool" c11 memory-format --device cuda:0 --json "$out/c11-memory-format.json" >>"$out/suite.log" 2>&1 || rc=1
  local twin=()
  if python3 -c 'import torch' 2>/dev/null; then
    python3 "$root/bench/python/memory_format.py" --device cuda --json "$out/memory-format-torch.json" \
      >>"$out/suite.log" 2>&1 && twin=("$out/memory-format-torch.json") || rc=1
  fi
  python3 "$root/scripts/plot-memory-format.py" "$out/c11-memory-format.json" "$out/plots/c11-memory-format" \
    "${twin[@]}" >>"$out/suite.log" 2>&1 || true
  python3 "$root/scripts/plot-report.py" "$out/gpu-anatomy-suite.json" "$out/plots" >>"$out/suite.log" 2>&1 || true
  python3 "$root/scripts/plot-report.py" "$out/c08-dlpack.json" "$out/plots" >>"$out/suite.log" 2>&1 || true
  python3 "$root/scripts/plot-report.py" "$out/c09-graphs.json" "$out/plots" >>"$out/suite.log" 2>&1 || true
  if PYTHONPATH="$build/python" python3 -c 'import anatomy' 2>/dev/null; then
    PYTHONPATH="$build/python" python3 "$root/bench/python/dlpack_exchange.py" --json "$out/dlpack-exchange.json" \
      >>"$out/suite.log" 2>&1 || rc=1
  fi
  return "$rc"
}

step_benchmarks() {
  local found=0 failed=0 bench name
  while IFS= read -r bench; do
    found=$((found + 1))
    name=$(basename "$bench")
    echo "running $bench" >>"$out/benchmarks.log"
    "$bench" --benchmark_format=json "${bench_args[@]}" >"$out/$name.json" 2>>"$out/benchmarks.log" ||
      failed=$((failed + 1))
  done < <(find "$build" -type f -perm -u+x -name 'anatomy_bench*' | sort)
  echo "benchmarks found: $found, failed: $failed" >>"$out/benchmarks.log"
  if [ "$failed" -gt 0 ]; then return 1; fi
  if [ "$found" -eq 0 ]; then return 3; fi
}

# anatomy next to libtorch: the same operations on the same inputs in this run (bench/peer), and
# the paired table scripts/peer-report.py makes of them. Skipped when torch was not found at
# configure time (the executable was not built).
step_peer() {
  local bench="$build/bench/peer/anatomy_peer_torch"
  if [ ! -x "$bench" ]; then
    echo "anatomy_peer_torch was not built (torch not found at configure time)" >"$out/peer.log"
    return 3
  fi
  # A row that fails its check against torch, or cannot run, is an error row in the JSON (the
  # executable still exits 0): the report is written first, then the errors judged here. Without
  # a GPU the CUDA rows are skipped as expected; with one, no row may be.
  "$bench" --benchmark_format=json "${bench_args[@]}" >"$out/anatomy_peer_torch.json" 2>"$out/peer.log"
  python3 "$root/scripts/peer-report.py" "$out/anatomy_peer_torch.json" >"$out/peer-report.md" 2>>"$out/peer.log"
  cat "$out/peer-report.md" >>"$out/peer.log"
  # A row whose operator has no anatomy kernel on that backend says so ("no kernel for"): it
  # is listed in the report as missing, not counted as a failure.
  local errors missing
  errors=$(grep -c '"error_occurred": true' "$out/anatomy_peer_torch.json" || true)
  missing=$(grep -c '"error_message": "[^"]*no kernel for' "$out/anatomy_peer_torch.json" || true)
  errors=$((errors - missing))
  echo "rows with errors: $errors (and $missing rows missing an anatomy kernel)" >>"$out/peer.log"
  if grep -q 'anatomy and torch disagree' "$out/anatomy_peer_torch.json"; then
    echo "error: anatomy and torch disagree on some row (see peer-report.md)" | tee -a "$out/peer.log" >&2
    return 1
  fi
  if $has_gpu && [ "$errors" -gt 0 ]; then
    echo "error: $errors rows were skipped although nvidia-smi shows a GPU" | tee -a "$out/peer.log" >&2
    return 1
  fi
}

# The Python package's call overhead beside torch's, in one process (bench/python/overhead.py):
# host time of `a + b` and anatomy.ops.aten.add on the CPU and CUDA; and the CPU rows of
# bench/python/cpu_rows.py. Needs the module, which the build makes where Python and nanobind are
# found.
step_python() {
  if [ ! -d "$build/python/anatomy" ]; then
    echo "the Python package was not built (no Python with nanobind at configure time)" >"$out/python.log"
    return 3
  fi
  PYTHONPATH="$build/python" python3 -X faulthandler "$root/bench/python/overhead.py" --json "$out/python-overhead.json" \
    >"$out/python.log" 2>&1 || return 1
  # The CPU rows with each engine's own libraries, at one thread and at every core: the
  # two separate a kernel's speed from how it scales.
  local threads
  for threads in 1 "$(nproc)"; do
    PYTHONPATH="$build/python" python3 -X faulthandler "$root/bench/python/cpu_rows.py" --threads "$threads" \
      --json "$out/cpu-rows-$threads.json" >>"$out/python.log" 2>&1 || return 1
  done
}

# ---- driver ----

declare -a summary=()
status=0
bench_args=()
if [ -n "${BENCH_MIN_TIME:-}" ]; then bench_args+=("--benchmark_min_time=$BENCH_MIN_TIME"); fi

# run_step NAME FUNCTION LOG [critical]: runs one step; when it fails, the end of its LOG (in
# the output folder) is shown, and a failed critical step ends the check (nothing after it
# could run).
run_step() {
  local name=$1 fn=$2 log=$3 critical=${4:-} rc=0 started=$SECONDS
  printf '==== %s\n' "$name"
  if [ -z "$critical" ] && [[ " ${GPU_CHECK_SKIP:-} " == *" $name "* ]]; then
    summary+=("$(printf '%-16s %-20s' "$name" "skipped (GPU_CHECK_SKIP)")")
    printf '     skipped (GPU_CHECK_SKIP)\n'
    return
  fi
  set +e
  (set -e; "$fn")
  rc=$?
  set -e
  local result
  case $rc in
    0) result=ok ;;
    3) result=skipped ;;
    *) result="FAILED (exit $rc)"; status=1 ;;
  esac
  summary+=("$(printf '%-16s %-20s %4ss' "$name" "$result" $((SECONDS - started)))")
  printf '     %s\n' "$result"
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && [ -f "$out/$log" ]; then
    printf '     last lines of %s:\n' "$out/$log"
    tail -n 15 "$out/$log" | sed 's/^/       | /'
  fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && [ -n "$critical" ]; then finish; fi
}

finish() {
  {
    echo "gpu-check summary (gpu present: $has_gpu, build: $build, logs: $out)"
    printf '  %s\n' "${summary[@]}"
    if [ "$status" -eq 0 ]; then echo "result: PASS"; else echo "result: FAIL"; fi
  } | tee "$out/summary.txt"
  exit "$status"
}

run_step environment step_environment environment.txt
run_step configure step_configure configure.log critical
run_step build step_build build.log critical
run_step gpu-tests step_gpu_tests ctest-gpu.log
run_step memcheck step_memcheck sanitizer-memcheck.log
run_step racecheck step_racecheck sanitizer-racecheck.log
run_step device-info step_device_info device-info.log
run_step suite step_suite suite.log
run_step benchmarks step_benchmarks benchmarks.log
run_step peer step_peer peer.log
run_step python step_python python.log
finish
