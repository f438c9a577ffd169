// addmm's bias epilogue, plain or followed by ReLU or GELU, through cuBLASLt (see launch.h);
// the descriptors and algorithm come from the plan cache of lt_matmul.cpp. The row-major
// product runs transposed, as in blas_cuda.cpp: D^T [m, n] = mat2^T mat1^T, and the bias, one
// value per column of the row-major result, is one value per row of D^T, which is what the
// epilogue broadcasts.
#include "anatomy/backends/cuda/blas/launch.h"

#include <algorithm>
#include <climits>

#include "anatomy/backends/cuda/blas/gemm_operand.h"
#include "anatomy/backends/cuda/blas/lt_matmul.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/precision_switches.h"

namespace anatomy::cuda {
namespace {

cublasLtEpilogue_t epilogue_of(LtActivation a) {
  switch (a) {
    case LtActivation::Relu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case LtActivation::GeluTanh:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
    default:
      return CUBLASLT_EPILOGUE_BIAS;
  }
}

}  // namespace

bool addmm_lt_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                       const Scalar& beta, const Scalar& alpha, LtActivation activation) {
  const DType dtype = out.dtype();
  const int64_t n = out.sizes()[0], m = out.sizes()[1], k = mat1.sizes()[1];
  // The epilogue's case: a bias vector added once, a 16-bit or fp32 product cuBLASLt computes
  // in fp32, no empty dims, and every address aligned for its kernels.
  if (self.dim() != 1 || self.sizes()[0] != m || self.strides()[0] != 1 || self.dtype() != dtype) return false;
  if (beta.to<double>() != 1.0) return false;
  if (dtype != DType::Float32 && dtype != DType::Float16 && dtype != DType::BFloat16) return false;
  if (dtype == DType::Float16 && allow_fp16_accumulation()) return false;
  if (n <= 1 || m == 0 || k == 0 || std::max({n, m, k}) > INT_MAX) return false;
  for (const Tensor* t : {&out, &self, &mat1, &mat2}) {
    if (!is_gemm_aligned(*t)) return false;
  }
  auto la = cublas_layout(mat1.unsqueeze(0)), lb = cublas_layout(mat2.unsqueeze(0));
  if (!la || !lb || la->ld > INT_MAX || lb->ld > INT_MAX) return false;

  DeviceGuard guard(out.device());  // the handle, workspace, stream and plan are the current device's
  LtMatmulKey key{};
  key.ab_type = key.d_type = cuda_data_type(dtype);
  key.compute = dtype == DType::Float32 && allow_tf32_matmul() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  key.scale = CUDA_R_32F;
  key.epilogue = epilogue_of(activation);
  // cuBLAS's A is mat2 (m x k as used), B is mat1 (k x n as used).
  key.op_a = lb->op;
  key.op_b = la->op;
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = lb->ld;
  key.ldb = la->ld;
  key.align_a = lt_alignment(mat2.data_ptr());
  key.align_b = lt_alignment(mat1.data_ptr());
  key.align_d = lt_alignment(out.data_ptr());
  key.reduced = (dtype == DType::Float16 && allow_fp16_reduced_precision_reduction()) ||
                (dtype == DType::BFloat16 && allow_bf16_reduced_precision_reduction()) || dtype == DType::Float32;
  const float al = alpha.to<float>(), zero = 0.0f;
  return lt_matmul(key, {&al, &zero, mat2.data_ptr(), mat1.data_ptr(), out.data_ptr(), self.data_ptr()});
}

bool addmm_bias_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                         const Scalar& beta, const Scalar& alpha) {
  if (self.dtype() == out.dtype() && self.dim() <= 2) {
    // self broadcast to out's [n, m] by its strides: a size-1 or missing dim steps by 0.
    const int64_t dims = self.dim();
    auto stride_of = [&](int64_t out_dim) -> int64_t {  // out_dim 0 (rows) or 1 (cols)
      const int64_t d = out_dim - (2 - dims);
      return d < 0 || self.sizes()[d] == 1 ? 0 : self.strides()[d];
    };
    const SmallGemmBias bias{self.data_ptr(), 0, stride_of(0), stride_of(1)};
    if (try_gemm_small(out, mat1, mat2, alpha, bias, beta)) return true;
  }
  return addmm_lt_epilogue(out, self, mat1, mat2, beta, alpha, LtActivation::None);
}

}  // namespace anatomy::cuda
