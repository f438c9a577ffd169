// Device queries over the CUDA runtime (see device.h).
#include "anatomy/backends/cuda/runtime/device.h"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/driver_api.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/backends/cuda/runtime/sync_debug.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

struct DeviceCount {
  int count = 0;
  std::string reason;  // why count is 0
};

// cudaGetDeviceCount is the one call that may fail on a machine without a GPU (no driver:
// cudaErrorInsufficientDriver; a driver but no device: cudaErrorNoDevice). Its answer cannot
// change during the process, so it is asked once.
const DeviceCount& device_count_once() {
  static const DeviceCount result = [] {
    DeviceCount r;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // not the next launch check's problem
      r.reason = fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(err));
    } else if (n == 0) {
      r.reason = "cudaGetDeviceCount: no device is visible (check CUDA_VISIBLE_DEVICES)";
    } else {
      r.count = n;
    }
    return r;
  }();
  return result;
}

void check_index(int index, const char* op) {
  if (index >= 0 && index < device_count()) return;  // the hot path: one read of the cached count
  check_available(op);
  ANATOMY_CHECK(index >= 0 && index < device_count(), DeviceError,
                "{}: CUDA device index {} is out of range: {} device{} visible (cuda:0 to cuda:{})", op, index,
                device_count(), device_count() == 1 ? " is" : "s are", device_count() - 1);
}

int attribute(cudaDeviceAttr attr, int index) {
  int value = 0;
  ANATOMY_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, index));
  return value;
}

}  // namespace

int device_count() noexcept {
  try {
    return device_count_once().count;
  } catch (...) {  // formatting the reason could only fail on memory exhaustion
    return 0;
  }
}

bool is_available() noexcept { return device_count() > 0; }

std::string unavailable_reason() { return device_count_once().reason; }

void check_available(const char* op) {
  ANATOMY_CHECK(is_available(), DeviceError, "{}: CUDA is not available: no CUDA device was found ({})", op,
                unavailable_reason());
}

int resolve_device_index(Device device, const char* op) {
  ANATOMY_CHECK(device.is_cuda(), DeviceError, "{}: expected a CUDA device, got '{}'", op, device.str());
  check_available(op);
  int index = device.has_index() ? device.index() : current_device();
  check_index(index, op);
  return index;
}

int resolve_device_index(int index, const char* op) {
  if (index < 0) {
    check_available(op);
    index = current_device();
  }
  check_index(index, op);
  return index;
}

int driver_version() noexcept {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

int runtime_version() noexcept {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

DeviceProperties get_device_properties(int index) {
  check_index(index, "get_device_properties");
  cudaDeviceProp prop{};
  ANATOMY_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceProperties p;
  p.index = index;
  p.name = prop.name;
  p.major = prop.major;
  p.minor = prop.minor;
  p.multiprocessor_count = prop.multiProcessorCount;
  p.total_memory = prop.totalGlobalMem;
  p.l2_cache_size = prop.l2CacheSize;
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain.
  p.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, index);
  p.memory_bus_width = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  p.clock_khz = attribute(cudaDevAttrClockRate, index);
  p.driver_version = driver_version();
  p.runtime_version = runtime_version();
  return p;
}

namespace {

// Note [The device a DeviceGuard set]
// Inside a DeviceGuard the current device is the one the guard made current, so current_device()
// answers from this thread-local without asking the runtime: cudaGetDevice costs 40-60 ns, and
// one op asks several times (its guard, the guard of the empty() that makes its result, the
// allocator). Outside every guard (-1) it goes by the thread's current context (Note [The current
// device outside a guard]), so a cudaSetDevice made by the program itself is always seen there.
// set_device() inside a guard keeps the value true; code running inside an op's scope (a custom
// kernel) that switches devices must do it through set_device or a DeviceGuard, not
// cudaSetDevice.
constinit thread_local int t_guard_device = -1;

// Note [The current device outside a guard]
// Outside every guard, the runtime's current device is the device of the thread's current
// context: cudaSetDevice makes that device's primary context current, and a context the program
// pushes itself (cuCtxPushCurrent) decides it too. Reading that context and its id
// (cuCtxGetCurrent, cuCtxGetId) costs less than asking the runtime (cudaGetDevice: 40-60 ns on
// the GPU hosts, docs/perf.md). So the thread remembers the last context it asked the runtime
// about and the device the runtime named for it: while the current context is that one, the
// device is too, and a change of device changes the context, which sends the next call to
// cudaGetDevice again. The context is known by its id, not its handle: a handle can be reused by
// a context made after another was destroyed (cudaDeviceReset), possibly on another device; an
// id never is. A thread with no current context yet (nothing has used CUDA on it) always asks
// the runtime, which then names its default device. With a single visible device none of this
// runs: the answer is that device (the common case, and every op asks).
struct KnownContext {
  unsigned long long id = 0;
  int device = -1;  // -1: none known yet
};
constinit thread_local KnownContext t_known_context;

int device_outside_guards() {
  const DriverApi& api = driver_api();
  CUcontext context = nullptr;
  unsigned long long id = 0;
  // cuCtxGetCurrent gives null, not an error, while the thread has no current context (an error
  // would be reported by compute-sanitizer); only a context has an id to ask for.
  const bool known = api.available && api.cuCtxGetCurrent(&context) == CUDA_SUCCESS && context != nullptr &&
                     api.cuCtxGetId(context, &id) == CUDA_SUCCESS;
  if (known && t_known_context.device >= 0 && id == t_known_context.id) return t_known_context.device;
  int index = 0;
  ANATOMY_CUDA_CHECK(cudaGetDevice(&index));
  if (known) t_known_context = {id, index};
  return index;
}

}  // namespace

int current_device() {
  if (t_guard_device >= 0) return t_guard_device;
  // One visible device is the current device of every thread, whatever the program did
  // (cudaSetDevice can name no other, and any context is that device's): nothing to ask.
  if (device_count() == 1) return 0;
  check_available("current_device");
  return device_outside_guards();
}

void set_device(int index) {
  check_index(index, "set_device");
  ANATOMY_CUDA_CHECK(cudaSetDevice(index));
  if (t_guard_device >= 0) t_guard_device = index;
}

void synchronize(int index) {
  DeviceGuard guard(index);
  check_available("synchronize");
  check_synchronization("cuda::synchronize", "cudaDeviceSynchronize");
  ANATOMY_CUDA_CHECK(cudaDeviceSynchronize());
  raise_pending_index_error(current_device());
}

DeviceGuard::DeviceGuard(int index) {
  if (index < 0) return;
  original_ = current_device();
  if (original_ != index) {
    set_device(index);
    changed_ = true;
  }
  outer_guard_device_ = t_guard_device;
  t_guard_device = index;
  active_ = true;
}

DeviceGuard::~DeviceGuard() {
  if (!active_) return;
  t_guard_device = outer_guard_device_;
  if (!changed_) return;
  // A destructor must not throw; switching back to a device that worked a moment ago fails only
  // when the process is already broken, so say so and go on.
  cudaError_t err = cudaSetDevice(original_);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    std::fprintf(stderr, "anatomy: warning: DeviceGuard could not restore device %d: %s\n", original_,
                 cudaGetErrorString(err));
  }
}

}  // namespace anatomy::cuda
