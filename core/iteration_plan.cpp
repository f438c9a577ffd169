// Building the element-wise iteration plan (Note [Element-wise iteration plan]).
#include "anatomy/core/iteration_plan.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "anatomy/core/call_path.h"
#include "anatomy/core/checked_arith.h"
#include "anatomy/core/cpu_scalar.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/tensor_promotion.h"
#include "anatomy/core/type_promotion.h"

namespace anatomy {

IterationPlan::Builder& IterationPlan::Builder::add_output(const Tensor& t) {
  outputs_.push_back(t);
  return *this;
}
IterationPlan::Builder& IterationPlan::Builder::add_input(const Tensor& t) {
  ANATOMY_CHECK(t.defined(), ValueError, "{}: input {} is an undefined tensor", op_, inputs_.size());
  inputs_.push_back(t);
  return *this;
}
IterationPlan::Builder& IterationPlan::Builder::common_dtype(DType t) {
  common_ = t;
  return *this;
}
IterationPlan::Builder& IterationPlan::Builder::output_dtype(DType t) {
  output_ = t;
  return *this;
}
IterationPlan::Builder& IterationPlan::Builder::promote_integers_to_float() {
  int_to_float_ = true;
  return *this;
}

namespace {

// Strides (in bytes) of `t` seen over `shape`: broadcast and missing leading dims get 0. A stride
// whose bytes overflow int64 can only belong to an empty tensor (as_strided takes INT64_MAX
// beside a size-0 dim), which is never stepped: it gets 0 too.
DimVector broadcast_byte_strides(const Tensor& t, IntArrayRef shape) {
  DimVector out(shape.size(), 0);
  const size_t offset = shape.size() - static_cast<size_t>(t.dim());
  const int64_t esize = static_cast<int64_t>(t.element_size());
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t bytes = 0;
    if (t.sizes()[d] != 1 && !__builtin_mul_overflow(t.strides()[d], esize, &bytes)) out[offset + d] = bytes;
  }
  return out;
}

// Exact aliasing (same data, same layout) is allowed between an output and an input; any other
// sharing of memory is refused, because the result would depend on the loop order.
void check_output_input_overlap(const Tensor& out, const Tensor& in, const char* op) {
  if (!may_overlap(out, in)) return;
  bool exact = out.data_ptr() == in.data_ptr() && out.sizes() == in.sizes() && out.strides() == in.strides() &&
               out.dtype() == in.dtype();
  ANATOMY_CHECK(exact, ValueError,
                "{}: the output partially overlaps an input (some elements of one refer to the memory of another); "
                "clone() the input first",
                op);
}

// Sizes compared in line: the shapes here have a dim or two, where a call to memcmp is most of
// the cost.
bool same_sizes(IntArrayRef x, IntArrayRef y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

// `t` can share a flat loop with `first`: same dtype, device and sizes, and contiguous.
bool flat_like(const Tensor& t, const Tensor& first) {
  return t.dtype() == first.dtype() && t.impl()->is_contiguous() && t.device() == first.device() &&
         same_sizes(t.sizes(), first.sizes());
}

// Whether t's byte extent (the sum of size * stride * element size over its dims) fits int64:
// what steps 4 and 5 of Builder::build multiply. Always so for a non-empty tensor, which lies
// inside its storage.
bool byte_extent_fits(const Tensor& t) { return view_extent_fits(t.sizes(), t.strides(), 0, t.element_size()); }

Allocator* checked_allocator(const Tensor& like, const char* op) {
  Allocator* allocator = get_allocator(like.device().type());
  ANATOMY_CHECK(allocator != nullptr, DeviceError, "{}: no allocator is registered for {}", op, like.device().str());
  return allocator;
}

// Strides (in elements) of `t` seen over `shape` as PyTorch's TensorIterator sees them: missing
// leading dims and dims broadcast from size 1 get 0; a size-1 dim of a size-1 result keeps its
// stride.
DimVector broadcast_strides(const Tensor& t, IntArrayRef shape) {
  DimVector out(shape.size(), 0);
  const size_t offset = shape.size() - static_cast<size_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] == shape[offset + d]) out[offset + d] = t.strides()[d];
  }
  return out;
}

// Whether every operand has the result's shape and they agree on a layout that new outputs take
// as is: PyTorch's fast setup (all contiguous, all channels_last, or all dense with the same
// strides). Sets `strides` when they do.
bool same_layout(const IterationPlan::OperandRefs& operands, IntArrayRef shape, DimVector& strides) {
  // All contiguous, the common case, reads only the cached flag.
  bool contiguous = true;
  for (const Tensor& t : operands) {
    if (t.sizes() != shape) return false;
    contiguous = contiguous && t.is_contiguous();
  }
  if (contiguous) {
    strides = contiguous_strides(shape);
    return true;
  }
  bool channels_last = true, dense = true, same_strides = true;
  for (const Tensor& t : operands) {
    channels_last = channels_last && t.is_contiguous(MemoryFormat::ChannelsLast);
    dense = dense && t.is_non_overlapping_and_dense();
    same_strides = same_strides && t.strides() == operands[0].strides();
  }
  if (channels_last) strides = checked_channels_last_strides(shape, MemoryFormat::ChannelsLast, "");
  else if (dense && same_strides) strides = DimVector(operands[0].strides());
  else return false;
  return true;
}

// The strides of the outputs a plan allocates, from the layouts of the given outputs and the
// inputs: PyTorch's TensorIterator rules (Note [Element-wise iteration plan], step 3).
DimVector new_output_strides(const IterationPlan::OperandRefs& outputs, const IterationPlan::OperandRefs& inputs,
                             IntArrayRef shape) {
  // The operands that have a layout: the given outputs first, then the inputs, as PyTorch lists them.
  IterationPlan::OperandRefs operands;
  for (const Tensor& t : outputs) {
    if (t.defined()) operands.push_back(t);
  }
  for (const Tensor& t : inputs) operands.push_back(t);
  DimVector strides;
  if (!operands.empty() && same_layout(operands, shape, strides)) return strides;

  // PyTorch's reorder_dimensions: sort the dims innermost first by the operands' strides. The
  // first operand that tells two dims apart decides (a dim broadcast in it tells nothing); equal
  // strides put the smaller dim inside; when no operand decides, row-major order stays.
  const int ndim = static_cast<int>(shape.size());
  std::array<DimVector, IterationPlan::kMaxOperands> op_strides;
  for (int k = 0; k < operands.size(); ++k) op_strides[k] = broadcast_strides(operands[k], shape);
  auto should_swap = [&](int64_t d0, int64_t d1) {  // 1: d0 goes outside d1, -1: inside, 0: undecided
    for (int k = 0; k < operands.size(); ++k) {
      const int64_t s0 = op_strides[k][d0], s1 = op_strides[k][d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  DimVector perm(ndim);  // perm[0] is the innermost dim
  for (int i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; ++i) {
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  // Dense strides in that order.
  strides = DimVector(shape.size(), 0);
  int64_t next = 1;
  for (int64_t d : perm) {
    strides[d] = next;
    (void)__builtin_mul_overflow(next, std::max<int64_t>(shape[d], 1), &next);
  }
  return strides;
}

}  // namespace

void IterationPlan::set_flat_loop() {
  loop_shape_ = DimVector{numel_};
  flat_loop_ = true;  // loop_stride() gives each operand's element size
  contiguous_ = true;
  fits_32bit_ = numel_ <= std::numeric_limits<int32_t>::max() / 8;  // bytes of the widest dtype
}

bool IterationPlan::Builder::is_flat_case() const {
  const Tensor& first = inputs_[0];
  const DType dtype = first.dtype();
  if ((common_ && *common_ != dtype) || (output_ && *output_ != dtype) || (int_to_float_ && !is_floating(dtype))) {
    return false;
  }
  // A given output (out=, in-place) joins when it is laid out as the inputs are: the general path
  // would give it the same one-dim loop.
  for (const Tensor& out : outputs_) {
    if (out.defined() && !flat_like(out, first)) return false;
  }
  for (const Tensor& in : inputs_) {
    if (!flat_like(in, first)) return false;
  }
  return true;
}

void IterationPlan::init_flat(const Tensor& first) {
  // Promotion of one dtype gives that dtype, and there is nothing to broadcast.
  shape_ = first.sizes();
  numel_ = first.numel();
  common_ = first.dtype();
}

namespace {

// `b` is a number the caller wrote for a tensor operand (`a * 2`, `a + 0.5`) that does not widen
// a CPU tensor `a`'s dtype: the common dtype is a's, as Builder::build would work it out.
bool is_number_keeping_dtype(const Tensor& a, const Tensor& b) {
  if (!b.impl()->is_wrapped_number() || b.dim() != 0 || !b.is_cpu() || !a.is_cpu()) return false;
  if (b.dtype() == a.dtype()) return true;
  ResultTypeState state;
  add_operand(state, a);
  add_operand(state, b);
  return state.result() == a.dtype();
}

}  // namespace

bool IterationPlan::is_flat_functional(const Tensor& a, const Tensor* b) {
  if (!a.defined() || !a.impl()->is_contiguous()) return false;
  return b == nullptr || (b->defined() && (flat_like(*b, a) || is_number_keeping_dtype(a, *b)));
}

IterationPlan IterationPlan::flat_functional(const char* op, const Tensor& a, const Tensor* b) {
  ANATOMY_CALL_PATH_STEP();
  IterationPlan plan;
  plan.init_flat(a);
  plan.operands_.push_back(make_contiguous_tensor_like(a, plan.common_, checked_allocator(a, op)));
  plan.num_outputs_ = 1;
  plan.operands_.push_borrowed(a);
  if (b != nullptr) {
    // A number of another dtype (is_number_keeping_dtype) is cast as Builder::build casts a CPU
    // scalar: one element, on the CPU.
    if (b->dtype() == plan.common_) plan.operands_.push_borrowed(*b);
    else plan.operands_.push_back(cast_cpu_scalar(*b, plan.common_));
    if (b->dim() == 0 && a.dim() != 0) {
      // The loop Builder::build makes over a contiguous tensor and a 0-dim one: one dim of numel
      // elements, the number at stride 0 (one element: no dims left, every stride 0, contiguous).
      const int64_t element = static_cast<int64_t>(element_size(plan.common_));
      const bool one = plan.numel_ == 1;
      plan.loop_shape_ = DimVector{plan.numel_};
      for (int k = 0; k < 3; ++k) plan.strides_[k] = DimVector{one || k == 2 ? 0 : element};
      plan.contiguous_ = one;
      plan.fits_32bit_ = (plan.numel_ - 1) * element <= std::numeric_limits<int32_t>::max();
      return plan;
    }
  }
  plan.set_flat_loop();  // every operand of a's shape (a 0-dim number next to a 0-dim `a` too)
  return plan;
}

IterationPlan IterationPlan::Builder::build_flat() const {
  // New outputs take the first input's (contiguous) strides, as the general path does; given
  // ones already have them.
  const Tensor& first = inputs_[0];
  IterationPlan plan;
  plan.init_flat(first);
  Allocator* allocator = checked_allocator(first, op_);
  for (const Tensor& out : outputs_) {
    if (out.defined()) {
      // What the general path checks of a given output that can still fail here.
      check_no_internal_overlap(out, op_);
      for (const Tensor& in : inputs_) check_output_input_overlap(out, in, op_);
      plan.operands_.push_borrowed(out);
    } else {
      plan.operands_.push_back(make_contiguous_tensor_like(first, plan.common_, allocator));
    }
    // user_outputs_ stays empty: no output here needs a temporary.
  }
  plan.num_outputs_ = outputs_.size();
  for (const Tensor& in : inputs_) plan.operands_.push_borrowed(in);
  plan.set_flat_loop();
  return plan;
}

IterationPlan IterationPlan::Builder::build() {
  ANATOMY_CALL_PATH_STEP();
  ANATOMY_CHECK(outputs_.size() + inputs_.size() <= kMaxOperands, ValueError, "{}: at most {} operands", op_,
                kMaxOperands);
  ANATOMY_INTERNAL_ASSERT(!inputs_.empty(), "an element-wise plan needs an input");
  if (is_flat_case()) return build_flat();
  IterationPlan plan;

  // 1. devices and the broadcast shape.
  // A 0-dim CPU tensor (a wrapped scalar) may join tensors on any device; the others decide.
  auto is_cpu_scalar = [](const Tensor& t) { return t.dim() == 0 && t.is_cpu(); };
  Device device = inputs_[0].device();
  for (const Tensor& t : inputs_) {
    if (!is_cpu_scalar(t)) {
      device = t.device();
      break;
    }
  }
  DimVector shape;
  for (const Tensor& t : inputs_) {
    ANATOMY_CHECK(is_cpu_scalar(t) || t.device() == device, DeviceError,
                  "{}: expected all tensors on one device, found {} and {}", op_, device.str(), t.device().str());
    shape = broadcast_shapes(shape, t.sizes(), op_);
  }
  plan.shape_ = shape;
  plan.numel_ = checked_numel(shape, op_);

  // 2. the common dtype.
  if (common_) {
    plan.common_ = *common_;
  } else {
    ResultTypeState state;
    for (const Tensor& t : inputs_) add_operand(state, t);
    plan.common_ = state.result();
  }
  if (int_to_float_ && !is_floating(plan.common_)) plan.common_ = kDefaultFloat;
  const DType out_dtype = output_.value_or(plan.common_);

  // 3. outputs, checked or allocated.
  for (const Tensor& out : outputs_) {
    if (!out.defined()) continue;
    ANATOMY_CHECK(out.device() == device, DeviceError, "{}: the output is on {} but the inputs are on {}", op_,
                  out.device().str(), device.str());
    ANATOMY_CHECK(out.sizes() == IntArrayRef(shape), ValueError,
                  "{}: the output has shape [{}] but the result has shape [{}]", op_, fmt::join(out.sizes(), ", "),
                  fmt::join(shape, ", "));
    ANATOMY_CHECK(can_cast(out_dtype, out.dtype()), TypeError,
                  "{}: result type {} can't be cast to the desired output type {}", op_, name(out_dtype),
                  name(out.dtype()));
    check_no_internal_overlap(out, op_);
    for (const Tensor& in : inputs_) check_output_input_overlap(out, in, op_);
  }
  // The layout of the outputs the plan allocates, worked out only when it allocates one (not for
  // an in-place or out= call in the result's dtype).
  std::optional<DimVector> new_layout;
  auto new_strides = [&]() -> const DimVector& {
    if (!new_layout) new_layout = new_output_strides(outputs_, inputs_, shape);
    return *new_layout;
  };
  Allocator* allocator = get_allocator(device.type());
  plan.casts_ = casts_;
  for (const Tensor& out : outputs_) {
    if (out.defined() && out.dtype() != out_dtype) {
      // Computed in out_dtype, then cast into the user's tensor by finish().
      plan.user_outputs_.push_borrowed(out);
      plan.operands_.push_back(make_empty_tensor(shape, new_strides(), out_dtype, allocator, op_));
    } else {
      plan.user_outputs_.push_back(Tensor());
      if (out.defined()) plan.operands_.push_borrowed(out);
      else plan.operands_.push_back(make_empty_tensor(shape, new_strides(), out_dtype, allocator, op_));
    }
  }
  plan.num_outputs_ = outputs_.size();
  for (const Tensor& in : inputs_) {
    // A CPU scalar next to device tensors stays on the CPU, cast there (one element, no device
    // work): device kernels take its value with the launch (Note [CPU scalars in device plans]).
    if (in.dtype() == plan.common_) plan.operands_.push_borrowed(in);
    else if (in.dim() == 0 && in.is_cpu()) plan.operands_.push_back(cast_cpu_scalar(in, plan.common_));
    else plan.operands_.push_back(casts_->to_dtype(in, plan.common_));
  }

  const int n = plan.num_operands();
  const int ndim = static_cast<int>(shape.size());

  // The common case, same-shape row-major operands: one flat loop, nothing to reorder.
  bool all_flat = true;
  for (int k = 0; k < n && all_flat; ++k) {
    all_flat = plan.operands_[k].is_contiguous() && plan.operands_[k].sizes() == IntArrayRef(shape);
  }
  // An empty operand's strides may not fit as byte strides (empty({0, 2^62}).t() in fp32); a
  // plan that walks nothing then takes the flat loop instead of multiplying them below.
  for (int k = 0; k < n && !all_flat && plan.numel_ == 0; ++k) all_flat = !byte_extent_fits(plan.operands_[k]);
  if (all_flat) {
    plan.set_flat_loop();
    return plan;
  }

  // 4. byte strides over the broadcast shape, innermost dim first.
  std::array<DimVector, kMaxOperands> strides;
  for (int k = 0; k < n; ++k) strides[k] = broadcast_byte_strides(plan.operands_[k], shape);

  // 5. order dims by the operands' strides (the first output decides, inputs break ties), fastest
  // innermost, then merge neighbours that every operand walks contiguously.
  auto inner_first = [&](int64_t a, int64_t b) {
    for (int k = 0; k < n; ++k) {
      if (strides[k][a] == 0 || strides[k][b] == 0) continue;
      if (strides[k][a] != strides[k][b]) return strides[k][a] < strides[k][b];
    }
    return a > b;  // ties keep row-major order: the last dim innermost
  };
  DimVector perm(ndim);
  for (int i = 0; i < ndim; ++i) {  // insertion sort: few dims, no allocation
    int64_t d = ndim - 1 - i;
    int j = i;
    for (; j > 0 && inner_first(d, perm[j - 1]); --j) perm[j] = perm[j - 1];
    perm[j] = d;
  }
  DimVector loop_shape;
  std::array<DimVector, kMaxOperands> loop_strides;
  for (int64_t d : perm) {
    const int64_t size = shape[d];
    bool merge = !loop_shape.empty();
    for (int k = 0; merge && k < n; ++k) {
      merge = strides[k][d] == loop_strides[k].back() * loop_shape.back();
    }
    if (size == 1) continue;  // a size-1 dim moves nothing
    if (merge) {
      loop_shape[loop_shape.size() - 1] *= size;
    } else {
      loop_shape.push_back(size);
      for (int k = 0; k < n; ++k) loop_strides[k].push_back(strides[k][d]);
    }
  }
  if (loop_shape.empty()) {  // 0-dim or all-ones: one element
    loop_shape.push_back(1);
    for (int k = 0; k < n; ++k) loop_strides[k].push_back(0);
  }
  plan.loop_shape_ = loop_shape;
  plan.strides_ = loop_strides;

  // 6. the flat fast path and 32-bit offsets.
  plan.contiguous_ = loop_shape.size() == 1;
  for (int k = 0; k < n && plan.contiguous_; ++k) {
    plan.contiguous_ =
        loop_shape[0] == 1 || loop_strides[k][0] == static_cast<int64_t>(plan.operands_[k].element_size());
  }
  for (int k = 0; k < n; ++k) {
    int64_t reach = 0;
    for (size_t d = 0; d < loop_shape.size(); ++d) reach += (loop_shape[d] - 1) * loop_strides[k][d];
    if (reach > std::numeric_limits<int32_t>::max()) plan.fits_32bit_ = false;
  }
  return plan;
}

void IterationPlan::copy_to_user_outputs() const {
  for (int i = 0; i < user_outputs_.size(); ++i) {
    if (user_outputs_[i].defined()) casts_->copy_into(user_outputs_[i], operands_[i]);
  }
}

void IterationPlan::OperandList::throw_full() {
  ANATOMY_THROW(ValueError, "iteration plan: at most {} operands", kMaxOperands);
}

}  // namespace anatomy
