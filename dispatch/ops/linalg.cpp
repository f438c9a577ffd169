// Matrix products: schemas, the C++ functions, Tensor methods, and the composites written with
// mm, bmm, addmm, element-wise ops and views (matmul, linear, dot, outer, _addmm_activation, mv,
// addmv, addbmm, tensordot, einsum, kron, diag, diag_embed, trace, cdist), which serve every backend.
#include <algorithm>
#include <limits>
#include <string_view>

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

// The last dim of x (n values) as diagonal `offset` of N x N matrices, N = n + |offset|, built
// from pads and reshapes only, so it is differentiable and runs on every backend: each value
// followed by N zeros puts value i at i * (N + 1) in the flattened rows, which is (i, i) of an
// N-wide matrix; a lead of `offset` zeros (offset >= 0) or of -offset rows (offset < 0) shifts
// the values onto their diagonal, and the tail is padded (or its zeros cropped) to N * N.
Tensor embed_diagonal(const Tensor& x, int64_t offset, const char* op) {
  const int64_t n = x.sizes()[x.dim() - 1];
  ANATOMY_CHECK(offset > std::numeric_limits<int64_t>::min() / 4 && offset < std::numeric_limits<int64_t>::max() / 4,
                ValueError, "{}: offset {} is out of range", op, offset);
  const int64_t a = offset < 0 ? -offset : offset;
  const int64_t side = checked_add(n, a, op, "the matrix side");
  const int64_t area = checked_mul(side, side, op, "the matrix size");
  const int64_t lead = offset >= 0 ? offset : a * side;
  const int64_t trail = area - lead - n * (side + 1);
  const int64_t row_pad[] = {0, side};
  const int64_t flat_pad[] = {lead, trail};
  const Tensor rows = constant_pad_nd(x.unsqueeze(-1), row_pad);
  const Tensor square = constant_pad_nd(flatten(rows, -2, -1), flat_pad);
  const int64_t sides[] = {side, side};
  return unflatten(square, -1, sides);
}

// 1-D: the matrix with self on diagonal `offset`; 2-D: a copy of that diagonal.
Tensor diag_composite(const Tensor& self, int64_t offset) {
  ANATOMY_CHECK(self.dim() == 1 || self.dim() == 2, ValueError, "diag: expected a 1-D or 2-D tensor, got shape {}",
                shape_str(self));
  if (self.dim() == 1) return embed_diagonal(self, offset, "diag");
  return clone(diagonal(self, offset, 0, 1), MemoryFormat::Contiguous);
}

// The last dim of self on diagonal `offset` of the (dim1, dim2) planes of a result with one more
// dim; the other dims keep their order.
Tensor diag_embed_composite(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  ANATOMY_CHECK(self.dim() >= 1, ValueError, "diag_embed: expected a tensor with at least 1 dim, got shape {}",
                shape_str(self));
  const int64_t nd = self.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, nd, "diag_embed"), d2 = wrap_dim(dim2, nd, "diag_embed");
  ANATOMY_CHECK(d1 != d2, ValueError, "diag_embed: dim1 ({}) and dim2 ({}) are the same dim {} of the result", dim1,
                dim2, d1);
  const int64_t from[] = {nd - 2, nd - 1};
  const int64_t to[] = {d1, d2};
  return movedim(embed_diagonal(self, offset, "diag_embed"), from, to);
}

// sum's dtype rule: integers and bool give int64.
Tensor trace_composite(const Tensor& self) {
  ANATOMY_CHECK(self.dim() == 2, ValueError, "trace: expected a 2-D tensor, got shape {}", shape_str(self));
  return sum(diagonal(self, 0, 0, 1));
}

Tensor mv_composite(const Tensor& self, const Tensor& vec) {
  check_product_dtypes("mv", self, vec);
  ANATOMY_CHECK(self.dim() == 2 && vec.dim() == 1, ValueError,
                "mv: expected a 2-D matrix and a 1-D vector, got shapes {} and {}", shape_str(self), shape_str(vec));
  ANATOMY_CHECK(self.sizes()[1] == vec.sizes()[0], ValueError, "mv: shapes {} and {} cannot be multiplied ({} != {})",
                shape_str(self), shape_str(vec), self.sizes()[1], vec.sizes()[0]);
  return mm(self, vec.unsqueeze(1)).squeeze(1);
}

// addmm with the vector as a column and self as a column (or a 0-dim value), so beta = 0 and an
// empty inner dim behave as addmm's.
Tensor addmv_composite(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
                       const Scalar& alpha) {
  check_product_dtypes("addmv", mat, vec);
  check_product_dtypes("addmv", self, mat);
  ANATOMY_CHECK(mat.dim() == 2 && vec.dim() == 1, ValueError,
                "addmv: expected a 2-D matrix and a 1-D vector, got shapes {} and {}", shape_str(mat), shape_str(vec));
  ANATOMY_CHECK(mat.sizes()[1] == vec.sizes()[0], ValueError, "addmv: shapes {} and {} cannot be multiplied ({} != {})",
                shape_str(mat), shape_str(vec), mat.sizes()[1], vec.sizes()[0]);
  const int64_t n = mat.sizes()[0];
  ANATOMY_CHECK(self.dim() <= 1 && is_expandable_to(self.sizes(), IntArrayRef(&n, 1)), ValueError,
                "addmv: self of shape {} does not broadcast to the product's shape [{}]", shape_str(self), n);
  const Tensor column = self.dim() == 1 ? self.unsqueeze(1) : self;
  return addmm(column, mat, vec.unsqueeze(1), beta, alpha).squeeze(1);
}

// sum over b of batch1[b] @ batch2[b] is one product over the joined (b, k) index:
// [n, b * k] @ [b * k, m], so it is a single addmm.
Tensor addbmm_composite(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                        const Scalar& alpha) {
  check_product_dtypes("addbmm", batch1, batch2);
  check_product_dtypes("addbmm", self, batch1);
  ANATOMY_CHECK(batch1.dim() == 3 && batch2.dim() == 3, ValueError,
                "addbmm: expected 3-D batch1 and batch2, got shapes {} and {}", shape_str(batch1), shape_str(batch2));
  const int64_t b = batch1.sizes()[0], n = batch1.sizes()[1], k = batch1.sizes()[2], m = batch2.sizes()[2];
  ANATOMY_CHECK(batch2.sizes()[0] == b, ValueError, "addbmm: batch sizes differ: shapes {} and {}", shape_str(batch1),
                shape_str(batch2));
  ANATOMY_CHECK(batch2.sizes()[1] == k, ValueError, "addbmm: shapes {} and {} cannot be multiplied ({} != {})",
                shape_str(batch1), shape_str(batch2), k, batch2.sizes()[1]);
  const int64_t out_shape[] = {n, m};
  ANATOMY_CHECK(is_expandable_to(self.sizes(), out_shape), ValueError,
                "addbmm: self of shape {} does not broadcast to the product's shape [{}, {}]", shape_str(self), n, m);
  const int64_t bk = checked_mul(b, k, "addbmm", "the joined batch and inner dims");
  const Tensor lhs = reshape(batch1.transpose(0, 1), {n, bk});
  const Tensor rhs = reshape(batch2, {bk, m});
  return addmm(self, lhs, rhs, beta, alpha);
}

// Dims aligned from the right (missing ones are 1); self's dim i becomes (a_i, 1) and other's
// (1, b_i), so one broadcast mul forms every product and a reshape merges each pair.
Tensor kron_composite(const Tensor& self, const Tensor& other) {
  const int64_t nd = std::max(self.dim(), other.dim());
  DimVector a_shape, b_shape, out_shape;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t ia = i - (nd - self.dim()), ib = i - (nd - other.dim());
    const int64_t sa = ia < 0 ? 1 : self.sizes()[ia], sb = ib < 0 ? 1 : other.sizes()[ib];
    a_shape.push_back(sa);
    a_shape.push_back(1);
    b_shape.push_back(1);
    b_shape.push_back(sb);
    out_shape.push_back(checked_mul(sa, sb, "kron", "a dim of the result"));
  }
  return reshape(mul(reshape(self, a_shape), reshape(other, b_shape)), out_shape);
}

// The free dims of self, then the contracted ones, against the contracted dims of other, then
// its free ones: one mm of [free_a, K] @ [K, free_b].
Tensor tensordot_composite(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  check_product_dtypes("tensordot", self, other);
  ANATOMY_CHECK(dims_self.size() == dims_other.size(), ValueError,
                "tensordot: dims_self [{}] and dims_other [{}] must have the same length", fmt::join(dims_self, ", "),
                fmt::join(dims_other, ", "));
  std::vector<bool> contracted_a(static_cast<size_t>(self.dim()), false);
  std::vector<bool> contracted_b(static_cast<size_t>(other.dim()), false);
  DimVector perm_a, perm_b, contracted_perm_b, out_shape;
  int64_t k = 1, free_a = 1, free_b = 1;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    const int64_t da = wrap_dim(dims_self[i], self.dim(), "tensordot");
    const int64_t db = wrap_dim(dims_other[i], other.dim(), "tensordot");
    ANATOMY_CHECK(self.dim() > 0 && other.dim() > 0, ValueError, "tensordot: cannot contract a 0-dim tensor");
    ANATOMY_CHECK(!contracted_a[da], ValueError, "tensordot: dim {} appears more than once in dims_self [{}]", da,
                  fmt::join(dims_self, ", "));
    ANATOMY_CHECK(!contracted_b[db], ValueError, "tensordot: dim {} appears more than once in dims_other [{}]", db,
                  fmt::join(dims_other, ", "));
    ANATOMY_CHECK(self.sizes()[da] == other.sizes()[db], ValueError,
                  "tensordot: contracted dims differ in size: dim {} of self {} has size {}, dim {} of other {} has "
                  "size {}",
                  da, shape_str(self), self.sizes()[da], db, shape_str(other), other.sizes()[db]);
    contracted_a[da] = contracted_b[db] = true;
    contracted_perm_b.push_back(db);
    k = checked_mul(k, self.sizes()[da], "tensordot", "the contracted size");
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (contracted_a[d]) continue;
    perm_a.push_back(d);
    out_shape.push_back(self.sizes()[d]);
    free_a = checked_mul(free_a, self.sizes()[d], "tensordot", "the free size of self");
  }
  for (size_t i = 0; i < dims_self.size(); ++i) perm_a.push_back(wrap_dim(dims_self[i], self.dim(), "tensordot"));
  perm_b = contracted_perm_b;
  for (int64_t d = 0; d < other.dim(); ++d) {
    if (contracted_b[d]) continue;
    perm_b.push_back(d);
    out_shape.push_back(other.sizes()[d]);
    free_b = checked_mul(free_b, other.sizes()[d], "tensordot", "the free size of other");
  }
  const Tensor a = reshape(permute(self, perm_a), {free_a, k});
  const Tensor b = reshape(permute(other, perm_b), {k, free_b});
  return reshape(mm(a, b), out_shape);
}

// Distances between the rows of x1 [..., P, M] and x2 [..., R, M], batch dims broadcast. p = 2
// takes PyTorch's matrix-product form when compute_mode says so (0 or None: when P or R
// exceeds 25; 1: always; 2: never): |a|^2 + |b|^2 - 2 a.b, clamped at 1e-30 before the root
// so that rounding below zero gives a tiny distance, not NaN. Other p (0, 1, inf, any p > 0)
// reduce the pairwise differences [..., P, R, M] with norm.
Tensor cdist_composite(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  ANATOMY_CHECK(is_floating(x1.dtype()) && is_floating(x2.dtype()), TypeError,
                "cdist: expected floating tensors, got {} and {}", name(x1.dtype()), name(x2.dtype()));
  ANATOMY_CHECK(x1.dtype() == x2.dtype(), TypeError, "cdist: x1 ({}) and x2 ({}) must have the same dtype",
                name(x1.dtype()), name(x2.dtype()));
  ANATOMY_CHECK(x1.dim() >= 2 && x2.dim() >= 2, ValueError,
                "cdist: expected x1 and x2 with at least 2 dims, got shapes {} and {}", shape_str(x1), shape_str(x2));
  const int64_t m = x1.sizes()[x1.dim() - 1];
  ANATOMY_CHECK(m == x2.sizes()[x2.dim() - 1], ValueError,
                "cdist: x1 of shape {} and x2 of shape {} have different numbers of columns", shape_str(x1),
                shape_str(x2));
  ANATOMY_CHECK(p >= 0, ValueError, "cdist: p must be non-negative, got {}", p);
  ANATOMY_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2), ValueError,
                "cdist: compute_mode must be 0, 1, 2 or None, got {}", *compute_mode);
  const int64_t rows1 = x1.sizes()[x1.dim() - 2], rows2 = x2.sizes()[x2.dim() - 2];
  const DimVector batch = broadcast_shapes(IntArrayRef(x1.sizes().data(), static_cast<size_t>(x1.dim() - 2)),
                                           IntArrayRef(x2.sizes().data(), static_cast<size_t>(x2.dim() - 2)), "cdist");
  DimVector shape1 = batch, shape2 = batch;
  shape1.push_back(rows1);
  shape1.push_back(m);
  shape2.push_back(rows2);
  shape2.push_back(m);
  const Tensor a = x1.expand(shape1), b = x2.expand(shape2);
  const int64_t mode = compute_mode.value_or(0);
  if (p == 2 && (mode == 1 || (mode == 0 && (rows1 > 25 || rows2 > 25)))) {
    const int64_t last = -1;
    const Tensor a_sq = sum(mul(a, a), IntArrayRef(&last, 1), true);
    const Tensor b_sq = sum(mul(b, b), IntArrayRef(&last, 1), true);
    const Tensor d2 = add(add(mul(matmul(a, b.mT()), Scalar(-2)), a_sq), b_sq.mT());
    return sqrt(clamp_min(d2, 1e-30));
  }
  const int64_t last = -1;
  return norm(sub(a.unsqueeze(-2), b.unsqueeze(-3)), p, IntArrayRef(&last, 1), false);
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
  m.def("diag(Tensor self, int diagonal=0) -> Tensor", ANATOMY_KERNEL(diag_composite));
  m.def("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
        ANATOMY_KERNEL(diag_embed_composite));
  m.def("trace(Tensor self) -> Tensor", ANATOMY_KERNEL(trace_composite));
  m.def("mv(Tensor self, Tensor vec) -> Tensor", ANATOMY_KERNEL(mv_composite));
  m.def("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        ANATOMY_KERNEL(addmv_composite));
  m.def("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        ANATOMY_KERNEL(addbmm_composite));
  m.def("kron(Tensor self, Tensor other) -> Tensor", ANATOMY_KERNEL(kron_composite));
  m.def("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",
        ANATOMY_KERNEL(tensordot_composite));
  m.def("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor", ANATOMY_KERNEL(cdist_composite));
  m.def("einsum(str equation, Tensor[] tensors) -> Tensor");  // dispatch/ops/einsum.cpp
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
Tensor diag(const Tensor& self, int64_t diagonal) {
  ANATOMY_OP(op, "aten::diag", Tensor(const Tensor&, int64_t));
  return op.call(self, diagonal);
}
Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  ANATOMY_OP(op, "aten::diag_embed", Tensor(const Tensor&, int64_t, int64_t, int64_t));
  return op.call(self, offset, dim1, dim2);
}
Tensor trace(const Tensor& self) {
  ANATOMY_OP(op, "aten::trace", Tensor(const Tensor&));
  return op.call(self);
}
Tensor mv(const Tensor& self, const Tensor& vec) {
  ANATOMY_OP(op, "aten::mv", PairSig);
  return op.call(self, vec);
}
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::addmv", AddSig);
  return op.call(self, mat, vec, beta, alpha);
}
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::addbmm", AddSig);
  return op.call(self, batch1, batch2, beta, alpha);
}
Tensor kron(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::kron", PairSig);
  return op.call(self, other);
}
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  ANATOMY_OP(op, "aten::tensordot", Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef));
  return op.call(self, other, dims_self, dims_other);
}
Tensor tensordot(const Tensor& self, const Tensor& other, int64_t dims) {
  ANATOMY_CHECK(dims >= 0 && dims <= self.dim() && dims <= other.dim(), ValueError,
                "tensordot: dims {} must be in [0, {}] for shapes {} and {}", dims, std::min(self.dim(), other.dim()),
                shape_str(self), shape_str(other));
  DimVector dims_self, dims_other;
  for (int64_t i = 0; i < dims; ++i) {
    dims_self.push_back(self.dim() - dims + i);
    dims_other.push_back(i);
  }
  return tensordot(self, other, dims_self, dims_other);
}
Tensor einsum(std::string_view equation, TensorList tensors) {
  ANATOMY_OP(op, "aten::einsum", Tensor(std::string_view, TensorList));
  return op.call(equation, tensors);
}
Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  ANATOMY_OP(op, "aten::cdist", Tensor(const Tensor&, const Tensor&, double, std::optional<int64_t>));
  return op.call(x1, x2, p, compute_mode);
}

// ---- methods ----
Tensor Tensor::mm(const Tensor& mat2) const { return anatomy::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return anatomy::bmm(*this, mat2); }
Tensor Tensor::matmul(const Tensor& other) const { return anatomy::matmul(*this, other); }
Tensor Tensor::dot(const Tensor& other) const { return anatomy::dot(*this, other); }
Tensor Tensor::outer(const Tensor& vec2) const { return anatomy::outer(*this, vec2); }
Tensor Tensor::diag(int64_t diagonal) const { return anatomy::diag(*this, diagonal); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return anatomy::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::trace() const { return anatomy::trace(*this); }
Tensor Tensor::mv(const Tensor& vec) const { return anatomy::mv(*this, vec); }
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) const {
  return anatomy::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return anatomy::addbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::kron(const Tensor& other) const { return anatomy::kron(*this, other); }

}  // namespace anatomy
