// View operators: schemas, the metadata kernels of core/views.h registered for every backend,
// and the views composed from them (movedim, swapaxes, unbind, view_as, expand_as,
// broadcast_to, broadcast_tensors, meshgrid and the rest), which every backend and autograd share.
#include "anatomy/core/views.h"
#include <string_view>

#include "anatomy/core/checked_arith.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"

namespace anatomy {
namespace {

// reshape is a view when the strides allow one, else a contiguous copy.
Tensor reshape_composite(const Tensor& self, IntArrayRef shape) {
  DimVector sizes = infer_size(shape, self.numel(), "reshape");
  // What view gives an empty tensor, checked here to name reshape.
  if (self.numel() == 0) {
    checked_view_reach(sizes, checked_contiguous_strides(sizes, "reshape"), self.storage_offset(), self.element_size(),
                       "reshape");
  }
  if (compute_view_strides(self.sizes(), self.strides(), sizes)) return view(self, sizes);
  return view(clone(self, MemoryFormat::Contiguous), sizes);
}

Tensor t_composite(const Tensor& self) {
  ANATOMY_CHECK(self.dim() <= 2, ValueError, "t: expects a tensor with <= 2 dims, got {}; use transpose or mT",
                self.dim());
  return self.dim() < 2 ? view(self, self.sizes()) : transpose(self, 0, 1);
}

Tensor narrow_composite(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  ANATOMY_CHECK(self.dim() > 0, IndexError, "narrow: cannot narrow a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "narrow");
  int64_t len = self.sizes()[d];
  ANATOMY_CHECK(start >= -len && start <= len, IndexError, "narrow: start {} is out of range for dim {} of size {}",
                start, d, len);
  if (start < 0) start += len;
  ANATOMY_CHECK(length >= 0 && start <= len - length, ValueError,
                "narrow: start ({}) + length ({}) exceeds dim {} of size {}", start, length, d, len);
  // The offset slice computes, checked here to name narrow.
  int64_t offset;
  ANATOMY_CHECK(mul_fits(start, self.strides()[d], offset) && add_fits(self.storage_offset(), offset, offset),
                ValueError, "narrow: start {} of dim {} (stride {}) from storage offset {} overflows int64", start, d,
                self.strides()[d], self.storage_offset());
  return slice(self, d, start, start + length, 1);
}

Tensor flatten_composite(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  if (self.dim() == 0) return reshape(self, {1});
  int64_t s = wrap_dim(start_dim, self.dim(), "flatten"), e = wrap_dim(end_dim, self.dim(), "flatten");
  ANATOMY_CHECK(s <= e, ValueError, "flatten: start_dim ({}) must not come after end_dim ({})", s, e);
  if (s == e) return view(self, self.sizes());
  DimVector sizes;
  int64_t merged = 1;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < s || i > e) {
      sizes.push_back(self.sizes()[i]);
    } else {
      merged = checked_mul(merged, self.sizes()[i], "flatten", "the size of the merged dims");
      if (i == e) sizes.push_back(merged);
    }
  }
  return reshape(self, sizes);
}

Tensor unflatten_composite(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  ANATOMY_CHECK(self.dim() > 0, IndexError, "unflatten: cannot unflatten a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "unflatten");
  ANATOMY_CHECK(!sizes.empty(), ValueError, "unflatten: sizes must not be empty");
  DimVector inner = infer_size(sizes, self.sizes()[d], "unflatten");
  DimVector shape;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == d) {
      for (int64_t s : inner) shape.push_back(s);
    } else {
      shape.push_back(self.sizes()[i]);
    }
  }
  return view(self, shape);
}

// split and chunk return one tensor a piece. A count that no memory could hold (an empty dim in
// 2^40 chunks, a dim expanded to 2^40 elements in pieces of 1) is refused before anything is
// allocated, with the operator's own error rather than std::bad_alloc.
constexpr int64_t kMaxPieces = int64_t{1} << 31;

std::vector<Tensor> split_composite(const Tensor& self, int64_t split_size, int64_t dim) {
  ANATOMY_CHECK(self.dim() > 0, ValueError, "split: cannot split a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "split");
  int64_t len = self.sizes()[d];
  ANATOMY_CHECK(split_size > 0 || (split_size == 0 && len == 0), ValueError,
                "split: split_size must be positive, got {} for dim {} of size {}", split_size, d, len);
  const int64_t pieces = len == 0 ? 1 : 1 + (len - 1) / split_size;
  ANATOMY_CHECK(pieces <= kMaxPieces, ValueError,
                "split: dim {} of size {} in pieces of {} would be {} tensors, more than the {} one call returns", d,
                len, split_size, pieces, kMaxPieces);
  // Piece i starts at i * split_size <= len - 1: a running start would step past INT64_MAX
  // after the last piece of a dim longer than INT64_MAX / 2.
  std::vector<int64_t> sizes(static_cast<size_t>(pieces), 0);
  for (int64_t i = 0; i < pieces && len > 0; ++i) sizes[i] = std::min(split_size, len - i * split_size);
  return split_with_sizes(self, sizes, d);
}

std::vector<Tensor> chunk_composite(const Tensor& self, int64_t chunks, int64_t dim) {
  ANATOMY_CHECK(self.dim() > 0, ValueError, "chunk: cannot chunk a 0-dim tensor");
  ANATOMY_CHECK(chunks > 0, ValueError, "chunk: number of chunks must be positive, got {}", chunks);
  int64_t d = wrap_dim(dim, self.dim(), "chunk");
  int64_t len = self.sizes()[d];
  // ceil(len / chunks), without forming len + chunks - 1 (chunks may be near INT64_MAX).
  const int64_t split_size = len == 0 ? 0 : 1 + (len - 1) / chunks;
  // PyTorch's rule: an empty dim gives `chunks` empty tensors; others ceil(len / split_size).
  const int64_t pieces = len == 0 ? chunks : 1 + (len - 1) / split_size;
  ANATOMY_CHECK(pieces <= kMaxPieces, ValueError,
                "chunk: {} chunks of dim {} (size {}) would be {} tensors, more than the {} one call returns", chunks,
                d, len, pieces, kMaxPieces);
  if (len == 0) {
    std::vector<int64_t> sizes(static_cast<size_t>(chunks), 0);
    return split_with_sizes(self, sizes, d);
  }
  return split(self, split_size, d);
}

// PyTorch's movedim: source dim i goes to destination[i]; the other dims keep their order in
// the positions left free. Repeated dims in either list are errors.
Tensor movedim_composite(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  ANATOMY_CHECK(source.size() == destination.size(), ValueError,
                "movedim: source ({} dims) and destination ({} dims) must hold the same number of dims", source.size(),
                destination.size());
  const int64_t n = self.dim();
  if (n == 0) {
    for (int64_t d : source) wrap_dim(d, n, "movedim");
    for (int64_t d : destination) wrap_dim(d, n, "movedim");
    return view(self, self.sizes());
  }
  DimVector order(static_cast<size_t>(n), -1);
  std::vector<bool> src_used(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    ANATOMY_CHECK(!src_used[s], ValueError, "movedim: repeated dim in source [{}]", fmt::join(source, ", "));
    ANATOMY_CHECK(order[d] == -1, ValueError, "movedim: repeated dim in destination [{}]",
                  fmt::join(destination, ", "));
    src_used[s] = true;
    order[d] = s;
  }
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (src_used[next]) ++next;
    o = next++;
  }
  return permute(self, order);
}

Tensor movedim_int_composite(const Tensor& self, int64_t source, int64_t destination) {
  return movedim_composite(self, IntArrayRef(&source, 1), IntArrayRef(&destination, 1));
}

// The composites below leave their checks to the operator they call, and rename its errors
// after themselves (composite_errors.h): the user called swapaxes, not transpose.
Tensor swapaxes_composite(const Tensor& self, int64_t dim0, int64_t dim1) {
  return naming_errors("swapaxes", [&] { return transpose(self, dim0, dim1); });
}
Tensor swapdims_composite(const Tensor& self, int64_t dim0, int64_t dim1) {
  return naming_errors("swapdims", [&] { return transpose(self, dim0, dim1); });
}

// One view per index of `dim`, each without that dim.
std::vector<Tensor> unbind_composite(const Tensor& self, int64_t dim) {
  ANATOMY_CHECK(self.dim() > 0, ValueError, "unbind: cannot unbind a 0-dim tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(self.sizes()[d]));
  for (int64_t i = 0; i < self.sizes()[d]; ++i) out.push_back(select(self, d, i));
  return out;
}

Tensor view_as_composite(const Tensor& self, const Tensor& other) {
  return naming_errors("view_as", [&] { return view(self, other.sizes()); });
}
Tensor reshape_as_composite(const Tensor& self, const Tensor& other) {
  return naming_errors("reshape_as", [&] { return reshape(self, other.sizes()); });
}
Tensor expand_as_composite(const Tensor& self, const Tensor& other) {
  ANATOMY_CHECK(is_expandable_to(self.sizes(), other.sizes()), ValueError,
                "expand_as: self of shape [{}] does not broadcast to other's shape [{}]", fmt::join(self.sizes(), ", "),
                fmt::join(other.sizes(), ", "));
  return expand(self, other.sizes());
}
Tensor broadcast_to_composite(const Tensor& self, IntArrayRef size) {
  return naming_errors("broadcast_to", [&] { return expand(self, size); });
}

std::vector<Tensor> broadcast_tensors_composite(TensorList tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

// Input i (0-dim or 1-D) becomes a view expanded along every other dim. "xy" swaps the roles of
// the first two inputs in the result's shape (NumPy's Cartesian indexing).
std::vector<Tensor> meshgrid_indexing_composite(TensorList tensors, std::string_view indexing) {
  ANATOMY_CHECK(indexing == "ij" || indexing == "xy", ValueError,
                "meshgrid: indexing must be \"ij\" or \"xy\", got \"{}\"", indexing);
  ANATOMY_CHECK(!tensors.empty(), ValueError, "meshgrid: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    ANATOMY_CHECK(t.dim() <= 1, ValueError, "meshgrid: expected 0-dim or 1-D tensors, got {} dims for tensor {}",
                  t.dim(), i);
    ANATOMY_CHECK(t.dtype() == tensors[0].dtype(), TypeError,
                  "meshgrid: expected tensors of one dtype, got {} (tensor 0) and {} (tensor {})",
                  name(tensors[0].dtype()), name(t.dtype()), i);
    ANATOMY_CHECK(t.device() == tensors[0].device(), ValueError,
                  "meshgrid: expected tensors on one device, got {} (tensor 0) and {} (tensor {})",
                  tensors[0].device().str(), t.device().str(), i);
  }
  const size_t n = tensors.size();
  const bool swap = indexing == "xy" && n >= 2;
  DimVector shape;
  for (const Tensor& t : tensors) shape.push_back(t.numel());
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t pos = swap && i < 2 ? 1 - i : i;
    DimVector one(n, 1);
    one[pos] = tensors[i].numel();
    out.push_back(expand(view(tensors[i], one), shape));
  }
  return out;
}

// PyTorch's default (it warns that the default will change; anatomy keeps "ij").
std::vector<Tensor> meshgrid_composite(TensorList tensors) { return meshgrid_indexing_composite(tensors, "ij"); }

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("view(Tensor(a) self, int[] size) -> Tensor(a)");
  m.def("as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)");
  m.def("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)");
  m.def("permute(Tensor(a) self, int[] dims) -> Tensor(a)");
  m.def("slice.Tensor(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)");
  m.def("select.int(Tensor(a) self, int dim, int index) -> Tensor(a)");
  m.def("squeeze(Tensor(a) self) -> Tensor(a)");
  m.def("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)");
  m.def("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)");
  m.def("expand(Tensor(a) self, int[] size) -> Tensor(a)");
  m.def("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)");
  m.def("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)");
  m.def("split_with_sizes(Tensor(a) self, int[] split_sizes, int dim=0) -> Tensor[]");
  // Composites: written with the views above, so autograd differentiates through them.
  m.def("reshape(Tensor(a) self, int[] shape) -> Tensor(a)", ANATOMY_KERNEL(reshape_composite));
  m.def("t(Tensor(a) self) -> Tensor(a)", ANATOMY_KERNEL(t_composite));
  m.def("narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", ANATOMY_KERNEL(narrow_composite));
  m.def("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
        ANATOMY_KERNEL(flatten_composite));
  m.def("unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)", ANATOMY_KERNEL(unflatten_composite));
  m.def("split.Tensor(Tensor(a) self, int split_size, int dim=0) -> Tensor[]", ANATOMY_KERNEL(split_composite));
  m.def("chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor[]", ANATOMY_KERNEL(chunk_composite));
  m.def("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
        ANATOMY_KERNEL(movedim_composite));
  m.def("movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)", ANATOMY_KERNEL(movedim_int_composite));
  m.def("moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
        ANATOMY_KERNEL(movedim_composite));
  m.def("moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
        ANATOMY_KERNEL(movedim_int_composite));
  m.def("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", ANATOMY_KERNEL(swapaxes_composite));
  m.def("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", ANATOMY_KERNEL(swapdims_composite));
  m.def("unbind.int(Tensor(a) self, int dim=0) -> Tensor[]", ANATOMY_KERNEL(unbind_composite));
  m.def("view_as(Tensor(a) self, Tensor other) -> Tensor(a)", ANATOMY_KERNEL(view_as_composite));
  m.def("reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", ANATOMY_KERNEL(reshape_as_composite));
  m.def("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", ANATOMY_KERNEL(expand_as_composite));
  m.def("broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)", ANATOMY_KERNEL(broadcast_to_composite));
  m.def("broadcast_tensors(Tensor[] tensors) -> Tensor[]", ANATOMY_KERNEL(broadcast_tensors_composite));
  m.def("meshgrid(Tensor[] tensors) -> Tensor[]", ANATOMY_KERNEL(meshgrid_composite));
  m.def("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]",
        ANATOMY_KERNEL(meshgrid_indexing_composite));
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("view", ANATOMY_KERNEL(views::view));
  m.impl("as_strided", ANATOMY_KERNEL(views::as_strided));
  m.impl("transpose.int", ANATOMY_KERNEL(views::transpose));
  m.impl("permute", ANATOMY_KERNEL(views::permute));
  m.impl("slice.Tensor", ANATOMY_KERNEL(views::slice));
  m.impl("select.int", ANATOMY_KERNEL(views::select));
  m.impl("squeeze", ANATOMY_KERNEL(views::squeeze));
  m.impl("squeeze.dim", ANATOMY_KERNEL(views::squeeze_dim));
  m.impl("unsqueeze", ANATOMY_KERNEL(views::unsqueeze));
  m.impl("expand", ANATOMY_KERNEL(views::expand));
  m.impl("unfold", ANATOMY_KERNEL(views::unfold));
  m.impl("diagonal", ANATOMY_KERNEL(views::diagonal));
  m.impl("split_with_sizes", ANATOMY_KERNEL(views::split_with_sizes));
}

// ---- the C++ API ----
using OptInt = std::optional<int64_t>;

Tensor view(const Tensor& self, IntArrayRef size) {
  ANATOMY_OP(op, "aten::view", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, size);
}
Tensor reshape(const Tensor& self, IntArrayRef shape) {
  ANATOMY_OP(op, "aten::reshape", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, shape);
}
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, OptInt storage_offset) {
  ANATOMY_OP(op, "aten::as_strided", Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptInt));
  return op.call(self, size, stride, storage_offset);
}
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  ANATOMY_OP(op, "aten::transpose.int", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, dim0, dim1);
}
Tensor t(const Tensor& self) {
  ANATOMY_OP(op, "aten::t", Tensor(const Tensor&));
  return op.call(self);
}
Tensor permute(const Tensor& self, IntArrayRef dims) {
  ANATOMY_OP(op, "aten::permute", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, dims);
}
Tensor slice(const Tensor& self, int64_t dim, OptInt start, OptInt end, int64_t step) {
  ANATOMY_OP(op, "aten::slice.Tensor", Tensor(const Tensor&, int64_t, OptInt, OptInt, int64_t));
  return op.call(self, dim, start, end, step);
}
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  ANATOMY_OP(op, "aten::narrow", Tensor(const Tensor&, int64_t, int64_t, int64_t));
  return op.call(self, dim, start, length);
}
Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  ANATOMY_OP(op, "aten::select.int", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, dim, index);
}
Tensor squeeze(const Tensor& self) {
  ANATOMY_OP(op, "aten::squeeze", Tensor(const Tensor&));
  return op.call(self);
}
Tensor squeeze(const Tensor& self, int64_t dim) {
  ANATOMY_OP(op, "aten::squeeze.dim", Tensor(const Tensor&, int64_t));
  return op.call(self, dim);
}
Tensor unsqueeze(const Tensor& self, int64_t dim) {
  ANATOMY_OP(op, "aten::unsqueeze", Tensor(const Tensor&, int64_t));
  return op.call(self, dim);
}
Tensor expand(const Tensor& self, IntArrayRef size) {
  ANATOMY_OP(op, "aten::expand", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, size);
}
Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  ANATOMY_OP(op, "aten::flatten.using_ints", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, start_dim, end_dim);
}
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  ANATOMY_OP(op, "aten::unflatten.int", Tensor(const Tensor&, int64_t, IntArrayRef));
  return op.call(self, dim, sizes);
}
Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  ANATOMY_OP(op, "aten::unfold", Tensor(const Tensor&, int64_t, int64_t, int64_t));
  return op.call(self, dimension, size, step);
}
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  ANATOMY_OP(op, "aten::diagonal", Tensor(const Tensor&, int64_t, int64_t, int64_t));
  return op.call(self, offset, dim1, dim2);
}
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  ANATOMY_OP(op, "aten::split.Tensor", std::vector<Tensor>(const Tensor&, int64_t, int64_t));
  return op.call(self, split_size, dim);
}
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  ANATOMY_OP(op, "aten::split_with_sizes", std::vector<Tensor>(const Tensor&, IntArrayRef, int64_t));
  return op.call(self, split_sizes, dim);
}
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  ANATOMY_OP(op, "aten::chunk", std::vector<Tensor>(const Tensor&, int64_t, int64_t));
  return op.call(self, chunks, dim);
}
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  ANATOMY_OP(op, "aten::movedim.intlist", Tensor(const Tensor&, IntArrayRef, IntArrayRef));
  return op.call(self, source, destination);
}
Tensor movedim(const Tensor& self, int64_t source, int64_t destination) {
  ANATOMY_OP(op, "aten::movedim.int", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, source, destination);
}
Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  ANATOMY_OP(op, "aten::moveaxis.intlist", Tensor(const Tensor&, IntArrayRef, IntArrayRef));
  return op.call(self, source, destination);
}
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination) {
  ANATOMY_OP(op, "aten::moveaxis.int", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, source, destination);
}
Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) {
  ANATOMY_OP(op, "aten::swapaxes", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, axis0, axis1);
}
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) {
  ANATOMY_OP(op, "aten::swapdims", Tensor(const Tensor&, int64_t, int64_t));
  return op.call(self, dim0, dim1);
}
std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  ANATOMY_OP(op, "aten::unbind.int", std::vector<Tensor>(const Tensor&, int64_t));
  return op.call(self, dim);
}
Tensor view_as(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::view_as", Tensor(const Tensor&, const Tensor&));
  return op.call(self, other);
}
Tensor reshape_as(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::reshape_as", Tensor(const Tensor&, const Tensor&));
  return op.call(self, other);
}
Tensor expand_as(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::expand_as", Tensor(const Tensor&, const Tensor&));
  return op.call(self, other);
}
Tensor broadcast_to(const Tensor& self, IntArrayRef size) {
  ANATOMY_OP(op, "aten::broadcast_to", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, size);
}
std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  ANATOMY_OP(op, "aten::broadcast_tensors", std::vector<Tensor>(TensorList));
  return op.call(tensors);
}
std::vector<Tensor> meshgrid(TensorList tensors) {
  ANATOMY_OP(op, "aten::meshgrid", std::vector<Tensor>(TensorList));
  return op.call(tensors);
}
std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing) {
  ANATOMY_OP(op, "aten::meshgrid.indexing", std::vector<Tensor>(TensorList, std::string_view));
  return op.call(tensors, indexing);
}

}  // namespace anatomy
