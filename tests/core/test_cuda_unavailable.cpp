// Asking for a CUDA tensor where there is no GPU: a CUDA build says so with a DeviceError (not a
// crash, not a CUDA error code); a build without the CUDA backend has no CUDA kernels at all.
// A CPU test: it runs everywhere and only asserts where no GPU is present.
#include <doctest/doctest.h>

#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

using namespace anatomy;

TEST_CASE("cuda unavailable: a CUDA tensor without a GPU is a clear error") {
#if ANATOMY_WITH_CUDA
  if (cuda::device_count() > 0) {
    std::cout << "[anatomy-skip] a CUDA device is present; the GPU tests cover it" << std::endl;
    return;
  }
  CHECK_FALSE(cuda::is_available());
  CHECK_FALSE(cuda::unavailable_reason().empty());
  CHECK_THROWS_WITH_AS(zeros({2}, Device("cuda")),
                       doctest::Contains("CUDA is not available: no CUDA device was found (cudaGetDeviceCount: "),
                       DeviceError);
  CHECK_THROWS_AS(empty({2}, Device("cuda:1")), DeviceError);
  CHECK_THROWS_AS(empty_strided({2}, {1}, Device("cuda")), DeviceError);
  CHECK_THROWS_AS(ones({2}).to(Device("cuda")), DeviceError);
  CHECK_THROWS_AS(cuda::current_device(), DeviceError);
  CHECK_THROWS_AS(cuda::set_device(0), DeviceError);
  CHECK_THROWS_AS(cuda::get_device_properties(0), DeviceError);
  CHECK_THROWS_AS(cuda::DeviceGuard(0), DeviceError);
  // Nothing was left half-done: the CPU still works.
  CHECK(to_string(ones({2})) == "tensor([1., 1.])");
#else
  CHECK_THROWS_AS(zeros({2}, Device("cuda")), Error);
#endif
}
