// Metadata-only view kernels (sizes, strides, offset); each checks its arguments and names
// itself in the error.
#include "anatomy/core/views.h"

#include <algorithm>

#include "anatomy/core/empty_tensor.h"

namespace anatomy::views {

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  return Tensor(IntrusivePtr<TensorImpl>::make(*base.impl(), sizes, strides, storage_offset));
}

Tensor view(const Tensor& self, IntArrayRef size) {
  DimVector shape = infer_size(size, self.numel(), "view");
  auto strides = compute_view_strides(self.sizes(), self.strides(), shape);
  ANATOMY_CHECK(strides.has_value(), ValueError,
                "view: size [{}] is not compatible with input size [{}] and strides [{}] (at least one dimension "
                "spans across two contiguous subspaces); use reshape instead",
                fmt::join(size, ", "), fmt::join(self.sizes(), ", "), fmt::join(self.strides(), ", "));
  return make_view(self, shape, *strides, self.storage_offset());
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  ANATOMY_CHECK(size.size() == stride.size(), ValueError, "as_strided: size [{}] and stride [{}] have different lengths",
                fmt::join(size, ", "), fmt::join(stride, ", "));
  int64_t offset = storage_offset.value_or(self.storage_offset());
  ANATOMY_CHECK(offset >= 0, ValueError, "as_strided: negative storage offset {}", offset);
  int64_t numel = checked_numel(size, "as_strided");
  for (size_t i = 0; i < size.size(); ++i) {
    ANATOMY_CHECK(stride[i] >= 0, ValueError, "as_strided: negative stride {} at dim {}", stride[i], i);
  }
  // Index of the furthest element the view reaches (checked against overflow).
  int64_t last = 0;
  ANATOMY_CHECK(!__builtin_add_overflow(offset, required_storage_elements(size, stride, "as_strided") - 1, &last),
                ValueError, "as_strided: offset {} with sizes [{}] and strides [{}] overflows", offset,
                fmt::join(size, ", "), fmt::join(stride, ", "));
  int64_t storage_elems = static_cast<int64_t>(self.storage()->nbytes() / self.element_size());
  ANATOMY_CHECK(numel == 0 || last < storage_elems, ValueError,
                "as_strided: size [{}], stride [{}] and offset {} reach element {}, but the storage holds {} elements "
                "of {}",
                fmt::join(size, ", "), fmt::join(stride, ", "), offset, last, storage_elems, name(self.dtype()));
  return make_view(self, size, stride, offset);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  int64_t n = self.dim();
  if (n == 0) {
    wrap_dim(dim0, n, "transpose");
    wrap_dim(dim1, n, "transpose");
    return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  }
  int64_t a = wrap_dim(dim0, n, "transpose"), b = wrap_dim(dim1, n, "transpose");
  DimVector sizes(self.sizes()), strides(self.strides());
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return make_view(self, sizes, strides, self.storage_offset());
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
  return make_view(self, sizes, strides, self.storage_offset());
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
  // PyTorch's stride is stride * step. When that overflows, a dim of at most one element never
  // uses its stride, so the original one is kept; more elements cannot be addressed.
  if (__builtin_mul_overflow(self.strides()[d], step, &strides[d])) {
    ANATOMY_CHECK(sizes[d] <= 1, ValueError, "slice: step {} times stride {} overflows", step, self.strides()[d]);
    strides[d] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset() + s * self.strides()[d]);
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
  return make_view(self, sizes, strides, self.storage_offset() + index * self.strides()[d]);
}

Tensor squeeze(const Tensor& self) {
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (self.sizes()[i] != 1) {
      sizes.push_back(self.sizes()[i]);
      strides.push_back(self.strides()[i]);
    }
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim(), "squeeze");
  if (self.dim() == 0 || self.sizes()[d] != 1) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(d);
  strides.erase(d);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  DimVector sizes(self.sizes()), strides(self.strides());
  // The new dim's stride makes it look contiguous with the dim after it.
  int64_t stride = d < self.dim() ? self.sizes()[d] * self.strides()[d] : 1;
  sizes.insert(d, 1);
  strides.insert(d, stride);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor expand(const Tensor& self, IntArrayRef size) {
  int64_t n = static_cast<int64_t>(size.size());
  ANATOMY_CHECK(n >= self.dim(), ValueError,
                "expand: the number of sizes [{}] must be at least the tensor's dims ({})", fmt::join(size, ", "),
                self.dim());
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
  return make_view(self, sizes, strides, self.storage_offset());
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
    return make_view(self, sizes, strides, self.storage_offset());
  }
  int64_t stride_d = strides[d];
  sizes[d] = (len - size) / step + 1;
  strides[d] = step * stride_d;
  sizes.push_back(size);
  strides.push_back(stride_d);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  ANATOMY_CHECK(self.dim() >= 2, ValueError, "diagonal: needs at least 2 dims, got {}", self.dim());
  int64_t a = wrap_dim(dim1, self.dim(), "diagonal"), b = wrap_dim(dim2, self.dim(), "diagonal");
  ANATOMY_CHECK(a != b, ValueError, "diagonal: dim1 and dim2 are both {}", a);
  int64_t start = self.storage_offset();
  int64_t len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self.sizes()[a], self.sizes()[b] - offset), 0);
    if (len > 0) start += offset * self.strides()[b];
  } else {
    len = std::max<int64_t>(std::min(self.sizes()[a] + offset, self.sizes()[b]), 0);
    if (len > 0) start -= offset * self.strides()[a];
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == a || i == b) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  sizes.push_back(len);
  strides.push_back(self.strides()[a] + self.strides()[b]);
  return make_view(self, sizes, strides, start);
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
  ANATOMY_CHECK(total == self.sizes()[d], ValueError,
                "split: sizes [{}] add up to {}, but dim {} has size {}", fmt::join(split_sizes, ", "), total, d,
                self.sizes()[d]);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    DimVector sizes(self.sizes());
    sizes[d] = s;
    out.push_back(make_view(self, sizes, self.strides(), self.storage_offset() + start * self.strides()[d]));
    start += s;
  }
  return out;
}

}  // namespace anatomy::views
