// _addmm_activation on CUDA: relu or tanh-gelu of addmm, fused into cuBLASLt's
// CUBLASLT_EPILOGUE_RELU_BIAS / GELU_BIAS (addmm_lt.cpp) for a 1-D bias self, beta 1 and fp32,
// fp16 or bf16 operands; anything else runs the composite's two steps (dispatch/ops/linalg.cpp):
// addmm (itself on cuBLAS), then the activation in place.
#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/matmul_checks.h"

namespace anatomy::cuda {
namespace {

Tensor addmm_activation_cuda(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                             const Scalar& alpha, bool use_gelu) {
  // addmm's checks, under addmm's name, as the composite raises them.
  const DimVector shape = check_mm("addmm", mat1, mat2);
  check_addmm_self("addmm", self, mat1, shape, beta, alpha);
  DeviceGuard guard(mat1.device());
  if (is_floating(mat1.dtype())) {
    Tensor out = empty(shape, TensorOptions().dtype(product_dtype(mat1.dtype())).device(mat1.device()));
    if (addmm_lt_epilogue(out, self, mat1, mat2, beta, alpha, use_gelu ? LtActivation::GeluTanh : LtActivation::Relu)) {
      return out;
    }
  }
  Tensor out = addmm(self, mat1, mat2, beta, alpha);
  return use_gelu ? gelu_(out, "tanh") : relu_(out);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { m.impl("_addmm_activation", ANATOMY_KERNEL(addmm_activation_cuda)); }

}  // namespace anatomy::cuda
