// <anatomy/cuda.h>: the CUDA device API, as torch.cuda and c10::cuda offer it: devices, streams,
// events, the caching allocator's memory statistics and snapshots, CUDA graphs, and the sync-debug
// mode.
//
//   #include <anatomy/anatomy.h>
//   #include <anatomy/cuda.h>
//   namespace cuda = anatomy::cuda;
//   if (cuda::is_available()) {
//     cuda::Stream side = cuda::get_stream_from_pool();
//     cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
//     {
//       cuda::StreamGuard guard(side);       // ops below are queued on `side`
//       start.record();
//       c = matmul(a, b);
//       stop.record();
//     }
//     stop.synchronize();
//     float ms = start.elapsed_time(stop);
//     int64_t bytes = cuda::memory_allocated();
//   }
//
// This header includes no CUDA header and every program compiles against it, whether or not the
// library was built with CUDA (docs/cuda.md, "The device API"):
//   - a CUDA build (backends/cuda/ implements it) on a machine without a GPU: is_available() is
//     false, device_count() is 0, and what needs a device throws DeviceError "<function>: CUDA is
//     not available: ...";
//   - a build without CUDA (-DANATOMY_CUDA=OFF; backends/no_cuda/ implements it): the same, with
//     NotImplementedError "<function>: anatomy was built without CUDA ...".
// Stream and Event hand out CUDA's own handles for interop (StreamHandle is cudaStream_t,
// EventHandle is cudaEvent_t) through CUDA's incomplete struct types, so that a program with the
// CUDA headers passes them to the runtime as they are and one without them never needs them.
//
// The precision switches of the CUDA matrix products (TF32, reduced-precision reductions) are in
// <anatomy/anatomy.h> (core/precision_switches.h). The engine's own code includes this header
// for these declarations; what only the backend needs (raw handles of the current stream, the
// allocator's private pools, ...) is in backends/cuda/.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/alloc/memory_stats.h"
#include "anatomy/alloc/snapshot_html.h"
#include "anatomy/core/device.h"

struct CUstream_st;  // CUDA's stream, opaque here: cudaStream_t is CUstream_st*
struct CUevent_st;   // CUDA's event, opaque here: cudaEvent_t is CUevent_st*

namespace anatomy {
class Tensor;
}  // namespace anatomy

namespace anatomy::cuda {

// ---- devices ----

// The number of visible CUDA devices, queried once per process (as the runtime reads
// CUDA_VISIBLE_DEVICES once). 0, never an error, when there is no driver, no GPU or no CUDA in
// the build.
int device_count() noexcept;
bool is_available() noexcept;
// Why device_count() is 0 ("cudaGetDeviceCount: <CUDA's message>", or that the library was built
// without CUDA); empty when devices exist.
std::string unavailable_reason();

// The driver's and the runtime's CUDA versions as 1000 * major + 10 * minor (13000 is 13.0);
// 0 when there is no driver (or no CUDA in the build).
int driver_version() noexcept;
int runtime_version() noexcept;

struct DeviceProperties {
  int index = 0;
  std::string name;              // "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;      // compute capability (9.0 for Hopper)
  int multiprocessor_count = 0;  // SMs
  uint64_t total_memory = 0;     // global memory, bytes
  int l2_cache_size = 0;         // bytes
  int memory_clock_khz = 0;      // peak memory clock
  int memory_bus_width = 0;      // bits
  int clock_khz = 0;             // peak SM clock
  int driver_version = 0;        // as driver_version()
  int runtime_version = 0;       // as runtime_version()
};
// Throws DeviceError when `index` is not a visible device.
DeviceProperties get_device_properties(int index);

// The calling thread's current device, and changing it (DeviceError when out of range).
int current_device();
void set_device(int index);
// Waits until all work queued on a device (the current one for -1) is done.
void synchronize(int index = -1);

// Makes `index` the current device for a scope and restores the previous one on exit. -1
// leaves the current device alone (and touches no CUDA API), so a guard over a "cuda" device
// costs nothing. Inside a guard, current_device() needs no runtime call (Note [The device a
// DeviceGuard set], backends/cuda/runtime/device.cpp).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  explicit DeviceGuard(Device device) : DeviceGuard(static_cast<int>(device.index())) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  // The device that was current when the guard was made (-1 when the guard did nothing).
  int original_device() const { return original_; }

 private:
  int original_ = -1;
  int outer_guard_device_ = -1;  // what an enclosing guard had made current (Note [The device a DeviceGuard set])
  bool changed_ = false;
  bool active_ = false;
};

// ---- streams ----

// CUDA's cudaStream_t and cudaEvent_t, for passing to CUDA libraries (never destroy them).
using StreamHandle = CUstream_st*;
using EventHandle = CUevent_st*;

// CUDA's legacy default stream: the value of cudaStreamLegacy in cuda_runtime_api.h (the CUDA
// build's tests check that the two agree).
inline StreamHandle legacy_stream_handle() noexcept { return reinterpret_cast<StreamHandle>(uintptr_t{1}); }

class Event;

// A CUDA stream of one device, as a value (device index + handle), like c10::cuda::CUDAStream.
// A Stream owns nothing: copying it copies the handle, and no Stream ever destroys one. As in
// PyTorch:
// - the default stream is CUDA's legacy default stream, which waits for all work on blocking
//   streams and makes them wait for it;
// - the pool (get_stream_from_pool) holds 32 normal and 32 high-priority streams per device,
//   created on the device's first request, handed out round-robin and never destroyed. They are
//   non-blocking, so they run beside the default stream instead of in its queue;
// - external_stream wraps a stream the user created (and must keep alive while it is used).
class Stream {
 public:
  // Wraps `handle`, a stream of CUDA device `device`, without checks or ownership (nullptr, CUDA's
  // 0 stream, stands for the legacy default stream). Touches no CUDA API.
  Stream(int device, StreamHandle handle) : device_(device), handle_(handle ? handle : legacy_stream_handle()) {}

  int device_index() const { return device_; }
  Device device() const { return Device(DeviceType::CUDA, static_cast<Device::Index>(device_)); }
  // The cudaStream_t, for CUDA libraries and kernels of one's own.
  StreamHandle handle() const { return handle_; }
  // So a Stream passes where the runtime takes a cudaStream_t.
  operator StreamHandle() const { return handle_; }  // NOLINT(google-explicit-constructor)
  bool is_default() const { return handle_ == legacy_stream_handle(); }

  // Waits until all work queued on the stream is done.
  void synchronize() const;
  // True when all work queued on the stream is done. Never blocks.
  bool query() const;
  // Work queued on this stream from now on waits until `event` has completed (nothing when the
  // event was never recorded). The host does not wait.
  void wait(const Event& event) const;
  // Work queued on this stream from now on waits for the work queued on `other` so far (an event
  // recorded on `other` and waited on here). Nothing when `other` is this stream.
  void wait_stream(const Stream& other) const;
  // CUDA's priority of the stream: lower numbers run first (0 is the normal priority).
  int priority() const;

  // "cuda:0 default stream" or "cuda:0 stream 0x5581c2a0f2d0". Touches no CUDA API.
  std::string str() const {
    return is_default() ? fmt::format("cuda:{} default stream", device_)
                        : fmt::format("cuda:{} stream {}", device_, fmt::ptr(handle_));
  }

  bool operator==(const Stream& other) const = default;

 private:
  int device_;
  StreamHandle handle_;
};

inline std::ostream& operator<<(std::ostream& os, const Stream& stream) { return os << stream.str(); }

// The default stream of `device` (-1: the current device). Throws DeviceError when the device
// does not exist.
Stream default_stream(int device = -1);
// The next stream of `device`'s pool (-1: the current device), normal or high priority (as
// torch.cuda.Stream(priority=-1)); the first request on a device creates its pool.
Stream get_stream_from_pool(bool high_priority = false, int device = -1);
// A stream the caller created (cudaStreamCreate...), on `device` (-1: the current device), which
// must be the device it was created on. anatomy never destroys it.
Stream external_stream(StreamHandle handle, int device = -1);

// The calling thread's current stream of `device` (-1: the current device): the stream every op
// on that device is queued on. Each thread starts with the default stream on every device (a new
// std::thread does not inherit its parent's streams, as in PyTorch). Throws DeviceError when the
// device does not exist.
Stream current_stream(int device);
// Whether the calling thread's current stream is the default stream on every device (always true
// without CUDA): a caller that would otherwise ask for one device's stream (a DLPack consumer
// naming its stream to a producer) can then say "the default stream" without asking the device.
bool default_streams_current() noexcept;
// Makes `stream` the calling thread's current stream of its device; the current device stays.
void set_current_stream(const Stream& stream);

// Makes a stream current for a scope, as PyTorch's CUDAStreamGuard: its device becomes the
// current device and it becomes that device's current stream; on exit both are restored.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  // The stream of the guarded device that was current before the guard.
  const Stream& original_stream() const { return original_; }
  const Stream& current() const { return current_; }

 private:
  DeviceGuard device_guard_;
  Stream original_;
  Stream current_;
};

// ---- events ----

// A marker in a stream's queue, to wait on (host or other streams) and to time device work with.
// It owns its cudaEvent_t: movable, not copyable, destroyed with the Event.
//
// As PyTorch's CUDAEvent, the cudaEvent_t is created on the first record(), on the device of
// that stream; every later record must be on a stream of the same device. Before its first
// record an event has nothing to wait for: query() is true, synchronize() and block() do
// nothing. Events are never interprocess.
class Event {
 public:
  // enable_timing: elapsed_time() works (timing costs a little on every record, so it is off by
  // default). blocking: synchronize() sleeps the host thread instead of spinning.
  explicit Event(bool enable_timing = false, bool blocking = false)
      : enable_timing_(enable_timing), blocking_(blocking) {}
  ~Event() { release(); }
  Event(Event&& other) noexcept
      : enable_timing_(other.enable_timing_),
        blocking_(other.blocking_),
        device_(std::exchange(other.device_, -1)),
        event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      release();
      enable_timing_ = other.enable_timing_;
      blocking_ = other.blocking_;
      device_ = std::exchange(other.device_, -1);
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Marks the work queued on `stream` so far (the current stream of the current device when
  // omitted); query, synchronize, block and elapsed_time refer to the latest record.
  void record();
  void record(const Stream& stream);
  // True once the work before the latest record is done (or when never recorded). Never blocks.
  bool query() const;
  // The host waits until the work before the latest record is done.
  void synchronize() const;
  // Work queued on `stream` from now on waits for this event; the host does not wait.
  void block(const Stream& stream) const;
  // Milliseconds of device time between this event's record and `end`'s. Throws DeviceError
  // when either event lacks timing or was never recorded, or when either has not completed yet
  // (synchronize `end` first: this never waits).
  float elapsed_time(const Event& end) const;

  bool enable_timing() const { return enable_timing_; }
  bool blocking() const { return blocking_; }
  bool was_recorded() const { return event_ != nullptr; }
  // The device of the stream it was recorded on; -1 before the first record.
  int device_index() const { return device_; }
  // The cudaEvent_t (nullptr before the first record), for CUDA libraries.
  EventHandle handle() const { return event_; }

 private:
  // Destroys the cudaEvent_t, if any; never throws (a destructor calls it).
  void release() noexcept;

  bool enable_timing_;
  bool blocking_;
  int device_ = -1;
  EventHandle event_ = nullptr;
};

// ---- memory ----
//
// The device allocator's counters and state, as torch.cuda's functions of the same names, for
// `device` (-1: the current device). They work with either allocator backend of
// ANATOMY_CUDA_ALLOC_CONF (the caching allocator, or backend:cudaMallocAsync); docs/allocator.md
// explains the policy, every setting and every counter.

using alloc::MemorySnapshot;
using alloc::MemoryStats;

MemoryStats memory_stats(int device = -1);
int64_t memory_allocated(int device = -1);      // bytes of the blocks handed out
int64_t max_memory_allocated(int device = -1);  // its peak since the start or the last reset
int64_t memory_reserved(int device = -1);       // bytes held from the driver
int64_t max_memory_reserved(int device = -1);   // its peak since the start or the last reset
// The peaks above (and every peak of memory_stats) back to the current values.
void reset_peak_memory_stats(int device = -1);
// memory_stats(device) as a table for people, like torch.cuda.memory_summary().
std::string memory_summary(int device = -1);
// Gives every cached segment with no block in use back to the driver, on every device that has
// an allocator (backend:cudaMallocAsync: trims the device's memory pool). Waits for the devices.
void empty_cache();

// Starts recording each allocation, free and segment event (with the operator that caused it)
// in a ring of the last `max_entries`, or stops and drops them, as
// torch.cuda.memory._record_memory_history.
void record_memory_history(bool enabled, size_t max_entries = 100000, int device = -1);
// The allocator's segments, blocks and recorded history now. alloc::to_json(snapshot) writes
// it in the shape of torch.cuda.memory._snapshot(); alloc::snapshot_to_html(snapshot) and
// alloc::snapshot_to_svg(snapshot) draw it (alloc/memory_snapshot.h, alloc/snapshot_html.h).
MemorySnapshot memory_snapshot(int device = -1);

// `tensor`'s memory is also used by work queued on `stream` (another stream than the one it was
// allocated on): freeing the tensor does not let the allocator hand that memory out again before
// the work is done, as PyTorch's Tensor.record_stream. Throws DeviceError when `tensor` is not a
// CUDA tensor or `stream` is another device's.
void record_stream(const Tensor& tensor, const Stream& stream);

// A copy of CPU tensor `t` in page-locked host memory, from which copies to the device run
// asynchronously (non_blocking=true), as Tensor.pin_memory(). Throws ValueError for a tensor
// that is not on the CPU, DeviceError where no GPU is.
Tensor pin_memory(const Tensor& t);
// Whether t's memory is page-locked host memory (from pin_memory or any cudaHostAlloc).
bool is_pinned(const Tensor& t);

// ---- graphs ----
//
// CUDA graphs (docs/cuda-graphs.md), as torch.cuda.CUDAGraph and torch.cuda.graph: the work a
// stretch of code queues on a stream is captured once, not run, and replayed later with one
// launch, which saves the host's per-kernel cost.
//
//   cuda::Graph graph;
//   {
//     cuda::GraphCapture capture(graph);  // a side stream becomes current; the capture begins
//     y = (x * w).relu();                 // recorded, not run; y comes from the graph's pool
//   }                                     // the capture ends and the graph is instantiated
//   x.copy_(next_batch);                  // inputs and outputs are static: same memory
//   graph.replay();                       // y now holds the result for next_batch
//
// Allocations made while a graph captures come from a private pool of the caching allocator that
// lives as long as the graph (or any graph or GraphPool sharing it): a replay writes to the
// addresses the capture saw, so that memory is never handed to anyone else. Work that cannot be
// captured (item(), printing, copies to or from pageable host memory, synchronize(), event
// queries, a first cuBLAS product on the capture stream) throws DeviceError naming the call, and
// the capture is ended cleanly: run it once on the capture stream before capturing (a warm-up).

// CUDA's cudaStreamCaptureMode: which other calls may run while a capture is underway. Global:
// no thread may make an unsafe call (anything that could make the host wait on captured work);
// ThreadLocal: the capturing thread may not; Relaxed: nobody is stopped.
enum class CaptureMode { Global, ThreadLocal, Relaxed };

// A private pool of a device's caching allocator, kept alive by every GraphPool and Graph that
// refers to it (copying a GraphPool is one more user). Graphs captured with the same pool share
// its memory: capture them in the order they will be replayed. The default GraphPool is none (a
// capture makes a pool of its own).
class GraphPool {
 public:
  GraphPool() = default;
  GraphPool(const GraphPool& other);
  GraphPool& operator=(const GraphPool& other);
  GraphPool(GraphPool&& other) noexcept;
  GraphPool& operator=(GraphPool&& other) noexcept;
  ~GraphPool();

  bool is_none() const { return id_ == 0; }
  int device_index() const { return device_; }
  uint64_t id() const { return id_; }  // the allocator's pool id (memory_summary's "private pool <id>")

 private:
  friend class Graph;
  friend GraphPool graph_pool_handle(int device);
  GraphPool(int device, uint64_t id) : device_(device), id_(id) {}  // adopts one use of the pool
  void release() noexcept;

  int device_ = -1;
  uint64_t id_ = 0;
};

// A new private pool on `device` (-1: the current device) for graphs to share, as
// torch.cuda.graph_pool_handle().
GraphPool graph_pool_handle(int device = -1);

// One CUDA graph: captured from the calling thread's current stream between capture_begin and
// capture_end, then replayed any number of times. Movable, not copyable.
class Graph {
 public:
  Graph();
  ~Graph();  // reset()
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Begins capturing the calling thread's current stream of the current device, which must not
  // be the default stream (CUDA cannot capture the legacy default stream: DeviceError). The
  // capture's allocations (on that stream, and on streams it forks into the capture) come from
  // `pool`, or from a new pool when `pool` is none. DeviceError when this graph is capturing or
  // holds a graph (reset() first), or when the stream is already capturing.
  void capture_begin(const GraphPool& pool = {}, CaptureMode mode = CaptureMode::Global);
  // Ends the capture (from the thread and on the stream that began it) and instantiates the
  // graph. DeviceError when nothing is being captured, or when CUDA invalidated the capture (an
  // uncapturable call the engine could not see): the capture is over and the graph is empty.
  void capture_end();
  // Launches the graph on the calling thread's current stream of the graph's device.
  void replay();
  // Destroys the graph and gives up its pool (the memory stays while tensors or other users hold
  // it); the Graph can capture again. Ends a capture underway first.
  void reset() noexcept;

  bool is_capturing() const;
  bool has_graph() const;  // captured and instantiated, ready to replay
  // The pool of the capture or the graph (none before the first capture_begin and after reset).
  GraphPool pool() const;
  // The stream the graph was captured from (the default stream before a capture).
  Stream capture_stream() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The stream GraphCapture captures on unless told otherwise: one per device, made on the first
// request (as torch.cuda.graph's default capture stream). Run a warm-up on it before capturing,
// so that cuBLAS's workspace for the stream exists.
Stream graph_capture_stream(int device = -1);

// A capture for a scope, as torch.cuda.graph: makes `stream` (graph_capture_stream() when
// omitted) current, begins the capture, and on exit ends it and restores the stream. When the
// scope is left by an exception the capture is abandoned (the graph stays empty); otherwise the
// destructor ends it and throws what capture_end throws.
//
// Inline on purpose: whether an exception is leaving the scope is asked of the C++ runtime of
// the code around it (std::uncaught_exceptions()), which is the one that threw. A libanatomy
// linked with a static copy of libstdc++ keeps counts of its own that the caller's throws and
// catches never move (on a toolchain that links libstdc++.a, docs/interop.md).
class GraphCapture {
 public:
  explicit GraphCapture(Graph& graph, const GraphPool& pool = {}, CaptureMode mode = CaptureMode::Global)
      : GraphCapture(graph, graph_capture_stream(), pool, mode) {}
  GraphCapture(Graph& graph, const Stream& stream, const GraphPool& pool = {}, CaptureMode mode = CaptureMode::Global)
      : graph_(graph), guard_(stream), uncaught_(std::uncaught_exceptions()) {
    graph_.capture_begin(pool, mode);
  }
  ~GraphCapture() noexcept(false) {
    if (std::uncaught_exceptions() > uncaught_) {
      graph_.reset();  // leaving by an exception: the capture is abandoned
      return;
    }
    graph_.capture_end();
  }
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

 private:
  Graph& graph_;
  StreamGuard guard_;
  int uncaught_;
};

// Whether the calling thread's current stream of the current device is being captured.
bool is_current_stream_capturing();

// ---- NVTX ----
//
// NVTX ranges: named spans of host time that Nsight Systems and Nsight Compute show on their
// timelines next to the kernels launched inside them (profiler::Range emits one too).
//
//   { cuda::nvtx::Range r("forward"); y = model(x); }     // a user range
//   cuda::nvtx::set_op_ranges_enabled(true);              // every dispatched operator in a range
//                                                         // named after it ("aten::addmm")
//
// NVTX calls cost almost nothing when no tool is attached (NVTX v3 is header-only and finds the
// tool's injection library at the first call). Op ranges are off by default; while on, every
// dispatch takes the dispatcher's traced path (dispatch/current_op.h), a few hundred
// nanoseconds per operator. Nested operators (an addmm's empty, a linear's t) get nested ranges.
// In a build without CUDA, ranges and marks do nothing and op ranges cannot be turned on.
namespace nvtx {

class Range {
 public:
  explicit Range(const char* name);
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

// An instant marker on the timeline.
void mark(const char* message);

void set_op_ranges_enabled(bool on);
bool op_ranges_enabled();

}  // namespace nvtx

// ---- sync debug ----

// Every call that makes the host wait for the device reports itself, so a hidden
// synchronization in a training loop is found by running it once with the mode on, as
// torch.cuda.set_sync_debug_mode. Warn prints one line on stderr per wait; Error throws
// DeviceError before waiting. Process-wide; Off by default.
enum class SyncDebugMode { Off, Warn, Error };
void set_sync_debug_mode(SyncDebugMode mode) noexcept;
SyncDebugMode sync_debug_mode() noexcept;

}  // namespace anatomy::cuda
