// cuda::Graph and GraphCapture (declared in cuda.h; docs/cuda-graphs.md): capture through
// cudaStreamBeginCapture / cudaStreamEndCapture with the capture's allocations routed to a
// private pool, instantiation, replay, and the clean end of a capture that failed.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>
#include <thread>

#include "anatomy/backends/cuda/graph/launch.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/error.h"
#include "anatomy/core/generator.h"

namespace anatomy::cuda {

struct Graph::Impl {
  int device = -1;
  cudaStream_t stream = nullptr;  // the stream captured from
  GraphPool pool;                 // one use of the pool, while capturing and while a graph is held
  bool capturing = false;
  bool routing = false;  // the pool's route is in force
  uint64_t token = 0;    // the capture registry's entry
  std::thread::id thread;
  cudaGraphExec_t exec = nullptr;
  // Recorded after a replay on another stream than the capture stream: the pool's memory belongs
  // to the capture stream, which waits for it before the pool is given up (reset).
  cudaEvent_t replayed = nullptr;
  bool replayed_elsewhere = false;
  // Note [Random numbers in CUDA graphs] (runtime/capture.h): the capture's counters and the
  // device state its random kernels read; `rng_used` counters per replay once captured.
  CaptureRng rng;
  uint64_t rng_used = 0;

  // Ends the pool's route; never throws (the route exists while `routing`).
  void end_route() noexcept {
    if (!routing) return;
    routing = false;
    try {
      end_allocate_to_pool(alloc::PoolId{pool.id()}, device);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anatomy: warning: ending a CUDA graph's pool route failed: %s\n", e.what());
    }
  }

  // Ends a capture underway without a graph: the capture itself, its partial graph, the route,
  // the registry entry and the pool. Called by reset and by check_not_capturing (capture.h).
  void abandon() noexcept {
    if (!capturing) return;
    DeviceGuard guard(device);
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream, &partial);  // fails on an invalidated capture: cleared below
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    finish_capture();
    pool = GraphPool();
  }

  // What every end of a capture does after cudaStreamEndCapture.
  void finish_capture() noexcept {
    capturing = false;
    unregister_capture(token);
    token = 0;
    end_route();
  }
};

Graph::Graph() : impl_(std::make_unique<Impl>()) {}

Graph::~Graph() {
  if (impl_) reset();
}

Graph::Graph(Graph&& other) noexcept : impl_(std::exchange(other.impl_, std::make_unique<Impl>())) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    reset();
    impl_ = std::exchange(other.impl_, std::make_unique<Impl>());
  }
  return *this;
}

void Graph::capture_begin(const GraphPool& pool, CaptureMode mode) {
  Impl& g = *impl_;
  check_available("Graph::capture_begin");
  ANATOMY_CHECK(!g.capturing, DeviceError, "Graph::capture_begin: this graph is already capturing");
  ANATOMY_CHECK(g.exec == nullptr, DeviceError,
                "Graph::capture_begin: this graph holds a captured graph; reset() it before capturing again");
  const int device = current_device();
  const Stream stream = current_stream(device);
  ANATOMY_CHECK(!stream.is_default(), DeviceError,
                "Graph::capture_begin: {} is the legacy default stream, which CUDA cannot capture; capture on "
                "another stream (GraphCapture uses graph_capture_stream())",
                stream.str());
  ANATOMY_CHECK(pool.is_none() || pool.device_index() == device, DeviceError,
                "Graph::capture_begin: the pool belongs to cuda:{} but the capture is on cuda:{}", pool.device_index(),
                device);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ANATOMY_CUDA_CHECK(cudaStreamIsCapturing(stream.handle(), &status));
  ANATOMY_CHECK(status == cudaStreamCaptureStatusNone, DeviceError,
                "Graph::capture_begin: {} is already being captured", stream.str());

  GraphPool use = pool.is_none() ? graph_pool_handle(device) : pool;
  // The random state's 16 bytes, from the ordinary pools before the capture: kept until reset.
  if (g.rng.device_state == nullptr) {
    g.rng.device_state = static_cast<uint64_t*>(raw_alloc(2 * sizeof(uint64_t), stream_id(stream.handle()), device));
  }
  g.rng.used = 0;
  g.device = device;
  g.stream = stream.handle();
  ANATOMY_CUDA_CHECK(cudaStreamBeginCapture(stream.handle(), to_cuda(mode)));
  unsigned long long id = 0;
  cudaError_t err = cudaStreamGetCaptureInfo(stream.handle(), &status, &id);
  g.pool = std::move(use);
  g.capturing = true;
  g.thread = std::this_thread::get_id();
  g.token = register_capture({g.stream, device, mode, id, &g.rng, [impl = impl_.get()] { impl->abandon(); }});
  if (err != cudaSuccess) {
    g.abandon();
    detail::throw_cuda_error(err, "cudaStreamGetCaptureInfo", __FILE__, __LINE__);
  }
  // The capture's allocations: on any stream that is part of this capture (the capture stream,
  // and streams it forked by waiting on its events), as PyTorch's filter. The filter runs under
  // the allocator's lock; cudaStreamGetCaptureInfo is allowed during any capture.
  try {
    begin_allocate_to_pool(
        alloc::PoolId{g.pool.id()},
        [id](alloc::StreamId s) {
          // Never asked of the legacy default stream: a query of it while a global capture is
          // underway is an implicit synchronization with the capture, which would invalidate it.
          if (s == stream_id(cudaStreamLegacy)) return false;
          cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
          unsigned long long sid = 0;
          return cudaStreamGetCaptureInfo(stream_of(s), &st, &sid) == cudaSuccess &&
                 st == cudaStreamCaptureStatusActive && sid == id;
        },
        device);
    g.routing = true;
  } catch (...) {
    g.abandon();
    throw;
  }
}

void Graph::capture_end() {
  Impl& g = *impl_;
  check_available("Graph::capture_end");
  ANATOMY_CHECK(g.capturing, DeviceError,
                "Graph::capture_end: no capture is underway (it was never begun, already ended, or ended by an "
                "uncapturable call)");
  ANATOMY_CHECK(g.thread == std::this_thread::get_id(), DeviceError,
                "Graph::capture_end: the capture must be ended by the thread that began it");
  DeviceGuard guard(g.device);
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(g.stream, &graph);
  g.finish_capture();
  if (err != cudaSuccess || graph == nullptr) {
    (void)cudaGetLastError();
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    g.pool = GraphPool();
    throw DeviceError(
        fmt::format("Graph::capture_end: CUDA ended the capture on {} without a graph ({}: {}): a call that cannot be "
                    "captured ran during it (docs/cuda-graphs.md, \"What cannot be captured\"); the graph is empty",
                    Stream(g.device, g.stream).str(), cudaGetErrorName(err), cudaGetErrorString(err)));
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);  // the executable graph is what replays
  if (inst != cudaSuccess) {
    (void)cudaGetLastError();
    g.pool = GraphPool();
    detail::throw_cuda_error(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
  g.exec = exec;
  g.rng_used = g.rng.used;
}

void Graph::replay() {
  Impl& g = *impl_;
  check_available("Graph::replay");
  ANATOMY_CHECK(g.exec != nullptr, DeviceError, "Graph::replay: there is no graph to replay{}",
                g.capturing ? " (the capture has not ended)" : "");
  DeviceGuard guard(g.device);
  const cudaStream_t stream = current_stream();
  if (g.rng_used > 0) {  // Note [Random numbers in CUDA graphs]
    Generator& gen = default_generator(DeviceType::CUDA);
    const uint64_t seed = gen.seed(), base = gen.reserve(g.rng_used);
    launch_write_philox_state(g.rng.device_state, seed, base, stream);
  }
  ANATOMY_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  if (stream != g.stream) {
    if (g.replayed == nullptr) ANATOMY_CUDA_CHECK(cudaEventCreateWithFlags(&g.replayed, cudaEventDisableTiming));
    ANATOMY_CUDA_CHECK(cudaEventRecord(g.replayed, stream));
    g.replayed_elsewhere = true;
  }
}

void Graph::reset() noexcept {
  Impl& g = *impl_;
  g.abandon();
  if (g.exec == nullptr && g.replayed == nullptr && g.rng.device_state == nullptr) {
    g.pool = GraphPool();
    return;
  }
  DeviceGuard guard(g.device);
  // The pool's blocks belong to the capture stream: its next user there comes after the last
  // replay on another stream.
  if (g.replayed_elsewhere) (void)cudaStreamWaitEvent(g.stream, g.replayed, 0);
  if (g.replayed != nullptr) (void)cudaEventDestroy(g.replayed);
  if (g.exec != nullptr) (void)cudaGraphExecDestroy(g.exec);
  (void)cudaGetLastError();
  if (g.rng.device_state != nullptr) {
    try {
      raw_free(g.rng.device_state, g.device);  // a block of the capture stream, after the wait above
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anatomy: warning: freeing a CUDA graph's random state failed: %s\n", e.what());
    }
  }
  g.rng = CaptureRng();
  g.rng_used = 0;
  g.replayed = nullptr;
  g.replayed_elsewhere = false;
  g.exec = nullptr;
  g.pool = GraphPool();
}

bool Graph::is_capturing() const { return impl_->capturing; }

bool Graph::has_graph() const { return impl_->exec != nullptr; }

GraphPool Graph::pool() const { return impl_->pool; }

Stream Graph::capture_stream() const {
  return impl_->device < 0 ? Stream(0, nullptr) : Stream(impl_->device, impl_->stream);
}

bool is_current_stream_capturing() {
  check_available("cuda::is_current_stream_capturing");
  const cudaStream_t stream = current_stream();
  if (stream == cudaStreamLegacy) return false;  // never captured; asking may break another's capture
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ANATOMY_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace anatomy::cuda
