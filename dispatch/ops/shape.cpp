// Reordering, padding, sorting and scans: schemas, the composites (repeat, tile, repeat_interleave,
// tril_, triu_, roll, constant_pad_nd, argsort: written with views, empty, fill_ and copy_, so every backend has
// them), the C++ functions and the Tensor methods. Kernels: backends/cpu/{reorder,sort,scan,
// one_hot}_cpu.cpp and backends/meta/shape_meta.cpp; shared checks in dispatch/ops/shape_checks.h.
#include <algorithm>
#include <limits>

#include "anatomy/core/checked_arith.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy {
namespace {

// Each dim i of the (left-padded with 1s) input becomes a pair (repeats[i], size[i]): the input
// viewed as (1, size[i]) pairs is expanded to that shape and copied once, then the pairs merge.
Tensor repeat_composite(const Tensor& self, IntArrayRef repeats) {
  const int64_t n = static_cast<int64_t>(repeats.size());
  ANATOMY_CHECK(n >= self.dim(), ValueError,
                "repeat: the number of repeats ({}) must be at least the number of dims of the tensor ({})", n,
                self.dim());
  for (int64_t r : repeats) ANATOMY_CHECK(r >= 0, ValueError, "repeat: repeats must be non-negative, got {}", r);
  const int64_t lead = n - self.dim();
  DimVector pairs, expanded, result;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t size = i < lead ? 1 : self.sizes()[i - lead];
    pairs.push_back(1);
    pairs.push_back(size);
    expanded.push_back(repeats[i]);
    expanded.push_back(size);
    int64_t repeated;
    ANATOMY_CHECK(mul_fits(repeats[i], size, repeated), ValueError,
                  "repeat: repeats [{}] of a tensor of shape [{}] overflow int64 at dim {} ({} * {})",
                  fmt::join(repeats, ", "), fmt::join(self.sizes(), ", "), i, repeats[i], size);
    result.push_back(repeated);
  }
  // Checked here, so that a size the result cannot have is named after repeat, not empty.
  check_factory_size(result, "repeat");
  check_factory_size(expanded, "repeat");
  return naming_oom("repeat", [&] {
    Tensor out = empty(expanded, self.options());
    copy_(out, expand(reshape(self, pairs), expanded));
    return view(out, result);
  });
}

// Rolls one dim (0 <= d < t.dim()) by `shift`: two narrowed copies. Returns t itself when the
// shift is a whole number of turns.
Tensor roll_one(const Tensor& t, int64_t shift, int64_t d) {
  const int64_t n = t.sizes()[d];
  if (n == 0) return t;
  int64_t s = shift % n;  // in (-n, n): adding n once cannot overflow, (shift % n) + n might not fit
  if (s < 0) s += n;
  if (s == 0) return t;
  Tensor out = naming_oom("roll", [&] { return empty(t.sizes(), t.options()); });
  copy_(narrow(out, d, s, n - s), narrow(t, d, 0, n - s));
  copy_(narrow(out, d, 0, s), narrow(t, d, n - s, s));
  return out;
}

// No dims: the tensor is flattened, rolled and given its shape back.
Tensor roll_composite(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    ANATOMY_CHECK(shifts.size() == 1, ValueError, "roll: without dims, shifts must hold one value, got {}",
                  shifts.size());
    const int64_t flat_dim = 0;
    return view(roll_composite(reshape(self, {-1}), shifts, IntArrayRef(&flat_dim, 1)), self.sizes());
  }
  ANATOMY_CHECK(shifts.size() == dims.size(), ValueError, "roll: shifts ({} values) and dims ({} values) must align",
                shifts.size(), dims.size());
  DimVector wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, self.dim(), "roll"));
  Tensor cur = self;
  if (self.dim() > 0) {
    for (size_t i = 0; i < wrapped.size(); ++i) cur = roll_one(cur, shifts[i], wrapped[i]);
  }
  // The result never aliases the input.
  return cur.is_same(self) ? clone(self) : cur;
}

// Fills `out` (the padded shape) with value and copies the part of self the pads keep into it.
Tensor pad_into(Tensor out, const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const int64_t npad = static_cast<int64_t>(pad.size());
  fill_(out, value);
  Tensor dst = out, src = self;
  for (int64_t i = 0; i < npad / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    const int64_t left = pad[2 * i], right = pad[2 * i + 1];
    const int64_t in_start = std::max<int64_t>(-left, 0), out_start = std::max<int64_t>(left, 0);
    const int64_t length = self.sizes()[d] - in_start - std::max<int64_t>(-right, 0);
    if (length <= 0) return out;  // everything cropped: only padding remains
    dst = narrow(dst, d, out_start, length);
    src = narrow(src, d, in_start, length);
  }
  copy_(dst, src);
  return out;
}

// pad holds (left, right) pairs from the last dim backwards. The result is filled with `value`,
// then the part of the input that survives the (possibly negative) pads is copied into place
// (pad_into). Output index i of a padded dim reads input index i - left.
Tensor constant_pad_nd_composite(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const int64_t npad = static_cast<int64_t>(pad.size());
  ANATOMY_CHECK(npad % 2 == 0, ValueError, "constant_pad_nd: pad must hold (left, right) pairs, got {} values", npad);
  ANATOMY_CHECK(npad / 2 <= self.dim(), ValueError,
                "constant_pad_nd: pad of {} values pads {} dims, but the tensor has {}", npad, npad / 2, self.dim());
  check_scalar_fits(value, self.dtype(), "constant_pad_nd");
  DimVector sizes(self.sizes());
  for (int64_t i = 0; i < npad / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    const int64_t left = pad[2 * i], right = pad[2 * i + 1];
    // A negative pad crops -pad elements: that count must exist in int64 too. The pads are
    // summed first: with a size >= 0, an overflow there or in the size means a result past
    // int64 or below 0, never a spurious one (a backward's pads (2, 2 - INT64_MAX) of INT64_MAX).
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    int64_t size;
    ANATOMY_CHECK(left != kMin && right != kMin && add_fits(left, right, size) && add_fits(self.sizes()[d], size, size),
                  ValueError, "constant_pad_nd: pads ({}, {}) of dim {} (size {}) overflow int64", left, right, d,
                  self.sizes()[d]);
    ANATOMY_CHECK(size >= 0, ValueError, "constant_pad_nd: pads ({}, {}) of dim {} (size {}) give a negative size {}",
                  left, right, d, self.sizes()[d], size);
    sizes[d] = size;
  }
  check_factory_size(sizes, "constant_pad_nd");
  return naming_oom("constant_pad_nd", [&] { return pad_into(empty(sizes, self.options()), self, pad, value); });
}

Tensor argsort_composite(const Tensor& self, int64_t dim, bool descending) {
  return std::get<1>(sort(self, dim, descending));
}

// The in-place triangles write tril(self) back into self: one copy_, so autograd and the
// version counter see an ordinary in-place write, and a bad input fails in tril before it.
// copy_ returns at once for an empty tensor; the version still moves, as for every in-place op.
Tensor write_back(const Tensor& self, const Tensor& values) {
  copy_(self, values);
  if (self.numel() == 0) self.impl()->bump_version();
  return self;
}
// tril's checks, named after the operator called (composite_errors.h).
Tensor tril_composite(const Tensor& self, int64_t diagonal) {
  return naming_errors("tril_", [&] { return write_back(self, tril(self, diagonal)); });
}
Tensor triu_composite(const Tensor& self, int64_t diagonal) {
  return naming_errors("triu_", [&] { return write_back(self, triu(self, diagonal)); });
}

// The in-place scans compute in self's dtype (an int32 sum wraps in int32, as PyTorch's cumsum_
// does), except bool, whose running sum and product are scanned in int64 and written back as
// "any so far" and "all so far". A `dtype` other than self's has nowhere to go: TypeError.
template <Tensor (*Scan)(const Tensor&, int64_t, std::optional<DType>)>
Tensor scan_in_place(const char* op, const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_CHECK(!dtype || *dtype == self.dtype(), TypeError,
                "{}: the dtype argument ({}) must be the dtype of self ({}): the result is written into self", op,
                name(*dtype), name(self.dtype()));
  const std::optional<DType> scan_dtype =
      self.dtype() == DType::Bool ? std::nullopt : std::optional<DType>(self.dtype());
  return write_back(self, Scan(self, dim, scan_dtype));
}
Tensor cumsum_composite(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_in_place<&cumsum>("cumsum_", self, dim, dtype);
}
Tensor cumprod_composite(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_in_place<&cumprod>("cumprod_", self, dim, dtype);
}

// tile pads the repeats with leading 1s to the tensor's dims, then it is repeat.
Tensor tile_composite(const Tensor& self, IntArrayRef dims) {
  for (int64_t r : dims) {
    ANATOMY_CHECK(r >= 0, ValueError, "tile: repeats must be non-negative, got [{}]", fmt::join(dims, ", "));
  }
  DimVector repeats;
  for (int64_t i = static_cast<int64_t>(dims.size()); i < self.dim(); ++i) repeats.push_back(1);
  for (int64_t r : dims) repeats.push_back(r);
  return repeat(self, repeats);
}

void check_output_size(std::optional<int64_t> output_size, int64_t total) {
  ANATOMY_CHECK(!output_size || *output_size == total, ValueError,
                "repeat_interleave: output_size {} does not match the sum of the repeats, {}", *output_size, total);
}

// The indices 0 repeated repeats[0] times, 1 repeated repeats[1] times, ...: the values decide
// the shape, so they are read on the host. On Meta only output_size can give the shape (as in
// PyTorch's meta function).
Tensor repeat_interleave_indices(const Tensor& repeats, std::optional<int64_t> output_size) {
  ANATOMY_CHECK(repeats.dim() == 1, ValueError, "repeat_interleave: repeats must be 1-D, got shape [{}]",
                fmt::join(repeats.sizes(), ", "));
  ANATOMY_CHECK(repeats.dtype() == DType::Int64 || repeats.dtype() == DType::Int32, TypeError,
                "repeat_interleave: repeats must be int64 or int32, got {}", name(repeats.dtype()));
  if (repeats.is_meta()) {
    ANATOMY_CHECK(output_size.has_value(), NotImplementedError,
                  "repeat_interleave: repeats on the Meta device have no values, and the values decide the result's "
                  "shape; pass output_size");
    ANATOMY_CHECK(*output_size >= 0, ValueError, "repeat_interleave: output_size must be non-negative, got {}",
                  *output_size);
    return empty({*output_size}, TensorOptions().dtype(DType::Int64).device(kMeta));
  }
  const Tensor host = repeats.to(kCPU, DType::Int64).contiguous();
  const int64_t* r = host.data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < host.numel(); ++i) {
    ANATOMY_CHECK(r[i] >= 0, ValueError, "repeat_interleave: repeats must be non-negative, got {} at index {}", r[i],
                  i);
    total = checked_add(total, r[i], "repeat_interleave", "the sum of the repeats");
  }
  check_output_size(output_size, total);
  check_factory_size(IntArrayRef(&total, 1), "repeat_interleave");
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(total));
  for (int64_t i = 0; i < host.numel(); ++i) idx.insert(idx.end(), static_cast<size_t>(r[i]), i);
  return tensor(idx, {total}, TensorOptions().dtype(DType::Int64).device(repeats.device()));
}

// Without a dim the input is flattened and the result is 1-D, as in PyTorch.
Tensor flat_or_self(const Tensor& self, std::optional<int64_t> dim, int64_t& d) {
  if (!dim || self.dim() == 0) {
    if (dim) wrap_dim(*dim, self.dim(), "repeat_interleave");
    d = 0;
    return reshape(self, {-1});
  }
  d = wrap_dim(*dim, self.dim(), "repeat_interleave");
  return self;
}

// Element i along dim appears repeats[i] times: index_select with the expanded indices, so the
// gradient sums the copies through index_select's derivative.
Tensor repeat_interleave_tensor_composite(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                                          std::optional<int64_t> output_size) {
  int64_t d = 0;
  const Tensor input = flat_or_self(self, dim, d);
  const int64_t len = input.sizes()[d];
  Tensor r = repeats;
  if (r.dim() == 0 || (r.dim() == 1 && r.sizes()[0] == 1)) {
    r = expand(reshape(r, {1}), {len});
  } else {
    ANATOMY_CHECK(r.dim() == 1, ValueError, "repeat_interleave: repeats must be 0-dim or 1-D, got shape [{}]",
                  fmt::join(r.sizes(), ", "));
    ANATOMY_CHECK(r.sizes()[0] == len, ValueError,
                  "repeat_interleave: repeats has {} values but the input has {} along dim {}", r.sizes()[0], len, d);
  }
  // The indices are made where the repeats are; index_select needs them beside the input.
  return index_select(input, d, repeat_interleave(r, output_size).to(input.device()));
}

// One repeat count: the input with a size-1 dim after `dim`, expanded to `repeats` there and
// copied once, then the two dims merged. No values are read, so Meta has it too.
Tensor repeat_interleave_int_composite(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                       std::optional<int64_t> output_size) {
  ANATOMY_CHECK(repeats >= 0, ValueError, "repeat_interleave: repeats must be non-negative, got {}", repeats);
  int64_t d = 0;
  const Tensor input = flat_or_self(self, dim, d);
  const int64_t total = checked_mul(input.sizes()[d], repeats, "repeat_interleave", "the repeated dim");
  check_output_size(output_size, total);
  DimVector expanded(input.sizes()), result(input.sizes());
  expanded.insert(static_cast<size_t>(d + 1), repeats);
  result[d] = total;
  check_factory_size(expanded, "repeat_interleave");
  return view(clone(expand(unsqueeze(input, d + 1), expanded), MemoryFormat::Contiguous), result);
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("repeat(Tensor self, int[] repeats) -> Tensor");
  m.def("flip(Tensor self, int[] dims) -> Tensor");
  m.def("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor");
  m.def("tril(Tensor self, int diagonal=0) -> Tensor");
  m.def("triu(Tensor self, int diagonal=0) -> Tensor");
  m.def("constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor");
  m.def("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)");
  m.def("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", ANATOMY_KERNEL(argsort_composite));
  m.def("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)");
  m.def("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  m.def("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  m.def("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)");
  m.def("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)");
  m.def("logcumsumexp(Tensor self, int dim) -> Tensor");
  m.def("one_hot(Tensor self, int num_classes=-1) -> Tensor");
  m.def("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", ANATOMY_KERNEL(tril_composite));
  m.def("triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", ANATOMY_KERNEL(triu_composite));
  m.def("cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)", ANATOMY_KERNEL(cumsum_composite));
  m.def("cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)",
        ANATOMY_KERNEL(cumprod_composite));
  m.def("tile(Tensor self, int[] dims) -> Tensor", ANATOMY_KERNEL(tile_composite));
  m.def("repeat_interleave.Tensor(Tensor repeats, *, int? output_size=None) -> Tensor",
        ANATOMY_KERNEL(repeat_interleave_indices));
  m.def("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor",
        ANATOMY_KERNEL(repeat_interleave_tensor_composite));
  m.def("repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor",
        ANATOMY_KERNEL(repeat_interleave_int_composite));
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("repeat", ANATOMY_KERNEL(repeat_composite));
  m.impl("roll", ANATOMY_KERNEL(roll_composite));
  m.impl("constant_pad_nd", ANATOMY_KERNEL(constant_pad_nd_composite));
}

// ---- the C++ API ----
using TwoTensors = std::tuple<Tensor, Tensor>;
using OptInt = std::optional<int64_t>;

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  ANATOMY_OP(op, "aten::repeat", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, repeats);
}
Tensor flip(const Tensor& self, IntArrayRef dims) {
  ANATOMY_OP(op, "aten::flip", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, dims);
}
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  ANATOMY_OP(op, "aten::roll", Tensor(const Tensor&, IntArrayRef, IntArrayRef));
  return op.call(self, shifts, dims);
}
Tensor tril(const Tensor& self, int64_t diagonal) {
  ANATOMY_OP(op, "aten::tril", Tensor(const Tensor&, int64_t));
  return op.call(self, diagonal);
}
Tensor triu(const Tensor& self, int64_t diagonal) {
  ANATOMY_OP(op, "aten::triu", Tensor(const Tensor&, int64_t));
  return op.call(self, diagonal);
}
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  ANATOMY_OP(op, "aten::constant_pad_nd", Tensor(const Tensor&, IntArrayRef, const Scalar&));
  return op.call(self, pad, value);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  ANATOMY_OP(op, "aten::sort", TwoTensors(const Tensor&, int64_t, bool));
  return op.call(self, dim, descending);
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  ANATOMY_OP(op, "aten::argsort", Tensor(const Tensor&, int64_t, bool));
  return op.call(self, dim, descending);
}
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  ANATOMY_OP(op, "aten::topk", TwoTensors(const Tensor&, int64_t, int64_t, bool, bool));
  return op.call(self, k, dim, largest, sorted);
}
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::cumsum", Tensor(const Tensor&, int64_t, std::optional<DType>));
  return op.call(self, dim, dtype);
}
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::cumprod", Tensor(const Tensor&, int64_t, std::optional<DType>));
  return op.call(self, dim, dtype);
}
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  ANATOMY_OP(op, "aten::cummax", TwoTensors(const Tensor&, int64_t));
  return op.call(self, dim);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  ANATOMY_OP(op, "aten::cummin", TwoTensors(const Tensor&, int64_t));
  return op.call(self, dim);
}
Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  ANATOMY_OP(op, "aten::logcumsumexp", Tensor(const Tensor&, int64_t));
  return op.call(self, dim);
}
Tensor one_hot(const Tensor& self, int64_t num_classes) {
  ANATOMY_OP(op, "aten::one_hot", Tensor(const Tensor&, int64_t));
  return op.call(self, num_classes);
}
Tensor tril_(const Tensor& self, int64_t diagonal) {
  ANATOMY_OP(op, "aten::tril_", Tensor(const Tensor&, int64_t));
  return op.call(self, diagonal);
}
Tensor triu_(const Tensor& self, int64_t diagonal) {
  ANATOMY_OP(op, "aten::triu_", Tensor(const Tensor&, int64_t));
  return op.call(self, diagonal);
}
Tensor cumsum_(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::cumsum_", Tensor(const Tensor&, int64_t, std::optional<DType>));
  return op.call(self, dim, dtype);
}
Tensor cumprod_(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::cumprod_", Tensor(const Tensor&, int64_t, std::optional<DType>));
  return op.call(self, dim, dtype);
}
Tensor tile(const Tensor& self, IntArrayRef dims) {
  ANATOMY_OP(op, "aten::tile", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, dims);
}
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  ANATOMY_OP(op, "aten::repeat_interleave.Tensor", Tensor(const Tensor&, OptInt));
  return op.call(repeats, output_size);
}
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  ANATOMY_OP(op, "aten::repeat_interleave.self_Tensor", Tensor(const Tensor&, const Tensor&, OptInt, OptInt));
  return op.call(self, repeats, dim, output_size);
}
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  ANATOMY_OP(op, "aten::repeat_interleave.self_int", Tensor(const Tensor&, int64_t, OptInt, OptInt));
  return op.call(self, repeats, dim, output_size);
}

// ---- Tensor methods ----
Tensor Tensor::repeat(IntArrayRef repeats) const { return anatomy::repeat(*this, repeats); }
Tensor Tensor::flip(IntArrayRef dims) const { return anatomy::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return anatomy::roll(*this, shifts, dims); }
Tensor Tensor::tril(int64_t diagonal) const { return anatomy::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return anatomy::triu(*this, diagonal); }
const Tensor& Tensor::tril_(int64_t diagonal) const {
  anatomy::tril_(*this, diagonal);
  return *this;
}
const Tensor& Tensor::triu_(int64_t diagonal) const {
  anatomy::triu_(*this, diagonal);
  return *this;
}
Tensor Tensor::tile(IntArrayRef dims) const { return anatomy::tile(*this, dims); }
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim,
                                 std::optional<int64_t> output_size) const {
  return anatomy::repeat_interleave(*this, repeats, dim, output_size);
}
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim,
                                 std::optional<int64_t> output_size) const {
  return anatomy::repeat_interleave(*this, repeats, dim, output_size);
}
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return anatomy::sort(*this, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const { return anatomy::argsort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return anatomy::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype) const { return anatomy::cumsum(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype) const { return anatomy::cumprod(*this, dim, dtype); }
const Tensor& Tensor::cumsum_(int64_t dim, std::optional<DType> dtype) const {
  anatomy::cumsum_(*this, dim, dtype);
  return *this;
}
const Tensor& Tensor::cumprod_(int64_t dim, std::optional<DType> dtype) const {
  anatomy::cumprod_(*this, dim, dtype);
  return *this;
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return anatomy::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return anatomy::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return anatomy::logcumsumexp(*this, dim); }

}  // namespace anatomy
