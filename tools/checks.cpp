// The experiments' inputs and result checks (checks.h).
#include "anatomy/tools/checks.h"

#include <algorithm>

namespace anatomy::tools {

Tensor random_tensor(IntArrayRef shape, DType dtype, Device device) {
  const TensorOptions o = TensorOptions().device(device);
  if (!is_floating(dtype)) return randint(-2, 3, shape, o.dtype(dtype));
  return randn(shape, o.dtype(DType::Float32)).to(dtype);
}

double relative_error(const Tensor& got, const Tensor& want) {
  const Tensor g = got.to(kCPU, DType::Float64), w = want.to(kCPU, DType::Float64);
  const double scale = std::max(w.abs().max().item<double>(), 1e-30);
  return g.sub(w).abs().max().item<double>() / scale;
}

double matmul_error(const Tensor& a, const Tensor& b, const Tensor& out, int64_t rows) {
  const int64_t r = std::min(rows, a.size(0));
  const Tensor head = a.narrow(0, 0, r);
  Tensor want;
  if (!is_floating(a.dtype())) {
    // Exact in int64; compared as is, since out's integer dtype (int32 for int8 operands) holds
    // the exact sum, which the operands' own dtype would wrap.
    want = head.to(kCPU, DType::Int64).matmul(b.to(kCPU, DType::Int64));
  } else {
    want = head.to(kCPU, DType::Float64).matmul(b.to(kCPU, DType::Float64));
  }
  return relative_error(out.narrow(0, 0, r), want);
}

double product_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return 1e-2;
    case DType::BFloat16:
      return 5e-2;
    case DType::Float32:
      return 5e-3;
    case DType::Float64:
      return 1e-10;
    default:
      return 0;
  }
}

}  // namespace anatomy::tools
