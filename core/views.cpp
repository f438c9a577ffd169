// Metadata-only view kernels (sizes, strides, offset); each checks its arguments and names
// itself in the error.
#include "anatomy/core/views.h"

#include <algorithm>
#include <limits>

#include "anatomy/core/checked_arith.h"
#include "anatomy/core/empty_tensor.h"

namespace anatomy::views {

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, const char* op) {
  // Each view computes its offset with checked arithmetic. A non-empty view lies inside its
  // storage; an empty one is only held to what as_strided checks: its reach fits int64 and its
  // offset int64 bytes (data() computes them).
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) {
    checked_view_reach(sizes, strides, storage_offset, base.element_size(), op);
  }
  return Tensor(IntrusivePtr<TensorImpl>::make(*base.impl(), sizes, strides, storage_offset));
}

namespace {
// Sets the stride of dim d of a view at `offset` that steps `step` elements of `stride` (slice,
// unfold): PyTorch's stride * step. More than one element cannot be addressed past int64. One
// element (or none) never uses its stride, but a loop over the view steps once past it, so
// when the view's extent would then leave int64 bytes (x[3::2**63-1]) such a dim keeps the
// input's stride instead.
void set_stepped_stride(const Tensor& self, IntArrayRef sizes, DimVector& strides, int64_t d, int64_t stride,
                        int64_t step, int64_t offset, const char* op) {
  const bool fits = mul_fits(stride, step, strides[d]);
  if (sizes[d] > 1) {
    ANATOMY_CHECK(fits, ValueError, "{}: step {} times stride {} overflows int64", op, step, stride);
  } else if (!fits || !view_extent_fits(sizes, strides, offset, self.element_size())) {
    strides[d] = stride;
  }
}
}  // namespace

Tensor view(const Tensor& self, IntArrayRef size) {
  DimVector shape = infer_size(size, self.numel(), "view");
  // An empty tensor is viewed with contiguous strides, which must exist for the new shape.
  if (self.numel() == 0) checked_contiguous_strides(shape, "view");
  auto strides = compute_view_strides(self.sizes(), self.strides(), shape);
  ANATOMY_CHECK(strides.has_value(), ValueError,
                "view: size [{}] is not compatible with input size [{}] and strides [{}] (at least one dimension "
                "spans across two contiguous subspaces); use reshape instead",
                fmt::join(size, ", "), fmt::join(self.sizes(), ", "), fmt::join(self.strides(), ", "));
  return make_view(self, shape, *strides, self.storage_offset(), "view");
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  ANATOMY_CHECK(size.size() == stride.size(), ValueError,
                "as_strided: size [{}] and stride [{}] have different lengths", fmt::join(size, ", "),
                fmt::join(stride, ", "));
  int64_t offset = storage_offset.value_or(self.storage_offset());
  ANATOMY_CHECK(offset >= 0, ValueError, "as_strided: negative storage offset {}", offset);
  int64_t numel = checked_numel(size, "as_strided");
  checked_span(size, "as_strided");
  for (size_t i = 0; i < size.size(); ++i) {
    ANATOMY_CHECK(stride[i] >= 0, ValueError, "as_strided: negative stride {} at dim {}", stride[i], i);
  }
  // Checked for an empty view too: later views and kernels compute offsets from its metadata.
  const int64_t last = checked_view_reach(size, stride, offset, self.element_size(), "as_strided");
  int64_t storage_elems = static_cast<int64_t>(self.storage()->nbytes() / self.element_size());
  if (numel == 0) {
    // PyTorch accepts any offset for an empty view. Slicing a view to the end of its dims
    // leaves it at most one stride a dim past its storage's end; further than that it is
    // refused (its backward would allocate up to its offset).
    int64_t bound = storage_elems;
    for (int64_t s : stride) {
      if (!add_fits(bound, s, bound)) bound = std::numeric_limits<int64_t>::max();
    }
    ANATOMY_CHECK(offset <= bound, ValueError,
                  "as_strided: the empty view of size [{}] and stride [{}] at storage offset {} starts past its "
                  "storage of {} elements by more than one stride a dim",
                  fmt::join(size, ", "), fmt::join(stride, ", "), offset, storage_elems);
  }
  ANATOMY_CHECK(numel == 0 || last < storage_elems, ValueError,
                "as_strided: size [{}], stride [{}] and offset {} reach element {}, but the storage holds {} elements "
                "of {}",
                fmt::join(size, ", "), fmt::join(stride, ", "), offset, last, storage_elems, name(self.dtype()));
  return make_view(self, size, stride, offset, "as_strided");
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  int64_t n = self.dim();
  if (n == 0) {
    wrap_dim(dim0, n, "transpose");
    wrap_dim(dim1, n, "transpose");
    return make_view(self, self.sizes(), self.strides(), self.storage_offset(), "transpose");
  }
  int64_t a = wrap_dim(dim0, n, "transpose"), b = wrap_dim(dim1, n, "transpose");
  DimVector sizes(self.sizes()), strides(self.strides());
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return make_view(self, sizes, strides, self.storage_offset(), "transpose");
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  int64_t n = self.dim();
  ANATOMY_CHECK(static_cast<int64_t>(dims.size()) == n, ValueError,
                "permute: number of dims [{}] does not match the tensor's {} dims", fmt::join(dims, ", "), n);
  DimVector sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    ANATOMY_CHECK(!seen[d], ValueError, "permute: dim {} repeats in [{}]", d, fmt::join(dims, ", "));
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset(), "permute");
}

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  ANATOMY_CHECK(self.dim() > 0, IndexError, "slice: cannot slice a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "slice");
  ANATOMY_CHECK(step > 0, ValueError, "slice: step must be positive, got {}", step);
  int64_t len = self.sizes()[d];
  // Python slicing: negative indices count from the end; out-of-range bounds clamp.
  auto clamp_index = [len](int64_t i) {
    if (i < 0) i += len;
    return std::clamp<int64_t>(i, 0, len);
  };
  int64_t s = start ? clamp_index(*start) : 0;
  int64_t e = end ? clamp_index(*end) : len;
  if (e < s) e = s;
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes[d] = e == s ? 0 : 1 + (e - s - 1) / step;
  int64_t offset;
  ANATOMY_CHECK(mul_fits(s, self.strides()[d], offset) && add_fits(self.storage_offset(), offset, offset), ValueError,
                "slice: start {} of dim {} (stride {}) from storage offset {} overflows int64", s, d, self.strides()[d],
                self.storage_offset());
  set_stepped_stride(self, sizes, strides, d, self.strides()[d], step, offset, "slice");
  return make_view(self, sizes, strides, offset, "slice");
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  ANATOMY_CHECK(self.dim() > 0, IndexError, "select: cannot select from a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "select");
  int64_t len = self.sizes()[d];
  ANATOMY_CHECK(index >= -len && index < len, IndexError, "select: index {} is out of range for dim {} of size {}",
                index, d, len);
  if (index < 0) index += len;
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(d);
  strides.erase(d);
  int64_t offset;
  ANATOMY_CHECK(mul_fits(index, self.strides()[d], offset) && add_fits(self.storage_offset(), offset, offset),
                ValueError, "select: index {} of dim {} (stride {}) from storage offset {} overflows int64", index, d,
                self.strides()[d], self.storage_offset());
  return make_view(self, sizes, strides, offset, "select");
}

Tensor squeeze(const Tensor& self) {
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (self.sizes()[i] != 1) {
      sizes.push_back(self.sizes()[i]);
      strides.push_back(self.strides()[i]);
    }
  }
  return make_view(self, sizes, strides, self.storage_offset(), "squeeze");
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim(), "squeeze");
  if (self.dim() == 0 || self.sizes()[d] != 1) {
    return make_view(self, self.sizes(), self.strides(), self.storage_offset(), "squeeze");
  }
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(d);
  strides.erase(d);
  return make_view(self, sizes, strides, self.storage_offset(), "squeeze");
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  DimVector sizes(self.sizes()), strides(self.strides());
  // The new dim's stride makes it look contiguous with the dim after it.
  int64_t stride =
      d < self.dim() ? checked_mul(self.sizes()[d], self.strides()[d], "unsqueeze", "the new dim's stride") : 1;
  sizes.insert(d, 1);
  strides.insert(d, stride);
  return make_view(self, sizes, strides, self.storage_offset(), "unsqueeze");
}

Tensor expand(const Tensor& self, IntArrayRef size) {
  int64_t n = static_cast<int64_t>(size.size());
  ANATOMY_CHECK(n >= self.dim(), ValueError, "expand: the number of sizes [{}] must be at least the tensor's dims ({})",
                fmt::join(size, ", "), self.dim());
  DimVector sizes(n), strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t offset = n - 1 - i;
    int64_t self_d = self.dim() - 1 - offset;
    int64_t self_size = self_d >= 0 ? self.sizes()[self_d] : 1;
    int64_t self_stride = self_d >= 0 ? self.strides()[self_d] : 0;
    int64_t want = size[i];
    if (want == -1) {
      ANATOMY_CHECK(self_d >= 0, ValueError, "expand: -1 is not allowed for the new leading dim {} in [{}]", i,
                    fmt::join(size, ", "));
      want = self_size;
    }
    ANATOMY_CHECK(want >= 0, ValueError, "expand: invalid size {} at dim {}", want, i);
    if (self_size == want) {
      sizes[i] = want;
      strides[i] = self_stride;
    } else {
      ANATOMY_CHECK(self_size == 1, ValueError,
                    "expand: the expanded size {} must match the existing size {} at non-singleton dim {} (target "
                    "[{}], tensor [{}])",
                    want, self_size, i, fmt::join(size, ", "), fmt::join(self.sizes(), ", "));
      sizes[i] = want;
      strides[i] = 0;
    }
  }
  checked_numel(sizes, "expand");
  checked_span(sizes, "expand");  // zeros({1, 1}).expand({0, 2^62}) is fine, ({0, 2^62, 4}) is not
  return make_view(self, sizes, strides, self.storage_offset(), "expand");
}

Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = wrap_dim(dimension, self.dim(), "unfold");
  int64_t len = self.dim() == 0 ? 1 : self.sizes()[d];
  ANATOMY_CHECK(size >= 0 && size <= len, ValueError, "unfold: size {} must be in [0, {}] for dim {}", size, len, d);
  ANATOMY_CHECK(step > 0, ValueError, "unfold: step must be positive, got {}", step);
  DimVector sizes(self.sizes()), strides(self.strides());
  if (self.dim() == 0) {
    sizes.push_back(size);
    strides.push_back(1);
    return make_view(self, sizes, strides, self.storage_offset(), "unfold");
  }
  int64_t stride_d = strides[d];
  sizes[d] = (len - size) / step + 1;
  sizes.push_back(size);
  strides.push_back(stride_d);
  set_stepped_stride(self, sizes, strides, d, stride_d, step, self.storage_offset(), "unfold");
  // Overlapping windows repeat elements: the count can outgrow the input's.
  checked_numel(sizes, "unfold");
  checked_span(sizes, "unfold");
  return make_view(self, sizes, strides, self.storage_offset(), "unfold");
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  ANATOMY_CHECK(self.dim() >= 2, ValueError, "diagonal: needs at least 2 dims, got {}", self.dim());
  int64_t a = wrap_dim(dim1, self.dim(), "diagonal"), b = wrap_dim(dim2, self.dim(), "diagonal");
  ANATOMY_CHECK(a != b, ValueError, "diagonal: dim1 and dim2 are both {}", a);
  // The first element is |offset| steps along dim2 (dim1 for a negative offset); |offset| is
  // less than that dim's size when the diagonal is not empty.
  const int64_t len = offset >= 0 ? std::max<int64_t>(std::min(self.sizes()[a], self.sizes()[b] - offset), 0)
                                  : std::max<int64_t>(std::min(self.sizes()[a] + offset, self.sizes()[b]), 0);
  const int64_t along = offset >= 0 ? b : a;
  int64_t start = self.storage_offset();
  if (len > 0) {
    int64_t shift;
    ANATOMY_CHECK(mul_fits(offset >= 0 ? offset : -offset, self.strides()[along], shift) &&
                      add_fits(self.storage_offset(), shift, start),
                  ValueError, "diagonal: offset {} along dim {} (stride {}) from storage offset {} overflows int64",
                  offset, along, self.strides()[along], self.storage_offset());
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == a || i == b) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  sizes.push_back(len);
  strides.push_back(checked_add(self.strides()[a], self.strides()[b], "diagonal", "the diagonal's stride"));
  return make_view(self, sizes, strides, start, "diagonal");
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  ANATOMY_CHECK(self.dim() > 0, ValueError, "split: cannot split a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "split");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    ANATOMY_CHECK(s >= 0, ValueError, "split: negative split size {} in [{}]", s, fmt::join(split_sizes, ", "));
    ANATOMY_CHECK(s <= self.sizes()[d] - total, ValueError, "split: sizes [{}] add up to more than dim {} of size {}",
                  fmt::join(split_sizes, ", "), d, self.sizes()[d]);
    total += s;
  }
  ANATOMY_CHECK(total == self.sizes()[d], ValueError, "split: sizes [{}] add up to {}, but dim {} has size {}",
                fmt::join(split_sizes, ", "), total, d, self.sizes()[d]);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    DimVector sizes(self.sizes());
    sizes[d] = s;
    int64_t offset;
    ANATOMY_CHECK(mul_fits(start, self.strides()[d], offset) && add_fits(self.storage_offset(), offset, offset),
                  ValueError, "split: a piece at {} of dim {} (stride {}) from storage offset {} overflows int64",
                  start, d, self.strides()[d], self.storage_offset());
    out.push_back(make_view(self, sizes, self.strides(), offset, "split"));
    start += s;
  }
  return out;
}

}  // namespace anatomy::views
