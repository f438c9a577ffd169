// The host side of the small matrix product (Note [Small products skip cuBLAS], launch.h).
#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

namespace {

// Size and element stride of dim `d` (0: batch, 1: rows, 2: cols) of a 2-D or 3-D operand; a 2-D
// operand is one matrix, its batch dim of size 1 and stride 0 (no unsqueeze: no view op dispatched
// on linear's path).
int64_t size_at(const Tensor& t, int d) {
  const int64_t i = d - (3 - t.dim());
  return i < 0 ? 1 : t.sizes()[i];
}
int64_t stride_at(const Tensor& t, int d) {
  const int64_t i = d - (3 - t.dim());
  return i < 0 ? 0 : t.strides()[i];
}

}  // namespace

bool try_gemm_small(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const SmallGemmBias& bias,
                    const Scalar& beta) {
  const DType dtype = c.dtype();
  if (dtype != DType::Float32 && dtype != DType::Float64 && dtype != DType::Float16 && dtype != DType::BFloat16) {
    return false;
  }
  const int64_t batches = size_at(c, 0), n = size_at(c, 1), m = size_at(c, 2), k = size_at(a, 2);
  const double work =
      static_cast<double>(batches) * static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(k);
  if (work > static_cast<double>(kSmallGemmWork)) return false;
  if (c.numel() == 0) return true;
  const bool use_bias = beta.to<double>() != 0.0;
  SmallGemmArgs args{};
  args.batches = batches;
  args.n = n;
  args.m = m;
  args.k = k;
  args.a = a.data_ptr();
  args.as0 = stride_at(a, 0), args.as1 = stride_at(a, 1), args.as2 = stride_at(a, 2);
  args.b = b.data_ptr();
  args.bs0 = stride_at(b, 0), args.bs1 = stride_at(b, 1), args.bs2 = stride_at(b, 2);
  if (use_bias) {
    args.bias = bias.data;
    args.cs0 = bias.s0, args.cs1 = bias.s1, args.cs2 = bias.s2;
  }
  args.c = c.data_ptr();
  args.alpha = alpha.to<double>();
  args.beta = use_bias ? beta.to<double>() : 0.0;
  DeviceGuard guard(c.device());
  return launch_gemm_small(dtype, args, current_stream());
}

}  // namespace anatomy::cuda
