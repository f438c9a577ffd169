// GPU tests of the matrix products over cuBLAS (backends/cuda/blas/blas_cuda.cpp) and the small kernel
// (gemm_small.cu), each size tested on both sides of its threshold: every float dtype
// against an fp64 product on the CPU, operand layouts passed as transposes, copied, or staged
// because misaligned, broadcast batches, empty products, out=, beta == 0 ignoring NaN, the
// precision switches, and the exact integer kernel against the CPU's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

namespace {

const std::vector<DType> kFloats = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

// The largest |x - ref| relative to max |ref| (1 for an empty ref), x read back to the CPU.
double relative_error(const Tensor& x, const Tensor& ref) {
  REQUIRE(x.sizes() == ref.sizes());
  if (ref.numel() == 0) return 0;
  const Tensor r = ref.to(DType::Float64);
  const double scale = std::max(1e-30, r.abs().max().item<double>());
  return (x.cpu().to(DType::Float64) - r).abs().max().item<double>() / scale;
}

// A tolerance for a k-term dot product computed in `d`'s precision (fp32 accumulation for the
// 16-bit types, whose rounding of the result dominates).
double tolerance(DType d) {
  switch (d) {
    case DType::Float64:
      return 1e-12;
    case DType::Float32:
      return 1e-5;
    case DType::Float16:
      return 2e-3;
    default:
      return 1.6e-2;
  }
}

// Random values in [-1, 1) of dtype d, on the CPU.
Tensor uniform(IntArrayRef sizes, DType d) { return (rand(sizes, DType::Float64) * 2 - 1).to(d); }

// The fp64 CPU product of the CPU copies of a and b (3-D or 2-D).
Tensor reference(const Tensor& a, const Tensor& b) {
  return matmul(a.cpu().to(DType::Float64), b.cpu().to(DType::Float64));
}

}  // namespace

// Products on both sides of the small kernel's threshold (Note [Small products skip cuBLAS]):
// [37, 53] @ [53, 29] runs the small kernel, [80, 70] @ [70, 60] cuBLAS.
struct ProductSize {
  int64_t n, k, m;
};
const std::vector<ProductSize> kSmallAndLarge = {{37, 53, 29}, {80, 70, 60}};

TEST_CASE("cuda matmul: mm matches an fp64 CPU product for every float dtype and operand layout") {
  ANATOMY_REQUIRE_GPU();
  for (const ProductSize& s : kSmallAndLarge) {
    for (DType d : kFloats) {
      CAPTURE(s.n);
      CAPTURE(name(d));
      const Tensor a = uniform({s.n, s.k}, d).to(kCuda), b = uniform({s.k, s.m}, d).to(kCuda);
      const Tensor at = uniform({s.k, s.n}, d).to(kCuda).t(), bt = uniform({s.m, s.k}, d).to(kCuda).t();
      // Neither row- nor column-major: every other column of a wider matrix.
      const Tensor a_strided = uniform({s.n, 2 * s.k}, d).to(kCuda).slice(1, 0, 2 * s.k, 2);
      const std::vector<std::pair<Tensor, Tensor>> cases = {{a, b}, {at, b}, {a, bt}, {at, bt}, {a_strided, bt}};
      for (const auto& [x, y] : cases) {
        const Tensor out = mm(x, y);
        CHECK(out.device() == kCuda);
        CHECK(out.dtype() == d);
        CHECK(relative_error(out, reference(x, y)) < tolerance(d));
      }
    }
  }
}

TEST_CASE("cuda matmul: addmm and linear add every broadcast form of self, small and large") {
  ANATOMY_REQUIRE_GPU();
  for (const ProductSize& s : kSmallAndLarge) {
    for (DType d : kFloats) {
      CAPTURE(s.n);
      CAPTURE(name(d));
      const Tensor a = uniform({s.n, s.k}, d).to(kCuda), w = uniform({s.m, s.k}, d).to(kCuda);
      const Tensor ref = reference(a, w.t());
      const std::vector<Tensor> selves = {
          uniform({s.m}, d).to(kCuda),      uniform({s.n, 1}, d).to(kCuda),
          uniform({1, s.m}, d).to(kCuda),   uniform({}, d).to(kCuda),
          uniform({s.n, s.m}, d).to(kCuda), uniform({s.m, s.n}, d).to(kCuda).t()};  // transposed
      for (const Tensor& self : selves) {
        CAPTURE(self.dim());
        const Tensor self64 = self.cpu().to(DType::Float64);
        CHECK(relative_error(addmm(self, a, w.t()), self64 + ref) < tolerance(d));
        CHECK(relative_error(addmm(self, a, w.t(), 0.5, -2.0), self64 * 0.5 + ref * -2.0) < tolerance(d));
      }
      CHECK(relative_error(linear(a, w, selves[0]), selves[0].cpu().to(DType::Float64) + ref) < tolerance(d));
    }
  }
}

// Only small products, so racecheck can run it (cuBLAS's kernels are outside its model, see
// scripts/gpu-check.sh): the small kernel's tiles with partial edges (sizes not multiples of 16),
// k == 1, batches with stride 0, and beta reading the output it writes (baddbmm).
TEST_CASE("cuda matmul: the small kernel alone, partial tiles, batches and every bias form") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloats) {
    CAPTURE(name(d));
    for (const ProductSize& s : std::vector<ProductSize>{{1, 1, 1}, {3, 17, 5}, {16, 16, 16}, {33, 1, 47}}) {
      CAPTURE(s.n);
      const Tensor a = uniform({s.n, s.k}, d).to(kCuda), bt = uniform({s.m, s.k}, d).to(kCuda).t();
      CHECK(relative_error(mm(a, bt), reference(a, bt)) < tolerance(d));
      const Tensor bias = uniform({s.m}, d).to(kCuda), rows = uniform({s.n, 1}, d).to(kCuda);
      CHECK(relative_error(addmm(bias, a, bt), bias.cpu().to(DType::Float64) + reference(a, bt)) < tolerance(d));
      CHECK(relative_error(addmm(rows, a, bt, 2.0, 0.5), rows.cpu().to(DType::Float64) * 2.0 + reference(a, bt) * 0.5) <
            tolerance(d));
      const Tensor batch = uniform({3, s.n, s.k}, d).to(kCuda);
      const Tensor shared = uniform({1, s.k, s.m}, d).to(kCuda).expand({3, s.k, s.m});
      CHECK(relative_error(bmm(batch, shared), reference(batch, shared)) < tolerance(d));
      // baddbmm copies self into its result, then beta reads that result in place.
      const Tensor self = uniform({3, s.n, s.m}, d).to(kCuda);
      CHECK(relative_error(baddbmm(self, batch, shared, 0.25, -1.0),
                           self.cpu().to(DType::Float64) * 0.25 - reference(batch, shared)) < tolerance(d));
    }
  }
}

TEST_CASE("cuda matmul: misaligned operands and outputs of a large product give the right values") {
  ANATOMY_REQUIRE_GPU();
  // 300^3 is above the staging threshold (Note [Misaligned cuBLAS operands]); offsets of one
  // element make every address misaligned.
  for (DType d : {DType::Float16, DType::Float32}) {
    CAPTURE(name(d));
    const Tensor a = uniform({300 * 300 + 1}, d).to(kCuda).slice(0, 1, 300 * 300 + 1).view({300, 300});
    const Tensor b = uniform({300 * 300 + 1}, d).to(kCuda).slice(0, 1, 300 * 300 + 1).view({300, 300});
    Tensor out_storage = zeros({300 * 300 + 1}, TensorOptions().dtype(d).device(kCuda));
    const Tensor out = out_storage.slice(0, 1, 300 * 300 + 1).view({300, 300});
    mm_out(out, a, b.t());
    CHECK(relative_error(out, reference(a, b.t())) < tolerance(d));
    CHECK(out_storage.slice(0, 0, 1).item<double>() == 0.0);  // nothing written before the view
    const Tensor self = uniform({300}, d).to(kCuda);
    CHECK(relative_error(addmm(self, a, b, 0.5, 2.0), self.cpu().to(DType::Float64) * 0.5 + reference(a, b) * 2.0) <
          tolerance(d));
  }
}

TEST_CASE(
    "cuda matmul: odd leading dimensions of a large product are staged with padded rows and give the right values") {
  ANATOMY_REQUIRE_GPU();
  // x[:, 1:] of a (301, 302) tensor: address one element past alignment and K = 301, so the
  // staged copy's rows are padded (Note [Misaligned cuBLAS operands]), and in fp16 and bf16 K is
  // padded too, row-major and transposed operands alike; an output view with an odd leading
  // dimension is computed in a padded temporary; batches of odd sizes have odd batch strides.
  for (DType d : kFloats) {
    CAPTURE(name(d));
    const Tensor base = uniform({301, 302}, d).to(kCuda);
    const Tensor a = base.slice(1, 1, 302);  // (301, 301) at storage offset 1, rows 302 apart
    const Tensor b = uniform({301, 299}, d).to(kCuda);
    CHECK(relative_error(mm(a, b), reference(a, b)) < tolerance(d));
    CHECK(relative_error(mm(b.t(), a.t()), reference(b.t(), a.t())) < tolerance(d));
    Tensor out_storage = zeros({301, 300}, TensorOptions().dtype(d).device(kCuda));
    const Tensor out = out_storage.slice(1, 1, 300);  // (301, 299), rows 300 apart, offset 1
    mm_out(out, a, b);
    CHECK(relative_error(out, reference(a, b)) < tolerance(d));
    CHECK(out_storage.select(1, 0).abs().sum().item<double>() == 0.0);  // the column before the view
    const Tensor x = uniform({3, 257, 261}, d).to(kCuda), y = uniform({3, 261, 263}, d).to(kCuda);
    const Tensor c = uniform({3, 257, 263}, d).to(kCuda);
    const Tensor ref = c.cpu().to(DType::Float64) * 0.5 + reference(x, y) * 2.0;
    CHECK(relative_error(baddbmm(c, x, y, 0.5, 2.0), ref) < tolerance(d));
    const Tensor y_shared = uniform({1, 261, 263}, d).to(kCuda).expand({3, 261, 263});  // batch stride 0
    CHECK(relative_error(bmm(x, y_shared), reference(x, y_shared)) < tolerance(d));
    CHECK(relative_error(bmm(x.transpose(1, 2).contiguous().transpose(1, 2), y_shared), reference(x, y_shared)) <
          tolerance(d));
    // fp16 and bf16 pad K = 301 to 304 with zeros (Note [Padding K for the tensor cores]): an
    // infinity in the last real column of a still reaches its row of c, and only that row.
    Tensor a_inf = a.clone();
    a_inf.select(0, 0).select(0, 300).fill_(std::numeric_limits<double>::infinity());
    const Tensor b_pos = b.abs().add(0.5);  // no zero: inf * b is inf in every column
    const std::vector<double> row0 = gpu_test::values_of(mm(a_inf, b_pos).select(0, 0));
    const std::vector<double> row1 = gpu_test::values_of(mm(a_inf, b_pos).select(0, 1));
    CHECK(std::all_of(row0.begin(), row0.end(), [](double v) { return std::isinf(v) && v > 0; }));
    CHECK(std::all_of(row1.begin(), row1.end(), [](double v) { return std::isfinite(v); }));
  }
}

TEST_CASE("cuda matmul: K padding and staging read a source at every 2-byte misalignment and stride") {
  ANATOMY_REQUIRE_GPU();
  // a = base[:, off : off + 293]: K = 293 is padded to 296 (Note [Padding K for the tensor
  // cores]) and a's rows start off, off + 308, ... elements into base, so pad_operand.cu's
  // aligned-word reads shift by every amount from 0 to 7 elements over the offsets and rows. With
  // the reduced-precision switches off: on, such a product is split instead (the next test).
  PrecisionSwitchGuard no_fp16_split(&allow_fp16_reduced_precision_reduction,
                                     &set_allow_fp16_reduced_precision_reduction, false);
  PrecisionSwitchGuard no_bf16_split(&allow_bf16_reduced_precision_reduction,
                                     &set_allow_bf16_reduced_precision_reduction, false);
  for (DType d : {DType::Float16, DType::BFloat16}) {
    CAPTURE(name(d));
    const Tensor base = uniform({300, 308}, d).to(kCuda);
    const Tensor b = uniform({293, 300}, d).to(kCuda);
    for (int64_t off = 0; off < 8; ++off) {
      CAPTURE(off);
      const Tensor a = base.slice(1, off, off + 293);
      CHECK(relative_error(mm(a, b), reference(a, b)) < tolerance(d));
      CHECK(relative_error(mm(b.t(), a.t()), reference(b.t(), a.t())) < tolerance(d));
    }
    // Every other column, K = 304 (a multiple of 8: staged, not padded), in both orientations.
    const Tensor wide = uniform({300, 608}, d).to(kCuda);
    const Tensor strided = wide.slice(1, 0, 608, 2);  // (300, 304), strides (608, 2)
    const Tensor c = uniform({304, 300}, d).to(kCuda);
    CHECK(relative_error(mm(strided, c), reference(strided, c)) < tolerance(d));
    CHECK(relative_error(mm(c.t(), strided.t()), reference(c.t(), strided.t())) < tolerance(d));
  }
}

TEST_CASE("cuda matmul: a product split around K's misaligned head adds each head and tail term once") {
  ANATOMY_REQUIRE_GPU();
  // Note [Splitting K around a misaligned head]: with the reduced-precision switches on (the
  // default), a = base[:, off : off + 293] is not copied: cuBLAS takes the aligned middle and
  // k_remainder.cu the up to 7 head and 7 tail columns, here 30 times larger than the rest so that
  // a term lost or counted twice shows; every offset from 0 (K odd only) to 7; c of 300 columns
  // (the remainder's scalar loads) and of 304 (16-byte vectors), 300 rows in blocks of 8.
  for (const auto& [d, cols] : std::vector<std::pair<DType, int64_t>>{
           {DType::Float16, 300}, {DType::BFloat16, 300}, {DType::Float16, 304}, {DType::BFloat16, 304}}) {
    CAPTURE(name(d));
    CAPTURE(cols);
    Tensor base = uniform({300, 308}, d).to(kCuda);
    base.slice(1, 0, 16).mul_(30.0);
    base.slice(1, 280, 308).mul_(30.0);
    const Tensor b = uniform({293, cols}, d).to(kCuda);
    const Tensor b_pos = b.abs().add(0.5);  // no zero: inf * b is inf in every column
    const Tensor self = uniform({cols}, d).to(kCuda);
    for (int64_t off = 0; off < 8; ++off) {
      CAPTURE(off);
      const Tensor a = base.slice(1, off, off + 293);
      const Tensor split = mm(a, b);
      CHECK(relative_error(split, reference(a, b)) < tolerance(d));
      CHECK(relative_error(addmm(self, a, b, 0.5, 2.0), self.cpu().to(DType::Float64) * 0.5 + reference(a, b) * 2.0) <
            tolerance(d));
      // beta 0: self is not read, so its NaN does not reach the product.
      CHECK(relative_error(addmm(full_like(self, std::numeric_limits<double>::quiet_NaN()), a, b, 0.0, 1.0),
                           reference(a, b)) < tolerance(d));
      {
        PrecisionSwitchGuard no_fp16(&allow_fp16_reduced_precision_reduction,
                                     &set_allow_fp16_reduced_precision_reduction, false);
        PrecisionSwitchGuard no_bf16(&allow_bf16_reduced_precision_reduction,
                                     &set_allow_bf16_reduced_precision_reduction, false);
        CHECK(relative_error(split, mm(a, b).cpu()) < tolerance(d));  // the padded copies' product
      }
      // An infinity in a head column (a tail one when off is 0) reaches its row of c, and only it.
      Tensor a_inf = a.clone();
      a_inf.select(0, 0).select(0, off == 0 ? 292 : 0).fill_(std::numeric_limits<double>::infinity());
      const Tensor a_inf_view = base.clone().slice(1, off, off + 293).copy_(a_inf);  // misaligned again
      const Tensor c = mm(a_inf_view, b_pos);
      const std::vector<double> row0 = gpu_test::values_of(c.select(0, 0)), row1 = gpu_test::values_of(c.select(0, 1));
      CHECK(std::all_of(row0.begin(), row0.end(), [](double v) { return std::isinf(v) && v > 0; }));
      CHECK(std::all_of(row1.begin(), row1.end(), [](double v) { return std::isfinite(v); }));
    }
  }
}

TEST_CASE("cuda matmul: bmm and baddbmm with broadcast and transposed batches") {
  ANATOMY_REQUIRE_GPU();
  for (const ProductSize& s : std::vector<ProductSize>{{9, 7, 5}, {40, 50, 45}}) {  // small, cuBLAS
    for (DType d : kFloats) {
      CAPTURE(s.n);
      CAPTURE(name(d));
      const Tensor a = uniform({4, s.n, s.k}, d).to(kCuda);
      const Tensor b_shared = uniform({1, s.k, s.m}, d).to(kCuda).expand({4, s.k, s.m});  // batch stride 0
      const Tensor b_t = uniform({4, s.m, s.k}, d).to(kCuda).transpose(1, 2);
      CHECK(relative_error(bmm(a, b_shared), reference(a, b_shared)) < tolerance(d));
      CHECK(relative_error(bmm(a, b_t), reference(a, b_t)) < tolerance(d));
      const Tensor self = uniform({s.n, 1}, d).to(kCuda);
      const Tensor expected = self.cpu().to(DType::Float64) * -1.0 + reference(a, b_t) * 3.0;
      CHECK(relative_error(baddbmm(self, a, b_t, -1.0, 3.0), expected) < tolerance(d));
    }
  }
}

TEST_CASE("cuda matmul: empty products, beta == 0 ignores NaN in self, and out= of another layout") {
  ANATOMY_REQUIRE_GPU();
  const TensorOptions f32 = TensorOptions().dtype(DType::Float32).device(kCuda);
  const Tensor no_rows = mm(empty({0, 4}, f32), empty({4, 3}, f32));
  CHECK(no_rows.sizes() == IntArrayRef{0, 3});
  // k == 0: an empty sum is zero, and addmm keeps beta * self.
  CHECK(gpu_test::values_of(mm(empty({2, 0}, f32), empty({0, 2}, f32))) == std::vector<double>{0, 0, 0, 0});
  const Tensor self = full({2, 2}, 3.0, f32);
  CHECK(gpu_test::values_of(addmm(self, empty({2, 0}, f32), empty({0, 2}, f32), 2.0)) ==
        std::vector<double>{6, 6, 6, 6});
  const Tensor nan_self = full({2, 2}, std::numeric_limits<double>::quiet_NaN(), f32);
  const Tensor a = uniform({2, 3}, DType::Float32).to(kCuda), b = uniform({3, 2}, DType::Float32).to(kCuda);
  CHECK(relative_error(addmm(nan_self, a, b, 0.0), reference(a, b)) < 1e-5);
  const Tensor nan_bias = full({2}, std::numeric_limits<double>::quiet_NaN(), f32);
  CHECK(relative_error(addmm(nan_bias, a, b, 0.0), reference(a, b)) < 1e-5);
  // out= that is a transposed view: computed in a temporary, then copied.
  Tensor out_t = empty({2, 2}, f32).t();
  mm_out(out_t, a, b);
  CHECK(relative_error(out_t, reference(a, b)) < 1e-5);
}

TEST_CASE("cuda matmul: integer products are exact, wrap like the CPU's, and int8 returns int32") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::UInt8, DType::Int8, DType::Int32, DType::Int64}) {
    CAPTURE(name(d));
    // Large values so that uint8 and int32 sums overflow and must wrap.
    const int64_t high = d == DType::Int8 ? 127 : d == DType::UInt8 ? 255 : 1 << 20;
    const Tensor a = randint(d == DType::UInt8 ? 0 : -high, high, {3, 19, 45}, d);
    const Tensor b = randint(d == DType::UInt8 ? 0 : -high, high, {3, 23, 45}, d).transpose(1, 2);
    const Tensor got = bmm(a.to(kCuda), b.to(kCuda));
    CHECK(got.dtype() == (d == DType::Int8 ? DType::Int32 : d));
    CHECK(same_values(got, bmm(a, b)));
    const Tensor self = randint(0, 50, {19, 23}, d);  // addmm's self has the matrices' dtype
    CHECK(same_values(addmm(self.to(kCuda), a[0].to(kCuda), b[0].to(kCuda), 3, -2), addmm(self, a[0], b[0], 3, -2)));
  }
}

TEST_CASE("cuda matmul: the TF32 switch rounds fp32 products to TF32 only while it is on") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = uniform({1024, 1024}, DType::Float32), b = uniform({1024, 1024}, DType::Float32);
  const Tensor ref = reference(a, b);
  const Tensor ca = a.to(kCuda), cb = b.to(kCuda);
  CHECK_FALSE(allow_tf32_matmul());  // off by default, as in PyTorch
  const double fp32_error = relative_error(mm(ca, cb), ref);
  double tf32_error = 0;
  {
    PrecisionSwitchGuard tf32(&allow_tf32_matmul, &set_allow_tf32_matmul, true);
    tf32_error = relative_error(mm(ca, cb), ref);
  }
  CHECK_FALSE(allow_tf32_matmul());
  CHECK(fp32_error < 1e-5);
  // TF32 keeps 10 mantissa bits: errors of order 2^-11 per product, far above fp32's.
  CHECK(tf32_error > 10 * fp32_error);
  CHECK(tf32_error < 5e-3);
}

TEST_CASE("cuda matmul: fp16 accumulation and the reduced-precision reduction switches") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = uniform({256, 2048}, DType::Float16), b = uniform({2048, 256}, DType::Float16);
  const Tensor ref = reference(a, b);
  const Tensor ca = a.to(kCuda), cb = b.to(kCuda);
  const double fp32_acc = relative_error(mm(ca, cb), ref);
  CHECK(fp32_acc < 2e-3);
  {
    PrecisionSwitchGuard no_split(&allow_fp16_reduced_precision_reduction, &set_allow_fp16_reduced_precision_reduction,
                                  false);
    CHECK(relative_error(mm(ca, cb), ref) < 2e-3);
  }
  {
    PrecisionSwitchGuard bf16(&allow_bf16_reduced_precision_reduction, &set_allow_bf16_reduced_precision_reduction,
                              false);
    const Tensor ab = a.to(DType::BFloat16), bb = b.to(DType::BFloat16);
    CHECK(relative_error(mm(ab.to(kCuda), bb.to(kCuda)), reference(ab, bb)) < 1.6e-2);
  }
  {
    PrecisionSwitchGuard fp16_acc(&allow_fp16_accumulation, &set_allow_fp16_accumulation, true);
    // A 2048-term sum in fp16 loses bits at every step: worse than fp32 accumulation, still
    // close to the product.
    const double e = relative_error(mm(ca, cb), ref);
    CHECK(e >= fp32_acc);
    CHECK(e < 5e-2);
  }
}

TEST_CASE("cuda matmul: operands on different devices raise DeviceError and write nothing") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = uniform({2, 3}, DType::Float32), b = uniform({3, 2}, DType::Float32);
  CHECK_THROWS_AS(mm(a.to(kCuda), b), DeviceError);
  Tensor out = zeros({2, 2}, TensorOptions().device(kCuda));
  CHECK_THROWS_AS(mm_out(out, a, b), DeviceError);
  CHECK(gpu_test::values_of(out) == std::vector<double>{0, 0, 0, 0});
}
