// The host side of the small matrix product (Note [Small products skip cuBLAS], gemm_small.h).
#include "anatomy/backends/cuda/current_stream.h"
#include "anatomy/backends/cuda/device.h"
#include "anatomy/backends/cuda/gemm_small.h"
#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

bool try_gemm_small(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const SmallGemmBias& bias,
                    const Scalar& beta) {
  const DType dtype = c.dtype();
  if (dtype != DType::Float32 && dtype != DType::Float64 && dtype != DType::Float16 && dtype != DType::BFloat16) {
    return false;
  }
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.sizes()[2];
  const double work = static_cast<double>(batches) * static_cast<double>(n) * static_cast<double>(m) *
                      static_cast<double>(k);
  if (work > static_cast<double>(kSmallGemmWork)) return false;
  if (c.numel() == 0) return true;
  const bool use_bias = beta.to<double>() != 0.0;
  SmallGemmArgs args{};
  args.batches = batches;
  args.n = n;
  args.m = m;
  args.k = k;
  args.a = a.data_ptr();
  args.as0 = a.strides()[0], args.as1 = a.strides()[1], args.as2 = a.strides()[2];
  args.b = b.data_ptr();
  args.bs0 = b.strides()[0], args.bs1 = b.strides()[1], args.bs2 = b.strides()[2];
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
