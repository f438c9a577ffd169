// Matrix products: exact values, what the op table cannot express (out= layouts and errors,
// no copies for transposed operands, integer wrapping, beta = 0, Meta), and matmul's shapes.
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "test_util.h"

#include "anatomy/anatomy.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::V;
using anatomy_test::values;
using anatomy_test::vec;

namespace {

// How many element copies the traced calls made (contiguous and clone end in one copy_ each).
int copies(const dispatch::Tracer& tr) {
  int n = 0;
  for (const auto& c : tr.calls()) n += c.op == "aten::copy_";
  return n;
}

}  // namespace

TEST_CASE("mm: exact small products in every floating dtype") {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    Tensor a = tensor(std::vector<double>{1.0, 2.0, 3.0, 4.0}, {2, 2}, t),
           b = tensor(std::vector<double>{5.0, 6.0, 7.0, 8.0}, {2, 2}, t);
    Tensor c = mm(a, b);
    CHECK(c.dtype() == t);
    CHECK(values(c) == D{19, 22, 43, 50});
    CHECK(values(a.matmul(b)) == D{19, 22, 43, 50});
    CHECK(values(a.t().mm(b)) == D{26, 30, 38, 44});
  }
}

TEST_CASE("mm: transposed and offset operands reach BLAS without a copy, strided ones are copied once") {
  Tensor a = randn({6, 5}), b = randn({4, 6});
  {
    dispatch::Tracer tr;
    Tensor c = mm(a.t(), b.t());
    CHECK(copies(tr) == 0);
  }
  {
    dispatch::Tracer tr;
    Tensor c = mm(randn({8, 9}).slice(0, 1, 6).slice(1, 2, 8), b.t());
    CHECK(copies(tr) == 0);
  }
  {
    Tensor strided = randn({5, 12}).slice(1, 0, 12, 2);
    dispatch::Tracer tr;
    Tensor c = mm(strided, b.t());
    CHECK(copies(tr) == 1);
  }
}

TEST_CASE("mm.out: writes a transposed out through a temporary and moves its version") {
  Tensor a = randn({3, 4}, DType::Float64), b = randn({4, 5}, DType::Float64);
  Tensor want = mm(a, b);
  Tensor out = empty({5, 3}, DType::Float64).t();
  const uint32_t version = out.version();
  Tensor r = mm_out(out, a, b);
  CHECK(r.is_same(out));
  CHECK(out.version() > version);
  CHECK(values(out) == values(want));
}

TEST_CASE("mm.out: bad out tensors throw and change nothing") {
  Tensor a = randn({2, 3}), b = randn({3, 4});
  Tensor wrong_shape = zeros({4, 2});
  EXPECT_ERROR_UNCHANGED(wrong_shape, ValueError, mm_out(wrong_shape, a, b), "mm.out", "[4, 2]", "[2, 4]");
  Tensor wrong_dtype = zeros({2, 4}, DType::Float64);
  EXPECT_ERROR_UNCHANGED(wrong_dtype, TypeError, mm_out(wrong_dtype, a, b), "mm.out", "fp64", "fp32");
  Tensor expanded = zeros({1, 4}).expand({2, 4});
  EXPECT_ERROR(ValueError, mm_out(expanded, a, b), "mm.out");
  Tensor sq = randn({3, 3});
  EXPECT_ERROR_UNCHANGED(sq, ValueError, mm_out(sq, sq, sq), "mm.out", "shares memory");
  Tensor batch_out = zeros({2, 2, 5});
  EXPECT_ERROR_UNCHANGED(batch_out, ValueError, bmm_out(batch_out, randn({2, 2, 3}), randn({2, 3, 4})), "bmm.out");
}

TEST_CASE("mm: int8 accumulates in int32, other integers wrap in their own type") {
  Tensor a = full({2, 100}, 127, DType::Int8), b = full({100, 3}, 127, DType::Int8);
  Tensor c = mm(a, b);
  CHECK(c.dtype() == DType::Int32);
  CHECK(values(c) == D(6, 127.0 * 127.0 * 100));
  CHECK(dot(full({4}, -128, DType::Int8), full({4}, -128, DType::Int8)).item<int64_t>() == 65536);
  // int32: 2^31 - 1 times 2 wraps to -2 (two's complement, not undefined behavior).
  Tensor big = full({1, 1}, std::numeric_limits<int32_t>::max(), DType::Int32);
  CHECK(mm(big, full({1, 1}, 2, DType::Int32)).item<int64_t>() == -2);
  // uint8: 16 * 16 = 256 wraps to 0.
  CHECK(mm(full({1, 1}, 16, DType::UInt8), full({1, 1}, 16, DType::UInt8)).item<int64_t>() == 0);
}

TEST_CASE("addmm: beta = 0 ignores NaN and inf in self, NaN in the operands propagates") {
  Tensor self =
      tensor(std::vector<double>{std::nan(""), std::numeric_limits<double>::infinity()}, {1, 2}, DType::Float32);
  Tensor a = tensor(std::vector<double>{1.0, 2.0}, {1, 2}, DType::Float32),
         b = tensor(std::vector<double>{1.0, 0.0, 0.0, 1.0}, {2, 2}, DType::Float32);
  CHECK(values(addmm(self, a, b, 0, 3)) == D{3, 6});
  D with_self = values(addmm(self, a, b, 1, 1));
  CHECK(std::isnan(with_self[0]));
  CHECK(std::isinf(with_self[1]));
  Tensor nan_a = tensor(std::vector<double>{std::nan(""), 2.0}, {1, 2}, DType::Float32);
  D prop = values(mm(nan_a, b));
  CHECK(std::isnan(prop[0]));
  // Zero-size k: beta * self, in an integral dtype too.
  Tensor iself = tensor(std::vector<int64_t>{1, 2, 3}, {1, 3}, DType::Int64);
  CHECK(values(addmm(iself, zeros({1, 0}, DType::Int64), zeros({0, 3}, DType::Int64), 2, 5)) == D{2, 4, 6});
}

TEST_CASE("matmul: result shapes follow NumPy") {
  auto shape = [](V a, V b) { return vec(matmul(zeros(a), zeros(b)).sizes()); };
  CHECK(shape({3}, {3}) == V{});
  CHECK(shape({2, 3}, {3}) == V{2});
  CHECK(shape({3}, {3, 4}) == V{4});
  CHECK(shape({5, 2, 3}, {3}) == V{5, 2});
  CHECK(shape({3}, {5, 3, 4}) == V{5, 4});
  CHECK(shape({2, 1, 4, 3}, {5, 3, 6}) == V{2, 5, 4, 6});
  CHECK(shape({7, 2, 3}, {3, 4}) == V{7, 2, 4});
  CHECK(shape({0, 2, 3}, {3, 4}) == V{0, 2, 4});
}

TEST_CASE("linear: 1-D weight, and bias of the wrong shape") {
  Tensor x = tensor(std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, DType::Float64);
  Tensor w = tensor(std::vector<double>{1.0, 0.0, -1.0}, {3}, DType::Float64);
  Tensor y = linear(x, w, tensor(std::vector<double>{10.0}, {1}, DType::Float64));
  CHECK(vec(y.sizes()) == V{2});
  CHECK(values(y) == D{8, 8});
  EXPECT_ERROR(ValueError, linear(x, zeros({4, 3}, DType::Float64), zeros({3}, DType::Float64)), "linear", "[3]");
}

TEST_CASE("matrix products on Meta: shapes and dtypes without data, and the same errors") {
  const TensorOptions meta = TensorOptions().device(kMeta);
  Tensor a = empty({2, 3}, meta.dtype(DType::Int8)), b = empty({3, 5}, meta.dtype(DType::Int8));
  Tensor c = mm(a, b);
  CHECK(c.is_meta());
  CHECK(c.dtype() == DType::Int32);
  CHECK(vec(c.sizes()) == V{2, 5});
  CHECK(vec(matmul(empty({4, 1, 2, 3}, meta), empty({6, 3, 5}, meta)).sizes()) == V{4, 6, 2, 5});
  CHECK(vec(addmm(empty({5}, meta), empty({2, 3}, meta), empty({3, 5}, meta)).sizes()) == V{2, 5});
  CHECK(vec(linear(empty({7, 3}, meta), empty({4, 3}, meta), empty({4}, meta)).sizes()) == V{7, 4});
  CHECK(vec(_addmm_activation(empty({5}, meta), empty({2, 3}, meta), empty({3, 5}, meta), 1, 1, true).sizes()) ==
        V{2, 5});
  EXPECT_ERROR(ValueError, mm(empty({2, 3}, meta), empty({4, 5}, meta)), "mm", "[2, 3]", "[4, 5]");
  EXPECT_ERROR(TypeError, bmm(empty({1, 2, 3}, meta), empty({1, 3, 5}, meta.dtype(DType::Float64))), "bmm");
}

TEST_CASE("_addmm_activation: relu of addmm, or gelu with the tanh approximation") {
  const Tensor self = tensor({1.0, -2.0}), a = tensor({1.0, 2.0, -1.0, 0.5}).view({2, 2}),
               b = tensor({1.0, 0.0, 0.0, 1.0}).view({2, 2});
  const Tensor pre = addmm(self, a, b, 1, 2);  // [[3, 2], [-1, -1]]
  CHECK(values(_addmm_activation(self, a, b, 1, 2)) == D{3, 2, 0, 0});
  const std::vector<double> g = values(_addmm_activation(self, a, b, 1, 2, true));
  const std::vector<double> want = values(gelu(pre, "tanh"));
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == doctest::Approx(want[i]).epsilon(1e-12));
  // Not the exact gelu: the two differ by about 1e-4 at -1.
  CHECK(std::abs(g[2] - values(gelu(pre))[2]) > 1e-5);
  // Integers take relu (int8 products return int32); addmm's errors name addmm.
  const Tensor i8 = tensor({-3, 4}).to(DType::Int8).view({1, 2});
  CHECK(_addmm_activation(zeros({2}, DType::Int8), i8, tensor({1, 1, 1, 1}).to(DType::Int8).view({2, 2})).dtype() ==
        DType::Int32);
  EXPECT_ERROR(ValueError, _addmm_activation(randn({3}), randn({2, 3}), randn({3, 4})), "addmm", "[3]");
}

namespace {

// c[i] = a[i] @ b[i] in double, from the values of any layout (a: [B, n, k], b: [B, k, m]).
D reference_bmm(const Tensor& a, const Tensor& b) {
  const int64_t batches = a.size(0), n = a.size(1), k = a.size(2), m = b.size(2);
  const D av = values(a.contiguous()), bv = values(b.contiguous());
  D c(static_cast<size_t>(batches * n * m), 0.0);
  for (int64_t i = 0; i < batches; ++i)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t q = 0; q < m; ++q) c[(i * n + r) * m + q] += av[(i * n + r) * k + j] * bv[(i * k + j) * m + q];
  return c;
}

// Note [One thread pool for products] in backends/cpu/blas_cpu.cpp: a product of at least
// 2 * 2^20 multiply-adds is split across the pool by matrices, rows or columns. fp64 runs
// OpenBLAS's dgemm; fp32 runs each library the build has (preferred_cpu_blas_library), the
// default choosing per tile, against the fp64 reference within fp32's rounding over k terms.
void check_split_products(DType dtype, CpuBlasLibrary library) {
  const double tol = dtype == DType::Float64 ? 1e-9 : 2e-5;
  const CpuBlasLibrary saved_library = preferred_cpu_blas_library();
  set_preferred_cpu_blas_library(library);
  struct Case {
    int64_t batches, n, k, m;
  };
  // Rows split (n >= m), columns split (m > n), a batch split by matrices, and one below the grain.
  for (Case s : {Case{1, 300, 64, 200}, Case{1, 8, 256, 2048}, Case{64, 40, 48, 40}, Case{1, 32, 32, 32}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        INFO("batches " << s.batches << " n " << s.n << " k " << s.k << " m " << s.m << " ta " << ta << " tb " << tb);
        Tensor a = ta ? randn({s.batches, s.k, s.n}, dtype).transpose(1, 2) : randn({s.batches, s.n, s.k}, dtype);
        Tensor b = tb ? randn({s.batches, s.m, s.k}, dtype).transpose(1, 2) : randn({s.batches, s.k, s.m}, dtype);
        Tensor bias = randn({s.n, s.m}, dtype);
        const D want = reference_bmm(a, b);
        const double scale = std::sqrt(static_cast<double>(s.k));  // |a @ b| grows as sqrt(k) for unit normals
        const int saved = get_num_threads();
        for (int threads : {1, 2, 5}) {
          set_num_threads(threads);
          const D got = values(bmm(a, b));
          int wrong = 0;
          for (size_t i = 0; i < want.size(); ++i)
            wrong += std::abs(got[i] - want[i]) > tol * (scale + std::abs(want[i]));
          CHECK(wrong == 0);
          if (s.batches == 1) {
            // addmm reads c (beta = 1) in the same blocks it writes.
            const D with_bias = values(addmm(bias, a.select(0, 0), b.select(0, 0))), bv = values(bias);
            wrong = 0;
            for (size_t i = 0; i < want.size(); ++i)
              wrong += std::abs(with_bias[i] - bv[i] - want[i]) > tol * (scale + std::abs(want[i]) + std::abs(bv[i]));
            CHECK(wrong == 0);
          }
        }
        set_num_threads(saved);
      }
    }
  }
  set_preferred_cpu_blas_library(saved_library);
}

}  // namespace

TEST_CASE("bmm and addmm split across threads: the reference's values for every thread count and layout") {
  check_split_products(DType::Float64, CpuBlasLibrary::Default);
  for (CpuBlasLibrary library : {CpuBlasLibrary::Default, CpuBlasLibrary::OpenBLAS, CpuBlasLibrary::OneDNN}) {
    if (!cpu_blas_library_available(library)) continue;
    INFO("library " << static_cast<int>(library));
    check_split_products(DType::Float32, library);
  }
}

namespace {

// The process's thread count (Linux: /proc/self/status), or -1 where it cannot be read.
int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

}  // namespace

// oneDNN runs on OpenMP; a product split over the pool must not start an OpenMP team on each of
// its threads (sgemm_onednn.cpp), which would oversubscribe the CPU.
TEST_CASE("fp32 products on oneDNN start no threads beside the engine's pool") {
  if (!cpu_blas_library_available(CpuBlasLibrary::OneDNN)) return;
  const int saved = get_num_threads();
  set_num_threads(2);
  Tensor a = randn({512, 512}), b = randn({512, 512});
  {
    const CpuBlasLibrary previous = preferred_cpu_blas_library();
    set_preferred_cpu_blas_library(CpuBlasLibrary::OpenBLAS);
    (void)mm(a, b);  // the pool's threads exist from here on
    const int before = process_threads();
    set_preferred_cpu_blas_library(CpuBlasLibrary::OneDNN);
    Tensor c = mm(a, b);
    CHECK(process_threads() == before);
    set_preferred_cpu_blas_library(previous);
  }
  set_num_threads(saved);
}

TEST_CASE("the CPU BLAS preference: a library the build lacks is a ValueError and changes nothing") {
  CHECK(cpu_blas_library_available(CpuBlasLibrary::Default));
  CHECK(cpu_blas_library_available(CpuBlasLibrary::OpenBLAS));
  if (cpu_blas_library_available(CpuBlasLibrary::OneDNN)) return;
  EXPECT_ERROR(ValueError, set_preferred_cpu_blas_library(CpuBlasLibrary::OneDNN), "oneDNN");
  CHECK(preferred_cpu_blas_library() == CpuBlasLibrary::Default);
}
