// The reductions' out= forms and the in-place scans: what the op table's value checks do not
// state (a bad `out` changes nothing, `out` overlapping the input, casting into `out`, the
// refusal under autograd) and the in-place scans' dtype rules.
#include "test_util.h"

#include "anatomy/anatomy.h"

using namespace anatomy;
using namespace anatomy_test;

TEST_CASE("reduction out= forms: a wrong shape, dtype or device changes nothing") {
  Tensor x = tensor(std::vector<double>{1, 5, 2, 4, 3, 0}, {2, 3}, DType::Float32);
  Tensor wrong = zeros({3});
  EXPECT_ERROR_UNCHANGED(wrong, ValueError, mean_out(wrong, x, {1}), "mean.out", "[3]", "[2]");
  EXPECT_ERROR_UNCHANGED(wrong, ValueError, amax_out(wrong, x, {0}, true), "amax.out", "[1, 3]");
  EXPECT_ERROR_UNCHANGED(wrong, ValueError, norm_out(wrong, x, 2, {1}), "norm.out", "[2]");
  Tensor ints = zeros({2}, DType::Int64);
  EXPECT_ERROR_UNCHANGED(ints, TypeError, var_out(ints, x, {1}), "var.out", "fp32", "int64");
  EXPECT_ERROR_UNCHANGED(ints, TypeError, logsumexp_out(ints, x, {1}), "logsumexp.out", "int64");
  Tensor meta = empty({2}, TensorOptions().device(Device("meta")));
  EXPECT_ERROR_UNCHANGED(x, DeviceError, std_out(meta, x, {1}), "std.out", "meta");
  // The input's own errors come first and name the out= form.
  EXPECT_ERROR_UNCHANGED(wrong, IndexError, prod_out(wrong, x, {2}), "prod.out", "2");
  EXPECT_ERROR_UNCHANGED(ints, TypeError, mean_out(ints, tensor({1, 2}), {0}), "mean.out", "int64");
  // An out that overlaps itself would receive two results in one element.
  Tensor stride0 = zeros({1}).expand({2});
  EXPECT_ERROR_UNCHANGED(x, ValueError, amin_out(stride0, x, {1}), "amin.out");
}

TEST_CASE("reduction out= forms: values, casts into out, and out overlapping the input") {
  Tensor x = tensor(std::vector<double>{1, 5, 2, 4, 3, 0}, {2, 3}, DType::Float32);
  Tensor out = empty({2}, DType::Float64);  // fp32 results cast up into fp64
  CHECK(values(amax_out(out, x, {1})) == D{5, 4});
  Tensor out3 = empty({3}, DType::Float64);
  CHECK(values(mean_out(out3, x, {0})) == D{2.5, 4, 1});
  Tensor idx = empty({3}, DType::Int64);
  CHECK(values(argmin_out(idx, x, 0)) == D{0, 1, 1});
  Tensor flat = empty({}, DType::Int64);
  CHECK(values(argmax_out(flat, x)) == D{1});
  Tensor b = empty({2}, DType::Bool);
  CHECK(values(any_out(b, x, {1})) == D{1, 1});
  CHECK(values(all_out(b, x, {1})) == D{1, 0});
  Tensor n = empty({2}, DType::Int64);
  CHECK(values(count_nonzero_out(n, x, {1})) == D{3, 2});
  // Bool results may go into a number tensor, as a cast.
  Tensor bf = empty({2}, DType::Float32);
  CHECK(values(any_out(bf, x - 1, {1})) == D{1, 1});
  // out is the input's first column: the result is computed before anything is written.
  Tensor y = tensor(std::vector<double>{3, 1, 2, 6, 4, 5}, {2, 3}, DType::Float32);
  Tensor column = y.select(1, 0);
  amax_out(column, y, {1});
  CHECK(values(y) == D{3, 1, 2, 6, 4, 5});
  Tensor z = tensor(std::vector<double>{3, 1, 2, 6, 4, 5}, {2, 3}, DType::Float32);
  sum_out(z.select(1, 2), z, {1});
  CHECK(values(z) == D{3, 1, 6, 6, 4, 15});
  // The returned tensor is out itself.
  Tensor o = empty({2});
  CHECK(std_out(o, x, {1}).data_ptr() == o.data_ptr());
}

TEST_CASE("reduction out= forms: differentiable ones refuse inputs that require grad, the others compute") {
  Tensor x = randn({2, 3}).requires_grad_(true);
  Tensor out = empty({2});
  EXPECT_ERROR(NotImplementedError, mean_out(out, x, {1}), "mean.out", "requires grad");
  EXPECT_ERROR(NotImplementedError, logsumexp_out(out, x, {1}), "logsumexp.out");
  EXPECT_ERROR(NotImplementedError, norm_out(out, x, 2, {1}), "norm.out");
  Tensor idx = empty({2}, DType::Int64);
  argmax_out(idx, x, 1);
  CHECK(values(idx) == values(argmax(x.detach(), 1)));
  {
    autograd::NoGradGuard no_grad;
    var_out(out, x, {1});
  }
  CHECK(values(out) == values(var(x.detach(), {1})));
  CHECK_FALSE(out.requires_grad());
}

TEST_CASE("max and min along a dim into (values, indices): values, checks first, no gradient") {
  Tensor x = tensor(std::vector<double>{1, 5, 2, 4, 3, 0}, {2, 3}, DType::Float32);
  Tensor v = empty({2}, DType::Float64), i = empty({2}, DType::Int64);
  auto [mv, mi] = max_out(v, i, x, 1);
  CHECK(mv.data_ptr() == v.data_ptr());
  CHECK(mi.data_ptr() == i.data_ptr());
  CHECK(values(v) == D{5, 4});
  CHECK(values(i) == D{1, 0});
  Tensor vk = empty({1, 3}), ik = empty({1, 3}, DType::Int64);
  min_out(vk, ik, x, 0, true);
  CHECK(values(vk) == D{1, 3, 0});
  CHECK(values(ik) == D{0, 1, 1});
  // Indices in another dtype could round; the two outs may not share memory; shapes must match.
  Tensor fi = empty({2});
  EXPECT_ERROR_UNCHANGED(v, TypeError, max_out(v, fi, x, 1), "max.out", "int64", "fp32");
  Tensor both = empty({4}, DType::Int64);
  const Tensor xi = tensor(std::vector<double>{1, 5, 2, 4, 3, 0}, {2, 3}, DType::Int64);
  EXPECT_ERROR_UNCHANGED(both, ValueError, max_out(both.slice(0, 0, 2), both.slice(0, 1, 3), xi, 1), "max.out",
                         "overlap");
  Tensor short_v = empty({3});
  EXPECT_ERROR_UNCHANGED(i, ValueError, min_out(short_v, i, x, 1), "min.out", "[3]", "[2]");
  EXPECT_ERROR_UNCHANGED(i, IndexError, min_out(v, i, x, 2), "min.out", "2");
  Tensor g = randn({2, 3}).requires_grad_(true);
  EXPECT_ERROR(NotImplementedError, max_out(v, i, g, 1), "max.dim_max", "requires grad");
}

TEST_CASE("in-place scans: self's dtype, bool as any/all so far, a dtype only if it is self's") {
  Tensor f = tensor(std::vector<double>{1, 2, 3, 4}, {2, 2}, DType::Float32);
  const uint32_t version = f.version();
  CHECK(values(f.cumsum_(1)) == D{1, 3, 3, 7});
  CHECK(f.version() > version);
  CHECK(values(f.cumprod_(0, DType::Float32)) == D{1, 3, 3, 21});
  // int32 stays int32 and wraps as PyTorch's does.
  Tensor i = tensor(std::vector<double>{2147483647, 1}, {2}, DType::Int32);
  i.cumsum_(0);
  CHECK(i.dtype() == DType::Int32);
  CHECK(values(i) == D{2147483647, -2147483648.0});
  Tensor b = tensor(std::vector<double>{0, 1, 0, 1}, {4}, DType::Bool);
  CHECK(values(b.clone().cumsum_(0)) == D{0, 1, 1, 1});
  Tensor c = tensor(std::vector<double>{1, 1, 0, 1}, {4}, DType::Bool);
  CHECK(values(c.cumprod_(0)) == D{1, 1, 0, 0});
  Tensor g = tensor(std::vector<double>{1, 2}, {2}, DType::Float32);
  EXPECT_ERROR_UNCHANGED(g, TypeError, g.cumsum_(0, DType::Float64), "cumsum_", "fp64", "fp32");
  EXPECT_ERROR_UNCHANGED(g, IndexError, g.cumprod_(1), "cumprod", "1");
}

TEST_CASE("in-place scans: autograd sees an in-place write") {
  Tensor x = tensor(std::vector<double>{1, 2, 3}, {3}, DType::Float64).requires_grad_(true);
  Tensor y = x * 2;
  y.cumsum_(0);  // y = [2, 6, 12]
  y.sum().backward();
  // d/dx_i of sum_j cumsum(2x)_j = 2 * (number of j >= i).
  CHECK(values(x.grad()) == D{6, 4, 2});
  Tensor leaf = tensor(std::vector<double>{1, 2}, {2}, DType::Float64).requires_grad_(true);
  EXPECT_ERROR(ValueError, leaf.cumprod_(0), "leaf");
}
