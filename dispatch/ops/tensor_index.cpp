// Python's indexing (see tensor_index.h): the basic indices become views, the tensor indices
// the `index` / `index_put_` operators on that view, and the Tensor methods that call them.
#include "anatomy/dispatch/ops/tensor_index.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <sstream>

#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::indexing {

TensorIndex::TensorIndex(const char* str) : type_(TensorIndexType::Ellipsis) {
  ANATOMY_CHECK(str && std::strcmp(str, "...") == 0, ValueError,
                "index: expected \"...\" to stand for an ellipsis, got \"{}\"", str ? str : "(null)");
}

void TensorIndex::check_fits_int64(uint64_t integer) {
  ANATOMY_CHECK(integer <= static_cast<uint64_t>(INT64_MAX), IndexError, "index: index {} does not fit int64", integer);
}

std::ostream& operator<<(std::ostream& os, const Slice& s) {
  if (s.start()) os << *s.start();
  os << ":";
  if (s.stop()) os << *s.stop();
  if (s.has_step()) os << ":" << s.step();
  return os;
}

std::ostream& operator<<(std::ostream& os, const TensorIndex& index) {
  switch (index.type()) {
    case TensorIndexType::None:
      return os << "None";
    case TensorIndexType::Ellipsis:
      return os << "...";
    case TensorIndexType::Integer:
      return os << index.integer();
    case TensorIndexType::Boolean:
      return os << (index.boolean() ? "True" : "False");
    case TensorIndexType::Slice:
      return os << index.slice();
    case TensorIndexType::Tensor:
      break;
  }
  const Tensor& t = index.tensor();
  if (!t.defined()) return os << ":";
  return os << fmt::format("tensor([{}], {})", fmt::join(t.sizes(), ", "), name(t.dtype()));
}

std::string to_string(ArrayRef<TensorIndex> indices) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < indices.size(); ++i) os << (i ? ", " : "") << indices[i];
  os << "]";
  return os.str();
}

namespace {

bool is_mask(const Tensor& t) { return t.dtype() == DType::Bool || t.dtype() == DType::UInt8; }

// How many dims of self an index stands for: a mask covers as many as it has (a 0-dim mask, like
// a bool, adds a dim instead); None, the ellipsis and bools stand for none.
int64_t dims_taken(const TensorIndex& index) {
  switch (index.type()) {
    case TensorIndexType::Integer:
    case TensorIndexType::Slice:
      return 1;
    case TensorIndexType::Tensor: {
      const Tensor& t = index.tensor();
      return t.defined() && is_mask(t) ? t.dim() : 1;
    }
    default:
      return 0;
  }
}

// Every check that needs no tensor data, before any view is made: the ellipses, the tensors'
// dtypes, the number of dims the indices take. Returns that number.
int64_t check_indices(const Tensor& self, ArrayRef<TensorIndex> indices, const char* op) {
  int64_t taken = 0;
  bool ellipsis = false;
  for (const TensorIndex& index : indices) {
    if (index.is_ellipsis()) {
      ANATOMY_CHECK(!ellipsis, IndexError, "{}: an index can only have a single ellipsis ('...'), got {}", op,
                    to_string(indices));
      ellipsis = true;
    }
    if (index.is_slice()) {
      ANATOMY_CHECK(index.slice().step() > 0, ValueError, "{}: slice step must be greater than zero, got {} in {}", op,
                    index.slice().step(), to_string(indices));
    }
    if (index.is_tensor() && index.tensor().defined()) {
      const DType t = index.tensor().dtype();
      ANATOMY_CHECK(t == DType::Int64 || t == DType::Int32 || is_mask(index.tensor()), TypeError,
                    "{}: tensors used as indices must be int64, int32, bool or uint8, got {} in {}", op, name(t),
                    to_string(indices));
    }
    taken += dims_taken(index);
  }
  ANATOMY_CHECK(taken <= self.dim(), IndexError, "{}: too many indices for a tensor of dimension {}: {} take {} dims",
                op, self.dim(), to_string(indices), taken);
  return taken;
}

// Basic indexing applied to self, and the advanced entries for the `index` operator on the
// result: one per dim of `view` up to the last indexed one (undefined for a dim left whole), a
// mask standing for as many dims as it has.
struct Sliced {
  Tensor view;
  std::vector<Tensor> entries;
  int64_t covered = 0;  // the dims of `view` that `entries` stands for
  bool advanced = false;

  void record(const Tensor& entry, int64_t at, int64_t dims) {
    entries.resize(entries.size() + static_cast<size_t>(at - covered));
    entries.push_back(entry);
    covered = at + dims;
    advanced = true;
  }
};

Sliced apply_basic(const Tensor& self, ArrayRef<TensorIndex> indices, const char* op) {
  const int64_t taken = check_indices(self, indices, op);
  Sliced s;
  s.view = self;
  int64_t at = 0;       // the dim of s.view the next index applies to
  int64_t self_at = 0;  // the dim of self it stands for, for messages
  for (const TensorIndex& index : indices) {
    switch (index.type()) {
      case TensorIndexType::Integer: {
        const int64_t size = s.view.size(at);
        const int64_t i = index.integer();
        ANATOMY_CHECK(i >= -size && i < size, IndexError, "{}: index {} is out of range for dim {} of size {}", op, i,
                      self_at, size);
        s.view = s.view.select(at, i);
        ++self_at;
        break;
      }
      case TensorIndexType::Slice: {
        const Slice& sl = index.slice();
        s.view = s.view.slice(at, sl.start(), sl.stop(), sl.step());
        ++at;
        ++self_at;
        break;
      }
      case TensorIndexType::None:
        s.view = s.view.unsqueeze(at++);
        break;
      case TensorIndexType::Ellipsis: {
        at += self.dim() - taken;
        self_at += self.dim() - taken;
        break;
      }
      case TensorIndexType::Boolean: {
        // As PyTorch: a new dim of size 1, indexed by [0] (true) or by nothing (false).
        s.view = s.view.unsqueeze(at);
        const int64_t n = index.boolean() ? 1 : 0;
        s.record(zeros({n}, TensorOptions().dtype(DType::Int64).device(self.device())), at++, 1);
        break;
      }
      case TensorIndexType::Tensor: {
        const Tensor& t = index.tensor();
        if (!t.defined()) {
          ++at;
          ++self_at;
        } else if (!is_mask(t)) {
          s.record(t, at++, 1);
          ++self_at;
        } else {
          // The `index` operator takes bool masks; a 0-dim one indexes a new dim of size 1.
          const Tensor mask = t.dtype() == DType::Bool ? t : t.ne(0);
          if (mask.dim() == 0) {
            s.view = s.view.unsqueeze(at);
            s.record(mask.reshape({1}), at++, 1);
          } else {
            s.record(mask, at, mask.dim());
            at += mask.dim();
            self_at += mask.dim();
          }
        }
        break;
      }
    }
  }
  return s;
}

// Leading size-1 dims of a value do not count against the indexed shape (PyTorch's
// slicePrefix1sDims): x[0] = ones({1, 3}) works for x of shape [2, 3].
Tensor drop_leading_ones(const Tensor& value) {
  int64_t first = 0;
  while (first < value.dim() && value.size(first) == 1) ++first;
  if (first == 0) return value;
  return value.view(IntArrayRef(value.sizes().begin() + first, value.sizes().end()));
}

}  // namespace

Tensor get_item(const Tensor& self, ArrayRef<TensorIndex> indices) {
  Sliced s = apply_basic(self, indices, "index");
  if (s.advanced) return anatomy::index(s.view, s.entries);
  if (!s.view.is_same(self)) return s.view;
  // Always a new view (x.index({"..."}) included), so that its metadata can change apart from
  // self's: the identity permutation keeps every size and stride.
  DimVector dims(self.dim());
  for (int64_t d = 0; d < self.dim(); ++d) dims[d] = d;
  return self.permute(dims);
}

void set_item(const Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& value) {
  const char* op = "index_put_";
  ANATOMY_CHECK(value.defined(), ValueError, "{}: the value tensor is undefined", op);
  Sliced s = apply_basic(self, indices, op);
  const Tensor v = drop_leading_ones(value);
  if (s.advanced) {
    anatomy::index_put_(s.view, s.entries, v, false);
    return;
  }
  const DimVector shape = broadcast_shapes(s.view.sizes(), v.sizes(), op);
  ANATOMY_CHECK(IntArrayRef(shape) == s.view.sizes(), ValueError,
                "{}: a value of shape [{}] cannot be broadcast to the indexed shape [{}] of {}", op,
                fmt::join(value.sizes(), ", "), fmt::join(s.view.sizes(), ", "), to_string(indices));
  s.view.copy_(v);
}

void set_item(const Tensor& self, ArrayRef<TensorIndex> indices, const Scalar& value) {
  const char* op = "index_put_";
  check_scalar_fits(value, self.dtype(), op);
  Sliced s = apply_basic(self, indices, op);
  if (s.advanced) {
    anatomy::index_put_(s.view, s.entries, scalar_tensor(value, self.options()), false);
  } else {
    s.view.fill_(value);
  }
}

}  // namespace anatomy::indexing

namespace anatomy {

using Indices = ArrayRef<indexing::TensorIndex>;
// The braced-list forms exist because a list of Tensors converts to an ArrayRef<TensorIndex>
// and to a std::vector<Tensor> alike (ambiguous), while C++ prefers a std::initializer_list.
using IndexList = std::initializer_list<indexing::TensorIndex>;

Tensor Tensor::index(Indices indices) const { return indexing::get_item(*this, indices); }
Tensor Tensor::index(IndexList indices) const { return index(Indices(indices)); }
const Tensor& Tensor::index_put_(Indices indices, const Tensor& values) const {
  indexing::set_item(*this, indices, values);
  return *this;
}
const Tensor& Tensor::index_put_(Indices indices, const Scalar& value) const {
  indexing::set_item(*this, indices, value);
  return *this;
}
const Tensor& Tensor::index_put_(IndexList indices, const Tensor& values) const {
  return index_put_(Indices(indices), values);
}
const Tensor& Tensor::index_put_(IndexList indices, const Scalar& value) const {
  return index_put_(Indices(indices), value);
}

}  // namespace anatomy
