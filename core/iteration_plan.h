// The element-wise iteration plan: what every element-wise kernel (CPU and CUDA) needs to
// know before its loop runs.
//
// Note [Element-wise iteration plan]
// Given outputs and inputs, the plan works out, in this order:
//   1. the broadcast shape of the inputs (NumPy rules);
//   2. the common dtype (PyTorch's promotion, 0-dim tensors as weak types), and casts inputs of
//      another dtype to it (so a kernel is instantiated per dtype, not per dtype combination);
//      a 0-dim CPU input next to device tensors is cast on the CPU and stays there
//      (Note [CPU scalars in device plans]);
//   3. the outputs: allocated when undefined, laid out as PyTorch's TensorIterator lays them out
//      (operands of the result's shape that agree on contiguous, channels_last or one dense
//      layout give it; else dense in the order of the operands' strides, the first operand
//      that tells two dims apart deciding: docs/tensor.md, "Memory formats"), or checked when
//      given (out= and in-place): same shape, a dtype the common dtype may be cast to, no
//      internal overlap, and no partial overlap with an input (exact aliasing, as in
//      `a.add_(b)`, is fine);
//   4. byte strides of every operand over the broadcast shape (0 for broadcast dims);
//   5. the dims reordered so the fastest-moving one (smallest output stride) is innermost, and
//      adjacent dims merged where every operand steps through them contiguously;
//   6. whether everything is contiguous (one flat loop) and whether 32-bit offsets suffice.
// A kernel then calls for_each_chunk and runs a tight 1-D loop per chunk.
//
// Note [CPU scalars in device plans]
// `cuda_t + 2` and `cuda_t * cpu_0dim_tensor` are common: the scalar is a 0-dim CPU tensor next
// to device tensors. Copying it to the device on every call would cost a host-to-device copy
// (microseconds, and an ordering point with the host) for 8 bytes. So the plan keeps it on the
// CPU, already cast to the common dtype, and says so (is_cpu_scalar); a device backend reads
// its value on the host and passes it to the kernel by value (backends/cuda/elementwise/elementwise_cuda.cpp),
// with stride 0 like any broadcast operand. Only 0-dim CPU tensors may join device tensors: any
// other CPU tensor is a DeviceError. CPU plans are unchanged (is_cpu_scalar is false there).
//
// Note [Casts in iteration plans]
// Casting an input to the common dtype, and copying a result computed in the common dtype into
// the user's output of another dtype, run the copy kernel of the operands' backend: operator
// calls, which core does not make. The operator layer that builds plans passes the two casts in
// (dispatch/ops/plan_casts.h); a plan that needs neither never calls them.
#pragma once

#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <vector>

#include "anatomy/core/parallel.h"
#include "anatomy/core/tensor.h"

namespace anatomy {

// The two conversions a plan may need (Note [Casts in iteration plans]).
struct PlanCasts {
  Tensor (*to_dtype)(const Tensor& t, DType dtype);         // an input to the common dtype
  void (*copy_into)(const Tensor& dst, const Tensor& src);  // a result into the user's output
};

class IterationPlan {
 public:
  static constexpr int kMaxOperands = 4;

  // Operands live inline: building a plan is on every element-wise call's path, so it makes no
  // heap allocation of its own. A tensor the caller holds is borrowed (the Builder's rule: the
  // caller's tensors outlive the plan), one the plan made (an allocated output, a cast input) is
  // owned. Borrowing spares two atomic reference-count updates per operand per call, a fifth of
  // a tiny op's time.
  class OperandList {
   public:
    OperandList() = default;
    OperandList(OperandList&& o) noexcept : size_(o.size_) {
      for (int i = 0; i < size_; ++i) new (&items_[i].op) Operand(std::move(o.items_[i].op));
    }
    OperandList(const OperandList&) = delete;
    OperandList& operator=(const OperandList&) = delete;
    OperandList& operator=(OperandList&&) = delete;
    // Only the slots in use are made and destroyed: a tiny op's plan has three of eight.
    ~OperandList() {
      for (int i = 0; i < size_; ++i) items_[i].op.~Operand();
    }

    void push_back(Tensor t) { new (next()) Operand{nullptr, std::move(t)}; }
    void push_borrowed(const Tensor& t) { new (next()) Operand{&t, Tensor()}; }
    int size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const Tensor& operator[](int i) const {
      const Operand& o = items_[i].op;
      return o.borrowed != nullptr ? *o.borrowed : o.owned;
    }
    // Operand i for the caller to keep: moved out when owned (the plan is done with it).
    Tensor take(int i) {
      Operand& o = items_[i].op;
      return o.borrowed != nullptr ? *o.borrowed : std::move(o.owned);
    }

   private:
    struct Operand {
      const Tensor* borrowed = nullptr;
      Tensor owned;
    };
    union Slot {
      Slot() {}
      ~Slot() {}
      Operand op;
    };
    void* next() {
      if (size_ == kMaxOperands) [[unlikely]]
        throw_full();
      return &items_[size_++].op;
    }
    [[noreturn]] static void throw_full();
    std::array<Slot, kMaxOperands> items_;
    int size_ = 0;
  };

  // The builder's view of its operands: references, not copies, because copying a Tensor is an
  // atomic increment and decrement and the plan is on every element-wise call's path. The
  // tensors given to a Builder must outlive the plan it builds, which borrows them (held by the
  // caller, or arguments of the function that holds the plan; not temporaries of the expression
  // that calls build()).
  class OperandRefs {
   public:
    struct Iterator {
      const Tensor* const* p;
      const Tensor& operator*() const { return **p; }
      Iterator& operator++() {
        ++p;
        return *this;
      }
      bool operator!=(const Iterator& o) const { return p != o.p; }
    };
    void push_back(const Tensor& t) {
      ANATOMY_CHECK(size_ < kMaxOperands, ValueError, "iteration plan: at most {} operands", kMaxOperands);
      items_[size_++] = &t;
    }
    int size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const Tensor& operator[](int i) const { return *items_[i]; }
    Iterator begin() const { return {items_.data()}; }
    Iterator end() const { return {items_.data() + size_}; }

   private:
    std::array<const Tensor*, kMaxOperands> items_{};
    int size_ = 0;
  };

  class Builder {
   public:
    Builder(const char* op, const PlanCasts& casts) : op_(op), casts_(&casts) {}
    // An output: undefined means "allocate it".
    Builder& add_output(const Tensor& t);
    Builder& add_input(const Tensor& t);
    // The dtype of the computation: by default the inputs' common dtype.
    Builder& common_dtype(DType t);
    // The dtype of allocated outputs when it is not the common dtype (bool for comparisons).
    Builder& output_dtype(DType t);
    // Integer inputs promote to the default float (true division, sqrt, ...).
    Builder& promote_integers_to_float();
    IterationPlan build();

   private:
    // The common case, handled without broadcasting, promotion or dim reordering: inputs of one
    // dtype, shape and device, all contiguous, and outputs to allocate in that dtype.
    bool is_flat_case() const;
    IterationPlan build_flat() const;

    const char* op_;
    const PlanCasts* casts_;
    OperandRefs outputs_, inputs_;
    std::optional<DType> common_, output_;
    bool int_to_float_ = false;
  };

  // The common functional call (`a + b`, `a.exp()`, `a * 2`: one new output in the inputs' dtype)
  // over inputs of one dtype, shape and device, all contiguous, or a CPU one and a number keeping
  // its dtype: Builder::build's plan, without a Builder (a fifth of a tiny op's host time). `b`
  // may be null (one input). flat_functional expects is_flat_functional to hold, and the caller
  // to have checked that the op computes and writes in the inputs' dtype.
  static bool is_flat_functional(const Tensor& a, const Tensor* b);
  static IterationPlan flat_functional(const char* op, const Tensor& a, const Tensor* b);

  // Operands: outputs first, then inputs.
  int num_outputs() const { return num_outputs_; }
  int num_operands() const { return operands_.size(); }
  // The tensor the kernel writes (a temporary when the user's output has another dtype).
  const Tensor& output(int i = 0) const { return operands_[i]; }
  // What the operator returns: the user's output tensor, or the allocated one.
  const Tensor& result(int i = 0) const { return has_user_output(i) ? user_outputs_[i] : operands_[i]; }
  // result(i) for a plan that is done (run and finished): moved out rather than copied.
  Tensor take_result(int i = 0) { return has_user_output(i) ? user_outputs_.take(i) : operands_.take(i); }
  const Tensor& input(int i) const { return operands_[num_outputs_ + i]; }
  // Input i is a 0-dim CPU tensor in a plan whose outputs are on another device (Note [CPU
  // scalars in device plans]): its one element is readable on the host, not by the device.
  bool is_cpu_scalar(int i) const { return input(i).is_cpu() && !output(0).is_cpu(); }
  // Outputs whose dtype is not the common dtype are computed into a temporary of the common
  // dtype; finish() copies them into the user's tensors.
  void finish() const {
    if (!user_outputs_.empty()) copy_to_user_outputs();
  }

  DType common_dtype() const { return common_; }
  IntArrayRef shape() const { return shape_; }  // the broadcast (output) shape
  int64_t numel() const { return numel_; }
  // The loop: dims innermost first, after reordering and merging.
  IntArrayRef loop_shape() const { return loop_shape_; }
  int64_t loop_stride(int operand, int dim) const {
    // A flat loop steps every operand by its element size; set_flat_loop stores no strides.
    return flat_loop_ ? static_cast<int64_t>(operands_[operand].element_size()) : strides_[operand][dim];
  }
  bool is_contiguous() const { return contiguous_; }
  bool can_use_32bit_indexing() const { return fits_32bit_; }

  // Calls fn(char* const* data, const int64_t* inner_strides, int64_t n) once per run of the
  // innermost loop dim (once per thread's range when the plan is contiguous). Strides are in
  // bytes. Large plans are split over threads (core/parallel.h), so fn must be safe to call
  // concurrently on disjoint ranges, as a pure element-wise loop is.
  template <typename F>
  void for_each_chunk(F&& fn) const;
  // The same over elements [begin, end) of the loop order, on the calling thread.
  template <typename F>
  void for_each_chunk_in(int64_t begin, int64_t end, F& fn) const;

 private:
  bool has_user_output(int i) const { return i < user_outputs_.size() && user_outputs_[i].defined(); }
  void copy_to_user_outputs() const;
  // One flat loop over numel_ elements of every operand (all contiguous, same shape).
  void set_flat_loop();
  // shape_, numel_ and common_ of a flat plan whose operands are shaped as `first`.
  void init_flat(const Tensor& first);

  int num_outputs_ = 0;
  OperandList operands_;
  // Outputs the user passed, when a temporary stands in (else undefined); empty when no output
  // needs one.
  OperandList user_outputs_;
  const PlanCasts* casts_ = nullptr;  // set by a Builder whose plan has user_outputs_
  DType common_ = DType::Float32;
  DimVector shape_, loop_shape_;
  std::array<DimVector, kMaxOperands> strides_;
  int64_t numel_ = 0;
  bool contiguous_ = true, fits_32bit_ = true;
  bool flat_loop_ = false;  // set_flat_loop made the loop: strides_ are not filled in
};

template <typename F>
void IterationPlan::for_each_chunk(F&& fn) const {
  if (numel_ == 0) return;
  parallel_for(0, numel_, kParallelGrain, [&](int64_t begin, int64_t end) { for_each_chunk_in(begin, end, fn); });
}

template <typename F>
void IterationPlan::for_each_chunk_in(int64_t begin, int64_t end, F& fn) const {
  const int n = num_operands();
  std::array<char*, kMaxOperands> ptr{};
  std::array<int64_t, kMaxOperands> inner{};
  if (contiguous_) {
    for (int k = 0; k < n; ++k) {
      inner[k] = static_cast<int64_t>(operands_[k].element_size());
      ptr[k] = static_cast<char*>(operands_[k].data_ptr()) + begin * inner[k];
    }
    fn(ptr.data(), inner.data(), end - begin);
    return;
  }
  const int ndim = static_cast<int>(loop_shape_.size());
  // The position of element `begin`: its index in the loop shape (innermost first).
  DimVector index(ndim, 0);
  int64_t rest = begin;
  for (int d = 0; d < ndim; ++d) {
    index[d] = rest % loop_shape_[d];
    rest /= loop_shape_[d];
  }
  for (int k = 0; k < n; ++k) {
    inner[k] = strides_[k][0];
    ptr[k] = static_cast<char*>(operands_[k].data_ptr());
    for (int d = 0; d < ndim; ++d) ptr[k] += index[d] * strides_[k][d];
  }
  const int64_t inner_size = loop_shape_[0];
  for (int64_t done = begin; done < end;) {
    const int64_t count = std::min(inner_size - index[0], end - done);
    fn(ptr.data(), inner.data(), count);
    done += count;
    if (done == end) break;
    // The run ended at the end of the innermost dim: rewind it and carry into the outer dims.
    for (int k = 0; k < n; ++k) ptr[k] -= index[0] * strides_[k][0];
    index[0] = 0;
    for (int d = 1; d < ndim; ++d) {
      for (int k = 0; k < n; ++k) ptr[k] += strides_[k][d];
      if (++index[d] < loop_shape_[d]) break;
      for (int k = 0; k < n; ++k) ptr[k] -= strides_[k][d] * loop_shape_[d];
      index[d] = 0;
    }
  }
}

}  // namespace anatomy
