// The device API of <anatomy/cuda.h> in a library built without CUDA (-DANATOMY_CUDA=OFF): no
// device exists, and each function that needs one throws NotImplementedError naming itself. The
// CUDA build compiles backends/cuda/ instead of this file (the root CMakeLists.txt picks one), so
// a program includes the same header and links the same names either way.
#include <atomic>

#include "anatomy/core/error.h"
#include "anatomy/core/tensor.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {
namespace {

constexpr const char* kReason = "anatomy was built without CUDA (-DANATOMY_CUDA=OFF)";

[[noreturn]] void built_without_cuda(const char* function) {
  ANATOMY_THROW(NotImplementedError, "cuda::{}: {}, so there is no CUDA device (cuda::is_available() is false)",
                function, kReason);
}

std::atomic<SyncDebugMode> g_sync_debug_mode{SyncDebugMode::Off};

}  // namespace

// ---- devices ----

int device_count() noexcept { return 0; }
bool is_available() noexcept { return false; }
std::string unavailable_reason() { return kReason; }
int driver_version() noexcept { return 0; }
int runtime_version() noexcept { return 0; }
DeviceProperties get_device_properties(int) { built_without_cuda("get_device_properties"); }
int current_device() { built_without_cuda("current_device"); }
void set_device(int) { built_without_cuda("set_device"); }
void synchronize(int) { built_without_cuda("synchronize"); }

// -1 leaves the current device alone in every build, so it needs no device.
DeviceGuard::DeviceGuard(int index) {
  if (index != -1) built_without_cuda("DeviceGuard");
}
DeviceGuard::~DeviceGuard() = default;

// ---- streams ----

void Stream::synchronize() const { built_without_cuda("Stream::synchronize"); }
bool Stream::query() const { built_without_cuda("Stream::query"); }
void Stream::wait(const Event&) const { built_without_cuda("Stream::wait"); }
void Stream::wait_stream(const Stream&) const { built_without_cuda("Stream::wait_stream"); }
int Stream::priority() const { built_without_cuda("Stream::priority"); }

Stream default_stream(int) { built_without_cuda("default_stream"); }
Stream get_stream_from_pool(bool, int) { built_without_cuda("get_stream_from_pool"); }
Stream external_stream(StreamHandle, int) { built_without_cuda("external_stream"); }
Stream current_stream(int) { built_without_cuda("current_stream"); }
bool default_streams_current() noexcept { return true; }
void set_current_stream(const Stream&) { built_without_cuda("set_current_stream"); }
StreamGuard::StreamGuard(const Stream& stream) : device_guard_(-1), original_(stream), current_(stream) {
  built_without_cuda("StreamGuard");
}
StreamGuard::~StreamGuard() = default;

// ---- events ----
// record() throws, so an Event here is never recorded: it has nothing to wait for, as an
// unrecorded event of the CUDA build (query() true, synchronize() and block() do nothing).

void Event::record() { built_without_cuda("Event::record"); }
void Event::record(const Stream&) { built_without_cuda("Event::record"); }
bool Event::query() const { return true; }
void Event::synchronize() const {}
void Event::block(const Stream&) const {}
float Event::elapsed_time(const Event&) const { built_without_cuda("Event::elapsed_time"); }
void Event::release() noexcept {}

// ---- memory ----

MemoryStats memory_stats(int) { built_without_cuda("memory_stats"); }
int64_t memory_allocated(int) { built_without_cuda("memory_allocated"); }
int64_t max_memory_allocated(int) { built_without_cuda("max_memory_allocated"); }
int64_t memory_reserved(int) { built_without_cuda("memory_reserved"); }
int64_t max_memory_reserved(int) { built_without_cuda("max_memory_reserved"); }
void reset_peak_memory_stats(int) { built_without_cuda("reset_peak_memory_stats"); }
std::string memory_summary(int) { built_without_cuda("memory_summary"); }
// Gives back what no device holds: nothing to do, as in a CUDA build before any allocation.
void empty_cache() {}
void record_memory_history(bool, size_t, int) { built_without_cuda("record_memory_history"); }
MemorySnapshot memory_snapshot(int) { built_without_cuda("memory_snapshot"); }
void record_stream(const Tensor&, const Stream&) { built_without_cuda("record_stream"); }
Tensor pin_memory(const Tensor&) { built_without_cuda("pin_memory"); }
// Nothing is page-locked without CUDA.
bool is_pinned(const Tensor&) { return false; }

// ---- graphs ----
// No pool ever exists here (graph_pool_handle throws), so a GraphPool is always none.

GraphPool::GraphPool(const GraphPool&) = default;
GraphPool& GraphPool::operator=(const GraphPool&) = default;
GraphPool::GraphPool(GraphPool&&) noexcept = default;
GraphPool& GraphPool::operator=(GraphPool&&) noexcept = default;
GraphPool::~GraphPool() = default;
void GraphPool::release() noexcept {}
GraphPool graph_pool_handle(int) { built_without_cuda("graph_pool_handle"); }

struct Graph::Impl {};
Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
void Graph::capture_begin(const GraphPool&, CaptureMode) { built_without_cuda("Graph::capture_begin"); }
void Graph::capture_end() { built_without_cuda("Graph::capture_end"); }
void Graph::replay() { built_without_cuda("Graph::replay"); }
void Graph::reset() noexcept {}
bool Graph::is_capturing() const { return false; }
bool Graph::has_graph() const { return false; }
GraphPool Graph::pool() const { return {}; }
Stream Graph::capture_stream() const { return Stream(0, nullptr); }
Stream graph_capture_stream(int) { built_without_cuda("graph_capture_stream"); }
bool is_current_stream_capturing() { return false; }

// ---- NVTX ----
// No tool can attach to a build without CUDA: ranges and marks are nothing.

nvtx::Range::Range(const char*) {}
nvtx::Range::~Range() {}
void nvtx::mark(const char*) {}
void nvtx::set_op_ranges_enabled(bool on) {
  if (on) built_without_cuda("nvtx::set_op_ranges_enabled");
}
bool nvtx::op_ranges_enabled() { return false; }

// ---- sync debug ----
// Kept, so a program sets it the same way in every build; no call waits for a device here.

void set_sync_debug_mode(SyncDebugMode mode) noexcept { g_sync_debug_mode.store(mode, std::memory_order_relaxed); }
SyncDebugMode sync_debug_mode() noexcept { return g_sync_debug_mode.load(std::memory_order_relaxed); }

}  // namespace anatomy::cuda
