// GPU tests of the CUDA reductions against the CPU's: every kind on every dtype it takes, over
// every path of Note [CUDA reduction paths] (all dims, last dim, first dim, middle dims, short
// and long rows, split rows and split columns), non-contiguous inputs, zero-size inputs and
// reductions, keepdim, dtype=, NaN and ties, and the determinism of a 2^24-element sum.
// tests/gpu/test_cuda_op_table.cpp compares them with the fp64 references as well.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::values_of;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();
using gpu_test::kFloatingDtypes;

// The largest finite |value| of x (0 for integers and bool): the scale of a float sum's
// rounding error, which does not shrink when the sum cancels to nearly zero.
double input_scale(const Tensor& x) {
  if (!is_floating(x.dtype())) return 0;
  double scale = 0;
  for (double v : values_of(x)) scale = std::isfinite(v) ? std::max(scale, std::abs(v)) : scale;
  return scale;
}

// got (CUDA) against want (CPU): same shape and dtype; integers and bool exactly, floats within
// rtol * (|want| + scale), NaN matching NaN and infinities exactly.
std::string compare_to_cpu(const Tensor& got, const Tensor& want, double scale = 0) {
  if (!got.is_cuda()) return "the result is not on CUDA";
  if (got.sizes() != want.sizes()) {
    return fmt::format("shape [{}] != [{}]", fmt::join(got.sizes(), ", "), fmt::join(want.sizes(), ", "));
  }
  if (got.dtype() != want.dtype()) return fmt::format("dtype {} != {}", name(got.dtype()), name(want.dtype()));
  if (!is_floating(want.dtype())) return same_values(got, want) ? "" : "integer or bool values differ";
  const std::vector<double> g = values_of(got), w = values_of(want);
  const double rtol = gpu_test::float_rtol(want.dtype(), 2e-5, 1e-10);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (!std::isfinite(w[i]) || !std::isfinite(g[i])) {
      if (g[i] != w[i]) return fmt::format("element {}: {} != {}", i, g[i], w[i]);
      continue;
    }
    if (std::abs(g[i] - w[i]) > rtol * (std::abs(w[i]) + scale)) {
      return fmt::format("element {}: {} != {} (rtol {}, scale {})", i, g[i], w[i], rtol, scale);
    }
  }
  return "";
}

using Reducer = std::function<std::vector<Tensor>(const Tensor&)>;

// Runs f on x (CPU) and on x moved to CUDA with the same layout, and compares each result.
void check_against_cpu(const Reducer& f, const Tensor& x, const std::string& what) {
  const std::vector<Tensor> want = f(x), got = f(x.to(kCuda));
  REQUIRE(want.size() == got.size());
  const double scale = input_scale(x);
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string diff = compare_to_cpu(got[i], want[i], scale);
    CHECK_MESSAGE(diff.empty(), what, " result ", i, ": ", diff);
  }
}

// A reduction's dims: std::nullopt (all), or a list (an empty one reduces none).
using Dims = OptionalIntArrayRef;

// Whether reducing `x` over `dims` (std::nullopt: all) reduces an empty extent.
bool reduces_nothing(const Tensor& x, OptionalIntArrayRef dims) {
  if (!dims) return x.numel() == 0;
  for (int64_t d : *dims) {
    if (x.sizes()[d < 0 ? d + x.dim() : d] == 0) return true;
  }
  return false;
}

struct Kind {
  const char* name;
  bool floating_only;  // var, std, norm, mean need a floating input
  std::function<std::vector<Tensor>(const Tensor&, Dims, bool)> run;
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k = {
      {"sum", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{sum(x, d, kd)}; }},
      {"mean", true, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{mean(x, d, kd)}; }},
      {"prod", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{prod((x % 3) + 1, d, kd)}; }},
      {"amax", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{amax(x, d, kd)}; }},
      {"amin", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{amin(x, d, kd)}; }},
      {"var", true, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{var(x, d, 1, kd)}; }},
      {"std", true, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{anatomy::std(x, d, 0, kd)}; }},
      {"norm", true,
       [](const Tensor& x, Dims d, bool kd) {
         std::vector<Tensor> r;
         for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.5}) {
           if (std::isinf(p) && reduces_nothing(x, d)) continue;  // no value: tested to raise below
           r.push_back(norm(x, p, d, kd));
         }
         return r;
       }},
      {"logsumexp", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{logsumexp(x, d, kd)}; }},
      {"any", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{any(x, d, kd)}; }},
      {"all", false, [](const Tensor& x, Dims d, bool kd) { return std::vector<Tensor>{all(x, d, kd)}; }},
      {"count_nonzero", false, [](const Tensor& x, Dims d, bool) { return std::vector<Tensor>{count_nonzero(x, d)}; }},
  };
  return k;
}

// Values with sign, zeros (for any / all / count_nonzero) and, for integers, a range whose
// products and sums wrap in the narrow types.
Tensor signed_sample(IntArrayRef sizes, DType d) {
  if (d == DType::Bool) return randint(0, 2, sizes, DType::Bool);
  if (d == DType::UInt8) return randint(0, 4, sizes, DType::UInt8);
  if (!is_floating(d)) return randint(-3, 4, sizes, d);
  return randn(sizes, DType::Float32).to(d);
}

bool is_extreme(const Kind& k) { return std::string(k.name) == "amax" || std::string(k.name) == "amin"; }

bool runs_on(const Kind& k, DType d) {
  if (k.floating_only) return is_floating(d);
  if (std::string(k.name) == "prod") return d != DType::Bool;  // remainder does not take bool
  return true;
}

// `empty_reduction`: nothing is reduced, which amax and amin refuse (there is no largest element
// of nothing).
void check_kinds(const Tensor& x, OptionalIntArrayRef dims, bool keepdim, const std::string& what,
                 bool empty_reduction = false) {
  for (const Kind& k : kinds()) {
    if (!runs_on(k, x.dtype()) || (empty_reduction && is_extreme(k))) continue;
    CAPTURE(k.name);
    check_against_cpu([&](const Tensor& t) { return k.run(t, dims, keepdim); }, x,
                      fmt::format("{} {} {}", k.name, name(x.dtype()), what));
  }
}

}  // namespace

TEST_CASE("cuda reduce: every kind and dtype matches the CPU on all, last, first and middle dims") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(7);
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor x = signed_sample({6, 37, 45}, d);
    check_kinds(x, std::nullopt, false, "all dims");
    check_kinds(x, {}, false, "no dims");
    check_kinds(x, {}, true, "no dims keepdim");
    check_kinds(x, {2}, false, "last dim");
    check_kinds(x, {0}, true, "first dim keepdim");
    check_kinds(x, {1}, false, "middle dim");
    check_kinds(x, {0, 2}, false, "first and last dims (copied to one block)");
  }
}

TEST_CASE("cuda reduce: argmax, argmin, max.dim and min.dim give the CPU's values and first indices") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(8);
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    // Few distinct values: many ties, the first index must win on every path.
    const Tensor x = randint(0, d == DType::Bool ? 2 : 3, {5, 300, 70}, d);
    for (int64_t dim : {0, 1, 2}) {
      CAPTURE(dim);
      check_against_cpu(
          [&](const Tensor& t) {
            return std::vector<Tensor>{argmax(t, dim), argmin(t, dim, true)};
          },
          x, "argmax / argmin");
      check_against_cpu(
          [&](const Tensor& t) {
            auto [v, i] = max(t, dim);
            auto [w, j] = min(t, dim, true);
            return std::vector<Tensor>{v, i, w, j};
          },
          x, "max.dim / min.dim");
    }
    check_against_cpu(
        [&](const Tensor& t) {
          return std::vector<Tensor>{argmax(t), argmin(t), max(t), min(t)};
        },
        x, "flattened");
    check_against_cpu(
        [&](const Tensor& t) {
          return std::vector<Tensor>{argmax(t.permute({2, 0, 1}))};
        },
        x, "flattened permuted");
  }
}

TEST_CASE("cuda reduce: transposed and sliced inputs, with an offset") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(9);
  for (DType d : {DType::Float32, DType::BFloat16, DType::Int32, DType::Bool}) {
    CAPTURE(name(d));
    const Tensor base = signed_sample({40, 33, 20}, d).to(kCuda);
    const Tensor cpu_base = base.cpu();
    struct View {
      const char* label;
      std::function<Tensor(const Tensor&)> make;
    };
    const std::vector<View> views = {
        {"transposed", [](const Tensor& t) { return t.transpose(0, 2); }},
        {"sliced with an offset", [](const Tensor& t) { return t.slice(0, 3, 37).slice(2, 1, 19); }},
        {"stepped", [](const Tensor& t) { return t.slice(1, 2, 33, 3); }},
        {"permuted",
         [](const Tensor& t) {
           return t.permute({1, 2, 0});
         }},
    };
    for (const View& v : views) {
      CAPTURE(v.label);
      const Tensor g = v.make(base), c = v.make(cpu_base);
      const double scale = input_scale(c);
      using List = std::vector<int64_t>;
      const std::vector<std::optional<List>> dim_lists = {std::nullopt, List{},     List{0},   List{1},
                                                          List{2},      List{0, 1}, List{1, 2}};
      for (const std::optional<List>& list : dim_lists) {
        const OptionalIntArrayRef dims = list ? OptionalIntArrayRef(*list) : OptionalIntArrayRef(std::nullopt);
        CAPTURE(list.has_value());
        CAPTURE(list ? list->size() : 0);
        for (const Kind& k : kinds()) {
          if (!runs_on(k, d)) continue;
          CAPTURE(k.name);
          const std::vector<Tensor> want = k.run(c, dims, false), got = k.run(g, dims, false);
          for (size_t i = 0; i < want.size(); ++i) {
            const std::string diff = compare_to_cpu(got[i], want[i], scale);
            CHECK_MESSAGE(diff.empty(), k.name, " ", v.label, ": ", diff);
          }
        }
      }
    }
  }
}

TEST_CASE("cuda reduce: zero-size inputs and reductions") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Float16, DType::Int64, DType::Bool}) {
    CAPTURE(name(d));
    // Reducing an empty dim: sum 0, prod 1, mean NaN, any false, all true, count 0, norm 0,
    // logsumexp -inf, var NaN.
    const Tensor e = signed_sample({3, 0, 4}, d);
    check_kinds(e, {1}, false, "empty reduced dim", true);
    check_kinds(e, std::nullopt, false, "empty, all dims", true);
    check_kinds(e, {}, false, "empty, no dims");
    // Nothing to compute: no outputs.
    check_kinds(e, {0}, true, "empty kept dim");
    check_kinds(signed_sample({0, 5}, d), {1}, false, "no rows");
  }
  // The inf-norms of an empty extent have no value, on the device as on the CPU.
  const Tensor e = zeros({3, 0, 4}, TensorOptions().device(Device("cuda:0")));
  CHECK_THROWS_AS(norm(e, kInf, {1}), ValueError);
  CHECK_THROWS_AS(norm(e, -kInf), ValueError);
}

TEST_CASE("cuda reduce: dtype= and out= of sum, mean and prod") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(10);
  const Tensor i8 = randint(-100, 100, {50, 300}, DType::Int8);
  for (DType to : {DType::Int8, DType::Int32, DType::Float32, DType::Float16, DType::Float64, DType::Bool}) {
    CAPTURE(name(to));
    check_against_cpu(
        [&](const Tensor& t) {
          return std::vector<Tensor>{sum(t, {1}, false, to), sum(t, to)};
        },
        i8, "sum dtype=");
    // Products of 50 values up to 100 overflow fp32 (inf, then inf * 0 = NaN depends on the
    // order): integers wrap exactly, fp64 holds them.
    if (to == DType::Float32 || to == DType::Float16) continue;
    check_against_cpu([&](const Tensor& t) { return std::vector<Tensor>{prod(t, {0}, true, to)}; }, i8, "prod dtype=");
  }
  const Tensor h = randn({64, 2000}, DType::Float16);
  check_against_cpu(
      [&](const Tensor& t) {
        return std::vector<Tensor>{mean(t, {1}, false, DType::Float32), mean(t, {0}, false, DType::Float64),
                                   sum(t, {1}, false, DType::Float32)};
      },
      h, "mean / sum of fp16 dtype=");
  // Integer sums wrap in int64, as on the CPU.
  const Tensor big = full({4, 1000}, Scalar(int64_t{1} << 61), DType::Int64);
  check_against_cpu([&](const Tensor& t) { return std::vector<Tensor>{sum(t, {1}), sum(t)}; }, big, "int64 wrap");
  // out=
  const Tensor x = randn({30, 70}).to(kCuda);
  Tensor out = empty({30}, TensorOptions().dtype(DType::Float64).device(kCuda));
  sum_out(out, x, {1});
  CHECK(compare_to_cpu(out.to(DType::Float32), sum(x.cpu(), {1}), input_scale(x)).empty());
}

TEST_CASE("cuda reduce: NaN and infinities follow the CPU's rules") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatingDtypes) {
    CAPTURE(name(d));
    // Row 0: NaN in the middle; row 1: two NaN; row 2: infinities; row 3: -inf only (logsumexp
    // -inf); row 4: +inf and -inf (sum NaN).
    const std::vector<double> v = {1,  kNaN, 3,     -2,    0,     kNaN,  5,     kNaN, -1, 2,     kInf, 1, kInf,
                                   -3, 4,    -kInf, -kInf, -kInf, -kInf, -kInf, kInf, 2,  -kInf, 7,    0};
    const Tensor x = tensor(v, {5, 5}, DType::Float64).to(d);
    for (int64_t dim : {0, 1}) {
      check_kinds(x, {dim}, false, fmt::format("special values dim {}", dim));
      check_against_cpu(
          [&](const Tensor& t) {
            auto [mv, mi] = max(t, dim);
            auto [nv, ni] = min(t, dim);
            return std::vector<Tensor>{mv, mi, nv, ni, argmax(t, dim), argmin(t, dim)};
          },
          x, "NaN wins, its first index");
    }
    check_kinds(x, std::nullopt, false, "special values, all dims");
    check_kinds(x, {}, false, "special values, no dims");
  }
}

TEST_CASE("cuda reduce: var and std with N <= correction give the CPU's inf and NaN") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({4, 3}, DType::Float32);
  for (double c : {0.0, 1.0, 3.0, 5.0}) {
    CAPTURE(c);
    check_against_cpu(
        [&](const Tensor& t) {
          return std::vector<Tensor>{var(t, {1}, c), anatomy::std(t, {0}, c), var(t, std::nullopt, c), var(t, {}, c)};
        },
        x, "correction");
  }
  // A large common offset does not cancel the variance (Welford in fp64).
  const Tensor offset = randn({8, 5000}, DType::Float32).add(1e4);
  check_against_cpu(
      [&](const Tensor& t) {
        return std::vector<Tensor>{var(t, {1}), anatomy::std(t, {0}), var(t)};
      },
      offset, "offset");
}

TEST_CASE("cuda reduce: long rows, few rows and narrow columns take the split paths") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(11);
  // One long row (split over blocks, second pass), a few long rows, many medium rows (block per
  // row), many short rows (warp per row), a few columns over many rows (split columns), many
  // columns (one pass), and the outer dims of a [P, N, M] block.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3000001}, {0}},  {{3, 1000003}, {1}}, {{2000, 3000}, {1}},  {{70000, 17}, {1}},    {{200003, 3}, {0}},
      {{5000, 40}, {0}}, {{300, 3000}, {0}},  {{7, 3001, 33}, {1}}, {{100000, 2, 3}, {0}}, {{3, 4, 5, 6}, {1, 2}},
  };
  for (const auto& [shape, dims] : cases) {
    CAPTURE(shape.size());
    CAPTURE(shape[0]);
    for (DType d : {DType::Float32, DType::Float16, DType::Int32, DType::Bool}) {
      CAPTURE(name(d));
      const Tensor x = signed_sample(shape, d);
      for (const Kind& k : kinds()) {
        if (!runs_on(k, d) || std::string(k.name) == "norm" || std::string(k.name) == "prod") continue;
        CAPTURE(k.name);
        check_against_cpu([&](const Tensor& t) { return k.run(t, dims, false); }, x, "large");
      }
      check_against_cpu(
          [&](const Tensor& t) {
            auto [v, i] = max(t, dims[0]);
            return std::vector<Tensor>{v, i, argmin(t, dims[0])};
          },
          x, "large argmax");
    }
  }
}

TEST_CASE("cuda reduce: the same input gives bit-identical fp32 sums") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(12);
  const Tensor x = randn({int64_t{1} << 24}).to(kCuda);
  const Tensor m = x.view({4096, 4096});
  const std::vector<Tensor> first = {sum(x), sum(m, {1}), sum(m, {0}), mean(x), var(x)};
  for (int repeat = 0; repeat < 3; ++repeat) {
    const std::vector<Tensor> again = {sum(x), sum(m, {1}), sum(m, {0}), mean(x), var(x)};
    for (size_t i = 0; i < first.size(); ++i) CHECK(same_values(again[i], first[i]));
  }
  // And is close to the fp64 answer.
  const double exact = values_of(sum(x.to(DType::Float64)))[0];
  CHECK(std::abs(values_of(first[0])[0] - exact) < 1e-4 * std::sqrt(static_cast<double>(x.numel())));
}

TEST_CASE("cuda reduce: sum and mean read 16-byte vectors where aligned, one element at a time where not") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(13);
  // One row with a tail of fewer than a vector, rows that are vector multiples, columns that are
  // (a thread owns a vector of columns), a middle dim, and few columns split over many blocks.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4099}, {0}}, {{1000003}, {0}}, {{64, 4096}, {1}}, {{3000, 256}, {0}}, {{6, 999, 64}, {1}}, {{20000, 16}, {0}},
  };
  for (const auto& [shape, dims] : cases) {
    CAPTURE(shape.size());
    CAPTURE(shape[0]);
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int8, DType::Bool}) {
      CAPTURE(name(d));
      // The same values at the start of a storage (aligned) and one element into it (misaligned).
      const Tensor flat = signed_sample({numel + 1}, d);
      const Tensor aligned = flat.slice(0, 0, numel).view(shape);
      const Tensor offset = flat.slice(0, 1, numel + 1).view(shape);
      const Tensor offset_gpu = flat.to(kCuda).slice(0, 1, numel + 1).view(shape);
      const double scale = input_scale(flat);
      for (bool is_mean : {false, true}) {
        if (is_mean && !is_floating(d)) continue;
        CAPTURE(is_mean);
        auto run = [&](const Tensor& t) { return is_mean ? mean(t, dims) : sum(t, dims); };
        check_against_cpu([&](const Tensor& t) { return std::vector<Tensor>{run(t)}; }, aligned, "aligned");
        const std::string diff = compare_to_cpu(run(offset_gpu), run(offset), scale);
        CHECK_MESSAGE(diff.empty(), "offset: ", diff);
        // Repeats are bit-identical on either path.
        const Tensor a = aligned.to(kCuda);
        CHECK(same_values(run(a), run(a)));
        CHECK(same_values(run(offset_gpu), run(offset_gpu)));
      }
    }
  }
}
