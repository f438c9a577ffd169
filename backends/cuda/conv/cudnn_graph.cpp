// Convolution passes through cuDNN's graph API, with cached execution plans (see launch.h).
//
// Note [cuDNN execution plans]
// A problem is the pass, the device, the dtype, whether fp32 may use TF32, whether plans are
// timed (cudnn_benchmark()), every tensor's sizes, strides and pointer alignment, and the
// padding, stride and dilation. Its plan is built once, on the first call:
//   tensors x, w, y (unique ids 1, 2, 3) -> a convolution descriptor -> the pass's operation ->
//   an operation graph -> the engine heuristic (mode A; the fallback list after it) -> for each
//   engine configuration kept, an execution plan (finalizing one may fail: the next is tried)
// and each call runs it: a variant pack of the three pointers and a workspace from the caching
// allocator, and cudnnBackendExecute on the current stream. The first plan that runs is kept;
// with cudnn_benchmark() each candidate (at most kTimedPlans) runs twice and the second run is
// timed with CUDA events, and the fastest is kept. A plan is executed with the calling thread's
// handle, as PyTorch's cached plans are.
#if defined(ANATOMY_WITH_CUDNN)
#include "anatomy/backends/cuda/conv/launch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "anatomy/backends/cuda/conv/cudnn_handle.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/precision_switches.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cuda {

CudnnDims cudnn_dims(const Tensor& t, bool channels_last) {
  CudnnDims d;
  for (int64_t i = 0; i < t.dim(); ++i) {
    d.sizes.push_back(t.size(i));
    d.strides.push_back(t.stride(i));
  }
  if (t.dim() == 3) {
    d.sizes.insert(d.sizes.begin() + 2, 1);
    d.strides.insert(d.strides.begin() + 2, 0);
  }
  // Innermost first: (W, H, [D,] C, N) or, channels_last, (C, W, H, [D,] N).
  const int dims = static_cast<int>(d.sizes.size());
  std::vector<int> order;
  if (channels_last) order.push_back(1);
  for (int i = dims - 1; i > 1; --i) order.push_back(i);
  if (!channels_last) order.push_back(1);
  order.push_back(0);
  int64_t dense = 1;
  for (int i : order) {
    const auto u = static_cast<size_t>(i);
    if (d.sizes[u] == 1) d.strides[u] = dense;
    else dense = d.sizes[u] * d.strides[u];
  }
  return d;
}

Tensor cudnn_workspace(size_t bytes, Device device) {
  return empty({static_cast<int64_t>(bytes)}, TensorOptions().dtype(DType::UInt8).device(device));
}

cudnnDataType_t cudnn_data_type(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return CUDNN_DATA_HALF;
    case DType::BFloat16:
      return CUDNN_DATA_BFLOAT16;
    case DType::Float64:
      return CUDNN_DATA_DOUBLE;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

bool cudnn_try_another(cudnnStatus_t status) {
  const int family = static_cast<int>(status) / 1000;
  return family == 2 || family == 3 || status == CUDNN_STATUS_ALLOC_FAILED;
}

namespace {

// A cuDNN status other than success while building a plan: the caller moves on (another engine
// configuration, or the legacy API).
struct Refused {
  cudnnStatus_t status;
};

void require(cudnnStatus_t status) {
  if (status != CUDNN_STATUS_SUCCESS) throw Refused{status};
}

// An owned backend descriptor.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) { require(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Descriptor() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t* address() { return &d_; }

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values) {
    require(cudnnBackendSetAttribute(d_, name, type, count, values));
  }
  void set_int(cudnnBackendAttributeName_t name, int64_t value) { set(name, CUDNN_TYPE_INT64, 1, &value); }
  void set_ints(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values) {
    set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data());
  }
  void set_descriptor(cudnnBackendAttributeName_t name, const Descriptor& value) {
    cudnnBackendDescriptor_t raw = value.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  void finalize() { require(cudnnBackendFinalize(d_)); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// The largest power of two, at most 16, that divides the address: what the tensor descriptor
// promises cuDNN about the pointer (engines that need 16 bytes then refuse the others).
int64_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  int64_t align = 16;
  while (align > 1 && a % static_cast<uintptr_t>(align) != 0) align /= 2;
  return align;
}

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

std::unique_ptr<Descriptor> tensor_descriptor(const Tensor& t, int64_t uid, bool channels_last) {
  const CudnnDims d = cudnn_dims(t, channels_last);
  auto desc = std::make_unique<Descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = cudnn_data_type(t.dtype());
  desc->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  desc->set_ints(CUDNN_ATTR_TENSOR_DIMENSIONS, d.sizes);
  desc->set_ints(CUDNN_ATTR_TENSOR_STRIDES, d.strides);
  desc->set_int(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
  desc->set_int(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, alignment_of(t.data_ptr()));
  desc->finalize();
  return desc;
}

// A finalized plan and every descriptor it was built from (kept alive with it).
struct Plan {
  std::vector<std::unique_ptr<Descriptor>> parts;
  std::unique_ptr<Descriptor> plan;
  int64_t workspace = 0;
};

// The engine configurations the heuristic of `mode` gives for the graph, best first.
std::vector<std::unique_ptr<Descriptor>> engine_configs(const Descriptor& graph, cudnnBackendHeurMode_t mode) {
  Descriptor heuristic(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristic.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heuristic.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heuristic.finalize();
  int64_t count = 0;
  require(cudnnBackendGetAttribute(heuristic.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                   &count, nullptr));
  std::vector<std::unique_ptr<Descriptor>> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(configs.back()->get());
  }
  int64_t returned = 0;
  if (count > 0)
    require(cudnnBackendGetAttribute(heuristic.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     count, &returned, raw.data()));
  configs.resize(static_cast<size_t>(std::min(returned, count)));
  return configs;
}

// Whether a configuration's engine computes as the settings allow: never with inputs
// down-converted, and for fp32 without TF32 never on tensor cores.
bool allowed(const Descriptor& config, DType dtype) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t count = 0;
  cudnnBackendDescriptor_t raw = engine.get();
  require(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                   &raw));
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t n = 0;
  require(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                   CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes));
  for (int64_t i = 0; i < n; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && dtype == DType::Float32 && !allow_tf32_cudnn()) return false;
  }
  return true;
}

struct Problem {
  ConvPass pass;
  const Tensor &x, &w, &y;
  const ConvSettings& settings;
};

// The operation graph of one pass; its parts are appended to `parts`.
std::unique_ptr<Descriptor> operation_graph(const Problem& p, cudnnHandle_t handle,
                                            std::vector<std::unique_ptr<Descriptor>>& parts) {
  const bool cl = p.settings.channels_last;
  parts.push_back(tensor_descriptor(p.x, kUidX, cl));
  const Descriptor& x = *parts.back();
  parts.push_back(tensor_descriptor(p.w, kUidW, cl));
  const Descriptor& w = *parts.back();
  parts.push_back(tensor_descriptor(p.y, kUidY, cl));
  const Descriptor& y = *parts.back();

  const bool fp64 = p.x.dtype() == DType::Float64;
  const cudnnDataType_t compute = fp64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  parts.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  Descriptor& conv = *parts.back();
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set_int(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, static_cast<int64_t>(p.settings.padding.size()));
  conv.set_ints(CUDNN_ATTR_CONVOLUTION_DILATIONS, p.settings.dilation);
  conv.set_ints(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, p.settings.stride);
  conv.set_ints(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, p.settings.padding);
  conv.set_ints(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, p.settings.padding);
  conv.finalize();

  // alpha 1, beta 0, in the compute type's width.
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const cudnnBackendAttributeType_t scalar = fp64 ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void* one = fp64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = fp64 ? static_cast<const void*>(&zero_d) : &zero_f;
  std::unique_ptr<Descriptor> op;
  if (p.pass == ConvPass::Forward) {
    op = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scalar, 1, one);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scalar, 1, zero);
  } else if (p.pass == ConvPass::BackwardData) {
    op = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, scalar, 1, one);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, scalar, 1, zero);
  } else {
    op = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y);
    op->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, scalar, 1, one);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, scalar, 1, zero);
  }
  op->finalize();
  parts.push_back(std::move(op));
  cudnnBackendDescriptor_t raw_op = parts.back()->get();

  auto graph = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_op);
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  graph->finalize();
  return graph;
}

// An execution plan for one engine configuration, or nullopt when cuDNN does not finalize it.
std::unique_ptr<Descriptor> plan_for(const Descriptor& config, cudnnHandle_t handle, int64_t& workspace) {
  try {
    auto plan = std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    plan->set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
    plan->finalize();
    int64_t count = 0;
    require(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                     &workspace));
    return plan;
  } catch (const Refused&) {
    return nullptr;
  }
}

// Runs a plan once on the current stream; cuDNN's status.
cudnnStatus_t execute(const Descriptor& plan, int64_t workspace_bytes, const Problem& p) {
  // Most plans need none: no allocation then.
  const Tensor workspace =
      workspace_bytes > 0 ? cudnn_workspace(static_cast<size_t>(workspace_bytes), p.x.device()) : Tensor();
  void* pointers[3] = {p.x.data_ptr(), p.w.data_ptr(), p.y.data_ptr()};
  const int64_t uids[3] = {kUidX, kUidW, kUidY};
  void* workspace_ptr = workspace_bytes > 0 ? workspace.data_ptr() : nullptr;
  try {
    Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace_ptr);
    pack.finalize();
    return cudnnBackendExecute(cudnn_handle(), plan.get(), pack.get());
  } catch (const Refused& r) {
    return r.status;
  }
}

constexpr int kTimedPlans = 8;

// Milliseconds of the plan's second run, or nullopt when it does not run.
std::optional<float> time_plan(const Descriptor& plan, int64_t workspace, const Problem& p) {
  if (execute(plan, workspace, p) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const cudaStream_t stream = current_stream();
  cudaEventRecord(start, stream);
  const cudnnStatus_t status = execute(plan, workspace, p);
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (status != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return ms;
}

std::vector<int64_t> problem_key(const Problem& p, bool benchmark) {
  const bool tf32 = p.x.dtype() == DType::Float32 && allow_tf32_cudnn();
  std::vector<int64_t> k{static_cast<int64_t>(p.pass),
                         current_device(),
                         static_cast<int64_t>(p.x.dtype()),
                         tf32 ? 1 : 0,
                         benchmark ? 1 : 0,
                         p.settings.channels_last ? 1 : 0};
  // The tensors' own sizes and strides: cudnn_dims is a function of them and channels_last.
  for (const Tensor* t : {&p.x, &p.w, &p.y}) {
    k.push_back(t->dim());
    k.insert(k.end(), t->sizes().begin(), t->sizes().end());
    k.insert(k.end(), t->strides().begin(), t->strides().end());
    k.push_back(alignment_of(t->data_ptr()));
  }
  for (const std::vector<int64_t>* v : {&p.settings.padding, &p.settings.stride, &p.settings.dilation})
    k.insert(k.end(), v->begin(), v->end());
  return k;
}

struct PlanCache {
  std::mutex mutex;
  std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans;
  std::map<std::vector<int64_t>, bool> refused;  // problems no plan ran for
};
PlanCache& plan_cache() {
  static auto* c = new PlanCache;  // never destroyed: plans outlive static destruction order
  return *c;
}

// Builds the problem's plan and runs it (the pass's output is written); nullptr when none runs.
std::shared_ptr<const Plan> build_and_run(const Problem& p, bool benchmark) {
  cudnnHandle_t handle = cudnn_handle();
  std::vector<std::unique_ptr<Descriptor>> parts;
  std::unique_ptr<Descriptor> graph;
  try {
    graph = operation_graph(p, handle, parts);
  } catch (const Refused&) {
    return nullptr;
  }
  struct Candidate {
    std::unique_ptr<Descriptor> config, plan;
    int64_t workspace = 0;
  };
  // Without benchmark, each configuration's plan is built only when the ones before it did not
  // run (finalizing a plan of a runtime-compiled engine compiles a kernel): the first that runs
  // is chosen. With benchmark, up to kTimedPlans plans are built and timed.
  std::vector<Candidate> candidates;
  std::optional<size_t> chosen;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<std::unique_ptr<Descriptor>> configs;
    try {
      configs = engine_configs(*graph, mode);
    } catch (const Refused&) {
      continue;
    }
    for (auto& config : configs) {
      try {
        if (!allowed(*config, p.x.dtype())) continue;
      } catch (const Refused&) {
        continue;
      }
      int64_t workspace = 0;
      std::unique_ptr<Descriptor> plan = plan_for(*config, handle, workspace);
      if (!plan) continue;
      candidates.push_back({std::move(config), std::move(plan), workspace});
      if (benchmark) {
        if (candidates.size() >= static_cast<size_t>(kTimedPlans)) break;
        continue;
      }
      const cudnnStatus_t status = execute(*candidates.back().plan, workspace, p);
      if (status == CUDNN_STATUS_SUCCESS) {
        chosen = candidates.size() - 1;
        break;
      }
      if (!cudnn_try_another(status)) detail::throw_cudnn_error(status, "cudnnBackendExecute", __FILE__, __LINE__);
    }
    if (chosen || (benchmark && !candidates.empty())) break;  // the fallback list only when needed
  }
  if (benchmark) {
    float best = std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < candidates.size(); ++i) {
      const std::optional<float> ms = time_plan(*candidates[i].plan, candidates[i].workspace, p);
      if (ms && *ms < best) {
        best = *ms;
        chosen = i;
      }
    }
    // The timed runs left some candidate's output; the chosen plan writes its own.
    if (chosen && execute(*candidates[*chosen].plan, candidates[*chosen].workspace, p) != CUDNN_STATUS_SUCCESS)
      chosen.reset();
  }
  if (!chosen) return nullptr;
  auto plan = std::make_shared<Plan>();
  plan->parts = std::move(parts);
  plan->parts.push_back(std::move(graph));
  plan->parts.push_back(std::move(candidates[*chosen].config));
  plan->plan = std::move(candidates[*chosen].plan);
  plan->workspace = candidates[*chosen].workspace;
  return plan;
}

bool legacy_api_requested() {
  static const bool legacy = [] {
    const char* v = std::getenv("ANATOMY_CUDNN_LEGACY_API");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return legacy;
}

}  // namespace

bool run_conv_graph(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y, const ConvSettings& settings) {
  if (legacy_api_requested()) return false;
  const Problem p{pass, x, w, y, settings};
  const bool benchmark = cudnn_benchmark();
  const std::vector<int64_t> key = problem_key(p, benchmark);
  PlanCache& cache = plan_cache();
  std::shared_ptr<const Plan> plan;
  {
    std::lock_guard<std::mutex> g(cache.mutex);
    if (cache.refused.count(key) != 0) return false;
    auto it = cache.plans.find(key);
    if (it != cache.plans.end()) plan = it->second;
  }
  if (plan) {
    const cudnnStatus_t status = execute(*plan->plan, plan->workspace, p);
    if (status != CUDNN_STATUS_SUCCESS) detail::throw_cudnn_error(status, "cudnnBackendExecute", __FILE__, __LINE__);
    return true;
  }
  plan = build_and_run(p, benchmark);
  std::lock_guard<std::mutex> g(cache.mutex);
  if (!plan) {
    cache.refused.emplace(key, true);
    return false;
  }
  cache.plans.emplace(key, std::move(plan));
  return true;
}

}  // namespace anatomy::cuda
#endif  // ANATOMY_WITH_CUDNN
