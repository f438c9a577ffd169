// NVTX as a tool sees it: a profiler::Range is an NVTX range whether or not a profile records it,
// and every dispatched operator is one while cuda::nvtx op ranges are on. The tool is the test's
// NVTX injection library (tests/gpu/nvtx_recorder/), which NVTX loads from NVTX_INJECTION64_PATH
// at the process's first NVTX call, as it loads Nsight Systems'. NVTX is host code: no GPU needed.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/profiler/profiler.h"

using namespace anatomy;

TEST_CASE("cuda nvtx: profiler::Range and operator ranges reach an NVTX tool") {
  // CTest runs each test case in a process of its own, which makes no NVTX call before this line:
  // the variable names the recorder to NVTX's first call, in place of any tool's set outside
  // (compute-sanitizer's, under gpu-check's sanitizer runs).
  setenv("NVTX_INJECTION64_PATH", ANATOMY_NVTX_RECORDER, /*overwrite=*/1);
  { profiler::Range first("first"); }  // NVTX initializes here, loading the tool
  void* recorder = dlopen(ANATOMY_NVTX_RECORDER, RTLD_NOW | RTLD_NOLOAD);
  if (recorder == nullptr) {
    MESSAGE("[anatomy-skip] NVTX was initialized in this process before this test, without the recorder ("
            << ANATOMY_NVTX_RECORDER << "): run the test case alone");
    return;
  }
  const auto log = reinterpret_cast<const char* (*)()>(dlsym(recorder, "anatomy_nvtx_recorder_log"));
  const auto clear = reinterpret_cast<void (*)()>(dlsym(recorder, "anatomy_nvtx_recorder_clear"));
  REQUIRE(static_cast<bool>(log));
  REQUIRE(static_cast<bool>(clear));
  CHECK(std::string(log()) == "+first\n-\n");

  // Ranges nest as NVTX ranges inside a profile and outside one.
  clear();
  const Tensor x = ones({4});
  {
    profiler::Profile p;
    {
      profiler::Range step("step");
      profiler::Range inner("inner");
      (void)(x + 1.0);
    }
    p.stop();
    CHECK(p.events().size() >= 3);  // the two ranges and the add
  }
  { profiler::Range outside("outside"); }
  CHECK(std::string(log()) == "+step\n+inner\n-\n-\n+outside\n-\n");

  // Operator ranges: each call a range named after its operator, inside the user's range,
  // balanced; none once they are off.
  clear();
  cuda::nvtx::set_op_ranges_enabled(true);
  {
    profiler::Range ops("ops");
    (void)(x * 2.0);
  }
  cuda::nvtx::set_op_ranges_enabled(false);
  const std::string ops = log();
  CHECK_MESSAGE(ops.rfind("+ops\n+aten::mul.Tensor\n", 0) == 0, ops);
  CHECK(std::count(ops.begin(), ops.end(), '+') == std::count(ops.begin(), ops.end(), '-'));
  REQUIRE(ops.size() >= 4);
  CHECK_MESSAGE(ops.substr(ops.size() - 4) == "-\n-\n", ops);
  clear();
  (void)(x * 2.0);
  CHECK(std::string(log()).empty());
  dlclose(recorder);  // the RTLD_NOLOAD open's reference; NVTX keeps its own
}
