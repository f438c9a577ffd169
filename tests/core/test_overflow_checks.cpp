// Size, stride, offset and element-count arithmetic near int64's limits (the fuzzer's
// findings): each call either gives self-consistent metadata or throws the engine's typed error
// naming the operator the user called, with its input unchanged. Under UBSan (the sanitizer
// build aborts on signed overflow) a missed check fails the whole run, not just a CHECK.
#include <doctest/doctest.h>

#include <limits>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::V;
using anatomy_test::values;
using anatomy_test::vec;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2to61 = int64_t{1} << 61, k2to62 = int64_t{1} << 62;

// Every stride and the offset are non-negative, and every element of a CPU tensor can be read
// (values() walks the tensor's own metadata).
void check_sane(const Tensor& t) {
  for (int64_t s : t.strides()) CHECK(s >= 0);
  CHECK(t.storage_offset() >= 0);
  CHECK(values(t).size() == static_cast<size_t>(t.numel()));
}
}  // namespace

TEST_CASE("overflow: factories refuse shapes whose strides overflow and name themselves") {
  // The product of the sizes, an empty dim counting as 1, is the outermost stride's bound.
  EXPECT_ERROR(ValueError, empty({0, kMax, 2}), "empty", "[0, 9223372036854775807, 2]", "strides");
  EXPECT_ERROR(ValueError, rand({3, 0, kMax, 0}), "rand", "[3, 0, 9223372036854775807, 0]", "strides");
  EXPECT_ERROR(ValueError, zeros({0, kMax, 2}), "zeros", "strides");
  EXPECT_ERROR(ValueError, ones({0, kMax, 2}), "ones", "strides");
  EXPECT_ERROR(ValueError, full({0, kMax, 2}, 1.0), "full", "strides");
  EXPECT_ERROR(ValueError, randn({0, kMax, 2}), "randn", "strides");
  EXPECT_ERROR(ValueError, randint(0, 3, {0, kMax, 2}), "randint", "strides");
  EXPECT_ERROR(ValueError, empty({0, k2to62, 4}, Device("meta")), "empty", "strides");
  EXPECT_ERROR(ValueError, empty({0, 2, k2to62, 2}, {}, MemoryFormat::ChannelsLast), "empty", "strides");
  // eye is zeros of (n, m): the count n * m is eye's to refuse.
  EXPECT_ERROR(ValueError, eye(kMax, 2), "eye", "overflow");
  // What PyTorch accepts stays accepted: strides that fit, a huge dim beside an empty one.
  Tensor a = empty({kMax, 0});
  CHECK(vec(a.strides()) == V{1, 1});
  Tensor f = empty({0, k2to62});
  CHECK(vec(f.strides()) == V{k2to62, 1});
  // Its view at the end of the long dim starts 2^62 float32s in: past int64 bytes.
  EXPECT_ERROR_UNCHANGED(f, ValueError, f.slice(1, k2to62), "slice", "4611686018427387904", "bytes");
  Tensor b = zeros({0, k2to61}, DType::Int8);
  CHECK(vec(b.strides()) == V{k2to61, 1});
  CHECK(b.numel() == 0);
}

TEST_CASE("overflow: unfold with a huge step keeps a valid stride") {
  Tensor x = zeros({3, 2});
  // One window along dim 0: stride 2 * (2^63 - 1) overflowed into -2.
  Tensor u = x.unfold(0, 1, kMax);
  CHECK(vec(u.sizes()) == V{1, 2, 1});
  CHECK(vec(u.strides()) == V{2, 1, 2});
  check_sane(u);
}

TEST_CASE("overflow: unfold of an expanded dim whose window count overflows") {
  Tensor x = zeros({1}).expand({k2to62});
  // 2^61 + 1 windows of 2^61 elements: 2^122 elements.
  // (Not EXPECT_ERROR_UNCHANGED: its snapshot would read all 2^62 elements.)
  EXPECT_ERROR(ValueError, x.unfold(0, k2to61, 1), "unfold", "overflows int64 elements");
  CHECK(vec(x.sizes()) == V{k2to62});
}

TEST_CASE("overflow: a slice with a huge step copies") {
  Tensor x = arange(100, TensorOptions().dtype(DType::Float32)).view({5, 5, 4});
  Tensor s = x.slice(2, -1, 4, kMax);
  CHECK(vec(s.sizes()) == V{5, 5, 1});
  Tensor c = s.contiguous();
  CHECK(vec(c.sizes()) == V{5, 5, 1});
  D want;
  for (int i = 0; i < 25; ++i) want.push_back(4.0 * i + 3);
  CHECK(values(c) == want);
  // PyTorch's stride, 2^63 - 1, is kept when the loop's step past it fits; at offset 2 it would not.
  Tensor u = arange(6, TensorOptions().dtype(DType::UInt8)).view({3, 2});
  Tensor one = u.slice(-1, 0, 2, kMax);
  CHECK(vec(one.strides()) == V{2, 1});
  CHECK(values(one.contiguous()) == D{0, 2, 4});
  Tensor first = u.view({6}).slice(0, 0, 1, kMax);
  CHECK(vec(first.strides()) == V{kMax});
  CHECK(values(first.contiguous()) == D{0});
}

TEST_CASE("overflow: repeat refuses counts whose result overflows") {
  Tensor x = ones({2});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.repeat({kMax}), "repeat", "9223372036854775807");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.repeat({k2to62, 4}), "repeat", "overflow");
  // A zero repeat beside a huge one is empty, as long as its strides exist.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.repeat({0, kMax, 2}), "repeat", "strides");
  CHECK(vec(x.repeat({0, int64_t{1} << 59}).sizes()) == V{0, int64_t{1} << 60});
}

TEST_CASE("overflow: constant_pad_nd refuses pads whose sizes overflow") {
  Tensor x = ones({2});
  EXPECT_ERROR_UNCHANGED(x, ValueError, constant_pad_nd(x, {kMax, 1}), "constant_pad_nd", "9223372036854775807",
                         "overflow");
  // 2 + INT64_MIN + INT64_MAX is 1, but cropping 2^63 elements is not a count int64 holds.
  EXPECT_ERROR_UNCHANGED(x, ValueError, constant_pad_nd(x, {kMin, kMax}), "constant_pad_nd", "overflow");
  EXPECT_ERROR_UNCHANGED(x, ValueError, constant_pad_nd(x, {kMax, kMin}), "constant_pad_nd", "overflow");
  EXPECT_ERROR_UNCHANGED(x, ValueError, constant_pad_nd(x, {kMin, kMin}), "constant_pad_nd", "overflow");
  // Large pads that fit are still padding: the error is the allocator's, named after the op.
  EXPECT_ERROR_UNCHANGED(x, OutOfMemoryError, constant_pad_nd(x, {k2to61, 0}), "constant_pad_nd", "too large");
}

TEST_CASE("overflow: chunk with a huge count") {
  Tensor x = zeros({4});
  // ceil(4 / chunks) without forming 4 + chunks - 1: four chunks of one.
  for (int64_t chunks : {kMax, kMax - 1, int64_t{5}}) {
    auto parts = x.chunk(chunks);
    REQUIRE(parts.size() == 4);
    for (const Tensor& p : parts) CHECK(vec(p.sizes()) == V{1});
  }
  // An empty dim gives `chunks` empty tensors (PyTorch's rule) up to what one call can return.
  CHECK(zeros({0}).chunk(3).size() == 3);
  Tensor e = zeros({0});
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.chunk(int64_t{1} << 40), "chunk", "1099511627776");
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.chunk(kMax - 1), "chunk", "9223372036854775806");
  // split of a dim expanded past any memory: refused before anything is allocated.
  Tensor big = zeros({1}).expand({int64_t{1} << 40});
  EXPECT_ERROR(ValueError, big.split(1), "split", "1099511627776");
  EXPECT_ERROR(ValueError, big.chunk(kMax), "chunk");
}

TEST_CASE("overflow: arange whose step times index does not fit int64") {
  Tensor a = arange(kMin, kMax, k2to62);
  REQUIRE(a.numel() == 4);
  const int64_t* p = static_cast<const int64_t*>(a.data_ptr());
  CHECK(p[0] == kMin);
  CHECK(p[1] == -k2to62);
  CHECK(p[2] == 0);
  CHECK(p[3] == k2to62);
  Tensor d = arange(kMax, kMin, -k2to62);
  REQUIRE(d.numel() == 4);
  CHECK(static_cast<const int64_t*>(d.data_ptr())[3] == -k2to62 - 1);
}

TEST_CASE("overflow: as_strided refuses empty views past int64 bytes or far past their storage") {
  Tensor x = zeros({4});
  Tensor x8 = zeros({4}, DType::Int8);
  // Offset 2^62 float32s: past int64 bytes, though no element is ever read.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({0, 2}, {1, k2to61}, k2to62), "as_strided", "[0, 2]",
                         "2305843009213693952", "4611686018427387904");
  // The furthest element it would reach with no empty dim: 2 * 2^62.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({0, 3}, {1, k2to62}, 0), "as_strided");
  // A stride of a one-element dim counts too: loops over the view step once past it.
  EXPECT_ERROR_UNCHANGED(x8, ValueError, x8.as_strided({1}, {kMax}, 1), "as_strided");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({0}, {1}, kMax), "as_strided");
  // empty_strided follows the same rule.
  EXPECT_ERROR(ValueError, empty_strided({0, 3}, {1, k2to62}), "empty_strided");
  // An empty view far past its storage (PyTorch accepts any offset for one; its backward would
  // allocate up to the offset), whatever its dtype.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({0, 3}, {0, 1}, int64_t{1} << 40), "as_strided", "1099511627776",
                         "past its storage");
  EXPECT_ERROR_UNCHANGED(x8, ValueError, x8.as_strided({0, 2}, {1, k2to61}, k2to62), "as_strided", "past its storage");
  // Slicing to the end of each dim leaves an empty view up to one stride a dim past the storage
  // (15 in a storage of 12): autograd replays such views with as_strided.
  Tensor y = zeros({3, 4});
  Tensor e = y.slice(1, 3, 4).slice(0, 3, 3);
  CHECK(e.storage_offset() == 15);
  CHECK(y.as_strided(e.sizes(), e.strides(), e.storage_offset()).storage_offset() == 15);
}

TEST_CASE("overflow: views of an empty view with huge strides give typed errors or valid views") {
  // Accepted by as_strided (its extent, offset + sum of size * stride, is 2^62), but views of
  // views can step further: each computes its offset and strides with checked arithmetic.
  Tensor base = zeros({4}, DType::Int8);
  Tensor v = base.as_strided({0, 2}, {1, k2to61}, 0);
  Tensor u = v.unsqueeze(1).unsqueeze(1);  // [0, 1, 1, 2], strides [1, 2^62, 2^62, 2^61]
  CHECK(vec(u.strides()) == V{1, k2to62, k2to62, k2to61});
  Tensor u1 = u.slice(1, 1, 1);  // offset 2^62
  CHECK(u1.storage_offset() == k2to62);
  EXPECT_ERROR_UNCHANGED(u1, ValueError, u1.slice(2, 1, 1), "slice", "overflows");
  EXPECT_ERROR_UNCHANGED(u1, ValueError, u1.narrow(2, 1, 0), "narrow", "overflows");
  EXPECT_ERROR_UNCHANGED(u1, ValueError, u1.split_with_sizes({1, 0}, 2), "split", "overflow");
  Tensor w = base.as_strided({0, 3}, {1, k2to61}, 0).slice(1, 0, 3, 2);  // [0, 2], strides [1, 2^62]
  EXPECT_ERROR_UNCHANGED(w, ValueError, w.unsqueeze(1), "unsqueeze", "overflow");
  // What fits stays a view.
  CHECK(v.select(1, 1).storage_offset() == k2to61);
  CHECK(vec(v.t().strides()) == V{k2to61, 1});
  CHECK(v.diagonal().numel() == 0);
  CHECK(v.split(1, 1).size() == 2);
}

TEST_CASE("overflow: ops on an empty view with huge strides see no elements") {
  Tensor v = zeros({4}, DType::Int8).as_strided({0, 2}, {1, k2to61}, 0);
  const std::vector<Tensor> results = {v + v,
                                       v.sum(),
                                       v.contiguous(),
                                       v.clone(),
                                       v.flatten(),
                                       v.reshape({-1}),
                                       v.view({2, 0}),
                                       v.expand({3, 0, 2}),
                                       v.t() * 2,
                                       v.unsqueeze(0).squeeze(0),
                                       v.to(DType::Float32),
                                       v.unsqueeze(1).sum()};
  for (const Tensor& r : results) CHECK(values(r).size() == static_cast<size_t>(r.numel()));
  CHECK(v.index({Tensor(), tensor({int64_t{1}})}).numel() == 0);
  v.index_put_({Tensor(), tensor({int64_t{1}})}, Scalar(1));
  v.copy_(zeros({0, 2}, DType::Int8));
  v.fill_(3);
  CHECK(matmul(v.to(DType::Float32), ones({2, 3})).numel() == 0);
}

TEST_CASE("overflow: view and reshape of an empty tensor need strides for the new shape") {
  Tensor e = zeros({0});
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.view({0, kMax, 2}), "view", "strides");
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.reshape({0, kMax, 2}), "reshape", "strides");
  CHECK(vec(e.view({kMax, 0}).strides()) == V{1, 1});
  // flatten multiplies the sizes it merges, which fit since the shape's strides do.
  Tensor z = zeros({0, 1, 1}).expand({0, k2to61, 2});
  CHECK(vec(z.flatten(1).sizes()) == V{0, k2to62});
}

TEST_CASE("overflow: out of memory names the operator the user called") {
  // 2^63 bytes: each allocator refuses before asking the system, so this runs under sanitizers.
  EXPECT_ERROR(OutOfMemoryError, empty({k2to61}), "empty: cpu allocator", "too large");
  EXPECT_ERROR(OutOfMemoryError, zeros({k2to61}), "zeros: cpu allocator", "too large");
  EXPECT_ERROR(OutOfMemoryError, ones({k2to61}), "ones: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, full({k2to61}, 2.0f), "full: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, rand({k2to61}), "rand: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, randn({k2to61}), "randn: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, randint(0, 2, {k2to61}, DType::Int32), "randint: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, eye(k2to61, 1), "eye: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, arange(k2to61, TensorOptions().dtype(DType::Float32)), "arange: cpu allocator");
  Tensor big = zeros({1}).expand({k2to61});
  EXPECT_ERROR(OutOfMemoryError, zeros_like(big), "zeros_like: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, big.contiguous(), "cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, big + 1, "add: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, ones({2}).repeat({int64_t{1} << 60}), "repeat: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, one_hot(tensor({int64_t{0}}), int64_t{1} << 60), "one_hot: cpu allocator");
  // A reduction allocates its result through empty_strided.
  Tensor wide = zeros({1, 1}).expand({k2to61, 2});
  EXPECT_ERROR(OutOfMemoryError, wide.sum({1}), "sum: cpu allocator");
  EXPECT_ERROR(OutOfMemoryError, wide.amax({1}), "amax: cpu allocator");
}

TEST_CASE("overflow: composites name themselves and not the operators they call") {
  Tensor x = ones({2});
  // repeat checks its result's size itself, before the empty it calls could.
  std::string msg = EXPECT_ERROR(ValueError, x.repeat({kMax}), "repeat");
  CHECK(msg.rfind("repeat:", 0) == 0);
  msg = EXPECT_ERROR(ValueError, one_hot(tensor({int64_t{0}, int64_t{1}}), kMax), "one_hot");
  CHECK(msg.rfind("one_hot:", 0) == 0);
  // linear's bias broadcasts into the product's shape: linear's error, not add's.
  msg = EXPECT_ERROR(ValueError, linear(ones({2, 3}), ones({3}), ones({5})), "linear", "[5]");
  CHECK(msg.rfind("linear:", 0) == 0);
  msg = EXPECT_ERROR(ValueError, linear(ones({4, 2, 3}), ones({6, 3}), ones({5})), "linear", "[5]");
  CHECK(msg.rfind("linear:", 0) == 0);
  // chunk computes its split size without overflow, so split never sees a zero.
  CHECK(zeros({4}).chunk(kMax).size() == 4);
}

TEST_CASE("overflow: every shape has int64 strides") {
  // The product of the sizes with an empty dim counting as 1 fits int64 for every tensor, so any
  // product of some of its sizes does too (a reduction's kept dims, flatten's merged ones).
  Tensor one = zeros({1, 1, 1});
  EXPECT_ERROR_UNCHANGED(one, ValueError, one.expand({0, k2to62, 4}), "expand", "strides");
  CHECK(vec(one.expand({0, k2to62, 1}).sizes()) == V{0, k2to62, 1});
  EXPECT_ERROR(ValueError, zeros({4}).as_strided({0, k2to62, 4}, {0, 0, 0}), "as_strided", "strides");
  // Broadcasting two valid shapes: an empty result whose strides would overflow is add's error.
  Tensor a = zeros({1, 1, 1}).expand({int64_t{1} << 40, 1, 0});
  Tensor b = zeros({1, 1, 1}).expand({1, int64_t{1} << 40, 1});
  EXPECT_ERROR(ValueError, a + b, "add", "overflow");
  Tensor c = zeros({1, 1}).expand({int64_t{1} << 40, 1}), d = zeros({1, 1}).expand({1, int64_t{1} << 40});
  EXPECT_ERROR(ValueError, c + d, "add", "overflow");
}

TEST_CASE("overflow: element-wise ops and reductions of an empty tensor with huge strides") {
  // Strides [2^62, 1] are fine in elements but not in float32 bytes: nothing may turn them
  // into byte strides when there is nothing to walk.
  Tensor ft = empty({0, k2to62}).t();
  CHECK((ft + 1).numel() == 0);
  CHECK((ft * ft).numel() == 0);
  CHECK(ft.contiguous().numel() == 0);
  CHECK(values(ft.sum()) == D{0});
  CHECK(ft.sum({0}).numel() == 0);
  CHECK(to_string(ft).find("[]") != std::string::npos);
  CHECK(to_string(empty({kMax, 0})).find("[]") != std::string::npos);
  Tensor e = zeros({1, 1, 1}).expand({0, k2to61, 2});
  CHECK(vec(e.sum({1}).sizes()) == V{0, 2});
  CHECK(vec(e.sum({2}).sizes()) == V{0, k2to61});
  CHECK(vec(e.amax({1}).sizes()) == V{0, 2});
}

TEST_CASE("overflow: cat adds sizes with a check and copies no empty piece") {
  Tensor a = zeros({1}).expand({k2to62});
  EXPECT_ERROR(ValueError, cat({a, a}, 0), "cat", "overflow");
  // The gradient of a split of a broadcast empty tensor: cat of empty pieces whose places in
  // the [2^63 - 1, 0] result start past int64 bytes.
  Tensor x = zeros({0}).requires_grad_();
  std::vector<Tensor> pieces = x.expand({kMax, 0}).split_with_sizes({k2to62, k2to62 - 1}, 0);
  (pieces[0].sum() + pieces[1].sum()).backward();
  CHECK(vec(x.grad().sizes()) == V{0});
}
