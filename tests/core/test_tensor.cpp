// Tensor handles, storage lifetime, from_blob, tensor({...}), the factories, random factories,
// requires_grad_, item, to, copy_, and the layout predicates.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::V;
using anatomy_test::values;
using anatomy_test::vec;

namespace {

constexpr DType kAll[] = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

int64_t live_bytes() { return alloc::cpu_allocator_stats().live_bytes; }
int64_t live_blocks() { return alloc::cpu_allocator_stats().live_blocks; }

}  // namespace

// ---- handles and storage ----

TEST_CASE("tensor: TensorImpl stays within four cache lines") {
  CHECK(sizeof(TensorImpl) <= 256);
  CHECK(sizeof(Tensor) == sizeof(void*));
}

TEST_CASE("tensor: copies of a handle share one TensorImpl") {
  Tensor a = zeros({2, 3});
  CHECK(a.defined());
  CHECK(a.use_count() == 1);
  Tensor b = a;
  CHECK(a.use_count() == 2);
  CHECK(b.is_same(a));
  CHECK(b.impl() == a.impl());
  {
    Tensor c = b;
    CHECK(a.use_count() == 3);
  }
  CHECK(a.use_count() == 2);
  b = Tensor();
  CHECK_FALSE(b.defined());
  CHECK(a.use_count() == 1);
  // A view is a different TensorImpl over the same storage. A floating-point view also holds its
  // base (autograd's view tracking, as PyTorch's `_base`).
  Tensor v = a.view({6});
  CHECK_FALSE(v.is_same(a));
  CHECK(v.is_alias_of(a));
  CHECK(a.use_count() == 2);
  CHECK(a.storage().use_count() == 2);
  // Moving a handle does not touch the count.
  Tensor m = std::move(v);
  CHECK(m.use_count() == 1);
  CHECK(a.storage().use_count() == 2);
  Tensor undefined;
  CHECK_FALSE(undefined.is_alias_of(a));
  CHECK_FALSE(a.is_alias_of(undefined));
}

TEST_CASE("tensor: storage is freed when the last tensor or view using it goes") {
  const int64_t start_bytes = live_bytes(), start_blocks = live_blocks();
  {
    Tensor t = empty({1000});
    CHECK(live_bytes() == start_bytes + 4000);
    CHECK(live_blocks() == start_blocks + 1);
    Tensor v = t.slice(0, 10, 20);
    Tensor w = v.view({2, 5});
    t = Tensor();
    v = Tensor();
    // The view still holds the storage.
    CHECK(live_bytes() == start_bytes + 4000);
    CHECK(w.numel() == 10);
    w.fill_(1.0);
  }
  CHECK(live_bytes() == start_bytes);
  CHECK(live_blocks() == start_blocks);
  {
    // Many tensors, copies and views, all gone at the end of the scope.
    std::vector<Tensor> keep;
    for (int i = 0; i < 10; ++i) {
      Tensor x = ones({16, 16}, DType::Float64);
      keep.push_back(x.t());
      keep.push_back(x.clone());
      keep.push_back(x.to(DType::Float16));
    }
    CHECK(live_bytes() > start_bytes);
  }
  CHECK(live_bytes() == start_bytes);
  CHECK(live_blocks() == start_blocks);
}

TEST_CASE("tensor: from_blob without a deleter uses the caller's memory") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  const int64_t start_bytes = live_bytes();
  {
    Tensor t = from_blob(buf, {2, 3});
    CHECK(t.data_ptr() == buf);
    CHECK(t.dtype() == DType::Float32);
    CHECK(t.is_cpu());
    CHECK(vec(t.sizes()) == V{2, 3});
    CHECK(vec(t.strides()) == V{3, 1});
    CHECK(values(t) == D{0, 1, 2, 3, 4, 5});
    CHECK(live_bytes() == start_bytes);  // nothing was allocated
    t.select(0, 1).fill_(9.0);
    CHECK(buf[3] == 9.0f);
    CHECK(buf[5] == 9.0f);
    CHECK(buf[2] == 2.0f);
  }
  CHECK(buf[4] == 9.0f);  // still the caller's memory after the tensor dies

  // Explicit strides: a column-major view of the same buffer.
  float buf2[6] = {0, 1, 2, 3, 4, 5};
  Tensor cm = from_blob(buf2, {2, 3}, {1, 2});
  CHECK(values(cm) == D{0, 2, 4, 1, 3, 5});
  CHECK_FALSE(cm.is_contiguous());

  // Other dtypes.
  int32_t ibuf[4] = {1, -2, 3, -4};
  Tensor it = from_blob(ibuf, {4}, DType::Int32);
  CHECK(it.dtype() == DType::Int32);
  CHECK(values(it) == D{1, -2, 3, -4});
}

TEST_CASE("tensor: from_blob calls its deleter exactly once, when the last view dies") {
  float buf[8] = {};
  int calls = 0;
  void* seen = nullptr;
  {
    Tensor t = from_blob(buf, {8}, DType::Float32, [&](void* p) {
      ++calls;
      seen = p;
    });
    Tensor v = t.view({2, 4}).t();
    Tensor s = v.select(0, 1);
    t = Tensor();
    CHECK(calls == 0);
    v = Tensor();
    CHECK(calls == 0);
    Tensor copy = s;
    s = Tensor();
    CHECK(calls == 0);
  }
  CHECK(calls == 1);
  CHECK(seen == buf);
}

TEST_CASE("tensor: from_blob rejects bad arguments") {
  float buf[4] = {};
  int calls = 0;
  EXPECT_ERROR(ValueError, from_blob(buf, {2, 2}, {2, -1}), "from_blob", "-1");
  EXPECT_ERROR(ValueError, from_blob(buf, {2, 2}, {1}), "from_blob");
  EXPECT_ERROR(ValueError, from_blob(buf, {-2}), "from_blob", "-2");
  EXPECT_ERROR(ValueError, from_blob(nullptr, {2}, DType::Float32, [&](void*) { ++calls; }), "from_blob");
  // A null pointer is fine for an empty tensor.
  CHECK(from_blob(nullptr, {0, 3}).numel() == 0);
  CHECK(calls == 0);
}

// ---- tensor({...}) ----

TEST_CASE("tensor: tensor({...}) picks PyTorch's dtypes") {
  Tensor f = tensor({1.0, 2.5});
  CHECK(f.dtype() == DType::Float32);
  CHECK(vec(f.sizes()) == V{2});
  CHECK(values(f) == D{1.0, 2.5});

  Tensor ff = tensor({1.5f, 2.0f});
  CHECK(ff.dtype() == DType::Float32);

  Tensor i = tensor({1, 2, 3});
  CHECK(i.dtype() == DType::Int64);
  CHECK(values(i) == D{1, 2, 3});

  Tensor l = tensor({int64_t{1} << 40, -(int64_t{1} << 40)});
  CHECK(l.dtype() == DType::Int64);
  CHECK(l.data_ptr<int64_t>()[0] == int64_t{1} << 40);

  Tensor b = tensor({true, false, true});
  CHECK(b.dtype() == DType::Bool);
  CHECK(values(b) == D{1, 0, 1});

  Tensor rows = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  CHECK(rows.dtype() == DType::Float32);
  CHECK(vec(rows.sizes()) == V{2, 3});
  CHECK(vec(rows.strides()) == V{3, 1});
  CHECK(values(rows) == D{1, 2, 3, 4, 5, 6});

  Tensor irows = tensor({{int64_t{1}, int64_t{2}}, {int64_t{3}, int64_t{4}}});
  CHECK(irows.dtype() == DType::Int64);
  CHECK(vec(irows.sizes()) == V{2, 2});
  CHECK(values(irows) == D{1, 2, 3, 4});

  Tensor from_vec = tensor(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(from_vec.dtype() == DType::Int32);
  CHECK(vec(from_vec.sizes()) == V{3, 2});
  Tensor from_bools = tensor(std::vector<bool>{true, false}, {2});
  CHECK(from_bools.dtype() == DType::Bool);
  CHECK(values(from_bools) == D{1, 0});
}

namespace {
// tensor({{1, 2}, {3, 4}}) should compile and give an int64 matrix, as torch.tensor([[1, 2],
// [3, 4]]) does. Checked through a requires-expression so the test can report it at run time.
template <typename T>
constexpr bool nested_int_list_compiles = requires {
  anatomy::tensor({{T{1}, T{2}}, {T{3}, T{4}}});
};
// torch.tensor([[10.], [20.]]) is a (2, 1) column; here {{10.0}, {20.0}} is also a valid 1-D
// list of two doubles, so the call is ambiguous.
template <typename T>
constexpr bool column_list_compiles = requires {
  anatomy::tensor({{T{10}}, {T{20}}});
};
}  // namespace

TEST_CASE("tensor: tensor({{1, 2}, {3, 4}}) and tensor({{1.0}, {2.0}}) compile") {
  // Nested int rows must pick the int overload, and single-element rows must not read as a 1-D
  // list of braced scalars.
  CHECK(nested_int_list_compiles<int>);
  CHECK(nested_int_list_compiles<double>);
  CHECK(column_list_compiles<double>);
}

TEST_CASE("tensor: options override tensor({...})'s dtype") {
  Tensor t = tensor({1.0, 2.7, -2.7}, DType::Int32);
  CHECK(t.dtype() == DType::Int32);
  CHECK(values(t) == D{1, 2, -2});
  Tensor h = tensor({1, 2}, DType::Float16);
  CHECK(h.dtype() == DType::Float16);
  CHECK(values(h) == D{1, 2});
  Tensor d = tensor({{1.0, 2.0}}, TensorOptions().dtype(DType::Float64));
  CHECK(d.dtype() == DType::Float64);
  CHECK(vec(d.sizes()) == V{1, 2});
  Tensor b = tensor({0.0, 0.5}, DType::Bool);
  CHECK(values(b) == D{0, 1});
  Tensor g = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  CHECK(g.requires_grad());
}

TEST_CASE("tensor: tensor({...}) rejects ragged rows and mismatched shapes") {
  EXPECT_ERROR(ValueError, tensor({{1.0, 2.0}, {3.0}}), "tensor", "2", "1");
  EXPECT_ERROR(ValueError, tensor(std::vector<float>{1, 2, 3}, {2, 2}), "tensor", "3", "[2, 2]");
}

// ---- factories ----

TEST_CASE("factories: empty, zeros, ones and full") {
  Tensor e = empty({2, 3});
  CHECK(e.dtype() == DType::Float32);
  CHECK(e.is_cpu());
  CHECK(vec(e.sizes()) == V{2, 3});
  CHECK(vec(e.strides()) == V{3, 1});
  CHECK(e.storage_offset() == 0);
  CHECK(e.is_contiguous());
  CHECK(e.numel() == 6);
  CHECK(e.nbytes() == 24);
  CHECK(e.version() == 0);

  Tensor s = empty({});
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  Tensor z0 = empty({0, 3});
  CHECK(z0.numel() == 0);
  CHECK(vec(z0.strides()) == V{3, 1});

  CHECK(empty({4}, DType::Int8).dtype() == DType::Int8);
  CHECK(values(zeros({2, 2})) == D{0, 0, 0, 0});
  CHECK(values(zeros({3}, DType::Int64)) == D{0, 0, 0});
  CHECK(zeros({3}, DType::Int64).dtype() == DType::Int64);
  CHECK(values(ones({2, 2}, DType::Float16)) == D{1, 1, 1, 1});
  CHECK(values(ones({2}, DType::Bool)) == D{1, 1});
  CHECK(zeros({}).dim() == 0);
  CHECK(values(ones({})) == D{1});

  // full infers its dtype from the value, as torch.full.
  Tensor fi = full({2, 2}, 7);
  CHECK(fi.dtype() == DType::Int64);
  CHECK(values(fi) == D{7, 7, 7, 7});
  Tensor ff = full({2}, 2.5);
  CHECK(ff.dtype() == DType::Float32);
  CHECK(values(ff) == D{2.5, 2.5});
  Tensor fb = full({2}, true);
  CHECK(fb.dtype() == DType::Bool);
  Tensor fh = full({3}, 0.1, DType::Float16);
  CHECK(fh.dtype() == DType::Float16);
  CHECK(values(fh)[0] == static_cast<double>(static_cast<float>(Half(0.1))));
  CHECK(full({0}, 1.0).numel() == 0);
}

TEST_CASE("factories: arange in all three forms") {
  Tensor a = arange(5);
  CHECK(a.dtype() == DType::Int64);
  CHECK(values(a) == D{0, 1, 2, 3, 4});
  Tensor b = arange(2, 6);
  CHECK(b.dtype() == DType::Int64);
  CHECK(values(b) == D{2, 3, 4, 5});
  Tensor c = arange(0, 10, 3);
  CHECK(values(c) == D{0, 3, 6, 9});
  // Negative steps count down, stopping before end.
  Tensor n = arange(5, 0, -2);
  CHECK(n.dtype() == DType::Int64);
  CHECK(values(n) == D{5, 3, 1});
  CHECK(values(arange(0, -3, -1)) == D{0, -1, -2});
  // Any float argument makes it the default float.
  Tensor f = arange(0, 1, 0.25);
  CHECK(f.dtype() == DType::Float32);
  CHECK(values(f) == D{0, 0.25, 0.5, 0.75});
  Tensor fn = arange(1.0, 0.0, -0.25);
  CHECK(fn.dtype() == DType::Float32);
  CHECK(values(fn) == D{1, 0.75, 0.5, 0.25});
  CHECK(arange(0.5, 3).dtype() == DType::Float32);
  CHECK(values(arange(0.5, 3)) == D{0.5, 1.5, 2.5});
  CHECK(arange(2.5).dtype() == DType::Float32);
  CHECK(values(arange(2.5)) == D{0, 1, 2});
  // torch.arange(0, 1, 0.1) has 10 elements; (0, 1, 0.3) has 4.
  CHECK(arange(0, 1, 0.1).numel() == 10);
  CHECK(values(arange(0.0, 1.0, 0.3, DType::Float64)) == D{0.0, 0.3, 0.6, 0.3 * 3});
  // Options.
  Tensor d = arange(4, DType::Float64);
  CHECK(d.dtype() == DType::Float64);
  CHECK(values(d) == D{0, 1, 2, 3});
  CHECK(arange(0, 4, 1, DType::Int8).dtype() == DType::Int8);
  // Integer values stay exact beyond 2^53 (bounds chosen so the length is exact in double too).
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor e = arange(big, big + 3 * 1024, 1024);
  REQUIRE(e.numel() == 3);
  CHECK(e.data_ptr<int64_t>()[2] == big + 2048);
  // Empty and invalid ranges.
  CHECK(arange(0).numel() == 0);
  CHECK(arange(3, 3).numel() == 0);
  EXPECT_ERROR(ValueError, arange(0, 5, 0), "arange", "step");
  EXPECT_ERROR(ValueError, arange(0, 5, -1), "arange");
  EXPECT_ERROR(ValueError, arange(5, 0, 1), "arange");
  EXPECT_ERROR(ValueError, arange(0.0, std::numeric_limits<double>::infinity()), "arange");
}

TEST_CASE("factories: arange's length is exact for int64 bounds beyond 2^53") {
  // torch.arange(2**60 + 1, 2**60 + 4) has 3 values: a length computed in double would be 0.
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor e = arange(big, big + 3);
  CHECK(e.numel() == 3);
  if (e.numel() == 3) CHECK(e.data_ptr<int64_t>()[2] == big + 2);
  CHECK(arange(int64_t{1} << 53, (int64_t{1} << 53) + 3).numel() == 3);
}

TEST_CASE("factories: linspace with exact endpoints") {
  Tensor a = linspace(0, 1, 5);
  CHECK(a.dtype() == DType::Float32);
  CHECK(values(a) == D{0, 0.25, 0.5, 0.75, 1});
  Tensor b = linspace(-1, 1, 3);
  CHECK(values(b) == D{-1, 0, 1});
  // Both ends are exact even when the step is not representable.
  Tensor c = linspace(0.1, 0.7, 11, DType::Float64);
  CHECK(c.data_ptr<double>()[0] == 0.1);
  CHECK(c.data_ptr<double>()[10] == 0.7);
  Tensor d = linspace(0, 1, 7, DType::Float64);
  CHECK(d.data_ptr<double>()[6] == 1.0);
  CHECK(d.data_ptr<double>()[3] == doctest::Approx(0.5));
  // Decreasing.
  CHECK(values(linspace(4, 0, 5)) == D{4, 3, 2, 1, 0});
  // steps = 0 gives an empty tensor.
  Tensor e = linspace(0, 1, 0);
  CHECK(e.numel() == 0);
  CHECK(vec(e.sizes()) == V{0});
  EXPECT_ERROR(ValueError, linspace(0, 1, -1), "linspace", "-1");
}

TEST_CASE("factories: linspace with one step gives start, as torch.linspace(3, 7, 1)") {
  // The symmetric fill must not compute element 0 from the end when steps == 1.
  CHECK(values(linspace(3, 7, 1)) == D{3});
  CHECK(values(linspace(-2.5, 10, 1, DType::Float64)) == D{-2.5});
}

TEST_CASE("factories: eye, square and rectangular") {
  Tensor a = eye(3);
  CHECK(a.dtype() == DType::Float32);
  CHECK(vec(a.sizes()) == V{3, 3});
  CHECK(values(a) == D{1, 0, 0, 0, 1, 0, 0, 0, 1});
  Tensor b = eye(2, 3);
  CHECK(vec(b.sizes()) == V{2, 3});
  CHECK(values(b) == D{1, 0, 0, 0, 1, 0});
  Tensor c = eye(3, 2, DType::Int32);
  CHECK(c.dtype() == DType::Int32);
  CHECK(values(c) == D{1, 0, 0, 1, 0, 0});
  CHECK(vec(eye(0).sizes()) == V{0, 0});
  CHECK(vec(eye(2, 0).sizes()) == V{2, 0});
  EXPECT_ERROR(ValueError, eye(-1), "eye", "-1");
  EXPECT_ERROR(ValueError, eye(2, -3), "eye", "-3");
}

TEST_CASE("factories: the _like forms keep a dense permuted layout") {
  Tensor base = arange(6, DType::Float32).view({2, 3});
  Tensor x = base.t();  // sizes (3, 2), strides (1, 3)
  REQUIRE(vec(x.strides()) == V{1, 3});

  Tensor e = empty_like(x);
  CHECK(vec(e.sizes()) == V{3, 2});
  CHECK(vec(e.strides()) == V{1, 3});
  CHECK(e.dtype() == DType::Float32);
  CHECK_FALSE(e.is_alias_of(x));

  Tensor z = zeros_like(x);
  CHECK(vec(z.strides()) == V{1, 3});
  CHECK(values(z) == D(6, 0.0));
  Tensor o = ones_like(x, DType::Int64);
  CHECK(o.dtype() == DType::Int64);
  CHECK(vec(o.strides()) == V{1, 3});
  CHECK(values(o) == D(6, 1.0));
  Tensor f = full_like(x, 5);
  CHECK(f.dtype() == DType::Float32);  // the input's dtype, not the value's
  CHECK(vec(f.strides()) == V{1, 3});
  CHECK(values(f) == D(6, 5.0));
  CHECK(vec(rand_like(x).strides()) == V{1, 3});
  CHECK(vec(randn_like(x).strides()) == V{1, 3});

  // A 3-D permutation.
  Tensor p = empty({2, 3, 4}).permute({2, 0, 1});  // strides (1, 12, 4)
  CHECK(vec(empty_like(p).strides()) == V{1, 12, 4});

  // An explicit format overrides Preserve.
  CHECK(vec(empty_like(x, {}, MemoryFormat::Contiguous).strides()) == V{2, 1});

  // A non-dense input (every other column) gets a contiguous result.
  Tensor strided = zeros({4, 6}).slice(1, 0, 6, 2);
  REQUIRE_FALSE(strided.is_non_overlapping_and_dense());
  CHECK(vec(empty_like(strided).strides()) == V{3, 1});
  // An expanded input too.
  Tensor expanded = zeros({3}).expand({2, 3});
  CHECK(vec(empty_like(expanded).strides()) == V{3, 1});
}

TEST_CASE("factories: the _like forms keep channels_last") {
  Tensor c = empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  CHECK(vec(c.strides()) == V{60, 1, 15, 3});
  CHECK(c.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK_FALSE(c.is_contiguous());
  Tensor e = empty_like(c);
  CHECK(vec(e.strides()) == V{60, 1, 15, 3});
  CHECK(vec(zeros_like(c).strides()) == V{60, 1, 15, 3});
  CHECK(vec(empty_like(c, DType::Float16).strides()) == V{60, 1, 15, 3});
  CHECK(vec(empty_like(c, {}, MemoryFormat::Contiguous).strides()) == V{60, 20, 5, 1});
  Tensor cl = empty_like(arange(120, DType::Float32).view({2, 3, 4, 5}), {}, MemoryFormat::ChannelsLast);
  CHECK(vec(cl.strides()) == V{60, 1, 15, 3});
  EXPECT_ERROR(ValueError, empty({2, 3}, {}, MemoryFormat::ChannelsLast), "channels_last", "[2, 3]");
}

TEST_CASE("random: same seed, same values, the offset advances between draws") {
  manual_seed(42);
  Tensor a = rand({100});
  CHECK(default_generator(DeviceType::CPU).offset() == 100);
  Tensor a2 = rand({100});
  manual_seed(42);
  Tensor b = rand({100});
  Tensor b2 = rand({100});
  CHECK(values(a) == values(b));
  CHECK(values(a2) == values(b2));
  CHECK(values(a) != values(a2));
  manual_seed(43);
  CHECK(values(rand({100})) != values(a));

  manual_seed(7);
  Tensor n1 = randn({50});
  manual_seed(7);
  Tensor n2 = randn({50});
  CHECK(values(n1) == values(n2));
  CHECK(values(randn({50})) != values(n2));

  manual_seed(7);
  Tensor i1 = randint(0, 1000, {50});
  manual_seed(7);
  Tensor i2 = randint(0, 1000, {50});
  CHECK(values(i1) == values(i2));
}

TEST_CASE("random: rand, randn and randint dtypes and ranges") {
  manual_seed(1234);
  Tensor u = rand({10000});
  CHECK(u.dtype() == DType::Float32);
  double lo = 1, hi = 0;
  for (double v : values(u)) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(lo >= 0.0);
  CHECK(hi < 1.0);
  CHECK(lo < 0.01);
  CHECK(hi > 0.99);
  CHECK(rand({4}, DType::Float64).dtype() == DType::Float64);
  CHECK(rand({4}, DType::Float16).dtype() == DType::Float16);
  CHECK(randn({4}, DType::BFloat16).dtype() == DType::BFloat16);
  EXPECT_ERROR(TypeError, rand({4}, DType::Int32), "rand", "int32");
  EXPECT_ERROR(TypeError, randn({4}, DType::Int64), "randn", "int64");

  Tensor r = randint(3, 10, {1000});
  CHECK(r.dtype() == DType::Int64);
  std::set<double> seen;
  for (double v : values(r)) {
    CHECK(v >= 3);
    CHECK(v < 10);
    seen.insert(v);
  }
  CHECK(seen.size() == 7);  // every value of [3, 10) appears in 1000 draws
  Tensor r2 = randint(5, {200});
  CHECK(r2.dtype() == DType::Int64);
  for (double v : values(r2)) CHECK((v >= 0 && v < 5));
  Tensor r8 = randint(-128, 128, {500}, DType::Int8);
  CHECK(r8.dtype() == DType::Int8);
  for (double v : values(r8)) CHECK((v >= -128 && v < 128));
  EXPECT_ERROR(ValueError, randint(5, 5, {2}), "randint", "5");
  EXPECT_ERROR(ValueError, randint(0, 1000, {2}, DType::Int8), "random_");
}

TEST_CASE("random: 100k normals have mean about 0 and variance about 1, uniforms mean about 1/2") {
  manual_seed(2024);
  D n = values(randn({100000}));
  double mean = 0;
  for (double v : n) mean += v;
  mean /= static_cast<double>(n.size());
  double var = 0;
  for (double v : n) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n.size() - 1);
  CHECK(std::fabs(mean) < 0.02);
  CHECK(std::fabs(var - 1.0) < 0.03);
  D u = values(rand({100000}));
  double umean = 0;
  for (double v : u) umean += v;
  umean /= static_cast<double>(u.size());
  CHECK(std::fabs(umean - 0.5) < 0.01);
}

// ---- requires_grad, item, to ----

TEST_CASE("tensor: requires_grad_ only for floating tensors") {
  Tensor f = zeros({2});
  CHECK_FALSE(f.requires_grad());
  f.requires_grad_();
  CHECK(f.requires_grad());
  f.requires_grad_(false);
  CHECK_FALSE(f.requires_grad());
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64}) {
    CHECK(zeros({1}, t).requires_grad_().requires_grad());
  }
  CHECK(zeros({2}, TensorOptions().requires_grad(true)).requires_grad());

  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int32, DType::Int64}) {
    INFO("dtype ", name(t));
    Tensor i = zeros({2}, t);
    EXPECT_ERROR(TypeError, i.requires_grad_(), "requires_grad_", std::string(name(t)).c_str());
    CHECK_FALSE(i.requires_grad());
    i.requires_grad_(false);  // turning it off is always fine
    CHECK_FALSE(i.requires_grad());
  }
  EXPECT_ERROR(TypeError, zeros({2}, TensorOptions().dtype(DType::Int64).requires_grad(true)), "requires_grad_");
}

TEST_CASE("tensor: item() for every dtype") {
  Scalar b = scalar_tensor(true).item();
  CHECK(b.is_bool());
  CHECK(b.to_bool());
  CHECK(scalar_tensor(255, DType::UInt8).item().to_int() == 255);
  CHECK(scalar_tensor(-128, DType::Int8).item().to_int() == -128);
  CHECK(scalar_tensor(std::numeric_limits<int32_t>::min(), DType::Int32).item().to_int() ==
        std::numeric_limits<int32_t>::min());
  const int64_t big = (int64_t{1} << 62) + 1;
  Scalar l = scalar_tensor(big).item();
  CHECK(l.is_integral());
  CHECK(l.to_int() == big);
  Scalar h = scalar_tensor(0.5, DType::Float16).item();
  CHECK(h.is_floating_point());
  CHECK(h.to_double() == 0.5);
  CHECK(scalar_tensor(1.5, DType::BFloat16).item().to_double() == 1.5);
  CHECK(scalar_tensor(0.1, DType::Float32).item().to_double() == static_cast<double>(0.1f));
  CHECK(scalar_tensor(0.1, DType::Float64).item().to_double() == 0.1);
  for (DType t : kAll) {
    INFO("dtype ", name(t));
    Scalar s = full({1}, 1, t).item();
    CHECK(s.to_double() == 1.0);
    CHECK(s.is_bool() == (t == DType::Bool));
    CHECK(s.is_integral() == is_integral(t));
    CHECK(s.is_floating_point() == is_floating(t));
  }
  // Typed item and a strided one-element view.
  CHECK(scalar_tensor(2.75).item<float>() == 2.75f);
  CHECK(scalar_tensor(3.9).item<int>() == 3);
  CHECK(arange(10).slice(0, 7, 8).item<int64_t>() == 7);
  CHECK(arange(12, DType::Float32).view({3, 4}).t()[1][2].item<double>() == 9.0);
}

TEST_CASE("tensor: item() needs exactly one element") {
  EXPECT_ERROR(ValueError, zeros({2}).item(), "item", "2");
  EXPECT_ERROR(ValueError, zeros({0}).item(), "item", "0");
  EXPECT_ERROR(ValueError, zeros({2, 3}).item(), "item", "6");
  CHECK(zeros({1, 1, 1}).item().to_double() == 0.0);
}

TEST_CASE("tensor: to(dtype) copies, to(the same dtype) returns the same tensor") {
  Tensor x = tensor({1.5, -2.7, 3.0});
  Tensor same = x.to(DType::Float32);
  CHECK(same.is_same(x));
  CHECK(x.to(kCPU).is_same(x));
  CHECK(x.to(Device("cpu"), DType::Float32).is_same(x));
  Tensor forced = x.to(DType::Float32, false, true);
  CHECK_FALSE(forced.is_same(x));
  CHECK_FALSE(forced.is_alias_of(x));
  CHECK(values(forced) == values(x));

  Tensor i = x.to(DType::Int32);
  CHECK(i.dtype() == DType::Int32);
  CHECK_FALSE(i.is_alias_of(x));
  CHECK(values(i) == D{1, -2, 3});
  CHECK(x.version() == 0);
  CHECK(values(x) == D{1.5, static_cast<double>(-2.7f), 3.0});

  Tensor d = x.to(DType::Float64);
  CHECK(d.dtype() == DType::Float64);
  CHECK(values(d) == values(x));
  CHECK(values(x.to(DType::Bool)) == D{1, 1, 1});

  // The layout is preserved (dense permutations).
  Tensor t = arange(6, DType::Float32).view({2, 3}).t();
  Tensor th = t.to(DType::Float16);
  CHECK(vec(th.strides()) == V{1, 3});
  CHECK(values(th) == values(t));
}

// ---- copy_ ----

TEST_CASE("copy_: between every pair of dtypes") {
  int mismatches = 0;
  for (DType from : kAll) {
    for (DType to : kAll) {
      Tensor src = tensor({0.0, 1.0, 3.0, 100.0}, from);
      Tensor dst = zeros({4}, to);
      dst.copy_(src);
      D expected = {0, 1, 3, 100};
      if (from == DType::Bool || to == DType::Bool) expected = {0, 1, 1, 1};
      if (values(dst) != expected || dst.dtype() != to) {
        ++mismatches;
        MESSAGE("copy_ ", name(from), " -> ", name(to), " gave ", doctest::StringMaker<D>::convert(values(dst)));
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("copy_: conversion spot checks") {
  Tensor i = zeros({3}, DType::Int32);
  i.copy_(tensor({-2.7, 2.7, 100.9}));
  CHECK(values(i) == D{-2, 2, 100});  // truncation toward zero
  Tensor b = zeros({3}, DType::Bool);
  b.copy_(tensor({0.0, std::numeric_limits<double>::quiet_NaN(), -0.0}, DType::Float64));
  CHECK(values(b) == D{0, 1, 0});
  Tensor h = zeros({1}, DType::Float16);
  h.copy_(tensor({1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}, DType::Float64));
  CHECK(h.data_ptr<Half>()[0].x == 0x3c01);  // fp64 -> fp16 rounds once
  Tensor bf = zeros({1}, DType::BFloat16);
  bf.copy_(tensor({3.0}, DType::Float16));
  CHECK(values(bf) == D{3});
  Tensor u = zeros({2}, DType::UInt8);
  u.copy_(tensor({255, 7}, DType::Int64));
  CHECK(values(u) == D{255, 7});
  // Into a non-contiguous destination, from a non-contiguous source, across dtypes.
  Tensor dst = zeros({3, 2}, DType::Float64);
  Tensor src = arange(6, DType::Int32).view({2, 3}).t();
  dst.t().copy_(src.t());
  CHECK(values(dst) == D{0, 3, 1, 4, 2, 5});
}

TEST_CASE("copy_: the source broadcasts to the destination's shape") {
  Tensor dst = zeros({2, 3});
  const uint32_t v0 = dst.version();
  Tensor src_before = tensor({1.0, 2.0, 3.0});
  dst.copy_(src_before);
  CHECK(values(dst) == D{1, 2, 3, 1, 2, 3});
  CHECK(dst.version() == v0 + 1);
  CHECK(src_before.version() == 0);
  dst.copy_(tensor({10.0, 20.0}).view({2, 1}));
  CHECK(values(dst) == D{10, 10, 10, 20, 20, 20});
  dst.copy_(scalar_tensor(7.0));
  CHECK(values(dst) == D(6, 7.0));
  CHECK(dst.version() == v0 + 3);
  // A source that does not broadcast is refused and nothing changes.
  EXPECT_ERROR_UNCHANGED(dst, ValueError, dst.copy_(tensor({1.0, 2.0})), "[2]", "[2, 3]");
  EXPECT_ERROR_UNCHANGED(dst, ValueError, dst.copy_(zeros({3, 2, 3})));
}

TEST_CASE("copy_: the error for a non-broadcastable source names copy_") {
  // Known issue: the message comes from the nested expand ("expand: ...") and does not name
  // copy_, the operator the user called.
  Tensor dst = zeros({2, 3});
  EXPECT_ERROR(ValueError, dst.copy_(tensor({1.0, 2.0})), "copy_");
}

TEST_CASE("copy_: into an expanded tensor throws ValueError and writes nothing") {
  Tensor base = arange(3, DType::Float32);
  Tensor e = base.unsqueeze(0).expand({2, 3});
  EXPECT_ERROR_UNCHANGED(base, ValueError, e.copy_(ones({2, 3})), "copy_", "single memory location");
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.copy_(ones({2, 3})), "copy_");
  EXPECT_ERROR_UNCHANGED(base, ValueError, e.fill_(1.0), "fill_");
  CHECK(values(base) == D{0, 1, 2});
}

TEST_CASE("copy_: overlapping source and destination give the NumPy result") {
  // x[1:] = x[:-1]
  Tensor x = arange(6, DType::Float32);
  x.slice(0, 1).copy_(x.slice(0, 0, -1));
  CHECK(values(x) == D{0, 0, 1, 2, 3, 4});
  // x[:-1] = x[1:]
  Tensor y = arange(6, DType::Float32);
  y.slice(0, 0, -1).copy_(y.slice(0, 1));
  CHECK(values(y) == D{1, 2, 3, 4, 5, 5});
  // The same with a dtype-converting copy path (int64, non-contiguous).
  Tensor z = arange(12).view({2, 6});
  z.slice(1, 1).copy_(z.slice(1, 0, -1));
  CHECK(values(z) == D{0, 0, 1, 2, 3, 4, 6, 6, 7, 8, 9, 10});
  // x[...] = x.T
  Tensor m = arange(9, DType::Float32).view({3, 3});
  m.copy_(m.t());
  CHECK(values(m) == D{0, 3, 6, 1, 4, 7, 2, 5, 8});
  // x[...] = x[0]: a broadcast source that overlaps the destination.
  Tensor r = arange(6, DType::Float32).view({2, 3});
  r.copy_(r[1]);
  CHECK(values(r) == D{3, 4, 5, 3, 4, 5});
  // Copying a tensor onto itself is a no-op that still counts as a write.
  Tensor s = arange(4, DType::Float32);
  const uint32_t v = s.version();
  s.copy_(s);
  CHECK(values(s) == D{0, 1, 2, 3});
  CHECK(s.version() == v + 1);
}

// ---- layout ----

TEST_CASE("layout: is_contiguous and is_non_overlapping_and_dense") {
  Tensor c = zeros({2, 3});
  CHECK(c.is_contiguous());
  CHECK(c.is_non_overlapping_and_dense());
  Tensor t = c.t();
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.is_non_overlapping_and_dense());
  Tensor p = zeros({2, 3, 4}).permute({1, 2, 0});
  CHECK_FALSE(p.is_contiguous());
  CHECK(p.is_non_overlapping_and_dense());
  Tensor s = zeros({4, 6}).slice(1, 0, 6, 2);
  CHECK_FALSE(s.is_contiguous());
  CHECK_FALSE(s.is_non_overlapping_and_dense());
  Tensor rows = zeros({4, 6}).slice(0, 1, 3);
  CHECK(rows.is_contiguous());  // a block of whole rows, at an offset
  CHECK(rows.storage_offset() == 6);
  Tensor cols = zeros({4, 6}).slice(1, 1, 3);
  CHECK_FALSE(cols.is_contiguous());
  CHECK_FALSE(cols.is_non_overlapping_and_dense());
  Tensor e = zeros({3}).expand({2, 3});
  CHECK_FALSE(e.is_contiguous());
  CHECK_FALSE(e.is_non_overlapping_and_dense());
  // Size-1 dims may have any stride.
  Tensor odd = zeros({6}).as_strided({2, 1, 3}, {3, 100, 1});
  CHECK(odd.is_contiguous());
  CHECK(odd.is_non_overlapping_and_dense());
  Tensor odd_t = zeros({6}).as_strided({3, 1, 2}, {1, 77, 3});
  CHECK_FALSE(odd_t.is_contiguous());
  CHECK(odd_t.is_non_overlapping_and_dense());
  // Empty and 0-dim tensors are contiguous.
  CHECK(zeros({0, 3}).t().is_contiguous());
  CHECK(zeros({}).is_contiguous());
  CHECK(zeros({}).is_non_overlapping_and_dense());
  // A gap between rows: not dense.
  Tensor gap = zeros({10}).as_strided({2, 2}, {4, 1});
  CHECK_FALSE(gap.is_contiguous());
  CHECK_FALSE(gap.is_non_overlapping_and_dense());
}

TEST_CASE("layout: channels_last contiguity and suggest_memory_format") {
  Tensor nchw = zeros({2, 3, 4, 5});
  CHECK(nchw.is_contiguous());
  CHECK_FALSE(nchw.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(suggest_memory_format(nchw) == MemoryFormat::Contiguous);

  Tensor nhwc = empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  CHECK_FALSE(nhwc.is_contiguous());
  CHECK(nhwc.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(nhwc.is_non_overlapping_and_dense());
  CHECK(suggest_memory_format(nhwc) == MemoryFormat::ChannelsLast);

  // NHWC memory permuted to NCHW order is channels_last.
  Tensor permuted = zeros({2, 4, 5, 3}).permute({0, 3, 1, 2});
  CHECK(vec(permuted.strides()) == V{60, 1, 15, 3});
  CHECK(permuted.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(suggest_memory_format(permuted) == MemoryFormat::ChannelsLast);

  // Channels of size 1: both layouts at once; contiguous wins.
  Tensor c1 = zeros({2, 1, 4, 5});
  CHECK(c1.is_contiguous());
  CHECK(c1.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(suggest_memory_format(c1) == MemoryFormat::Contiguous);

  // Not 4-D: never channels_last.
  CHECK_FALSE(zeros({2, 3, 4}).is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(suggest_memory_format(zeros({2, 3}).t()) == MemoryFormat::Contiguous);
}

TEST_CASE("layout: a sliced channels_last tensor still suggests channels_last, as PyTorch") {
  // Known deviation: PyTorch's suggest_memory_format asks whether the strides are ordered like
  // NHWC (is_channels_last_strides_2d), not whether they are exactly NHWC-contiguous. So
  // torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)[..., :4].clone().stride() is
  // (48, 1, 12, 3); anatomy suggests Contiguous and the clone comes out (48, 16, 4, 1).
  Tensor nhwc = empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast).slice(3, 0, 4);
  REQUIRE(vec(nhwc.strides()) == V{60, 1, 15, 3});
  CHECK(suggest_memory_format(nhwc) == MemoryFormat::ChannelsLast);
  CHECK(vec(nhwc.clone().strides()) == V{48, 1, 12, 3});
  CHECK(vec(empty_like(nhwc).strides()) == V{48, 1, 12, 3});
}

TEST_CASE("layout: contiguous() and contiguous(ChannelsLast)") {
  Tensor x = arange(120, DType::Float32).view({2, 3, 4, 5});
  CHECK(x.contiguous().is_same(x));
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  CHECK(vec(cl.sizes()) == V{2, 3, 4, 5});
  CHECK(vec(cl.strides()) == V{60, 1, 15, 3});
  CHECK_FALSE(cl.is_alias_of(x));
  CHECK(values(cl) == values(x));  // same logical values
  CHECK(cl.contiguous(MemoryFormat::ChannelsLast).is_same(cl));
  Tensor back = cl.contiguous();
  CHECK(vec(back.strides()) == V{60, 20, 5, 1});
  CHECK(values(back) == values(x));
  // In memory, channels vary fastest: element (0, 1, 0, 0) is at storage index 1.
  CHECK(static_cast<const float*>(cl.data_ptr())[1] == 20.0f);

  Tensor t = arange(6, DType::Float32).view({2, 3}).t();
  Tensor tc = t.contiguous();
  CHECK(vec(tc.strides()) == V{2, 1});
  CHECK(values(tc) == D{0, 3, 1, 4, 2, 5});
  EXPECT_ERROR(ValueError, x.contiguous(MemoryFormat::Preserve), "contiguous", "preserve");
  EXPECT_ERROR(ValueError, t.contiguous(MemoryFormat::ChannelsLast), "channels_last");
}

TEST_CASE("layout: clone preserves dense layouts and copies the values") {
  Tensor t = arange(6, DType::Float32).view({2, 3}).t();
  Tensor c = t.clone();
  CHECK(vec(c.strides()) == V{1, 3});
  CHECK(values(c) == values(t));
  CHECK_FALSE(c.is_alias_of(t));
  c.fill_(0.0);
  CHECK(values(t) == D{0, 3, 1, 4, 2, 5});  // the clone is independent

  Tensor nhwc = arange(120, DType::Float32).view({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  CHECK(vec(nhwc.clone().strides()) == V{60, 1, 15, 3});
  CHECK(vec(nhwc.clone(MemoryFormat::Contiguous).strides()) == V{60, 20, 5, 1});

  Tensor strided = arange(24, DType::Float32).view({4, 6}).slice(1, 0, 6, 2);
  Tensor sc = strided.clone();
  CHECK(vec(sc.strides()) == V{3, 1});
  CHECK(values(sc) == values(strided));
  CHECK(vec(t.clone(MemoryFormat::Contiguous).strides()) == V{2, 1});

  Tensor h = tensor({1.5, 2.5}, DType::Float16);
  CHECK(h.clone().dtype() == DType::Float16);
  CHECK(values(h.clone()) == D{1.5, 2.5});
  Tensor s = scalar_tensor(4);
  CHECK(s.clone().dim() == 0);
  CHECK(s.clone().item<int64_t>() == 4);
}
