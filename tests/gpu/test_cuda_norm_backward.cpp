// GPU tests of the fused backward operators (_softmax_backward_data, _log_softmax_backward_data,
// native_layer_norm_backward, _rms_norm_backward) on CUDA against the CPU's composite: every
// floating dtype, each kernel shape (a warp per row, a block per row in registers, a looping
// block; softmax's column kernel for a dim that is not innermost), rows that are not a multiple
// of the 16-byte vector, non-contiguous and offset operands, zero-size and 0-dim inputs, weight
// absent or present, the output_mask combinations, the host-checked errors, run-to-run equal
// bits (no float atomics), and a training step through layer_norm and softmax whose gradients
// take these operators, with create_graph still taking the composites.
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::values_of;

namespace {

using gpu_test::kFloatingDtypes;

// Same shape and dtype, |got - want| <= tol * (|want| + 1); both undefined counts as equal.
std::string compare_to_cpu(const Tensor& got, const Tensor& want, double scale = 1) {
  if (!got.defined() || !want.defined()) {
    return got.defined() == want.defined() ? "" : "one result is undefined and the other is not";
  }
  if (!got.is_cuda()) return "the result is not on CUDA";
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) return "shape or dtype differs";
  const std::vector<double> g = values_of(got), w = values_of(want);
  // CUDA computes fp16/bf16 in fp32 and rounds once; the expected values are the CPU composite's
  // on fp64 copies of the same (rounded) inputs, rounded to the dtype. (The CPU composite in
  // fp16/bf16 rounds every intermediate and is further off: the op table's bounds.)
  const double tol = gpu_test::float_rtol(want.dtype(), 2e-5, 1e-11) * scale;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (!(std::abs(g[i] - w[i]) <= tol * (std::abs(w[i]) + 1))) {
      return fmt::format("element {} of {}: {} != {} (tol {})", i, g.size(), g[i], w[i], tol);
    }
  }
  return "";
}

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// Random values in [-2, 2) of `dtype` on the CPU.
Tensor values(IntArrayRef sizes, DType dtype) { return (rand(sizes, DType::Float64) * 4 - 2).to(dtype); }

// The same values on CUDA in the same layout as a transposed, offset or contiguous CPU tensor
// (contiguous copies on both sides are what the kernels see; the layouts exercise the plans).
Tensor on_cuda(const Tensor& t) { return t.defined() ? t.to(kCuda) : t; }
// An fp64 copy on the CPU (undefined stays undefined), and a result brought back to `dt`.
Tensor f64(const Tensor& t) { return t.defined() ? t.to(DType::Float64) : t; }
Tensor as(const Tensor& t, DType dt) { return t.defined() ? t.to(dt) : t; }

// rms_norm's default eps for dt (its machine epsilon), given explicitly to the fp64 reference.
double machine_eps(DType dt) {
  switch (dt) {
    case DType::Float16:
      return 0.0009765625;
    case DType::BFloat16:
      return 0.0078125;
    case DType::Float32:
      return 1.1920928955078125e-07;
    default:
      return 2.220446049250313e-16;
  }
}

// ---- softmax and log_softmax ----

void check_softmax_backward(const Tensor& x, int64_t dim, const Tensor& g, const std::string& what) {
  CAPTURE(what);
  for (bool log : {false, true}) {
    CAPTURE(log);
    const Tensor y = log ? log_softmax(x, dim) : softmax(x, dim);
    const Tensor want = as(log ? _log_softmax_backward_data(f64(g), f64(y), dim, DType::Float64)
                               : _softmax_backward_data(f64(g), f64(y), dim, DType::Float64),
                           y.dtype());
    const Tensor yg = on_cuda(y), gg = on_cuda(g);
    const Tensor got =
        log ? _log_softmax_backward_data(gg, yg, dim, y.dtype()) : _softmax_backward_data(gg, yg, dim, y.dtype());
    CHECK_MESSAGE(compare_to_cpu(got, want).empty(), compare_to_cpu(got, want));
    // No float atomics: the same bits again.
    const Tensor again =
        log ? _log_softmax_backward_data(gg, yg, dim, y.dtype()) : _softmax_backward_data(gg, yg, dim, y.dtype());
    CHECK(same_values(got, again));
  }
}

TEST_CASE("CUDA softmax backward: every dtype and kernel shape against the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(7);
  for (DType dt : kFloatingDtypes) {
    CAPTURE(name(dt));
    struct Case {
      std::vector<int64_t> shape;
      int64_t dim;
      const char* what;
    };
    const std::vector<Case> cases = {
        {{5, 7}, 1, "short rows (a warp each)"},
        {{37, 31}, -1, "rows under a warp's width"},
        {{16, 512}, 1, "a warp's capacity in fp32"},
        {{9, 1001}, 1, "rows not a multiple of the vector"},
        {{6, 4096}, 1, "a block per row"},
        {{3, 8192}, 1, "a block of 512 threads per row"},
        {{2, 12000}, 1, "past 512 threads: the looping block"},
        {{2, 20000}, 1, "long rows (> 16384 values)"},
        {{4, 300, 6}, 1, "a middle dim (columns)"},
        {{70, 3}, 0, "the first dim"},
        {{}, 0, "0-dim"},
        {{0, 5}, 1, "zero-size"},
        {{5, 0}, 1, "empty rows"},
    };
    for (const Case& c : cases) check_softmax_backward(values(c.shape, dt), c.dim, values(c.shape, dt), c.what);
    check_softmax_backward(values({40, 9}, dt).t(), 1, values({40, 9}, dt).t(), "transposed");
    check_softmax_backward(values({6, 70}, dt).slice(1, 3), 1, values({6, 67}, dt), "offset");
  }
}

TEST_CASE("CUDA softmax backward: input_dtype casts the result") {
  ANATOMY_REQUIRE_GPU();
  const Tensor y = softmax(values({4, 50}, DType::Float32), 1), g = values({4, 50}, DType::Float32);
  const Tensor want = _softmax_backward_data(f64(g), f64(y), 1, DType::Float64).to(DType::Float16);
  const Tensor got = _softmax_backward_data(g.to(kCuda), y.to(kCuda), 1, DType::Float16);
  CHECK(got.dtype() == DType::Float16);
  CHECK(compare_to_cpu(got, want).empty());
}

TEST_CASE("CUDA softmax backward: the CPU's errors") {
  ANATOMY_REQUIRE_GPU();
  const Tensor y = randn({2, 3}).to(kCuda);
  CHECK_THROWS_AS(_softmax_backward_data(randn({2, 4}).to(kCuda), y, 1, DType::Float32), ValueError);
  CHECK_THROWS_AS(_softmax_backward_data(y, y, 2, DType::Float32), IndexError);
  CHECK_THROWS_AS(_log_softmax_backward_data(y.to(DType::Float64), y, 1, DType::Float32), TypeError);
  CHECK_THROWS_AS(_softmax_backward_data(y.to(DType::Int64), y.to(DType::Int64), 1, DType::Float32), TypeError);
  CHECK_THROWS_AS(_softmax_backward_data(randn({2, 3}), y, 1, DType::Float32), DeviceError);
}

// ---- layer_norm and rms_norm ----

const std::vector<std::array<bool, 3>> kMasks = {{true, true, true},   {true, false, false}, {false, true, false},
                                                 {false, false, true}, {true, true, false},  {false, true, true}};

void check_layer_norm_backward(const Tensor& x, IntArrayRef shape, const Tensor& w, const Tensor& g,
                               const std::string& what) {
  CAPTURE(what);
  auto [y, mean, rstd] = native_layer_norm(x, shape, opt(w), std::nullopt, 1e-5);
  const Tensor xg = on_cuda(x), wg = on_cuda(w), gg = on_cuda(g), mg = on_cuda(mean), rg = on_cuda(rstd);
  for (const std::array<bool, 3>& mask : kMasks) {
    CAPTURE(mask[0]);
    CAPTURE(mask[1]);
    CAPTURE(mask[2]);
    auto [dx64, dw64, db64] =
        native_layer_norm_backward(f64(g), f64(x), shape, f64(mean), f64(rstd), opt(f64(w)), std::nullopt, mask);
    const Tensor dx = as(dx64, x.dtype()), dw = as(dw64, x.dtype()), db = as(db64, x.dtype());
    auto [dxg, dwg, dbg] = native_layer_norm_backward(gg, xg, shape, mg, rg, opt(wg), std::nullopt, mask);
    CHECK_MESSAGE(compare_to_cpu(dxg, dx).empty(), "dx: ", compare_to_cpu(dxg, dx));
    // The column sums add many rows: an fp16/bf16 rounding of each term on the CPU.
    CHECK_MESSAGE(compare_to_cpu(dwg, dw, 4).empty(), "dw: ", compare_to_cpu(dwg, dw, 4));
    CHECK_MESSAGE(compare_to_cpu(dbg, db, 4).empty(), "db: ", compare_to_cpu(dbg, db, 4));
    auto [dx2, dw2, db2] = native_layer_norm_backward(gg, xg, shape, mg, rg, opt(wg), std::nullopt, mask);
    if (dxg.defined()) CHECK(same_values(dxg, dx2));
    if (dwg.defined()) CHECK(same_values(dwg, dw2));  // deterministic column sums
    if (dbg.defined()) CHECK(same_values(dbg, db2));
  }
}

void check_rms_norm_backward(const Tensor& x, IntArrayRef shape, const Tensor& w, const Tensor& g,
                             const std::string& what) {
  CAPTURE(what);
  const Tensor xg = on_cuda(x), wg = on_cuda(w), gg = on_cuda(g);
  for (const std::array<bool, 2>& mask : std::vector<std::array<bool, 2>>{{true, true}, {true, false}, {false, true}}) {
    CAPTURE(mask[0]);
    CAPTURE(mask[1]);
    for (std::optional<double> eps : {std::optional<double>(), std::optional<double>(1e-3)}) {
      auto [dx64, dw64] =
          _rms_norm_backward(f64(g), f64(x), shape, opt(f64(w)), eps.value_or(machine_eps(x.dtype())), mask);
      const Tensor dx = as(dx64, x.dtype()), dw = as(dw64, x.dtype());
      auto [dxg, dwg] = _rms_norm_backward(gg, xg, shape, opt(wg), eps, mask);
      CHECK_MESSAGE(compare_to_cpu(dxg, dx).empty(), "dx: ", compare_to_cpu(dxg, dx));
      CHECK_MESSAGE(compare_to_cpu(dwg, dw, 4).empty(), "dw: ", compare_to_cpu(dwg, dw, 4));
      auto [dx2, dw2] = _rms_norm_backward(gg, xg, shape, opt(wg), eps, mask);
      if (dwg.defined()) CHECK(same_values(dwg, dw2));
    }
  }
}

struct NormCase {
  std::vector<int64_t> sizes;
  std::vector<int64_t> normalized;
  const char* what;
};

const std::vector<NormCase> kNormCases = {
    {{5, 7}, {7}, "short rows (a warp each)"},
    {{300, 31}, {31}, "many short rows (several blocks of partials)"},
    {{3000, 16}, {16}, "more rows than the partials' blocks"},
    {{16, 512}, {512}, "a warp's capacity in fp32"},
    {{9, 1001}, {1001}, "rows not a multiple of the vector"},
    {{6, 4096}, {4096}, "a block per row"},
    {{700, 1024}, {1024}, "more rows than the partials' blocks, a block each"},
    {{3, 8192}, {8192}, "a block of 512 threads per row"},
    {{2, 12000}, {12000}, "past 512 threads: the looping block"},
    {{3, 20000}, {20000}, "long rows (> 16384 values)"},
    {{600, 17000}, {17000}, "long rows, more rows than the partials' blocks"},
    {{2, 3, 4, 5}, {4, 5}, "two normalized dims"},
    {{0, 5}, {5}, "zero-size"},
    {{4, 0}, {0}, "empty rows"},
};

TEST_CASE("CUDA layer_norm backward: every dtype, kernel shape, weight and output_mask against the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(11);
  for (DType dt : kFloatingDtypes) {
    CAPTURE(name(dt));
    for (const NormCase& c : kNormCases) {
      // The largest case only in fp32: its CPU composite is slow.
      if (c.sizes[0] == 600 && dt != DType::Float32) continue;
      for (bool affine : {false, true}) {
        CAPTURE(affine);
        const Tensor w = affine ? values(c.normalized, dt) : Tensor();
        check_layer_norm_backward(values(c.sizes, dt), c.normalized, w, values(c.sizes, dt), c.what);
      }
    }
    check_layer_norm_backward(values({7, 40}, dt).t(), {7}, values({7}, dt), values({40, 7}, dt), "transposed");
    check_layer_norm_backward(values({6, 70}, dt).slice(1, 3), {67}, values({68}, dt).slice(0, 1), values({6, 67}, dt),
                              "offset input and weight");
  }
}

TEST_CASE("CUDA rms_norm backward: every dtype, kernel shape, weight and output_mask against the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(13);
  for (DType dt : kFloatingDtypes) {
    CAPTURE(name(dt));
    for (const NormCase& c : kNormCases) {
      if (c.sizes[0] == 600 && dt != DType::Float32) continue;
      for (bool affine : {false, true}) {
        CAPTURE(affine);
        const Tensor w = affine ? values(c.normalized, dt) : Tensor();
        check_rms_norm_backward(values(c.sizes, dt), c.normalized, w, values(c.sizes, dt), c.what);
      }
    }
    check_rms_norm_backward(values({7, 40}, dt).t(), {7}, values({7}, dt), values({40, 7}, dt), "transposed");
  }
}

TEST_CASE("CUDA layer_norm and rms_norm backward: the CPU's errors") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({4, 6}).to(kCuda);
  auto [y, mean, rstd] = native_layer_norm(x, {6}, std::nullopt, std::nullopt, 1e-5);
  const std::array<bool, 3> all{true, true, true};
  CHECK_THROWS_AS(
      native_layer_norm_backward(randn({4, 5}).to(kCuda), x, {6}, mean, rstd, std::nullopt, std::nullopt, all),
      ValueError);
  CHECK_THROWS_AS(native_layer_norm_backward(x, x, {5}, mean, rstd, std::nullopt, std::nullopt, all), ValueError);
  CHECK_THROWS_AS(native_layer_norm_backward(x, x, {6}, mean.slice(0, 1), rstd, std::nullopt, std::nullopt, all),
                  ValueError);
  CHECK_THROWS_AS(native_layer_norm_backward(x, x, {6}, mean, rstd, randn({5}).to(kCuda), std::nullopt, all),
                  ValueError);
  CHECK_THROWS_AS(native_layer_norm_backward(x, x, {6}, mean, rstd, randn({6}), std::nullopt, all), DeviceError);
  CHECK_THROWS_AS(native_layer_norm_backward(x.to(DType::Float64), x, {6}, mean, rstd, std::nullopt, std::nullopt, all),
                  TypeError);
  CHECK_THROWS_AS(_rms_norm_backward(x, x.to(DType::Int64), {6}, std::nullopt, std::nullopt, {true, true}), TypeError);
  CHECK_THROWS_AS(_rms_norm_backward(randn({4, 6}), x, {6}, std::nullopt, std::nullopt, {true, true}), DeviceError);
}

// ---- through autograd ----

// x -> layer_norm(w, b) -> matmul -> softmax -> log -> weighted sum, the loss of a small
// classifier; every leaf's gradient on CUDA against the CPU's.
TEST_CASE("CUDA training step: layer_norm and softmax gradients through loss.backward()") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(17);
  // fp32 and fp64: the CPU side is the composite in the same dtype.
  for (DType dt : {DType::Float32, DType::Float64}) {
    CAPTURE(name(dt));
    const Tensor x = values({64, 96}, dt), w = values({96}, dt), b = values({96}, dt), m = values({96, 10}, dt),
                 target = rand({64, 10}, dt);
    std::vector<Tensor> grads[2];
    for (int dev = 0; dev < 2; ++dev) {
      auto leaf = [&](const Tensor& t) { return (dev ? t.to(kCuda) : t.clone()).requires_grad_(); };
      const Tensor xl = leaf(x), wl = leaf(w), bl = leaf(b), ml = leaf(m);
      const Tensor h = layer_norm(xl, {96}, wl, bl);
      const Tensor p = softmax(matmul(h, ml), 1);
      const Tensor lp = log_softmax(matmul(h, ml), 1);
      const Tensor loss = sum(p * (dev ? target.to(kCuda) : target)) - sum(lp * (dev ? target.to(kCuda) : target));
      loss.backward();
      grads[dev] = {xl.grad(), wl.grad(), bl.grad(), ml.grad()};
    }
    const char* names[] = {"x", "weight", "bias", "matrix"};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(names[i]);
      CHECK_MESSAGE(compare_to_cpu(grads[1][i], grads[0][i], 10).empty(), compare_to_cpu(grads[1][i], grads[0][i], 10));
    }
  }
}

TEST_CASE("CUDA rms_norm gradients through backward(), and create_graph keeps the composites") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(19);
  const Tensor x = values({12, 40}, DType::Float64), w = values({40}, DType::Float64),
               g = values({12, 40}, DType::Float64);
  std::vector<Tensor> first[2], second[2];
  for (int dev = 0; dev < 2; ++dev) {
    auto leaf = [&](const Tensor& t) { return (dev ? t.to(kCuda) : t.clone()).requires_grad_(); };
    const Tensor xl = leaf(x), wl = leaf(w);
    const Tensor gd = dev ? g.to(kCuda) : g;
    const Tensor out =
        rms_norm(xl, {40}, wl) + softmax(xl, 1) + std::get<0>(native_layer_norm(xl, {40}, wl, std::nullopt, 1e-5));
    // First order without a graph (the fused operators on CUDA) ...
    first[dev] = autograd::grad({out}, {xl, wl}, {gd}, true);
    // ... and with one, differentiated again (the composites).
    std::vector<Tensor> gx = autograd::grad({out}, {xl, wl}, {gd}, true, true);
    CHECK(gx[0].requires_grad());
    second[dev] = autograd::grad({sum(gx[0] * gx[0]) + sum(gx[1])}, {xl, wl});
  }
  for (int i = 0; i < 2; ++i) {
    CHECK_MESSAGE(compare_to_cpu(first[1][i], first[0][i]).empty(), compare_to_cpu(first[1][i], first[0][i]));
    CHECK_MESSAGE(compare_to_cpu(second[1][i], second[0][i]).empty(), compare_to_cpu(second[1][i], second[0][i]));
  }
}

}  // namespace
