// GPU tests of the device layer: counts, properties, the current device and its guard.
#include <cuda_runtime_api.h>

#include <thread>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;

TEST_CASE("cuda device: count and availability agree") {
  ANATOMY_REQUIRE_GPU();
  CHECK(cuda::is_available());
  CHECK(cuda::device_count() >= 1);
  CHECK(cuda::unavailable_reason().empty());
  CHECK(cuda::driver_version() >= 12000);
  CHECK(cuda::runtime_version() >= 12000);
}

TEST_CASE("cuda device: properties are sane") {
  ANATOMY_REQUIRE_GPU();
  for (int i = 0; i < cuda::device_count(); ++i) {
    cuda::DeviceProperties p = cuda::get_device_properties(i);
    CAPTURE(i);
    CAPTURE(p.name);
    CHECK(p.index == i);
    CHECK(!p.name.empty());
    CHECK(p.major >= 5);
    CHECK(p.minor >= 0);
    CHECK(p.multiprocessor_count > 0);
    CHECK(p.total_memory > (uint64_t{1} << 30));
    CHECK(p.l2_cache_size > 0);
    CHECK(p.memory_clock_khz > 0);
    CHECK(p.memory_bus_width >= 64);
    CHECK(p.clock_khz > 0);
    CHECK(p.driver_version == cuda::driver_version());
    CHECK(p.runtime_version == cuda::runtime_version());
  }
}

TEST_CASE("cuda device: a bad index is a DeviceError naming the range") {
  ANATOMY_REQUIRE_GPU();
  int n = cuda::device_count();
  CHECK_THROWS_AS(cuda::get_device_properties(n), DeviceError);
  CHECK_THROWS_AS(cuda::get_device_properties(-1), DeviceError);
  CHECK_THROWS_WITH_AS(cuda::set_device(n), doctest::Contains("out of range"), DeviceError);
  if (n < 128) {
    Device missing(DeviceType::CUDA, static_cast<Device::Index>(n));
    CHECK_THROWS_WITH_AS(zeros({2}, missing), doctest::Contains("out of range"), DeviceError);
  }
}

TEST_CASE("cuda device: set_device and DeviceGuard") {
  ANATOMY_REQUIRE_GPU();
  int start = cuda::current_device();
  int last = cuda::device_count() - 1;
  {
    cuda::DeviceGuard guard(last);
    CHECK(guard.original_device() == start);
    CHECK(cuda::current_device() == last);
    {
      cuda::DeviceGuard nothing(-1);  // "cuda": leaves the current device alone
      CHECK(nothing.original_device() == -1);
      CHECK(cuda::current_device() == last);
    }
  }
  CHECK(cuda::current_device() == start);
  cuda::set_device(last);
  CHECK(cuda::current_device() == last);
  cuda::set_device(start);
  CHECK(cuda::current_device() == start);
  cuda::synchronize();
}

// Outside every guard, current_device() goes by the thread's current context and asks the
// runtime only when that changes (Note [The current device outside a guard]): a cudaSetDevice made
// by the program itself, on any thread, must be seen at once, and a thread that has not used CUDA
// yet gets the runtime's default device.
TEST_CASE("cuda device: current_device follows the program's own cudaSetDevice on every thread") {
  ANATOMY_REQUIRE_GPU();
  const int last = cuda::device_count() - 1;
  auto walk = [&](std::vector<int>& seen) {
    int runtime_default = -1;
    REQUIRE(cudaGetDevice(&runtime_default) == cudaSuccess);
    seen.push_back(cuda::current_device() == runtime_default ? 1 : 0);
    for (int pass = 0; pass < 2; ++pass) {
      for (int d : {last, 0, last}) {
        REQUIRE(cudaSetDevice(d) == cudaSuccess);
        seen.push_back(cuda::current_device() == d ? 1 : 0);
        seen.push_back(cuda::current_device() == d ? 1 : 0);  // the remembered answer
      }
    }
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    seen.push_back(cuda::current_device() == 0 ? 1 : 0);
  };
  std::vector<int> here, there;
  walk(here);
  std::thread other([&] { walk(there); });  // a thread with no current context at first
  other.join();
  CHECK(here == std::vector<int>(here.size(), 1));
  CHECK(there == std::vector<int>(there.size(), 1));
  CHECK(there.size() == here.size());
}

TEST_CASE("cuda device: tensors land on the device they name") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = zeros({3}, Device("cuda"));
  CHECK(a.device() == Device(DeviceType::CUDA, static_cast<Device::Index>(cuda::current_device())));
  int last = cuda::device_count() - 1;
  Tensor b = ones({3}, Device(DeviceType::CUDA, static_cast<Device::Index>(last)));
  CHECK(b.device().index() == last);
  CHECK(cuda::current_device() == 0);  // the factory's guard restored it
  CHECK(gpu_test::values_of(b) == std::vector<double>{1, 1, 1});
}
