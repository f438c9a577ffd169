// ANATOMY_CUDA_ALLOC_CONF parsing: every key, both roundup forms, the environment fallback to
// PYTORCH_CUDA_ALLOC_CONF, and errors that name the key and what is allowed; backend:cudaMallocAsync
// is accepted, and refused by the (native) caching allocator itself.
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>

#include "../core/test_util.h"
#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/anatomy.h"
#if ANATOMY_WITH_CUDA
#include "anatomy/backends/cuda/memory/async_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/runtime/device.h"
#endif

using namespace anatomy::alloc;

namespace {

// Sets (or, with nullptr, unsets) an environment variable for one scope.
struct EnvGuard {
  std::string name;
  std::string old;
  bool had;
  EnvGuard(const char* n, const char* value) : name(n) {
    const char* o = std::getenv(n);
    had = o != nullptr;
    if (had) old = o;
    if (value) setenv(n, value, 1);
    else unsetenv(n);
  }
  ~EnvGuard() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("alloc conf: defaults and an empty string") {
  AllocConf c = parse_alloc_conf("");
  CHECK(c.backend == AllocBackend::Native);
  CHECK(c.max_split_size == std::numeric_limits<size_t>::max());
  CHECK(c.max_non_split_rounding_size == 20 * kMB);
  CHECK(c.divisions_for(1200 * kMB) == 0);
  CHECK(c.garbage_collection_threshold == 0.0);
  CHECK_FALSE(c.expandable_segments);
  CHECK(to_string(c).empty());
}

TEST_CASE("alloc conf: every key parses") {
  AllocConf c = parse_alloc_conf(
      "backend:cudaMallocAsync, max_split_size_mb:128,max_non_split_rounding_mb:64,"
      "roundup_power2_divisions:4,garbage_collection_threshold:0.6,expandable_segments:True,"
      "per_process_memory_fraction:0.5,release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:true,"
      "release_before_new_peak:False");
  CHECK(c.backend == AllocBackend::CudaMallocAsync);
  CHECK(c.max_split_size == 128 * kMB);
  CHECK(c.max_non_split_rounding_size == 64 * kMB);
  CHECK(c.divisions_for(1) == 4);
  CHECK(c.divisions_for(100 * 1024 * kMB) == 4);
  CHECK(c.garbage_collection_threshold == doctest::Approx(0.6));
  CHECK(c.expandable_segments);
  CHECK(c.per_process_memory_fraction == doctest::Approx(0.5));
  CHECK(c.release_lock_on_cudamalloc);
  CHECK(c.pinned_use_cuda_host_register);
  CHECK_FALSE(c.release_before_new_peak);
  CHECK(AllocConf{}.release_before_new_peak);  // on by default
  // Written back and read again, the settings are the same.
  AllocConf again = parse_alloc_conf(to_string(c));
  CHECK(to_string(again) == to_string(c));
  CHECK(again.max_split_size == c.max_split_size);
}

TEST_CASE("alloc conf: roundup_power2_divisions interval form") {
  AllocConf c = parse_alloc_conf("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
  // The first interval's value also covers everything smaller; `>` everything above the last.
  CHECK(c.divisions_for(1 * kMB) == 1);
  CHECK(c.divisions_for(100 * kMB) == 1);
  CHECK(c.divisions_for(300 * kMB) == 1);
  CHECK(c.divisions_for(600 * kMB) == 2);
  CHECK(c.divisions_for(1200 * kMB) == 4);
  CHECK(c.divisions_for(2048 * kMB) == 8);
  CHECK(c.divisions_for(size_t{1} << 45) == 8);
  CHECK(parse_alloc_conf(to_string(c)).roundup_power2_divisions == c.roundup_power2_divisions);
}

TEST_CASE("alloc conf: roundup_power2_divisions rounds 1200 MB to 1280 MB with 4 divisions") {
  AllocConf c = parse_alloc_conf("roundup_power2_divisions:4");
  CHECK(round_size(1200 * kMB, c) == 1280 * kMB);
  CHECK(round_size(1024 * kMB, c) == 1024 * kMB);  // a power of two stays
  CHECK(round_size(1025 * kMB, c) == 1280 * kMB);
  CHECK(round_size(1500, c) == 1536);  // below 512 * divisions: plain 512-byte rounding
  CHECK(round_size(1200 * kMB, AllocConf{}) == 1200 * kMB);
  AllocConf by_interval = parse_alloc_conf("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
  CHECK(round_size(1200 * kMB, by_interval) == 1280 * kMB);
  CHECK(round_size(600 * kMB, by_interval) == 768 * kMB);
  CHECK(round_size(300 * kMB, by_interval) == 300 * kMB);
}

TEST_CASE("alloc conf: unknown keys and bad values name the key and what is allowed") {
  EXPECT_ERROR(ValueError, parse_alloc_conf("max_split_mb:100"), "unknown key 'max_split_mb'", "max_split_size_mb",
               "roundup_power2_divisions");
  EXPECT_ERROR(ValueError, parse_alloc_conf("max_split_size_mb:20"), "max_split_size_mb", "greater than 20");
  EXPECT_ERROR(ValueError, parse_alloc_conf("max_split_size_mb:abc"), "'abc'", "max_split_size_mb");
  EXPECT_ERROR(ValueError, parse_alloc_conf("max_split_size_mb:-5"), "max_split_size_mb");
  EXPECT_ERROR(ValueError, parse_alloc_conf("roundup_power2_divisions:3"), "roundup_power2_divisions", "power of two");
  EXPECT_ERROR(ValueError, parse_alloc_conf("roundup_power2_divisions:[300:2]"), "roundup_power2_divisions");
  EXPECT_ERROR(ValueError, parse_alloc_conf("roundup_power2_divisions:[256:1,512]"), "roundup_power2_divisions");
  EXPECT_ERROR(ValueError, parse_alloc_conf("garbage_collection_threshold:1.5"), "garbage_collection_threshold",
               "0 < t < 1");
  EXPECT_ERROR(ValueError, parse_alloc_conf("expandable_segments:yes"), "expandable_segments", "True | False");
  EXPECT_ERROR(ValueError, parse_alloc_conf("backend:cuda"), "backend", "native | cudaMallocAsync");
  EXPECT_ERROR(ValueError, parse_alloc_conf("per_process_memory_fraction:0"), "per_process_memory_fraction");
  EXPECT_ERROR(ValueError, parse_alloc_conf("release_lock_on_cudamalloc"), "not key:value");
}

TEST_CASE("alloc conf: ANATOMY_CUDA_ALLOC_CONF first, then PYTORCH_CUDA_ALLOC_CONF") {
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", nullptr);
    EnvGuard theirs("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64");
    CHECK(alloc_conf_from_env().max_split_size == 64 * kMB);
  }
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", "max_split_size_mb:32");
    EnvGuard theirs("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64");
    CHECK(alloc_conf_from_env().max_split_size == 32 * kMB);
  }
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", "bogus:1");
    EXPECT_ERROR(ValueError, alloc_conf_from_env(), "ANATOMY_CUDA_ALLOC_CONF", "bogus");
  }
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", nullptr);
    EnvGuard theirs("PYTORCH_CUDA_ALLOC_CONF", nullptr);
    CHECK(to_string(alloc_conf_from_env()).empty());
  }
}

TEST_CASE("alloc conf: ANATOMY_NO_CUDA_MEMORY_CACHING turns caching off") {
  EnvGuard conf("ANATOMY_CUDA_ALLOC_CONF", "max_split_size_mb:64");
  {
    EnvGuard off("ANATOMY_NO_CUDA_MEMORY_CACHING", "1");
    AllocConf c = alloc_conf_from_env();
    CHECK_FALSE(c.caching);
    CHECK(c.max_split_size == 64 * kMB);
  }
  {
    EnvGuard off("ANATOMY_NO_CUDA_MEMORY_CACHING", "0");
    EnvGuard theirs("PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
    CHECK(alloc_conf_from_env().caching);  // ours wins
  }
  {
    EnvGuard off("ANATOMY_NO_CUDA_MEMORY_CACHING", nullptr);
    EnvGuard theirs("PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
    CHECK_FALSE(alloc_conf_from_env().caching);
  }
}

// backend:cudaMallocAsync is served by the CUDA device allocator with its stream-ordered allocator
// (backends/cuda/memory/async_allocator.h); a caching allocator is the native backend, so it refuses it.
TEST_CASE("alloc conf: the caching allocator is the native backend and refuses backend:cudaMallocAsync") {
  SimulatedProvider provider(64 * kMB);
  CachingAllocator a(provider, AllocConf{});
  EXPECT_ERROR(NotImplementedError, a.set_conf(parse_alloc_conf("backend:cudaMallocAsync")), "cudaMallocAsync");
  CHECK(a.conf().backend == AllocBackend::Native);
  // Parsed-only settings are accepted and kept.
  a.set_conf(parse_alloc_conf("release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:True"));
  CHECK(a.conf().release_lock_on_cudamalloc);
}

TEST_CASE("alloc conf: backend:cudaMallocAsync is accepted from either environment variable") {
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", "backend:cudaMallocAsync");
    const AllocConf c = alloc_conf_from_env();
    CHECK(c.backend == AllocBackend::CudaMallocAsync);
    CHECK(to_string(c) == "backend:cudaMallocAsync");
    CHECK(parse_alloc_conf(to_string(c)).backend == AllocBackend::CudaMallocAsync);
  }
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", nullptr);
    EnvGuard theirs("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync,per_process_memory_fraction:0.5");
    const AllocConf c = alloc_conf_from_env();
    CHECK(c.backend == AllocBackend::CudaMallocAsync);
    CHECK(c.per_process_memory_fraction == 0.5);
  }
  {
    EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", "backend:native");
    EnvGuard theirs("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync");
    CHECK(alloc_conf_from_env().backend == AllocBackend::Native);  // ours wins
  }
}

// Where no GPU is, the setting changes nothing about the error a CUDA request gets.
TEST_CASE("alloc conf: backend:cudaMallocAsync without a GPU is a DeviceError, not a crash") {
#if ANATOMY_WITH_CUDA
  if (anatomy::cuda::device_count() > 0) {
    std::cout << "[anatomy-skip] a CUDA device is present; the GPU tests cover it" << std::endl;
    return;
  }
  EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", "backend:cudaMallocAsync");
  CHECK_THROWS_AS(anatomy::cuda::AsyncAllocator(0), anatomy::DeviceError);
  CHECK_THROWS_AS(anatomy::cuda::allocator_backend(), anatomy::DeviceError);
  CHECK_THROWS_AS(anatomy::zeros({2}, anatomy::Device("cuda")), anatomy::DeviceError);
  CHECK(anatomy::to_string(anatomy::ones({2})) == "tensor([1., 1.])");
#else
  EnvGuard ours("ANATOMY_CUDA_ALLOC_CONF", "backend:cudaMallocAsync");
  CHECK_THROWS_AS(anatomy::zeros({2}, anatomy::Device("cuda")), anatomy::Error);
#endif
}
