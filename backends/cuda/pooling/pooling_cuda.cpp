// CUDA: pooling and upsampling, forward and backward, registered over the CPU's plans and checks
// (dispatch/ops/pooling_registration.h, the same messages); the kernels are in pooling.cu.
// Inputs are made dense in their suggested layout first, and results keep it. Max pooling's
// backward gathers into the result where few windows can hold each input element (launch.h);
// the other backward kernels scatter into a zeroed buffer of the computation type, cast to the
// result's dtype after (for fp32 and fp64 the buffer is the result). A bad index given to max
// pooling's backward is raised as the CPU's IndexError at the next wait (Note [Bad indices on the
// device], index_error.h).
#include <tuple>

#include "anatomy/backends/cuda/pooling/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/pooling_registration.h"

namespace anatomy::cuda {
namespace {

WindowArgs args_of(const PoolPlan& p) {
  WindowArgs a;
  a.window = p.window;
  a.batch = p.batch;
  a.channels = p.channels;
  a.channels_last = p.channels_last;
  a.dtype = p.dtype;
  return a;
}

// The zeroed buffer a backward kernel adds into: fp32 for fp16, bf16 and fp32, fp64 for fp64.
Tensor zeroed_accumulator(const char* op, const PoolPlan& p) {
  const DType acc = p.dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor buf = naming_oom(op, [&] { return p.empty_result(p.in_sizes, acc); });
  buf.zero_();
  return buf;
}
Tensor in_dtype(const PoolPlan& p, const Tensor& buf) { return buf.dtype() == p.dtype ? buf : buf.to(p.dtype); }

// The four loops dispatch/ops/pooling_registration.h registers the ten kernels from.
struct CudaPoolLoops {
  static Tensor sum(const char* op, const PoolPlan& p, const Tensor& self) {
    DeviceGuard guard(self.device());
    const Tensor x = p.dense(self);
    Tensor y = naming_oom(op, [&] { return p.empty_result(p.out_sizes, p.dtype); });
    launch_window_sum(args_of(p), x.data_ptr(), y.data_ptr(), current_stream());
    return y;
  }
  static Tensor sum_backward(const char* op, const PoolPlan& p, const Tensor& grad_output) {
    DeviceGuard guard(grad_output.device());
    const Tensor gy = p.dense(grad_output);
    Tensor gx = zeroed_accumulator(op, p);
    launch_window_sum_backward(args_of(p), gy.data_ptr(), gx.data_ptr(), current_stream());
    return in_dtype(p, gx);
  }
  static std::tuple<Tensor, Tensor> max(const char* op, const PoolPlan& p, const Tensor& self) {
    DeviceGuard guard(self.device());
    const Tensor x = p.dense(self);
    Tensor y = naming_oom(op, [&] { return p.empty_result(p.out_sizes, p.dtype); });
    Tensor idx = naming_oom(op, [&] { return p.empty_result(p.out_sizes, DType::Int64); });
    launch_window_max(args_of(p), x.data_ptr(), y.data_ptr(), static_cast<int64_t*>(idx.data_ptr()), current_stream());
    return {y, idx};
  }
  static Tensor max_backward(const char* op, const PoolPlan& p, const Tensor& grad_output, const Tensor& indices) {
    DeviceGuard guard(grad_output.device());
    const Tensor gy = p.dense(grad_output), idx = p.dense(indices);
    const WindowArgs a = args_of(p);
    if (window_max_backward_gathers(a)) {
      Tensor gx = naming_oom(op, [&] { return p.empty_result(p.in_sizes, p.dtype); });
      launch_window_max_backward_gather(a, gy.data_ptr(), static_cast<const int64_t*>(idx.data_ptr()), gx.data_ptr(),
                                        index_error_sink(current_device(), op), current_stream());
      return gx;
    }
    Tensor gx = zeroed_accumulator(op, p);
    launch_window_max_backward(a, gy.data_ptr(), static_cast<const int64_t*>(idx.data_ptr()), gx.data_ptr(),
                               index_error_sink(current_device(), op), current_stream());
    return in_dtype(p, gx);
  }
};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_pooling_kernels<CudaPoolLoops>(m); }

}  // namespace anatomy::cuda
