// add, sub, mul, div and the iteration plan under them: each result checked against an fp64
// reference computed element by element from the inputs' values, for contiguous,
// non-contiguous, offset, broadcast, 0-dim, zero-size and mixed-dtype operands.
#include <cmath>
#include <functional>

#include "anatomy/dispatch/ops/binary_registration.h"
#include "anatomy/dispatch/ops/plan_casts.h"

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {

// Values of `t` broadcast to `shape`, row-major, as doubles (independent of the kernels).
D broadcast_values(const Tensor& t, IntArrayRef shape) {
  Tensor e = t.expand(shape);
  D out;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d) off += index[d] * e.strides()[d];
    out.push_back(element(e, off));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Rounds an fp64 reference to the result dtype, as the kernel's one final rounding does.
double round_to(double v, DType t) {
  return visit_dtype(t, "test", [&]<typename T>() { return convert<double>(convert<T>(v)); });
}

void check_against_reference(const Tensor& result, const Tensor& a, const Tensor& b,
                             const std::function<double(double, double)>& f, double tol) {
  REQUIRE(result.dim() == static_cast<int64_t>(result.sizes().size()));
  D x = broadcast_values(a, result.sizes()), y = broadcast_values(b, result.sizes());
  D got = values(result);
  REQUIRE(got.size() == x.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double want = round_to(f(x[i], y[i]), result.dtype());
    INFO("element " << i << ": " << x[i] << " op " << y[i]);
    CHECK(std::fabs(got[i] - want) <= tol * std::max(1.0, std::fabs(want)));
  }
}

Tensor random_tensor(IntArrayRef shape, DType dtype) {
  if (is_floating(dtype)) return randn(shape, dtype);
  return randint(-50, 50, shape, dtype);
}

}  // namespace

TEST_CASE("binary ops: every dtype, against an fp64 reference") {
  manual_seed(1);
  for (DType t : {DType::UInt8, DType::Int8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16,
                  DType::Float32, DType::Float64}) {
    INFO("dtype " << name(t));
    // One rounding of the exact result is the reference; alpha adds a second rounding in float.
    const double tol = t == DType::Float16 ? 2e-3 : t == DType::BFloat16 ? 1e-2 : is_floating(t) ? 1e-6 : 0;
    // Small integers, so products and a + 3b fit even in 8 bits (wrapping is not under test).
    Tensor a = t == DType::UInt8  ? randint(0, 12, {3, 5}, t)
               : t == DType::Int8 ? randint(-9, 10, {3, 5}, t)
                                  : random_tensor({3, 5}, t);
    Tensor b = t == DType::UInt8  ? randint(1, 12, {3, 5}, t)
               : t == DType::Int8 ? randint(-9, 10, {3, 5}, t)
                                  : random_tensor({3, 5}, t);
    check_against_reference(a + b, a, b, std::plus<double>(), tol);
    check_against_reference(a * b, a, b, std::multiplies<double>(), tol);
    check_against_reference(
        a.add(b, 3), a, b, [](double x, double y) { return x + 3 * y; }, tol);
    if (is_floating(t)) {
      check_against_reference(a - b, a, b, std::minus<double>(), tol);
      check_against_reference(a / b, a, b, std::divides<double>(), tol);
    }
  }
}

TEST_CASE("binary ops: non-contiguous, offset, broadcast, 0-dim and zero-size operands") {
  manual_seed(2);
  Tensor base = randn({6, 8});
  Tensor t = base.t();                         // transposed
  Tensor s = base.slice(1, 1, 7).slice(0, 2);  // offset and gaps: 4 x 6
  Tensor row = randn({6});                     // broadcasts over rows
  Tensor col = randn({4, 1});
  check_against_reference(t + t, t, t, std::plus<double>(), 0);
  check_against_reference(s * row, s, row, std::multiplies<double>(), 1e-6);
  check_against_reference(s - col, s, col, std::minus<double>(), 0);
  check_against_reference(col + row, col, row, std::plus<double>(), 0);  // [4,1] + [6] -> [4,6]
  Tensor zero_dim = tensor({2.5}).view({});
  check_against_reference(s / zero_dim, s, zero_dim, std::divides<double>(), 1e-6);
  Tensor empty_rows = randn({0, 6});
  Tensor r = empty_rows + row;
  CHECK(vec(r.sizes()) == V{0, 6});
  Tensor scalar_sum = zero_dim + zero_dim;
  CHECK(scalar_sum.dim() == 0);
  CHECK(scalar_sum.item<double>() == 5.0);
}

TEST_CASE("binary ops: the result keeps a dense input's layout") {
  Tensor cl = randn({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  Tensor r = cl * cl;
  CHECK(r.is_contiguous(MemoryFormat::ChannelsLast));
  Tensor tt = randn({3, 4}).t();
  CHECK(vec((tt + tt).strides()) == V{1, 4});
}

TEST_CASE("binary ops: type promotion with tensors and scalars") {
  Tensor i32 = arange(6, DType::Int32), f16 = ones({6}, DType::Float16), i8 = arange(6, DType::Int8);
  CHECK((i32 + ones({6})).dtype() == DType::Float32);
  CHECK((f16 + ones({6}, DType::Float32)).dtype() == DType::Float32);
  CHECK((f16 * 2).dtype() == DType::Float16);    // an integer scalar keeps fp16
  CHECK((f16 * 2.5).dtype() == DType::Float16);  // so does a float scalar (same category)
  CHECK((i32 * 2.5).dtype() == DType::Float32);  // a float scalar lifts ints to the default float
  CHECK((i8 + 1000).dtype() == DType::Int8);     // an int scalar never widens
  CHECK((i32 / i32).dtype() == DType::Float32);  // true division
  CHECK((arange(3) / 2).dtype() == DType::Float32);
  CHECK(values(arange(3) / 2) == D{0, 0.5, 1});
  // fp64 keeps a float scalar's full precision (wrapped numbers are fp64 underneath).
  Tensor f64 = ones({1}, DType::Float64);
  CHECK((f64 * 0.1).item<double>() == 0.1);
  CHECK(values(2 - arange(3)) == D{2, 1, 0});
  Tensor b = tensor({true, false});
  CHECK((b + b).dtype() == DType::Bool);
  CHECK(values(b * tensor({true, true})) == D{1, 0});
}

TEST_CASE("binary ops: in-place and out= forms") {
  Tensor a = arange(6, DType::Float32).view({2, 3});
  uint32_t v = a.version();
  a.add_(ones({3}), 2);
  CHECK(values(a) == D{2, 3, 4, 5, 6, 7});
  CHECK(a.version() > v);
  a.mul_(a);  // exact aliasing is allowed
  CHECK(values(a) == D{4, 9, 16, 25, 36, 49});
  Tensor h = ones({3}, DType::Float16);
  h.add_(tensor({0.5, 1.5, 2.5}));  // fp32 result cast into the fp16 output
  CHECK(h.dtype() == DType::Float16);
  CHECK(values(h) == D{1.5, 2.5, 3.5});
  Tensor out = empty({3}, DType::Float64);
  Tensor r = add_out(out, tensor({1.0, 2.0, 3.0}), tensor({0.25, 0.25, 0.25}));
  CHECK(r.is_same(out));
  CHECK(values(out) == D{1.25, 2.25, 3.25});
  // A view as the output writes through to its base.
  Tensor base = zeros({2, 4});
  mul_out(base.select(1, 1), tensor({2.0, 3.0}), tensor({5.0, 7.0}));
  CHECK(values(base) == D{0, 10, 0, 0, 0, 21, 0, 0});
}

TEST_CASE("binary ops: bad inputs throw the right error and change nothing") {
  Tensor a = arange(6, DType::Float32).view({2, 3});
  Tensor i = arange(3);
  EXPECT_ERROR_UNCHANGED(a, ValueError, a + ones({2}), "add", "[2, 3]", "[2]");
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.add_(ones({3})), "add", "fp32", "int64");  // needs a wider dtype
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.add_(ones({4, 2, 3})), "add", "shape");   // out would broadcast
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.add(i, 2.5), "alpha");
  Tensor b = tensor({true});
  EXPECT_ERROR_UNCHANGED(b, TypeError, b - b, "sub", "bool");
  // A floating-only operator (FloatOnly rows): integer and bool operands are refused, not promoted.
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.hypot_(i), "hypot", "int64");
  EXPECT_ERROR(TypeError, hypot(b, b), "hypot", "bool");
  CHECK(hypot(tensor({3.0, 5.0}), 4.0).allclose(tensor({5.0, 6.4031242374328485})));
  // Partial overlap between the output and an input.
  Tensor x = arange(6, DType::Float32);
  EXPECT_ERROR_UNCHANGED(x, ValueError, add_out(x.slice(0, 1, 4), x.slice(0, 0, 3), x.slice(0, 0, 3)), "overlap");
  // An expanded (self-overlapping) output.
  Tensor e = zeros({1}).expand({3});
  EXPECT_ERROR(ValueError, add_out(e, ones({3}), ones({3})), "add", "single memory location");
  // Devices must agree (a meta tensor with a CPU one).
  EXPECT_ERROR_UNCHANGED(a, DeviceError, a + empty({2, 3}, Device("meta")), "add", "meta", "cpu");
}

TEST_CASE("binary ops: meta tensors give shape and dtype only") {
  Tensor m = empty({4, 1, 3}, TensorOptions().device(Device("meta")).dtype(DType::Float16));
  Tensor r = m * empty({5, 1}, TensorOptions().device(Device("meta")).dtype(DType::Float32));
  CHECK(r.is_meta());
  CHECK(vec(r.sizes()) == V{4, 5, 3});
  CHECK(r.dtype() == DType::Float32);
}

TEST_CASE("iteration plan: broadcast strides, dim order and merging") {
  Tensor a = zeros({2, 3, 4});
  IterationPlan p =
      IterationPlan::Builder("test", operator_casts()).add_output(Tensor()).add_input(a).add_input(a).build();
  CHECK(p.is_contiguous());
  CHECK(vec(p.loop_shape()) == V{24});
  CHECK(p.loop_stride(0, 0) == 4);  // a flat loop steps each operand by its element size
  CHECK(p.loop_stride(2, 0) == 4);
  // A transposed input: the loop follows the output's (row-major) order, the input strides jump.
  // A plan borrows the tensors its builder was given: they must outlive it (no temporaries).
  Tensor t = zeros({4, 6}).t();  // [6, 4], strides (1, 6)
  Tensor t_out = zeros({6, 4});
  IterationPlan q = IterationPlan::Builder("test", operator_casts()).add_output(t_out).add_input(t).build();
  CHECK_FALSE(q.is_contiguous());
  CHECK(vec(q.loop_shape()) == V{4, 6});
  CHECK(q.loop_stride(0, 0) == 4);   // output: 4 bytes per step of its last dim
  CHECK(q.loop_stride(1, 0) == 24);  // input: 6 floats per step
  // A broadcast input has stride 0 in the broadcast dims, and merges with neighbours.
  Tensor row = zeros({4}), full_shape = zeros({5, 4});
  IterationPlan r = IterationPlan::Builder("test", operator_casts())
                        .add_output(Tensor())
                        .add_input(full_shape)
                        .add_input(row)
                        .build();
  CHECK(vec(r.loop_shape()) == V{4, 5});
  CHECK(r.loop_stride(2, 1) == 0);
  CHECK(r.can_use_32bit_indexing());
  CHECK(r.common_dtype() == DType::Float32);
}

TEST_CASE("iteration plan: a CPU scalar next to device tensors stays on the CPU, cast to the common dtype") {
  // Meta stands in for a device here: the rule is about any non-CPU device.
  const TensorOptions meta = TensorOptions().device(Device("meta"));
  Tensor m = empty({4, 3}, meta.dtype(DType::Float16));
  Tensor two_and_a_half = wrapped_scalar(2.5);
  IterationPlan p = IterationPlan::Builder("test", operator_casts())
                        .add_output(Tensor())
                        .add_input(m)
                        .add_input(two_and_a_half)
                        .build();
  CHECK(p.output(0).is_meta());
  CHECK(p.common_dtype() == DType::Float16);
  CHECK_FALSE(p.is_cpu_scalar(0));
  CHECK(p.is_cpu_scalar(1));
  CHECK(p.input(1).is_cpu());
  CHECK(p.input(1).dtype() == DType::Float16);  // cast on the CPU
  CHECK(element(p.input(1), 0) == 2.5);
  CHECK(p.loop_stride(2, 0) == 0);  // broadcast like any 0-dim operand
  // A 0-dim CPU tensor (not a wrapped number) as the first input, and in an in-place plan.
  Tensor s = full({}, 3, DType::Int64);
  IterationPlan q =
      IterationPlan::Builder("test", operator_casts()).add_output(Tensor()).add_input(s).add_input(m).build();
  CHECK(q.is_cpu_scalar(0));
  CHECK(q.input(0).dtype() == DType::Float16);
  CHECK(element(q.input(0), 0) == 3);
  IterationPlan r = IterationPlan::Builder("test", operator_casts()).add_output(m).add_input(m).add_input(s).build();
  CHECK(r.output(0).is_same(m));
  CHECK(r.is_cpu_scalar(1));
  // Only 0-dim CPU tensors may join device tensors.
  EXPECT_ERROR(
      DeviceError,
      IterationPlan::Builder("test", operator_casts()).add_output(Tensor()).add_input(m).add_input(zeros({1})).build(),
      "test", "meta", "cpu");
  // The operator path: m + 2, 2 * m and m.add_(cpu 0-dim) keep the device and dtype.
  CHECK((m + 2).is_meta());
  CHECK((2 * m).dtype() == DType::Float16);
  CHECK(m.add_(full({}, 1.5)).is_meta());
  // On the CPU nothing is a "CPU scalar": every operand is readable by the loop.
  Tensor c = zeros({2}), one = wrapped_scalar(1);
  IterationPlan cpu =
      IterationPlan::Builder("test", operator_casts()).add_output(Tensor()).add_input(c).add_input(one).build();
  CHECK_FALSE(cpu.is_cpu_scalar(1));
}

TEST_CASE("iteration plan: a number next to a contiguous CPU tensor gets Builder::build's plan, without a Builder") {
  struct Case {
    DType dtype;
    Scalar number;
  };
  const std::vector<Case> cases = {{DType::Float32, 2.5},       {DType::Float16, 0.1},  {DType::BFloat16, 3},
                                   {DType::Float64, -1.5},      {DType::Float32, true}, {DType::Int32, 7},
                                   {DType::Int64, -3},          {DType::UInt8, 200},    {DType::Bool, true},
                                   {DType::Int8, Scalar(false)}};
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {0}, {5}, {4, 3}, {0, 3}, {70000}};
  for (const Case& c : cases) {
    for (const auto& shape : shapes) {
      INFO(name(c.dtype) << " and " << c.number.to_string() << ", shape [" << shape.size() << " dims]");
      Tensor a = zeros(shape, c.dtype);
      Tensor number = wrapped_scalar(c.number);
      REQUIRE(IterationPlan::is_flat_functional(a, &number));
      IterationPlan p = IterationPlan::flat_functional("test", a, &number);
      IterationPlan q =
          IterationPlan::Builder("test", operator_casts()).add_output(Tensor()).add_input(a).add_input(number).build();
      CHECK(p.common_dtype() == q.common_dtype());
      CHECK(p.num_operands() == q.num_operands());
      CHECK(vec(p.loop_shape()) == vec(q.loop_shape()));
      for (int k = 0; k < q.num_operands(); ++k) {
        for (size_t d = 0; d < q.loop_shape().size(); ++d) CHECK(p.loop_stride(k, d) == q.loop_stride(k, d));
      }
      CHECK(p.is_contiguous() == q.is_contiguous());
      CHECK(p.can_use_32bit_indexing() == q.can_use_32bit_indexing());
      CHECK(p.output(0).sizes() == q.output(0).sizes());
      CHECK(p.output(0).strides() == q.output(0).strides());
      CHECK(p.output(0).dtype() == q.output(0).dtype());
      CHECK(p.input(1).dtype() == q.input(1).dtype());
      CHECK(element(p.input(1), 0) == element(q.input(1), 0));
    }
  }
  // Numbers that widen the tensor's dtype, other devices, and 0-dim tensors that are not numbers
  // take the Builder.
  Tensor ints = zeros({3}, DType::Int32), bools = zeros({3}, DType::Bool), f = zeros({3});
  Tensor half = wrapped_scalar(0.5), one = wrapped_scalar(1), not_a_number = full({}, 2.0, DType::Float64);
  CHECK_FALSE(IterationPlan::is_flat_functional(ints, &half));
  CHECK_FALSE(IterationPlan::is_flat_functional(bools, &one));
  CHECK_FALSE(IterationPlan::is_flat_functional(f, &not_a_number));
  Tensor m = empty({3}, TensorOptions().device(Device("meta")));
  CHECK_FALSE(IterationPlan::is_flat_functional(m, &half));
  // The operators on that path: values as the fp64 reference has them.
  Tensor x = randn({4, 3});
  check_against_reference(
      x * 2.5, x, full({}, 2.5), [](double u, double v) { return u * v; }, 1e-6);
  check_against_reference(
      x - 1, x, full({}, 1.0), [](double u, double v) { return u - v; }, 1e-6);
  check_against_reference(
      add(x, 3, 2), x, full({}, 3.0), [](double u, double v) { return u + 2 * v; }, 1e-6);
  Tensor i = randint(-50, 50, {70000}, DType::Int32);
  check_against_reference(
      i * 3, i, full({}, 3.0), [](double u, double v) { return u * v; }, 0);
  // A number on the left of + and * is put on the right (both commute), as ATen's operators do.
  Tensor h = randn({5}, DType::Float16);
  CHECK(values(2.5 * h) == values(h * 2.5));
  CHECK(values(1 + h) == values(h + 1));
  CHECK((2 * i).dtype() == DType::Int32);
  CHECK((true + zeros({2}, DType::Bool)).dtype() == DType::Bool);
}
