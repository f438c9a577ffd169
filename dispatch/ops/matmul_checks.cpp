// Checks of the matrix products (dispatch/ops/matmul_checks.h).
#include "anatomy/dispatch/ops/matmul_checks.h"

#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"

namespace anatomy {

DType product_dtype(DType t) { return t == DType::Int8 ? DType::Int32 : t; }

void check_product_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  ANATOMY_CHECK(a.defined() && b.defined(), ValueError, "{}: an operand is an undefined tensor", op);
  ANATOMY_CHECK(a.device() == b.device(), DeviceError, "{}: expected both operands on one device, found {} and {}", op,
                a.device().str(), b.device().str());
  ANATOMY_CHECK(a.dtype() == b.dtype(), TypeError,
                "{}: expected both operands to have the same dtype, got {} and {} (convert one with .to())", op,
                name(a.dtype()), name(b.dtype()));
  ANATOMY_CHECK(a.dtype() != DType::Bool, TypeError, "{}: bool operands are not supported (got {} and {})", op,
                name(a.dtype()), name(b.dtype()));
}

DimVector check_mm(const char* op, const Tensor& self, const Tensor& mat2) {
  check_product_dtypes(op, self, mat2);
  ANATOMY_CHECK(self.dim() == 2 && mat2.dim() == 2, ValueError,
                "{}: expected two 2-D matrices, got shapes [{}] and [{}]", op, fmt::join(self.sizes(), ", "),
                fmt::join(mat2.sizes(), ", "));
  ANATOMY_CHECK(self.sizes()[1] == mat2.sizes()[0], ValueError,
                "{}: shapes [{}] and [{}] cannot be multiplied ({} != {})", op, fmt::join(self.sizes(), ", "),
                fmt::join(mat2.sizes(), ", "), self.sizes()[1], mat2.sizes()[0]);
  return DimVector{self.sizes()[0], mat2.sizes()[1]};
}

DimVector check_bmm(const char* op, const Tensor& self, const Tensor& mat2) {
  check_product_dtypes(op, self, mat2);
  ANATOMY_CHECK(self.dim() == 3 && mat2.dim() == 3, ValueError,
                "{}: expected two 3-D batches of matrices, got shapes [{}] and [{}]", op, fmt::join(self.sizes(), ", "),
                fmt::join(mat2.sizes(), ", "));
  ANATOMY_CHECK(self.sizes()[0] == mat2.sizes()[0], ValueError, "{}: batch sizes differ: shapes [{}] and [{}]", op,
                fmt::join(self.sizes(), ", "), fmt::join(mat2.sizes(), ", "));
  ANATOMY_CHECK(self.sizes()[2] == mat2.sizes()[1], ValueError,
                "{}: shapes [{}] and [{}] cannot be multiplied ({} != {})", op, fmt::join(self.sizes(), ", "),
                fmt::join(mat2.sizes(), ", "), self.sizes()[2], mat2.sizes()[1]);
  return DimVector{self.sizes()[0], self.sizes()[1], mat2.sizes()[2]};
}

void check_addmm_self(const char* op, const Tensor& self, const Tensor& mat1, IntArrayRef shape, const Scalar& beta,
                      const Scalar& alpha) {
  ANATOMY_CHECK(self.defined(), ValueError, "{}: self is an undefined tensor", op);
  ANATOMY_CHECK(self.device() == mat1.device(), DeviceError, "{}: self is on {} but the matrices are on {}", op,
                self.device().str(), mat1.device().str());
  ANATOMY_CHECK(self.dtype() == mat1.dtype(), TypeError, "{}: expected self to have the matrices' dtype {}, got {}", op,
                name(mat1.dtype()), name(self.dtype()));
  DimVector b = broadcast_shapes(self.sizes(), shape, op);
  ANATOMY_CHECK(IntArrayRef(b) == shape, ValueError, "{}: self of shape [{}] does not broadcast to the product's [{}]",
                op, fmt::join(self.sizes(), ", "), fmt::join(shape, ", "));
  if (!is_floating(mat1.dtype())) {
    ANATOMY_CHECK(!beta.is_floating_point() && !alpha.is_floating_point(), TypeError,
                  "{}: integral {} tensors take integral beta and alpha, got beta={} alpha={}", op, name(mat1.dtype()),
                  beta.to<double>(), alpha.to<double>());
  }
}

void check_product_out(const char* op, const Tensor& out, IntArrayRef shape, DType dtype, const Tensor& a,
                       const Tensor& b) {
  ANATOMY_CHECK(out.defined(), ValueError, "{}: out is an undefined tensor", op);
  ANATOMY_CHECK(out.device() == a.device(), DeviceError, "{}: out is on {} but the operands are on {}", op,
                out.device().str(), a.device().str());
  ANATOMY_CHECK(out.sizes() == shape, ValueError, "{}: out has shape [{}] but the result has shape [{}]", op,
                fmt::join(out.sizes(), ", "), fmt::join(shape, ", "));
  ANATOMY_CHECK(out.dtype() == dtype, TypeError, "{}: out has dtype {} but the result is {}", op, name(out.dtype()),
                name(dtype));
  check_no_internal_overlap(out, op);
  ANATOMY_CHECK(!may_overlap(out, a) && !may_overlap(out, b), ValueError,
                "{}: out shares memory with an operand; clone() the operand first", op);
}

}  // namespace anatomy
