// The op table: every operator described once, in the spirit of PyTorch's OpInfo and ggml's
// test-backend-ops. One entry says what an op is called, which schemas it covers, which dtypes
// it takes, how to make sample inputs, how to call it, what the right answer is (an fp64
// reference written with plain loops over RefTensor, independent of the kernels), how close
// the answer must be, and whether the op is differentiable. From the table come:
//   - the correctness tests (tests/optable): every op x dtype x sample against its reference,
//     in-place and out= forms included, and on Meta (the CPU result's dtype, shape and strides);
//     and the bad inputs, which must throw and change nothing;
//   - the generated part of docs/ops.md (render_ops_markdown, checked by a test);
//   - the operator benchmarks (bench/ops.cpp);
//   - the gradchecks of differentiable entries (tests/autograd/test_op_table_gradcheck.cpp) and
//     the CUDA-vs-CPU comparisons (tests/gpu/test_cuda_op_table.cpp).
// Each family registers its entries from its own file (testing/ops_<family>.cpp) with
// ANATOMY_REGISTER_OPS; adding an entry adds its tests, docs row and benchmark.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::testing {

// ---- reference values ----

// A dense row-major array of doubles: an input seen by a reference, or the answer it gives.
// `dtype` is the dtype the op must return; `defined` is false for an absent optional input.
struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  DType dtype = DType::Float64;
  bool defined = true;

  RefTensor() = default;
  RefTensor(std::vector<int64_t> shape, DType dtype, double fill = 0.0);
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  std::vector<int64_t> strides() const;  // row-major, in elements
  // The flat position of `index` (one entry per dim).
  int64_t offset(const std::vector<int64_t>& index) const;
  double& at(const std::vector<int64_t>& index) { return data[offset(index)]; }
  double at(const std::vector<int64_t>& index) const { return data[offset(index)]; }
};

// The values of a tensor (any device, any layout), read through its own sizes and strides with
// a walk written here, not the library's.
RefTensor to_ref(const Tensor& t);
// Calls fn(index) for every index of `shape`, row-major.
void for_each_index(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& fn);
// Calls fn(i, offsets) for every element of `shape`, row-major: i counts from 0 and offsets[k] is
// the element's offset under strides[k], carried from one element to the next as an odometer
// would (no per-element sum over the dims, no index vector handed out: the walks over large
// samples are most of the op table's time, ten times more under the sanitizers' unoptimized
// build).
template <size_t N, typename Fn>
void for_each_offsets(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& strides, Fn&& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<int64_t> index(shape.size(), 0);
  std::array<int64_t, N> offsets{};
  for (int64_t i = 0; i < n; ++i) {
    fn(i, std::as_const(offsets));
    for (int64_t d = nd - 1; d >= 0; --d) {
      const bool carry = ++index[d] == shape[d];
      for (size_t k = 0; k < N; ++k) offsets[k] += carry ? strides[k][d] * (1 - shape[d]) : strides[k][d];
      if (!carry) break;
      index[d] = 0;
    }
  }
}
// The same walk with one set of strides: fn(i, offset).
template <typename Fn>
void for_each_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, Fn&& fn) {
  for_each_offsets<1>(shape, {strides}, [&](int64_t i, const std::array<int64_t, 1>& offsets) { fn(i, offsets[0]); });
}
// Element-wise references: the broadcast shape and f applied to every element.
std::vector<int64_t> broadcast_shape(const std::vector<RefTensor>& inputs);
RefTensor map_unary(const RefTensor& a, DType result, const std::function<double(double)>& f);
RefTensor map_binary(const RefTensor& a, const RefTensor& b, DType result,
                     const std::function<double(double, double)>& f);
RefTensor map_ternary(const RefTensor& a, const RefTensor& b, const RefTensor& c, DType result,
                      const std::function<double(double, double, double)>& f);
// The dtype PyTorch's promotion gives for these tensors (0-dim and wrapped numbers are weak).
DType promoted_dtype(const std::vector<Tensor>& tensors);
// `t` rounded to `dtype` as a kernel's final rounding does (integers wrap, bool is != 0).
double round_to(double v, DType dtype);

// ---- samples ----

// One call of an op: its tensor arguments plus the non-tensor ones an entry needs.
struct SampleInput {
  std::vector<Tensor> tensors;  // an undefined Tensor stands for an absent optional argument
  std::vector<int64_t> dims;    // dims to reduce, normalized_shape, repeats, pad, ...
  bool every_dim = false;       // reductions: dim=None (every dim), not the list in dims
  bool keepdim = false;
  std::vector<double> scalars;  // alpha, p, eps, fill values, ...
  std::vector<int64_t> ints;    // a single dim, k, num_classes, ...
  std::string label;            // "contiguous", "transposed", "broadcast", ...
};

// The input ranges of an element-wise op's samples.
struct Domain {
  double low = -4, high = 4;             // floating samples are uniform in [low, high]
  int64_t int_low = -20, int_high = 20;  // integer samples in [int_low, int_high)
  bool exclude_zero = false;             // e.g. the divisor of remainder
};

// A random tensor of `dtype` with values from `domain` (bool: random true/false).
Tensor random_tensor(std::vector<int64_t> shape, DType dtype, const Domain& domain = {});
// The standard element-wise samples for `arity` inputs: contiguous, transposed, offset (a
// sliced view), broadcast, 0-dim, zero-size, a wrapped scalar (arity >= 2), mixed dtypes
// (arity >= 2, when `mixed` is set), special values (NaN, +-inf, +-0 for floating dtypes), and a
// large input that takes the parallel path. One Domain per input (the last one repeats).
std::vector<SampleInput> elementwise_samples(int arity, DType dtype, const std::vector<Domain>& domains,
                                             bool mixed = true);

// ---- the table ----

struct Tolerance {
  double atol = 0, rtol = 0;
};
// fp16 2e-3, bf16 1.6e-2, fp32 2e-6 (rtol) with small atols; fp64 1e-12; integers and bool exact.
Tolerance default_tolerance(DType dtype);

enum class OpFamily { Unary, Binary, Reduction, NN, Linalg, Indexing };
const char* family_name(OpFamily f);

// A call that must fail: the exception type and strings its message must contain. The driver
// checks that every tensor of the sample is left unchanged.
struct ErrorInput {
  SampleInput sample;
  const std::type_info* error;  // &typeid(ValueError), ...
  std::vector<std::string> needles;
};

// A sample of `tensors` with the fields an entry's op reads.
SampleInput make_sample(std::string label, std::vector<Tensor> tensors, std::vector<int64_t> dims = {},
                        std::vector<int64_t> ints = {}, std::vector<double> scalars = {});
// A call on make_sample's sample that must raise `error` with every needle in its message.
ErrorInput make_error(std::string label, std::vector<Tensor> tensors, const std::type_info& error,
                      std::vector<std::string> needles, std::vector<int64_t> dims = {}, std::vector<int64_t> ints = {},
                      std::vector<double> scalars = {});

struct OpInfo {
  std::string name;  // the entry's name, usually the op's: "exp", "div_floor", "sum"
  OpFamily family = OpFamily::Unary;
  // The aten schemas (full names, "exp", "exp_", "exp.out") this entry exercises; docs/ops.md
  // shows the entry's dtypes and derivative status on their rows.
  std::vector<std::string> schemas;
  std::vector<DType> dtypes;
  bool differentiable = false;
  std::string notes;  // one line for docs/ops.md, optional

  std::function<std::vector<SampleInput>(DType)> samples;
  std::function<std::vector<Tensor>(const SampleInput&)> op;
  // fp64 answers, one per result of op, from the inputs' values (to_ref of sample.tensors).
  std::function<std::vector<RefTensor>(const std::vector<RefTensor>&, const SampleInput&)> reference;
  // Instead of a reference, for ops without one answer (dropout): checks the results itself and
  // returns a description of what is wrong, or an empty string.
  std::function<std::string(const std::vector<Tensor>&, const SampleInput&)> check;
  std::function<Tolerance(DType)> tolerance;  // default_tolerance when empty

  // Optional forms, checked against the same reference: the in-place form writes into
  // sample.tensors[0] (tried when the reference's dtype and shape are those of tensors[0]); the
  // out= form writes into `out` (allocated with the reference's shape and dtype).
  std::function<void(const SampleInput&)> inplace;
  std::function<void(const Tensor& out, const SampleInput&)> out;

  std::function<std::vector<ErrorInput>()> error_inputs;
  // Perf mode: one input of about `numel` elements (fp32) for bench/ops.cpp; empty: no benchmark.
  std::function<SampleInput(int64_t numel)> bench_input;
};

// The tolerance for a result of `info` on a sample of dtype `sample`: the looser of the sample
// dtype's and the result dtype's (an fp16 op may return fp32; an int8 sample may meet an fp32
// operand), from info.tolerance or default_tolerance.
Tolerance tolerance_for(const OpInfo& info, DType sample, DType result);

// Every registered entry, sorted by family, then name.
const std::vector<OpInfo>& op_table();
std::vector<const OpInfo*> ops_in(OpFamily family);
// Adds entries; used by ANATOMY_REGISTER_OPS at static initialization.
void register_ops(std::vector<OpInfo> entries);

// ---- checking ----

// Compares a result with the reference: dtype, shape, then every value (the reference rounded
// to the result's dtype; NaN matches NaN, infinities match exactly). Returns "" when they agree,
// else a description of the first difference.
std::string compare(const Tensor& got, const RefTensor& want, Tolerance tol);

// The generated section of docs/ops.md: one row per registered aten schema with its backends
// (from the dispatch table) and, where the op table covers it, dtypes and derivative status.
std::string render_ops_markdown();

}  // namespace anatomy::testing

// ANATOMY_REGISTER_OPS(unary) { return {OpInfo{...}, ...}; } in one testing/ops_*.cpp file.
#define ANATOMY_REGISTER_OPS(family)                                     \
  static std::vector<::anatomy::testing::OpInfo> anatomy_ops_##family(); \
  static const bool anatomy_ops_registered_##family = [] {               \
    ::anatomy::testing::register_ops(anatomy_ops_##family());            \
    return true;                                                         \
  }();                                                                   \
  static std::vector<::anatomy::testing::OpInfo> anatomy_ops_##family()
