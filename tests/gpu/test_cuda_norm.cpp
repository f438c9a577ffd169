// GPU tests of native_layer_norm (output, mean, rstd), layer_norm and rms_norm on CUDA against
// the CPU: every floating dtype, with and without weight and bias, the three kernel shapes (a
// warp per row, a block per row in registers, a looping block), row lengths that are not a
// multiple of the 16-byte vector, misaligned (offset) inputs and weights, rows a stride apart,
// values a stride apart and transposed matrices (the tile, cluster and transposing-write kernels),
// several normalized dims, zero-size inputs, a large common offset, and gradients through autograd.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::values_of;

namespace {

// CUDA result against the CPU's: same shape and dtype, |got - want| <= rtol * (|want| + 1), NaN
// matching NaN.
std::string compare_to_cpu(const Tensor& got, const Tensor& want) {
  if (!got.is_cuda()) return "the result is not on CUDA";
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) return "shape or dtype differs";
  const std::vector<double> g = values_of(got), w = values_of(want);
  const double rtol = gpu_test::float_rtol(want.dtype(), 2e-5, 1e-12);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (!(std::abs(g[i] - w[i]) <= rtol * (std::abs(w[i]) + 1))) {
      return fmt::format("element {} of {}: {} != {} (rtol {})", i, g.size(), g[i], w[i], rtol);
    }
  }
  return "";
}

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// x (CPU) and its CUDA copy xg (any layout), normalized over `shape`; w and b CPU tensors or
// undefined, wg and bg their CUDA twins.
void check_norms(const Tensor& x, const Tensor& xg, IntArrayRef shape, const Tensor& w, const Tensor& wg,
                 const Tensor& b, const Tensor& bg, const std::string& what) {
  CAPTURE(what);
  auto [y, mean, rstd] = native_layer_norm(x, shape, opt(w), opt(b), 1e-5);
  auto [yg, mean_g, rstd_g] = native_layer_norm(xg, shape, opt(wg), opt(bg), 1e-5);
  CHECK_MESSAGE(compare_to_cpu(yg, y).empty(), "layer_norm output: ", compare_to_cpu(yg, y));
  CHECK_MESSAGE(compare_to_cpu(mean_g, mean).empty(), "layer_norm mean: ", compare_to_cpu(mean_g, mean));
  CHECK_MESSAGE(compare_to_cpu(rstd_g, rstd).empty(), "layer_norm rstd: ", compare_to_cpu(rstd_g, rstd));
  const Tensor r = rms_norm(x, shape, opt(w)), rg = rms_norm(xg, shape, opt(wg));
  CHECK_MESSAGE(compare_to_cpu(rg, r).empty(), "rms_norm: ", compare_to_cpu(rg, r));
  const Tensor re = rms_norm(x, shape, opt(w), 1e-3), reg = rms_norm(xg, shape, opt(wg), 1e-3);
  CHECK_MESSAGE(compare_to_cpu(reg, re).empty(), "rms_norm eps 1e-3: ", compare_to_cpu(reg, re));
}

void check_affine_variants(const Tensor& x, const Tensor& xg, IntArrayRef shape, const std::string& what) {
  const DType d = x.dtype();
  const Tensor w = randn(shape, DType::Float32).to(d), b = randn(shape, DType::Float32).to(d);
  check_norms(x, xg, shape, Tensor(), Tensor(), Tensor(), Tensor(), what + ", no weight or bias");
  check_norms(x, xg, shape, w, w.to(kCuda), Tensor(), Tensor(), what + ", weight");
  check_norms(x, xg, shape, w, w.to(kCuda), b, b.to(kCuda), what + ", weight and bias");
}

// A contiguous [rows, n] CUDA tensor whose data starts `offset` elements into its storage, so
// that its rows are not 16-byte aligned; and the same values on the CPU.
std::pair<Tensor, Tensor> offset_rows(int64_t rows, int64_t n, int64_t offset, DType d) {
  const Tensor flat = randn({rows * n + offset}, DType::Float32).mul(2).to(d);
  const Tensor g = flat.to(kCuda).slice(0, offset, offset + rows * n).view({rows, n});
  return {flat.slice(0, offset, offset + rows * n).view({rows, n}), g};
}

}  // namespace

TEST_CASE("cuda layer_norm and rms_norm: every floating dtype and kernel shape matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(31);
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    // Around the warp (256 doubles, 512 floats) and block (8192 doubles, 16384 floats) limits,
    // multiples of the vector width and not.
    for (int64_t n :
         {1, 3, 8, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000, 1024, 4099, 8192, 8193, 16384, 16385, 40000}) {
      CAPTURE(n);
      const int64_t rows = n > 5000 ? 3 : 37;
      const Tensor x = randn({rows, n}, DType::Float32).mul(3).add(0.5).to(d);
      check_affine_variants(x, x.to(kCuda), {n}, "rows");
    }
    const Tensor x = randn({3, 4, 5}, DType::Float32).to(d);
    check_affine_variants(x, x.to(kCuda), {4, 5}, "two normalized dims");
    check_affine_variants(x, x.to(kCuda), {3, 4, 5}, "the whole tensor");
    const Tensor t = randn({40, 64}, DType::Float32).to(d).t();
    check_affine_variants(t, t.to(kCuda), {40}, "transposed (non-contiguous) input");
    const Tensor many = randn({5000, 24}, DType::Float32).to(d);
    check_affine_variants(many, many.to(kCuda), {24}, "many short rows");
  }
}

TEST_CASE("cuda layer_norm and rms_norm: misaligned inputs and weights move in shifted vectors") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(32);
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    for (int64_t n : {64, 1024, 8192, 20000}) {  // vector multiples: only the offset stops vectors
      CAPTURE(n);
      auto [x, xg] = offset_rows(5, n, 1, d);
      REQUIRE(xg.is_contiguous());
      check_affine_variants(x, xg, {n}, "input offset by one element");
      // An aligned input with a weight and a bias one element into their storage.
      const Tensor a = randn({5, n}, DType::Float32).to(d);
      auto [w, wg] = offset_rows(1, n, 1, d);
      auto [b, bg] = offset_rows(1, n, 3, d);
      check_norms(a, a.to(kCuda), {n}, w.view({n}), wg.view({n}), b.view({n}), bg.view({n}), "offset weight and bias");
    }
  }
}

TEST_CASE("cuda layer_norm and rms_norm: rows a stride apart are read where they lie") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(34);
  // The CUDA plan keeps an input whose rows are contiguous and evenly spaced (no copy): x[:, 1:]
  // (misaligned rows, shifted vectors: Note [Shifted rows]), x[:, 8:] (aligned rows longer than
  // cols, vector loads where the stride allows), an expanded row (stride 0) and leading dims that
  // collapse into one stride; leading dims that do not collapse are copied as before.
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    for (int64_t n : {24, 512, 2047, 8192, 20000}) {  // warp, block and looping kernels
      CAPTURE(n);
      const Tensor base = randn({9, n + 8}, DType::Float32).mul(2).to(d), base_g = base.to(kCuda);
      check_affine_variants(base.slice(1, 1, n + 1), base_g.slice(1, 1, n + 1), {n}, "x[:, 1:]");
      check_affine_variants(base.slice(1, 8, n + 8), base_g.slice(1, 8, n + 8), {n}, "x[:, 8:]");
      check_affine_variants(base.slice(0, 0, 9, 2).slice(1, 3, n + 3), base_g.slice(0, 0, 9, 2).slice(1, 3, n + 3), {n},
                            "every other row, from column 3");
      const Tensor row = randn({1, n}, DType::Float32).to(d);
      check_affine_variants(row.expand({4, n}), row.to(kCuda).expand({4, n}), {n}, "one row expanded");
      const Tensor cube = randn({3, 4, n + 3}, DType::Float32).to(d), cube_g = cube.to(kCuda);
      check_affine_variants(cube.slice(2, 3, n + 3), cube_g.slice(2, 3, n + 3), {n}, "3-D, leading dims collapse");
      check_affine_variants(cube.slice(2, 3, n + 3).transpose(0, 1), cube_g.slice(2, 3, n + 3).transpose(0, 1), {n},
                            "3-D, leading dims transposed (copied)");
    }
    const Tensor wide = randn({5, 6, 7}, DType::Float32).to(d), wide_g = wide.to(kCuda);
    check_affine_variants(wide.slice(0, 1, 5), wide_g.slice(0, 1, 5), {6, 7}, "two normalized dims, rows offset");
    check_affine_variants(wide.slice(2, 1, 7), wide_g.slice(2, 1, 7), {6, 6},
                          "two normalized dims, not dense (copied)");
  }
}

TEST_CASE("cuda layer_norm and rms_norm: values a stride apart and transposed matrices are read where they lie") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(35);
  // Every other column goes to the row kernels with strided loads; a transposed matrix (rows
  // closer together than their values) to the tile kernel (Note [Tiles of adjacent rows]), with
  // 16-byte loads when its columns are aligned (rows a multiple of the vector), scalar loads
  // otherwise, a last tile of fewer rows, and a copy when a row is too long for a tile of two;
  // or, in fp32 and fp64 with columns 16-byte aligned, to clusters of blocks sharing a tile.
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    for (int64_t n : {24, 512, 2047, 8192, 20000}) {
      CAPTURE(n);
      const Tensor wide = randn({5, 2 * n}, DType::Float32).mul(2).to(d), wide_g = wide.to(kCuda);
      check_affine_variants(wide.slice(1, 0, 2 * n, 2), wide_g.slice(1, 0, 2 * n, 2), {n}, "every other column");
      for (int64_t rows : {1, 37, 64}) {
        CAPTURE(rows);
        const Tensor m = randn({n, rows + 1}, DType::Float32).mul(2).add(1).to(d), m_g = m.to(kCuda);
        check_affine_variants(m.slice(1, 0, rows).t(), m_g.slice(1, 0, rows).t(), {n}, "transposed");
        check_affine_variants(m.slice(1, 1, rows + 1).t(), m_g.slice(1, 1, rows + 1).t(), {n},
                              "transposed, one element into its storage");
      }
      // Columns a multiple of 16 bytes apart: fp32 and fp64 in clusters of blocks sharing a tile
      // where the GPU has them (Note [Clusters over a tile of rows]); fp16 and bf16 with rows and
      // values a multiple of 8 in statistics then a transposing write (Note [Statistics, then a
      // transposing write]: 64 and 136 rows, one tile of 64 columns or a last one of 8), else in
      // the tile kernel; one tile or several and a last one of fewer rows, from the storage's
      // start or 8 elements into it (still aligned).
      for (int64_t rows : {37, 64, 130, 136}) {
        CAPTURE(rows);
        const Tensor m = randn({n, 144}, DType::Float32).mul(2).add(1).to(d), m_g = m.to(kCuda);
        check_affine_variants(m.slice(1, 0, rows).t(), m_g.slice(1, 0, rows).t(), {n}, "transposed, aligned");
        check_affine_variants(m.slice(1, 8, rows + 8).t(), m_g.slice(1, 8, rows + 8).t(), {n},
                              "transposed, aligned, 8 elements into its storage");
      }
    }
    const Tensor cube = randn({300, 4, 5}, DType::Float32).to(d);
    check_affine_variants(cube.permute({1, 2, 0}), cube.to(kCuda).permute({1, 2, 0}), {300},
                          "leading dims collapse onto the fastest stride");
    const Tensor block = randn({6, 7, 40}, DType::Float32).to(d);
    check_affine_variants(block.permute({2, 0, 1}), block.to(kCuda).permute({2, 0, 1}), {6, 7},
                          "two normalized dims, transposed");
  }
}

TEST_CASE("cuda layer_norm: a large common offset keeps fp32 accuracy") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(33);
  // Values in [1000, 1004): the statistics must not lose the deviations to the offset.
  for (int64_t n : {64, 3000, 20000}) {
    CAPTURE(n);
    const Tensor x = rand({4, n}).mul(4).add(1000);
    const Tensor w = randn({n}), b = randn({n});
    check_norms(x, x.to(kCuda), {n}, w, w.to(kCuda), b, b.to(kCuda), "offset 1000");
  }
}

TEST_CASE("cuda layer_norm and rms_norm: zero-size inputs as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  const Tensor w = randn({5});
  check_norms(randn({0, 5}), randn({0, 5}).to(kCuda), {5}, w, w.to(kCuda), w, w.to(kCuda), "no rows");
  // No normalized elements: an empty output, and a NaN mean and rstd per row (0 / 0).
  const Tensor e = randn({3, 0});
  check_norms(e, e.to(kCuda), {0}, Tensor(), Tensor(), Tensor(), Tensor(), "empty rows");
  auto [y, mean, rstd] = native_layer_norm(e.to(kCuda), {0}, std::nullopt, std::nullopt, 1e-5);
  CHECK((mean.dim() == 2 && mean.size(0) == 3 && mean.size(1) == 1));
  for (double v : values_of(mean)) CHECK(std::isnan(v));
  for (double v : values_of(rstd)) CHECK(std::isnan(v));
}

TEST_CASE("cuda layer_norm and rms_norm: gradients through autograd match the CPU's") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(34);
  for (int64_t n : {50, 3000}) {
    CAPTURE(n);
    const Tensor x = randn({6, n}), w = randn({n}), b = randn({n}), g = randn({6, n});
    // layer_norm: input, weight and bias.
    {
      const Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_(), bc = b.clone().requires_grad_();
      const Tensor xg = x.to(kCuda).requires_grad_(), wg = w.to(kCuda).requires_grad_(),
                   bg = b.to(kCuda).requires_grad_();
      sum(layer_norm(xc, {n}, wc, bc) * g).backward();
      sum(layer_norm(xg, {n}, wg, bg) * g.to(kCuda)).backward();
      CHECK(compare_to_cpu(xg.grad(), xc.grad()).empty());
      CHECK(compare_to_cpu(wg.grad(), wc.grad()).empty());
      CHECK(compare_to_cpu(bg.grad(), bc.grad()).empty());
    }
    // native_layer_norm's mean and rstd are differentiable too.
    {
      const Tensor xc = x.clone().requires_grad_(), xg = x.to(kCuda).requires_grad_();
      auto [yc, mc, rc] = native_layer_norm(xc, {n}, std::nullopt, std::nullopt, 1e-5);
      auto [yg, mg, rg] = native_layer_norm(xg, {n}, std::nullopt, std::nullopt, 1e-5);
      sum(yc * g + mc.mul(2) + rc.mul(3)).backward();
      sum(yg * g.to(kCuda) + mg.mul(2) + rg.mul(3)).backward();
      CHECK(compare_to_cpu(xg.grad(), xc.grad()).empty());
    }
    // rms_norm: input and weight.
    {
      const Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_();
      const Tensor xg = x.to(kCuda).requires_grad_(), wg = w.to(kCuda).requires_grad_();
      sum(rms_norm(xc, {n}, wc) * g).backward();
      sum(rms_norm(xg, {n}, wg) * g.to(kCuda)).backward();
      CHECK(compare_to_cpu(xg.grad(), xc.grad()).empty());
      CHECK(compare_to_cpu(wg.grad(), wc.grad()).empty());
    }
  }
}
