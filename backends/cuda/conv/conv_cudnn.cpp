// CUDA convolutions through cuDNN 9: forward and both backward passes, plain and transposed,
// 1-d (as 2-d with a height of 1), 2-d and 3-d, every floating dtype. Each pass goes through
// cuDNN's graph API with a cached execution plan (launch.h); where no plan runs, or with
// ANATOMY_CUDNN_LEGACY_API=1, through its legacy convolution API (descriptors, an algorithm per
// shape, a workspace), below. Without cuDNN in the build, or for what it refuses (output_padding
// of at least the stride, more than INT_MAX elements, an empty problem, a configuration none of
// its algorithms launches for), the composite of dispatch/ops/convolution_matmul.cpp runs on
// cuBLAS instead.
//
// A transposed convolution is the adjoint of a plain one with the same weight, so every pass
// is one of cuDNN's three on the "underlying" plain convolution x_u -> y_u (x_u the transposed
// convolution's output, y_u its input):
//             plain                      transposed
//   forward   y = Forward(x, w)          out = BackwardData(input, w)
//   dinput    dx = BackwardData(dy, w)   dinput = Forward(dout, w)
//   dweight   BackwardFilter(x, dy)      BackwardFilter(dout, input)
// The bias and its gradient are the engine's add_ and sum.
//
// Note [cuDNN algorithm choice] (the legacy API)
// Each (pass, shapes, strides, dtype, parameters, math mode) gets its algorithm once and keeps
// it: cuDNN's heuristic's first choice by default, or with cudnn_benchmark() on, the fastest of
// cudnnFind*AlgorithmEx's timed runs on the first call (as torch.backends.cudnn.benchmark). A
// candidate cuDNN refuses at launch (BAD_PARAM, NOT_SUPPORTED) gives way to the next, as
// PyTorch's algorithm iterator does; the one that ran is the one kept. Its workspace is the size
// cuDNN's size query gives for the algorithm and math type (the heuristic's list is only an
// estimate) and comes from the caching allocator on the current stream, so it is reused like any
// other block. fp16/bf16 use tensor cores; fp32 may use TF32 when allow_tf32_cudnn() (on by
// default, as PyTorch's), else FMA only.
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/precision_switches.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/convolution_matmul.h"

#if defined(ANATOMY_WITH_CUDNN)
#include "anatomy/backends/cuda/conv/cudnn_handle.h"
#include "anatomy/backends/cuda/conv/launch.h"
#endif

namespace anatomy::cuda {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;

#if defined(ANATOMY_WITH_CUDNN)

using Pass = ConvPass;

// cudnn_dims (launch.h) as the legacy descriptors take them.
struct Shape {
  std::vector<int> sizes, strides;
};
Shape shape_of(const Tensor& t, bool channels_last) {
  const CudnnDims d = cudnn_dims(t, channels_last);
  Shape s;
  for (size_t i = 0; i < d.sizes.size(); ++i) {
    s.sizes.push_back(static_cast<int>(d.sizes[i]));
    s.strides.push_back(static_cast<int>(d.strides[i]));
  }
  return s;
}

struct Params {
  std::vector<int> padding, stride, dilation;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
Params params_of(const ConvGeometry& g, DType dtype) {
  Params p;
  if (g.spatial == 1) {
    p = {{0}, {1}, {1}, 1, CUDNN_DEFAULT_MATH};
  }
  for (int64_t i = 0; i < g.spatial; ++i) {
    const auto u = static_cast<size_t>(i);
    p.padding.push_back(static_cast<int>(g.padding[u]));
    p.stride.push_back(static_cast<int>(g.stride[u]));
    p.dilation.push_back(static_cast<int>(g.dilation[u]));
  }
  p.groups = static_cast<int>(g.groups);
  if (dtype == DType::Float16 || dtype == DType::BFloat16) p.math = CUDNN_TENSOR_OP_MATH;
  else if (dtype == DType::Float32) p.math = allow_tf32_cudnn() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  else p.math = CUDNN_DEFAULT_MATH;
  return p;
}

// The descriptors of one underlying convolution x_u -> y_u with weight w.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors(const Tensor& xu, const Tensor& weight, const Tensor& yu, const Params& p, bool channels_last) {
    const cudnnDataType_t type = cudnn_data_type(xu.dtype());
    const cudnnDataType_t compute = xu.dtype() == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    ANATOMY_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    ANATOMY_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    ANATOMY_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    ANATOMY_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    const Shape xs = shape_of(xu, channels_last), ys = shape_of(yu, channels_last),
                ws = shape_of(weight, channels_last);
    ANATOMY_CUDNN_CHECK(
        cudnnSetTensorNdDescriptor(x, type, static_cast<int>(xs.sizes.size()), xs.sizes.data(), xs.strides.data()));
    ANATOMY_CUDNN_CHECK(
        cudnnSetTensorNdDescriptor(y, type, static_cast<int>(ys.sizes.size()), ys.sizes.data(), ys.strides.data()));
    ANATOMY_CUDNN_CHECK(cudnnSetFilterNdDescriptor(w, type, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                   static_cast<int>(ws.sizes.size()), ws.sizes.data()));
    ANATOMY_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv, static_cast<int>(p.padding.size()), p.padding.data(),
                                                        p.stride.data(), p.dilation.data(), CUDNN_CROSS_CORRELATION,
                                                        compute));
    ANATOMY_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, p.groups));
    ANATOMY_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, p.math));
  }
  ~Descriptors() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

// ---- the algorithm cache (Note [cuDNN algorithm choice]) ----

struct Choice {
  int algorithm = 0;
  size_t workspace = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

std::vector<int64_t> cache_key(Pass pass, const Tensor& xu, const Tensor& w, const Tensor& yu, const Params& p,
                               bool channels_last, bool benchmark) {
  std::vector<int64_t> k{static_cast<int64_t>(pass),
                         current_device(),
                         static_cast<int64_t>(xu.dtype()),
                         static_cast<int64_t>(p.math),
                         benchmark ? 1 : 0,
                         channels_last ? 1 : 0,
                         p.groups};
  for (const Tensor* t : {&xu, &w, &yu}) {
    k.push_back(t->dim());
    for (int64_t i = 0; i < t->dim(); ++i) {
      k.push_back(t->size(i));
      k.push_back(t->stride(i));
    }
  }
  for (const std::vector<int>* v : {&p.padding, &p.stride, &p.dilation}) k.insert(k.end(), v->begin(), v->end());
  return k;
}

struct AlgorithmCache {
  std::mutex mutex;
  std::map<std::vector<int64_t>, Choice> choices;
};
AlgorithmCache& algorithm_cache() {
  static auto* c = new AlgorithmCache;
  return *c;
}

// The workspace one algorithm needs with its math type, as cuDNN reports it; nullopt when cuDNN
// refuses the algorithm for these descriptors.
std::optional<size_t> workspace_size(Pass pass, const Descriptors& d, int algorithm, cudnnMathType_t math) {
  cudnnHandle_t h = cudnn_handle();
  if (cudnnSetConvolutionMathType(d.conv, math) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  size_t bytes = 0;
  cudnnStatus_t status;
  if (pass == Pass::Forward)
    status = cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(algorithm), &bytes);
  else if (pass == Pass::BackwardData)
    status = cudnnGetConvolutionBackwardDataWorkspaceSize(
        h, d.w, d.y, d.conv, d.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm), &bytes);
  else
    status = cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm), &bytes);
  if (status != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return bytes;
}

// The algorithms of a perf list that cuDNN reports as runnable, best first, each with the
// larger of the list's workspace and the size cuDNN reports for it (the heuristic's list is an
// estimate; the size query is what the run checks against).
template <typename Perf>
std::vector<Choice> runnable(Pass pass, const Descriptors& d, const Perf* perf, int count) {
  std::vector<Choice> out;
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    const int algorithm = static_cast<int>(perf[i].algo);
    const std::optional<size_t> bytes = workspace_size(pass, d, algorithm, perf[i].mathType);
    if (bytes) out.push_back(Choice{algorithm, std::max(*bytes, perf[i].memory), perf[i].mathType});
  }
  return out;
}

constexpr int kMaxAlgorithms = 16;

// The heuristic's candidates (benchmark off) or the timed ones (benchmark on) for one pass,
// best first. The timed runs write the pass's output tensor, which the real run then overwrites.
std::vector<Choice> candidates(Pass pass, const Descriptors& d, const Tensor& xu, const Tensor& w, const Tensor& yu) {
  cudnnHandle_t h = cudnn_handle();
  const bool benchmark = cudnn_benchmark();
  int n = 0;
  // Timed runs get a workspace as large as the largest the heuristic's candidates ask for.
  auto timed_workspace = [&](const std::vector<Choice>& heuristic) {
    size_t bytes = 0;
    for (const Choice& c : heuristic) bytes = std::max(bytes, c.workspace);
    return cudnn_workspace(bytes, xu.device());
  };
  if (pass == Pass::Forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgorithms];
    ANATOMY_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, kMaxAlgorithms, &n, perf));
    if (!benchmark) return runnable(pass, d, perf, n);
    const Tensor ws = timed_workspace(runnable(pass, d, perf, n));
    ANATOMY_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x, xu.data_ptr(), d.w, w.data_ptr(), d.conv, d.y,
                                                               yu.data_ptr(), kMaxAlgorithms, &n, perf, ws.data_ptr(),
                                                               static_cast<size_t>(ws.numel())));
    return runnable(pass, d, perf, n);
  }
  if (pass == Pass::BackwardData) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgorithms];
    ANATOMY_CUDNN_CHECK(
        cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, kMaxAlgorithms, &n, perf));
    if (!benchmark) return runnable(pass, d, perf, n);
    const Tensor ws = timed_workspace(runnable(pass, d, perf, n));
    ANATOMY_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w, w.data_ptr(), d.y, yu.data_ptr(), d.conv,
                                                                    d.x, xu.data_ptr(), kMaxAlgorithms, &n, perf,
                                                                    ws.data_ptr(), static_cast<size_t>(ws.numel())));
    return runnable(pass, d, perf, n);
  }
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgorithms];
  ANATOMY_CUDNN_CHECK(
      cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, kMaxAlgorithms, &n, perf));
  if (!benchmark) return runnable(pass, d, perf, n);
  const Tensor ws = timed_workspace(runnable(pass, d, perf, n));
  ANATOMY_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x, xu.data_ptr(), d.y, yu.data_ptr(), d.conv,
                                                                    d.w, w.data_ptr(), kMaxAlgorithms, &n, perf,
                                                                    ws.data_ptr(), static_cast<size_t>(ws.numel())));
  return runnable(pass, d, perf, n);
}

cudnnStatus_t launch(Pass pass, const Descriptors& d, const Choice& c, void* workspace, const Tensor& xu,
                     const Tensor& w, const Tensor& yu) {
  cudnnHandle_t h = cudnn_handle();
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const bool fp64 = xu.dtype() == DType::Float64;
  const void* one = fp64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = fp64 ? static_cast<const void*>(&zero_d) : &zero_f;
  if (pass == Pass::Forward)
    return cudnnConvolutionForward(h, one, d.x, xu.data_ptr(), d.w, w.data_ptr(), d.conv,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(c.algorithm), workspace, c.workspace, zero,
                                   d.y, yu.data_ptr());
  if (pass == Pass::BackwardData)
    return cudnnConvolutionBackwardData(h, one, d.w, w.data_ptr(), d.y, yu.data_ptr(), d.conv,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algorithm), workspace, c.workspace,
                                        zero, d.x, xu.data_ptr());
  return cudnnConvolutionBackwardFilter(h, one, d.x, xu.data_ptr(), d.y, yu.data_ptr(), d.conv,
                                        static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algorithm), workspace,
                                        c.workspace, zero, d.w, w.data_ptr());
}

// Runs one pass of the underlying convolution x_u -> y_u, writing x_u (BackwardData), y_u
// (Forward) or w (BackwardFilter), with the cached algorithm or else the candidates in order,
// skipping those cuDNN refuses at launch; the first that runs is cached. False when none runs
// (the caller takes the composite instead).
bool run_pass(Pass pass, const Tensor& xu, const Tensor& w, const Tensor& yu, const Params& params,
              bool channels_last) {
  ConvSettings settings{{params.padding.begin(), params.padding.end()},
                        {params.stride.begin(), params.stride.end()},
                        {params.dilation.begin(), params.dilation.end()},
                        channels_last};
  if (run_conv_graph(pass, xu, w, yu, settings)) return true;
  const Descriptors d(xu, w, yu, params, channels_last);
  const std::vector<int64_t> key = cache_key(pass, xu, w, yu, params, channels_last, cudnn_benchmark());
  AlgorithmCache& cache = algorithm_cache();
  std::vector<Choice> choices;
  bool cached = false;
  {
    std::lock_guard<std::mutex> g(cache.mutex);
    auto it = cache.choices.find(key);
    if (it != cache.choices.end()) {
      choices.push_back(it->second);
      cached = true;
    }
  }
  if (!cached) choices = candidates(pass, d, xu, w, yu);
  for (const Choice& c : choices) {
    ANATOMY_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, c.math));
    Tensor ws;
    try {
      if (c.workspace > 0) ws = cudnn_workspace(c.workspace, xu.device());
    } catch (const OutOfMemoryError&) {
      continue;  // a cheaper algorithm may fit
    }
    const cudnnStatus_t status = launch(pass, d, c, c.workspace > 0 ? ws.data_ptr() : nullptr, xu, w, yu);
    if (status == CUDNN_STATUS_SUCCESS) {
      if (!cached) {
        std::lock_guard<std::mutex> g(cache.mutex);
        cache.choices.emplace(key, c);
      }
      return true;
    }
    if (!cudnn_try_another(status)) detail::throw_cudnn_error(status, "a cuDNN convolution", __FILE__, __LINE__);
  }
  return false;
}

// cuDNN serves non-empty problems whose tensors have fewer than INT_MAX elements and whose
// transposed output_padding is below the stride (else the underlying convolution's output
// would not come back to the input's size).
bool cudnn_serves(const ConvGeometry& g, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->numel() == 0 || t->numel() >= INT_MAX) return false;
  for (int64_t s : g.output_shape)
    if (s == 0 || s >= INT_MAX) return false;
  if (g.transposed) {
    for (size_t i = 0; i < g.output_padding.size(); ++i)
      if (g.output_padding[i] >= g.stride[i]) return false;
  }
  return true;
}

Tensor bias_view(const Tensor& bias, int64_t dims) {
  std::vector<int64_t> shape(static_cast<size_t>(dims), 1);
  shape[1] = bias.size(0);
  return bias.reshape(shape);
}

#endif  // ANATOMY_WITH_CUDNN

Tensor convolution_cuda(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups) {
  const ConvGeometry g = check_convolution("convolution", input, weight, bias, stride, padding, dilation, transposed,
                                           output_padding, groups);
  DeviceGuard guard(input.device());
#if defined(ANATOMY_WITH_CUDNN)
  if (cudnn_serves(g, {&input, &weight})) {
    const bool cl = g.format != MemoryFormat::Contiguous;
    const Tensor x = dense_in(input, g.format), w = dense_in(weight, g.format);
    Tensor out = empty_convolution_output(g, input);
    const Params p = params_of(g, input.dtype());
    const bool ran =
        g.transposed ? run_pass(Pass::BackwardData, out, w, x, p, cl) : run_pass(Pass::Forward, x, w, out, p, cl);
    if (ran) {
      if (bias && bias->defined()) out.add_(bias_view(*bias, out.dim()));
      return out;
    }
  }
#endif
  return convolution_via_matmul(input, weight, bias, g);
}

Tensor3 convolution_backward_cuda(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                  OptionalIntArrayRef bias_sizes, IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups,
                                  IntArrayRef output_mask) {
  const ConvGeometry g =
      check_convolution_backward("convolution_backward", grad_output, input, weight, bias_sizes, stride, padding,
                                 dilation, transposed, output_padding, groups, output_mask);
  const std::array<bool, 3> mask{output_mask[0] != 0, output_mask[1] != 0, output_mask[2] != 0};
  DeviceGuard guard(input.device());
#if defined(ANATOMY_WITH_CUDNN)
  if (cudnn_serves(g, {&input, &weight, &grad_output})) {
    const bool cl = g.format != MemoryFormat::Contiguous;
    const Tensor dy = dense_in(grad_output, g.format), x = dense_in(input, g.format), w = dense_in(weight, g.format);
    const Params p = params_of(g, input.dtype());
    Tensor dx, dw, db;
    bool ran = true;
    if (mask[0]) {
      dx = empty(x.sizes(), x.options(), g.format);
      ran = g.transposed ? run_pass(Pass::Forward, dy, w, dx, p, cl) : run_pass(Pass::BackwardData, dx, w, dy, p, cl);
    }
    if (ran && mask[1]) {
      dw = empty(w.sizes(), w.options(), g.format);
      ran = g.transposed ? run_pass(Pass::BackwardFilter, dy, dw, x, p, cl)
                         : run_pass(Pass::BackwardFilter, x, dw, dy, p, cl);
    }
    if (!ran) return convolution_backward_via_convolutions(grad_output, input, weight, g, mask);
    if (mask[2]) {
      std::vector<int64_t> dims{0};
      for (int64_t i = 2; i < dy.dim(); ++i) dims.push_back(i);
      db = dy.sum(dims);
    }
    return {dx, dw, db};
  }
#endif
  return convolution_backward_via_convolutions(grad_output, input, weight, g, mask);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("convolution", ANATOMY_KERNEL(convolution_cuda));
  m.impl("convolution_backward", ANATOMY_KERNEL(convolution_backward_cuda));
}

}  // namespace anatomy::cuda
