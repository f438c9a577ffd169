// Tensor: the user-facing handle. Copying a Tensor shares its TensorImpl (one atomic
// increment); views share the storage. Methods that compute are declared here and defined in
// dispatch/ops/tensor_methods.cpp, beside the operator declarations they call, so a method call
// goes through the dispatcher exactly like the free function.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "anatomy/core/error.h"
#include "anatomy/core/op_lists.h"
#include "anatomy/core/optional_array_ref.h"
#include "anatomy/core/scalar.h"
#include "anatomy/core/tensor_impl.h"
#include "anatomy/core/tensor_options.h"

namespace anatomy {

class Tensor;
namespace autograd {
class Node;
}
namespace indexing {
class TensorIndex;  // dispatch/ops/tensor_index.h
}
using TensorList = ArrayRef<Tensor>;

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: defined() is false
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  // How many Tensor handles share this TensorImpl (views have their own).
  uint32_t use_count() const { return impl_.use_count(); }
  // The same TensorImpl (not merely the same storage).
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // Shares storage with `o` (a view of it, or it of a view).
  bool is_alias_of(const Tensor& o) const;

  // ---- metadata (no dispatch) ----
  IntArrayRef sizes() const { return impl()->sizes(); }
  IntArrayRef strides() const { return impl()->strides(); }
  // Size and stride of one dim; negative dims count from the end. IndexError when out of range.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl()->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl()->numel(); }
  int64_t storage_offset() const { return impl()->storage_offset(); }
  DType dtype() const { return impl()->dtype(); }
  Device device() const { return impl()->device(); }
  size_t element_size() const { return anatomy::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_meta() const { return device().is_meta(); }
  bool is_floating_point() const { return is_floating(dtype()); }
  bool is_contiguous(MemoryFormat f = MemoryFormat::Contiguous) const { return impl()->is_contiguous(f); }
  bool is_non_overlapping_and_dense() const { return impl()->is_non_overlapping_and_dense(); }
  DispatchKeySet key_set() const { return impl()->key_set(); }
  const Storage& storage() const { return impl()->storage(); }
  uint32_t version() const { return impl()->version(); }
  // Made in InferenceMode (or a view of such a tensor): no version counter (docs/autograd.md).
  bool is_inference() const { return impl()->is_inference(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }

  // Address of element 0 of this view. data_ptr<T>() checks that T is the tensor's dtype.
  void* data_ptr() const { return impl()->data(); }
  template <typename T>
  T* data_ptr() const {
    ANATOMY_CHECK(cpp_dtype_v<T> == dtype(), TypeError, "data_ptr: asked for {} but the tensor is {}",
                  name(cpp_dtype_v<T>), name(dtype()));
    return static_cast<T*>(data_ptr());
  }

  // ---- autograd slot (filled by the autograd module) ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool value = true);
  // Defined in autograd/tensor_autograd.cpp (docs/autograd.md).
  Tensor grad() const;                   // the accumulated gradient (undefined until a backward reaches this tensor)
  void set_grad(const Tensor& g) const;  // replaces .grad (undefined clears it)
  // This tensor, through every handle to it, takes new_data's storage, sizes, strides, dtype and
  // device; its autograd state (requires_grad, .grad, hooks) and version counter stay: PyTorch's
  // `t.data = new_data` (docs/autograd.md, "set_data"). ValueError for an undefined tensor or a
  // view (whose data is its base's), TypeError for integer data given to one that requires grad.
  void set_data(const Tensor& new_data) const;
  autograd::Node* grad_fn() const;  // the node that made this tensor; nullptr for leaves
  bool is_leaf() const;             // no grad_fn: made by the user, or by ops that did not record
  void retain_grad() const;         // a non-leaf keeps its .grad too
  bool retains_grad() const;
  Tensor detach() const;          // same data and version counter, no history
  const Tensor& detach_() const;  // drops this tensor's history; it becomes a leaf
  // Runs backward from this tensor (a scalar, or with `gradient` of its shape).
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false, bool create_graph = false) const;
  // Runs on this tensor's gradient in backward; return a replacement, or an undefined tensor.
  void register_hook(std::function<Tensor(const Tensor&)> hook) const;

  // ---- views (share storage; see docs/tensor.md) ----
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef size) const;
  Tensor as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor T() const;   // all dims reversed
  Tensor mT() const;  // last two dims swapped
  Tensor permute(IntArrayRef dims) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(IntArrayRef size) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor moveaxis(IntArrayRef source, IntArrayRef destination) const;
  Tensor moveaxis(int64_t source, int64_t destination) const;
  Tensor swapaxes(int64_t axis0, int64_t axis1) const;
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor broadcast_to(IntArrayRef size) const;
  Tensor operator[](int64_t index) const { return select(0, index); }

  // ---- copies and conversions ----
  Tensor contiguous(MemoryFormat f = MemoryFormat::Contiguous) const;
  Tensor clone(MemoryFormat f = MemoryFormat::Preserve) const;
  // Copies src into this tensor, converting dtype and crossing devices; src broadcasts to
  // this tensor's shape. Returns *this.
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  // A copy with another dtype, device or layout; the tensor itself when nothing changes and copy
  // is false. memory_format (default Preserve: a dense layout is kept stride for stride) is
  // "nothing changes" when suggest_memory_format(*this) already names it, as in PyTorch.
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  // x.to(memory_format=...): the same dtype and device, laid out in memory_format.
  Tensor to(MemoryFormat memory_format, bool copy = false) const;
  Tensor cpu() const { return to(kCPU); }
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }

  // ---- arithmetic (element-wise, broadcasting, with PyTorch's type promotion) ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& div_(const Tensor& other) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Scalar& other) const;
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode) const;
  const Tensor& div_(const Tensor& other, std::optional<std::string_view> rounding_mode) const;
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Scalar& other) const;
  const Tensor& div_(const Scalar& other) const;
  Tensor div(const Scalar& other, std::optional<std::string_view> rounding_mode) const;
  const Tensor& div_(const Scalar& other, std::optional<std::string_view> rounding_mode) const;
  // Compound assignment, as ATen's: the in-place form, returning this tensor (x += 1 is x.add_(1)).
  const Tensor& operator+=(const Tensor& other) const { return add_(other); }
  const Tensor& operator+=(const Scalar& other) const { return add_(other); }
  const Tensor& operator-=(const Tensor& other) const { return sub_(other); }
  const Tensor& operator-=(const Scalar& other) const { return sub_(other); }
  const Tensor& operator*=(const Tensor& other) const { return mul_(other); }
  const Tensor& operator*=(const Scalar& other) const { return mul_(other); }
  const Tensor& operator/=(const Tensor& other) const { return div_(other); }
  const Tensor& operator/=(const Scalar& other) const { return div_(other); }
  // ---- closeness and equality (dispatch/ops/binary.h) ----
  Tensor isclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  bool equal(const Tensor& other) const;

  // ---- element-wise functions (dispatch/ops/unary.h, ops_binary.h; lists in core/op_lists.h) ----
#define ANATOMY_UNARY_METHODS(e, name, ...) \
  Tensor name() const;                      \
  const Tensor& name##_() const;
  ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_UNARY_METHODS)
#undef ANATOMY_UNARY_METHODS
  Tensor gelu(std::string_view approximate = "none") const;
  Tensor softplus(const Scalar& beta = 1, const Scalar& threshold = 20) const;
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor signbit() const;
  Tensor isposinf() const;
  Tensor isneginf() const;
  Tensor polygamma(int64_t n) const;
  const Tensor& polygamma_(int64_t n) const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  const Tensor& logit_(std::optional<double> eps = std::nullopt) const;
#define ANATOMY_BINARY_METHODS(e, name, ...)        \
  Tensor name(const Tensor& other) const;           \
  Tensor name(const Scalar& other) const;           \
  const Tensor& name##_(const Tensor& other) const; \
  const Tensor& name##_(const Scalar& other) const;
  ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_BINARY_METHODS)
#undef ANATOMY_BINARY_METHODS
  Tensor clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const;
  const Tensor& clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  const Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  const Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  // self where condition, else other.
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor where(const Tensor& condition, const Scalar& other) const;

  // ---- reductions (dispatch/ops/reduce.h; dim std::nullopt reduces every dim, an empty list none) ----
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(OptionalIntArrayRef dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(OptionalIntArrayRef dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(OptionalIntArrayRef dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false) const;
  Tensor amin(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(OptionalIntArrayRef dim = std::nullopt, double correction = 1, bool keepdim = false) const;
  Tensor std(OptionalIntArrayRef dim = std::nullopt, double correction = 1, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(OptionalIntArrayRef dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(OptionalIntArrayRef dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(OptionalIntArrayRef dim, bool keepdim = false) const;
  Tensor count_nonzero(OptionalIntArrayRef dim = std::nullopt) const;
  // statistics (dispatch/ops/statistics.cpp)
  Tensor nansum(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                std::optional<DType> dtype = std::nullopt) const;
  Tensor nanmean(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                 std::optional<DType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;

  // ---- nn (dispatch/ops/nn.h) ----
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;

  // ---- matrix products (dispatch/ops/linalg.h) ----
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor matmul(const Tensor& other) const;
  Tensor dot(const Tensor& other) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor mv(const Tensor& vec) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor kron(const Tensor& other) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor trace() const;

  // ---- shape and data movement (dispatch/ops/indexing.h) ----
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  const Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  const Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const;
  const Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool include_self = true) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  const Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  Tensor take(const Tensor& index) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  const Tensor& tril_(int64_t diagonal = 0) const;
  const Tensor& triu_(int64_t diagonal = 0) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  const Tensor& cumsum_(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  const Tensor& cumprod_(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor logcumsumexp(int64_t dim) const;
  // self[indices] (NumPy advanced indexing; an undefined Tensor is a full slice) and
  // self[indices] = values.
  Tensor index(const std::vector<Tensor>& indices) const;
  const Tensor& index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false) const;
  const Tensor& index_put_(const std::vector<Tensor>& indices, const Scalar& value) const;
  // by index along one dim (dispatch/ops/indexing.h)
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  const Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  const Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  const Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  const Tensor& masked_scatter_(const Tensor& mask, const Tensor& source) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  // Python's self[...] and self[...] = values, as ATen's: x.index({Slice(1, None), 0, "...", None})
  // is x[1:, 0, ..., None] (anatomy::indexing, dispatch/ops/tensor_index.h). A view unless a
  // tensor or a bool is among the indices. A braced list of Tensors picks these overloads, with
  // the same meaning as the std::vector<Tensor> ones.
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& values) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) const;

  // ---- in-place fills ----
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const;
  const Tensor& uniform_(double from = 0.0, double to = 1.0) const;
  const Tensor& normal_(double mean = 0.0, double std = 1.0) const;

 private:
  IntrusivePtr<TensorImpl> impl_;
};

// Operators: a scalar operand is a 0-dim tensor, which promotion treats as a weak type (an fp16
// tensor times 2 stays fp16).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);  // neg
// remainder (Python's %), comparisons (bool results), bitwise ops (integers and bool).
#define ANATOMY_DECLARE_BINARY_OPERATOR(op)             \
  Tensor operator op(const Tensor& a, const Tensor& b); \
  Tensor operator op(const Tensor& a, const Scalar& b); \
  Tensor operator op(const Scalar& a, const Tensor& b);
ANATOMY_DECLARE_BINARY_OPERATOR(%)
ANATOMY_DECLARE_BINARY_OPERATOR(==)
ANATOMY_DECLARE_BINARY_OPERATOR(!=)
ANATOMY_DECLARE_BINARY_OPERATOR(<)
ANATOMY_DECLARE_BINARY_OPERATOR(<=)
ANATOMY_DECLARE_BINARY_OPERATOR(>)
ANATOMY_DECLARE_BINARY_OPERATOR(>=)
ANATOMY_DECLARE_BINARY_OPERATOR(&)
ANATOMY_DECLARE_BINARY_OPERATOR(|)
ANATOMY_DECLARE_BINARY_OPERATOR(^)
ANATOMY_DECLARE_BINARY_OPERATOR(<<)
ANATOMY_DECLARE_BINARY_OPERATOR(>>)
#undef ANATOMY_DECLARE_BINARY_OPERATOR
Tensor operator~(const Tensor& a);  // bitwise_not
Tensor operator!(const Tensor& a);  // logical_not

// Wraps dimension `dim` (negative counts from the end) into [0, ndim); IndexError naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// A picture of the tensor's values like PyTorch's repr (see dispatch/ops/print.h).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace anatomy
