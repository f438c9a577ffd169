// Matrix products: schemas, the C++ functions, Tensor methods, and the composites written with
// mm, bmm, addmm and views (matmul, linear, dot, outer, _addmm_activation), which serve every
// backend.
#include "anatomy/core/checked_arith.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/matmul_checks.h"

namespace anatomy {
namespace {

std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// The product of every dim but the last: the row count when the leading dims fold into rows
// (computed, not inferred with -1, which a zero-size last dim would make ambiguous). Checked:
// beside an empty last dim the leading dims of an expanded tensor can multiply past int64.
int64_t leading_numel(const Tensor& t, const char* op) {
  int64_t n = 1;
  for (int64_t d = 0; d + 1 < t.dim(); ++d) n = checked_mul(n, t.sizes()[d], op, "the rows of the leading dims");
  return n;
}

void check_vectors(const char* op, const Tensor& a, const Tensor& b) {
  ANATOMY_CHECK(a.dim() == 1 && b.dim() == 1, ValueError, "{}: expected two 1-D tensors, got shapes {} and {}", op,
                shape_str(a), shape_str(b));
}

Tensor dot_composite(const Tensor& self, const Tensor& other) {
  check_product_dtypes("dot", self, other);
  check_vectors("dot", self, other);
  ANATOMY_CHECK(self.sizes()[0] == other.sizes()[0], ValueError,
                "dot: the vectors have different lengths: shapes {} and {}", shape_str(self), shape_str(other));
  return reshape(mm(self.unsqueeze(0), other.unsqueeze(1)), {});
}

// Element-wise, so it follows mul's promotion (and takes bool, as PyTorch's outer does).
Tensor outer_composite(const Tensor& self, const Tensor& vec2) {
  check_vectors("outer", self, vec2);
  return mul(self.unsqueeze(1), vec2);
}

// NumPy's matmul. A 1-D first operand becomes a row [1, k] and a 1-D second one a column
// [k, 1]; the added dim is removed from the result. 2-D x 2-D is mm. When the second operand
// is a matrix, the first one's batch dims fold into its rows (one mm, as PyTorch does); else
// the batch dims broadcast and the product is one bmm over the flattened batch.
Tensor matmul_composite(const Tensor& self, const Tensor& other) {
  check_product_dtypes("matmul", self, other);
  const int64_t da = self.dim(), db = other.dim();
  ANATOMY_CHECK(da >= 1 && db >= 1, ValueError, "matmul: both operands need at least 1 dim, got shapes {} and {}",
                shape_str(self), shape_str(other));
  const int64_t ka = self.sizes()[da - 1], kb = other.sizes()[db == 1 ? 0 : db - 2];
  ANATOMY_CHECK(ka == kb, ValueError, "matmul: shapes {} and {} cannot be multiplied ({} != {})", shape_str(self),
                shape_str(other), ka, kb);
  if (da == 1 && db == 1) return dot(self, other);
  if (da == 2 && db == 1) return mm(self, other.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(self.unsqueeze(0), other).squeeze(0);
  if (da == 2 && db == 2) return mm(self, other);
  if (da >= 3 && db <= 2) {
    // [..., n, k] @ [k, m]: the leading dims are rows of one mm.
    const Tensor b2 = db == 1 ? other.unsqueeze(1) : other;
    DimVector shape(IntArrayRef(self.sizes().data(), static_cast<size_t>(da - 1)));
    Tensor out = mm(reshape(self, {leading_numel(self, "matmul"), ka}), b2);
    if (db == 2) shape.push_back(b2.sizes()[1]);
    return reshape(out, shape);
  }
  // Batched: both operands as [..., n, k] and [..., k, m], batch dims broadcast.
  const Tensor a = da == 1 ? self.unsqueeze(0) : self;
  const Tensor b = db == 1 ? other.unsqueeze(1) : other;
  const int64_t n = a.sizes()[a.dim() - 2], m = b.sizes()[b.dim() - 1];
  const IntArrayRef batch_a(a.sizes().data(), static_cast<size_t>(a.dim() - 2));
  const IntArrayRef batch_b(b.sizes().data(), static_cast<size_t>(b.dim() - 2));
  const DimVector batch = broadcast_shapes(batch_a, batch_b, "matmul");
  int64_t nbatch = 1;
  for (int64_t s : batch) nbatch *= s;
  DimVector a_shape = batch, b_shape = batch;
  a_shape.push_back(n);
  a_shape.push_back(ka);
  b_shape.push_back(ka);
  b_shape.push_back(m);
  // expand, then reshape: broadcast batch dims stay stride-0 views whenever they can.
  Tensor out = bmm(reshape(a.expand(a_shape), {nbatch, n, ka}), reshape(b.expand(b_shape), {nbatch, ka, m}));
  DimVector shape = batch;
  if (da > 1) shape.push_back(n);
  if (db > 1) shape.push_back(m);
  return reshape(out, shape);
}

// input @ weight^T + bias. With a 2-D weight the input's leading dims fold into rows and the
// bias joins through addmm (one pass, no separate add); a 1-D weight goes through matmul.
Tensor linear_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  check_product_dtypes("linear", input, weight);
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_bias) check_product_dtypes("linear", input, *bias);
  ANATOMY_CHECK(input.dim() >= 1 && (weight.dim() == 1 || weight.dim() == 2), ValueError,
                "linear: expected input with at least 1 dim and a 1-D or 2-D weight, got shapes {} and {}",
                shape_str(input), shape_str(weight));
  const int64_t in_features = input.sizes()[input.dim() - 1];
  const int64_t w_in = weight.sizes()[weight.dim() - 1];
  ANATOMY_CHECK(in_features == w_in, ValueError,
                "linear: input of shape {} has {} features but weight of shape {} expects {}", shape_str(input),
                in_features, shape_str(weight), w_in);
  if (has_bias) {
    // The bias is added into the product (PyTorch adds it in place), so it broadcasts to the
    // output's shape: checked here, so that the error is linear's, not addmm's or add's.
    DimVector out_shape(IntArrayRef(input.sizes().data(), static_cast<size_t>(input.dim() - 1)));
    if (weight.dim() == 2) out_shape.push_back(weight.sizes()[0]);
    ANATOMY_CHECK(is_expandable_to(bias->sizes(), out_shape), ValueError,
                  "linear: bias of shape {} does not broadcast to the output's shape [{}] (input {}, weight {})",
                  shape_str(*bias), fmt::join(out_shape, ", "), shape_str(input), shape_str(weight));
  }
  if (weight.dim() == 1) {
    Tensor out = matmul(input, weight);
    return has_bias ? add(out, *bias) : out;
  }
  const Tensor wt = weight.t();
  if (input.dim() == 2) return has_bias ? addmm(*bias, input, wt) : mm(input, wt);  // no reshapes to record
  const Tensor rows = reshape(input, {leading_numel(input, "linear"), in_features});
  Tensor out = has_bias ? addmm(*bias, rows, wt) : mm(rows, wt);
  DimVector shape(IntArrayRef(input.sizes().data(), static_cast<size_t>(input.dim() - 1)));
  shape.push_back(weight.sizes()[0]);
  return reshape(out, shape);
}

// relu(addmm(...)), or gelu(addmm(...), approximate="tanh"): what PyTorch's CUDA kernel computes
// (cuBLASLt's GELU epilogue is the tanh approximation). PyTorch's CPU kernel applies the exact
// gelu instead; anatomy keeps one meaning on every backend. CUDA fuses both into cuBLASLt's
// epilogue where it can (backends/cuda/blas/addmm_activation_cuda.cpp) and falls back to this.
Tensor addmm_activation_composite(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                                  const Scalar& alpha, bool use_gelu) {
  Tensor out = addmm(self, mat1, mat2, beta, alpha);
  return use_gelu ? gelu_(out, "tanh") : relu_(out);
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("mm(Tensor self, Tensor mat2) -> Tensor");
  m.def("mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("bmm(Tensor self, Tensor mat2) -> Tensor");
  m.def("bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  m.def("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  m.def(
      "_addmm_activation(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False) "
      "-> Tensor");
  // Composites: written with the products and views above, so autograd differentiates them.
  m.def("matmul(Tensor self, Tensor other) -> Tensor", ANATOMY_KERNEL(matmul_composite));
  m.def("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", ANATOMY_KERNEL(linear_composite));
  m.def("dot(Tensor self, Tensor tensor) -> Tensor", ANATOMY_KERNEL(dot_composite));
  m.def("outer(Tensor self, Tensor vec2) -> Tensor", ANATOMY_KERNEL(outer_composite));
}

// Written with addmm and an in-place activation on its fresh result: not differentiated
// through (autograd/derivatives_linalg.cpp has its formula), and backends may override it.
ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("_addmm_activation", ANATOMY_KERNEL(addmm_activation_composite));
}

using PairSig = Tensor(const Tensor&, const Tensor&);
using PairOutSig = Tensor(const Tensor&, const Tensor&, const Tensor&);
using AddSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
using AddActivationSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&, bool);
using LinearSig = Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&);

Tensor mm(const Tensor& self, const Tensor& mat2) {
  ANATOMY_OP(op, "aten::mm", PairSig);
  return op.call(self, mat2);
}
Tensor mm_out(const Tensor& out, const Tensor& self, const Tensor& mat2) {
  ANATOMY_OP(op, "aten::mm.out", PairOutSig);
  return op.call(self, mat2, out);
}
Tensor bmm(const Tensor& self, const Tensor& mat2) {
  ANATOMY_OP(op, "aten::bmm", PairSig);
  return op.call(self, mat2);
}
Tensor bmm_out(const Tensor& out, const Tensor& self, const Tensor& mat2) {
  ANATOMY_OP(op, "aten::bmm.out", PairOutSig);
  return op.call(self, mat2, out);
}
Tensor matmul(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::matmul", PairSig);
  return op.call(self, other);
}
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::addmm", AddSig);
  return op.call(self, mat1, mat2, beta, alpha);
}
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  ANATOMY_OP(op, "aten::baddbmm", AddSig);
  return op.call(self, batch1, batch2, beta, alpha);
}
Tensor _addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                         const Scalar& alpha, bool use_gelu) {
  ANATOMY_OP(op, "aten::_addmm_activation", AddActivationSig);
  return op.call(self, mat1, mat2, beta, alpha, use_gelu);
}
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  ANATOMY_OP(op, "aten::linear", LinearSig);
  return op.call(input, weight, bias);
}
Tensor dot(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::dot", PairSig);
  return op.call(self, other);
}
Tensor outer(const Tensor& self, const Tensor& vec2) {
  ANATOMY_OP(op, "aten::outer", PairSig);
  return op.call(self, vec2);
}

// ---- methods ----
Tensor Tensor::mm(const Tensor& mat2) const { return anatomy::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return anatomy::bmm(*this, mat2); }
Tensor Tensor::matmul(const Tensor& other) const { return anatomy::matmul(*this, other); }
Tensor Tensor::dot(const Tensor& other) const { return anatomy::dot(*this, other); }
Tensor Tensor::outer(const Tensor& vec2) const { return anatomy::outer(*this, vec2); }

}  // namespace anatomy
