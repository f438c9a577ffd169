// Every view operator: sizes, strides and storage offset; shared storage; a shared version
// counter (a write through the view bumps the base's version and changes exactly the base
// elements the view covers); bad inputs throw the right error type and change nothing; zero-size
// and 0-dim inputs.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <set>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::storage_floats;
using anatomy_test::V;
using anatomy_test::values;
using anatomy_test::vec;

namespace {

// The storage indices a (sizes, strides, offset) layout covers.
std::set<int64_t> covered(const V& sizes, const V& strides, int64_t offset) {
  std::set<int64_t> out;
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return out;
  V index(sizes.size(), 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t pos = offset;
    for (size_t d = 0; d < sizes.size(); ++d) pos += index[d] * strides[d];
    out.insert(pos);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// `base` is an fp32 tensor whose storage holds distinct non-negative values (an arange).
// Checks v's metadata against the expected values, that v shares base's storage and version
// counter, and that fill_ through v writes exactly the storage elements the expected layout
// covers and bumps the shared version. The storage is restored afterwards.
void check_view_impl(const Tensor& base, const Tensor& v, const V& sizes, const V& strides, int64_t offset) {
  CHECK(vec(v.sizes()) == sizes);
  CHECK(vec(v.strides()) == strides);
  CHECK(v.storage_offset() == offset);
  CHECK(v.dtype() == base.dtype());
  CHECK(v.device() == base.device());
  CHECK(v.is_alias_of(base));
  CHECK(base.is_alias_of(v));
  CHECK(v.storage().get() == base.storage().get());
  CHECK(v.impl()->version_counter().get() == base.impl()->version_counter().get());
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  CHECK(v.numel() == numel);
  if (vec(v.sizes()) != sizes || vec(v.strides()) != strides || v.storage_offset() != offset) return;

  bool overlapping = false;
  for (size_t d = 0; d < sizes.size(); ++d) overlapping |= sizes[d] > 1 && strides[d] == 0;
  if (overlapping) return;  // fill_ refuses such views; tested separately

  const std::vector<float> before = storage_floats(base);
  const uint32_t version = base.version();
  v.fill_(-1.0);
  CHECK(base.version() == version + 1);
  CHECK(v.version() == base.version());
  const std::vector<float> after = storage_floats(base);
  const std::set<int64_t> written = covered(sizes, strides, offset);
  int wrong = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    float expected = written.count(static_cast<int64_t>(i)) ? -1.0f : before[i];
    if (after[i] != expected) ++wrong;
  }
  CHECK(wrong == 0);
  if (!before.empty()) std::memcpy(base.storage()->data(), before.data(), before.size() * sizeof(float));
}

// An fp32 tensor of `sizes` holding 0, 1, 2, ... in row-major order.
Tensor iota(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return arange(n, DType::Float32).view(sizes);
}

}  // namespace

#define CHECK_VIEW(base, v, ...)             \
  do {                                       \
    INFO("view checked at line ", __LINE__); \
    check_view_impl(base, v, __VA_ARGS__);   \
  } while (0)

TEST_CASE("views: view") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x, V{2, 3, 4}, V{12, 4, 1}, 0);
  Tensor a = x.view({6, 4});
  CHECK_VIEW(x, a, V{6, 4}, V{4, 1}, 0);
  Tensor b = x.view({-1, 8});
  CHECK_VIEW(x, b, V{3, 8}, V{8, 1}, 0);
  Tensor c = x.view({24});
  CHECK_VIEW(x, c, V{24}, V{1}, 0);
  Tensor d = x.view({2, 1, 12, 1});
  CHECK_VIEW(x, d, V{2, 1, 12, 1}, V{12, 12, 1, 1}, 0);
  // A non-contiguous input whose dims can be split: (2, 4) with strides (12, 1).
  Tensor s = x.select(1, 0);
  Tensor e = s.view({2, 2, 2});
  CHECK_VIEW(x, e, V{2, 2, 2}, V{12, 2, 1}, 0);
  // The offset is kept.
  Tensor f = x.select(0, 1).view({12});
  CHECK_VIEW(x, f, V{12}, V{1}, 12);
  // A transposed matrix with a size-1 dim inserted can drop it again.
  Tensor m = iota({3, 4});
  Tensor g = m.t().unsqueeze(1).view({4, 3});
  CHECK_VIEW(m, g, V{4, 3}, V{1, 4}, 0);
  // The free function is the same operator.
  CHECK_VIEW(x, anatomy::view(x, {4, 6}), V{4, 6}, V{6, 1}, 0);
}

TEST_CASE("views: view of 0-dim and zero-size tensors") {
  Tensor x = iota({2, 3, 4});
  Tensor s = x[1][2][3];
  CHECK_VIEW(x, s, V{}, V{}, 23);
  CHECK_VIEW(x, s.view({1, 1}), V{1, 1}, V{1, 1}, 23);
  CHECK_VIEW(x, s.view({-1}), V{1}, V{1}, 23);
  Tensor one = x.slice(0, 1, 2).slice(1, 2, 3).slice(2, 3, 4);
  CHECK_VIEW(x, one.view({}), V{}, V{}, 23);
  CHECK(one.view({}).item<float>() == 23.0f);

  Tensor z = zeros({0, 4});
  CHECK_VIEW(z, z.view({4, 0}), V{4, 0}, V{1, 1}, 0);
  CHECK_VIEW(z, z.view({0}), V{0}, V{1}, 0);
  CHECK_VIEW(z, z.view({2, 0, 3}), V{2, 0, 3}, V{3, 3, 1}, 0);
  // -1 is ambiguous for zero elements.
  EXPECT_ERROR_UNCHANGED(z, ValueError, z.view({-1, 0}), "view", "[-1, 0]");
}

TEST_CASE("views: view rejects bad shapes and non-viewable strides") {
  Tensor x = iota({2, 3, 4});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.view({5, 5}), "view", "[5, 5]", "24");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.view({-1, -1}), "view", "[-1, -1]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.view({-2, 12}), "view", "-2");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.view({7, -1}), "view", "[7, -1]");
  Tensor t = x.transpose(0, 1);
  EXPECT_ERROR_UNCHANGED(t, ValueError, t.view({-1}), "view", "[3, 2, 4]", "[4, 12, 1]", "reshape");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x[0][0][0].view({2}), "view", "[2]");
}

TEST_CASE("views: reshape is a view when strides allow, else a copy") {
  Tensor x = iota({2, 3, 4});
  Tensor r = x.reshape({4, 6});
  CHECK_VIEW(x, r, V{4, 6}, V{6, 1}, 0);
  CHECK_VIEW(x, x.reshape({-1}), V{24}, V{1}, 0);
  Tensor tx = x.transpose(0, 1);  // (3, 2, 4), strides (4, 12, 1)
  // Splitting the last dim is still a view.
  CHECK_VIEW(x, tx.reshape({3, 2, 2, 2}), V{3, 2, 2, 2}, V{4, 12, 2, 1}, 0);
  // Merging dims that are not adjacent in memory needs a copy.
  const uint32_t version = x.version();
  Tensor c = tx.reshape({6, 4});
  CHECK_FALSE(c.is_alias_of(x));
  CHECK(vec(c.sizes()) == V{6, 4});
  CHECK(vec(c.strides()) == V{4, 1});
  CHECK(values(c) == values(tx));
  c.fill_(-1.0);
  CHECK(x.version() == version);
  CHECK(values(x) == values(iota({2, 3, 4})));
  // 0-dim and zero-size.
  Tensor s = x[0][1][2];
  CHECK_VIEW(x, s.reshape({1}), V{1}, V{1}, 6);
  Tensor z = zeros({0, 3});
  // As PyTorch's computeStride: an empty tensor reshaped to its own shape keeps its strides.
  CHECK_VIEW(z, z.t().reshape({3, 0}), V{3, 0}, V{1, 3}, 0);
  CHECK_VIEW(z, z.t().reshape({0, 3}), V{0, 3}, V{3, 1}, 0);
  // Bad shapes.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.reshape({7, -1}), "reshape", "[7, -1]", "24");
  EXPECT_ERROR_UNCHANGED(tx, ValueError, tx.reshape({5}), "reshape", "[5]");
}

TEST_CASE("views: as_strided") {
  Tensor x = iota({12});
  Tensor a = x.as_strided({3, 3}, {2, 1}, 1);
  CHECK(values(a) == D{1, 2, 3, 3, 4, 5, 5, 6, 7});
  CHECK_VIEW(x, a, V{3, 3}, V{2, 1}, 1);
  // Without an offset it keeps the input's; an explicit offset is absolute in the storage.
  Tensor s = x.slice(0, 2);
  CHECK_VIEW(x, s.as_strided({2}, {1}), V{2}, V{1}, 2);
  CHECK_VIEW(x, s.as_strided({2}, {1}, 0), V{2}, V{1}, 0);
  // Reaching the last element exactly is fine.
  CHECK_VIEW(x, x.as_strided({2, 2}, {10, 1}, 0), V{2, 2}, V{10, 1}, 0);
  CHECK_VIEW(x, x.as_strided({1}, {1}, 11), V{1}, V{1}, 11);
  // Stride 0 (a broadcast) and a 0-dim element.
  CHECK_VIEW(x, x.as_strided({2, 3}, {0, 1}, 0), V{2, 3}, V{0, 1}, 0);
  Tensor e = x.as_strided({}, {}, 5);
  CHECK_VIEW(x, e, V{}, V{}, 5);
  CHECK(e.item<float>() == 5.0f);
  // A zero-size view may start anywhere.
  CHECK_VIEW(x, x.as_strided({0, 5}, {5, 1}, 3), V{0, 5}, V{5, 1}, 3);
  CHECK_VIEW(x, anatomy::as_strided(x, {2}, {3}, 2), V{2}, V{3}, 2);
}

TEST_CASE("views: as_strided rejects out-of-bounds, negative and mismatched arguments") {
  Tensor x = iota({12});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({4, 4}, {4, 1}, 0), "as_strided", "[4, 4]", "[4, 1]", "12");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({2}, {1}, 11), "as_strided", "11");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({13}, {1}, 0), "as_strided", "[13]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({2, 2}, {-1, 1}, 2), "as_strided", "negative stride", "-1");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({2}, {1}, -1), "as_strided", "-1");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({2, 2}, {1}), "as_strided", "[2, 2]", "[1]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({-1}, {1}), "as_strided", "-1");
  // The bound is the storage, not the view: a view of the first half may reach the second.
  Tensor half = x.slice(0, 0, 6);
  CHECK_VIEW(x, half.as_strided({6}, {1}, 6), V{6}, V{1}, 6);
  EXPECT_ERROR_UNCHANGED(half, ValueError, half.as_strided({6}, {1}, 7), "as_strided");
}

TEST_CASE("views: transpose") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.transpose(0, 2), V{4, 3, 2}, V{1, 4, 12}, 0);
  CHECK_VIEW(x, x.transpose(-1, 0), V{4, 3, 2}, V{1, 4, 12}, 0);
  CHECK_VIEW(x, x.transpose(1, 2), V{2, 4, 3}, V{12, 1, 4}, 0);
  CHECK_VIEW(x, x.transpose(1, 1), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.transpose(0, 1).transpose(0, 1), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.select(0, 1).transpose(0, 1), V{4, 3}, V{1, 4}, 12);
  CHECK(values(iota({2, 3}).transpose(0, 1)) == D{0, 3, 1, 4, 2, 5});
  // 0-dim: dims 0 and -1 name the tensor itself.
  Tensor s = x[1][0][0];
  CHECK_VIEW(x, s.transpose(0, -1), V{}, V{}, 12);
  CHECK_VIEW(x, anatomy::transpose(x, 0, 1), V{3, 2, 4}, V{4, 12, 1}, 0);
  // Zero-size.
  Tensor z = zeros({0, 3});
  CHECK_VIEW(z, z.transpose(0, 1), V{3, 0}, V{1, 3}, 0);

  EXPECT_ERROR_UNCHANGED(x, IndexError, x.transpose(0, 3), "transpose", "3");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.transpose(-4, 0), "transpose", "-4");
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.transpose(0, 1), "transpose", "1");
}

TEST_CASE("views: t, T and mT") {
  Tensor m = iota({2, 3});
  CHECK_VIEW(m, m.t(), V{3, 2}, V{1, 3}, 0);
  CHECK_VIEW(m, anatomy::t(m), V{3, 2}, V{1, 3}, 0);
  CHECK_VIEW(m, m.t().t(), V{2, 3}, V{3, 1}, 0);
  Tensor v = iota({5});
  CHECK_VIEW(v, v.t(), V{5}, V{1}, 0);
  Tensor s = v[2];
  CHECK_VIEW(v, s.t(), V{}, V{}, 2);
  Tensor x = iota({2, 3, 4});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.t(), "t", "3");

  CHECK_VIEW(x, x.T(), V{4, 3, 2}, V{1, 4, 12}, 0);
  CHECK_VIEW(m, m.T(), V{3, 2}, V{1, 3}, 0);
  CHECK_VIEW(v, v.T(), V{5}, V{1}, 0);
  CHECK_VIEW(v, s.T(), V{}, V{}, 2);

  CHECK_VIEW(x, x.mT(), V{2, 4, 3}, V{12, 1, 4}, 0);
  CHECK_VIEW(m, m.mT(), V{3, 2}, V{1, 3}, 0);
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.mT(), "mT", "1");
  EXPECT_ERROR_UNCHANGED(s, ValueError, s.mT(), "mT", "0");
}

TEST_CASE("views: permute") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.permute({2, 0, 1}), V{4, 2, 3}, V{1, 12, 4}, 0);
  CHECK_VIEW(x, x.permute({-1, 0, -2}), V{4, 2, 3}, V{1, 12, 4}, 0);
  CHECK_VIEW(x, x.permute({0, 1, 2}), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.permute({1, 2, 0}).permute({2, 0, 1}), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, anatomy::permute(x, {1, 0, 2}), V{3, 2, 4}, V{4, 12, 1}, 0);
  Tensor s = x[0][0][1];
  CHECK_VIEW(x, s.permute({}), V{}, V{}, 1);
  Tensor z = zeros({2, 0, 3});
  CHECK_VIEW(z, z.permute({2, 1, 0}), V{3, 0, 2}, V{1, 3, 3}, 0);

  EXPECT_ERROR_UNCHANGED(x, ValueError, x.permute({0, 1}), "permute", "[0, 1]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.permute({0, 0, 1}), "permute", "[0, 0, 1]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.permute({0, -3, 1}), "permute");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.permute({0, 1, 3}), "permute", "3");
  EXPECT_ERROR_UNCHANGED(s, ValueError, s.permute({0}), "permute");
}

TEST_CASE("views: permute and unsqueeze beyond the inline dims (6-D and 7-D)") {
  Tensor x = iota({1, 2, 1, 2, 1, 2});
  CHECK_VIEW(x, x.permute({5, 4, 3, 2, 1, 0}), V{2, 1, 2, 1, 2, 1}, V{1, 2, 2, 4, 4, 8}, 0);
  CHECK_VIEW(x, x.unsqueeze(6), V{1, 2, 1, 2, 1, 2, 1}, V{8, 4, 4, 2, 2, 1, 1}, 0);
  CHECK_VIEW(x, x.unsqueeze(0).squeeze(), V{2, 2, 2}, V{4, 2, 1}, 0);
  CHECK_VIEW(x, x.view({8}), V{8}, V{1}, 0);
  CHECK_VIEW(x, x.select(5, 1), V{1, 2, 1, 2, 1}, V{8, 4, 4, 2, 2}, 1);
}

TEST_CASE("views: slice with steps, negative and clamped bounds") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.slice(2, 1, 3), V{2, 3, 2}, V{12, 4, 1}, 1);
  CHECK_VIEW(x, x.slice(0, 1), V{1, 3, 4}, V{12, 4, 1}, 12);
  CHECK_VIEW(x, x.slice(), V{2, 3, 4}, V{12, 4, 1}, 0);
  // Steps.
  CHECK_VIEW(x, x.slice(2, 0, 4, 2), V{2, 3, 2}, V{12, 4, 2}, 0);
  CHECK_VIEW(x, x.slice(2, 1, std::nullopt, 2), V{2, 3, 2}, V{12, 4, 2}, 1);
  CHECK_VIEW(x, x.slice(2, 1, 4, 3), V{2, 3, 1}, V{12, 4, 3}, 1);
  CHECK_VIEW(x, x.slice(1, 0, 3, 5), V{2, 1, 4}, V{12, 20, 1}, 0);
  CHECK(values(iota({10}).slice(0, 1, 8, 3)) == D{1, 4, 7});
  // Negative bounds count from the end.
  CHECK_VIEW(x, x.slice(1, -2), V{2, 2, 4}, V{12, 4, 1}, 4);
  CHECK_VIEW(x, x.slice(1, 0, -1), V{2, 2, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.slice(-1, -3, -1), V{2, 3, 2}, V{12, 4, 1}, 1);
  // Out-of-range bounds clamp, and an empty range has size 0.
  CHECK_VIEW(x, x.slice(1, -10, 10), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.slice(1, 5, 10), V{2, 0, 4}, V{12, 4, 1}, 12);
  CHECK_VIEW(x, x.slice(1, 2, 1), V{2, 0, 4}, V{12, 4, 1}, 8);
  // Slices of slices.
  CHECK_VIEW(x, x.slice(2, 1).slice(2, 1, 3), V{2, 3, 2}, V{12, 4, 1}, 2);
  CHECK_VIEW(x, anatomy::slice(x, 0, 1, 2), V{1, 3, 4}, V{12, 4, 1}, 12);
  // Zero-size.
  Tensor z = zeros({0, 3});
  CHECK_VIEW(z, z.slice(1, 1), V{0, 2}, V{3, 1}, 1);

  EXPECT_ERROR_UNCHANGED(x, ValueError, x.slice(1, 0, 3, 0), "slice", "step", "0");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.slice(1, 0, 3, -1), "slice", "-1");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.slice(3, 0, 1), "slice", "3");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.slice(-4, 0, 1), "slice", "-4");
  Tensor s = x[0][0][0];
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.slice(0, 0, 1), "slice", "0-dim");
}

TEST_CASE("views: narrow") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.narrow(1, 1, 2), V{2, 2, 4}, V{12, 4, 1}, 4);
  CHECK_VIEW(x, x.narrow(2, -2, 2), V{2, 3, 2}, V{12, 4, 1}, 2);
  CHECK_VIEW(x, x.narrow(-1, 0, 1), V{2, 3, 1}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.narrow(1, 3, 0), V{2, 0, 4}, V{12, 4, 1}, 12);
  CHECK_VIEW(x, anatomy::narrow(x, 0, 1, 1), V{1, 3, 4}, V{12, 4, 1}, 12);

  EXPECT_ERROR_UNCHANGED(x, ValueError, x.narrow(1, 2, 2), "narrow", "2", "3");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.narrow(1, 0, -1), "narrow", "-1");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.narrow(1, 4, 0), "narrow", "4");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.narrow(1, -4, 1), "narrow", "-4");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.narrow(5, 0, 1), "narrow", "5");
  Tensor s = x[0][0][0];
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.narrow(0, 0, 1), "narrow");
}

TEST_CASE("views: select and the index operator") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.select(1, 2), V{2, 4}, V{12, 1}, 8);
  CHECK_VIEW(x, x.select(2, -1), V{2, 3}, V{12, 4}, 3);
  CHECK_VIEW(x, x.select(-3, 1), V{3, 4}, V{4, 1}, 12);
  CHECK_VIEW(x, x.select(0, -2), V{3, 4}, V{4, 1}, 0);
  CHECK_VIEW(x, x[1], V{3, 4}, V{4, 1}, 12);
  CHECK_VIEW(x, x[-1], V{3, 4}, V{4, 1}, 12);
  CHECK_VIEW(x, x[1][2], V{4}, V{1}, 20);
  Tensor e = x[1][2][3];
  CHECK_VIEW(x, e, V{}, V{}, 23);
  CHECK(x[1][2][3].item<float>() == 23.0f);
  CHECK_VIEW(x, anatomy::select(x, 2, 0), V{2, 3}, V{12, 4}, 0);
}

TEST_CASE("views: select and the index operator reject bad dims and indices") {
  Tensor x = iota({2, 3, 4});
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.select(1, 3), "select", "3");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.select(1, -4), "select", "-4");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.select(3, 0), "select", "3");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x[2], "select", "2");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x[-3], "select", "-3");
  Tensor s = x[0][0][0];
  EXPECT_ERROR_UNCHANGED(s, IndexError, s[0], "select", "0-dim");
  Tensor z = zeros({0, 3});
  EXPECT_ERROR_UNCHANGED(z, IndexError, z.select(0, 0), "select", "0");
  CHECK_VIEW(z, z.select(1, 2), V{0}, V{3}, 2);
}

TEST_CASE("views: squeeze, all dims and one dim") {
  Tensor y = iota({1, 3, 1, 2});  // strides (6, 2, 2, 1)
  CHECK_VIEW(y, y.squeeze(), V{3, 2}, V{2, 1}, 0);
  CHECK_VIEW(y, y.squeeze(0), V{3, 1, 2}, V{2, 2, 1}, 0);
  CHECK_VIEW(y, y.squeeze(-2), V{1, 3, 2}, V{6, 2, 1}, 0);
  CHECK_VIEW(y, y.squeeze(1), V{1, 3, 1, 2}, V{6, 2, 2, 1}, 0);  // size 3: unchanged
  CHECK_VIEW(y, anatomy::squeeze(y), V{3, 2}, V{2, 1}, 0);
  CHECK_VIEW(y, anatomy::squeeze(y, 2), V{1, 3, 2}, V{6, 2, 1}, 0);
  // All-ones shapes squeeze to 0-dim; 0-dim stays 0-dim.
  Tensor x = iota({2, 3, 4});
  Tensor one = x.slice(0, 1, 2).slice(1, 1, 2).slice(2, 1, 2);
  CHECK_VIEW(x, one.squeeze(), V{}, V{}, 17);
  Tensor s = x[0][0][2];
  CHECK_VIEW(x, s.squeeze(), V{}, V{}, 2);
  CHECK_VIEW(x, s.squeeze(0), V{}, V{}, 2);
  CHECK_VIEW(x, s.squeeze(-1), V{}, V{}, 2);
  // Zero-size dims are not squeezed.
  Tensor z = zeros({1, 0, 1});
  CHECK_VIEW(z, z.squeeze(), V{0}, V{1}, 0);

  EXPECT_ERROR_UNCHANGED(y, IndexError, y.squeeze(4), "squeeze", "4");
  EXPECT_ERROR_UNCHANGED(y, IndexError, y.squeeze(-5), "squeeze", "-5");
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.squeeze(1), "squeeze", "1");
}

TEST_CASE("views: unsqueeze, including negative dims") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.unsqueeze(0), V{1, 2, 3, 4}, V{24, 12, 4, 1}, 0);
  CHECK_VIEW(x, x.unsqueeze(1), V{2, 1, 3, 4}, V{12, 12, 4, 1}, 0);
  CHECK_VIEW(x, x.unsqueeze(3), V{2, 3, 4, 1}, V{12, 4, 1, 1}, 0);
  CHECK_VIEW(x, x.unsqueeze(-1), V{2, 3, 4, 1}, V{12, 4, 1, 1}, 0);
  CHECK_VIEW(x, x.unsqueeze(-4), V{1, 2, 3, 4}, V{24, 12, 4, 1}, 0);
  CHECK_VIEW(x, x.unsqueeze(-2), V{2, 3, 1, 4}, V{12, 4, 4, 1}, 0);
  // On a transposed input the new dim is contiguous with the one after it.
  CHECK_VIEW(x, x.transpose(0, 2).unsqueeze(1), V{4, 1, 3, 2}, V{1, 12, 4, 12}, 0);
  CHECK_VIEW(x, anatomy::unsqueeze(x, 2), V{2, 3, 1, 4}, V{12, 4, 4, 1}, 0);
  CHECK(x.unsqueeze(1).is_contiguous());
  // 0-dim.
  Tensor s = x[1][0][1];
  CHECK_VIEW(x, s.unsqueeze(0), V{1}, V{1}, 13);
  CHECK_VIEW(x, s.unsqueeze(-1), V{1}, V{1}, 13);
  // Zero-size.
  Tensor z = zeros({0, 3});
  CHECK_VIEW(z, z.unsqueeze(1), V{0, 1, 3}, V{3, 3, 1}, 0);

  EXPECT_ERROR_UNCHANGED(x, IndexError, x.unsqueeze(4), "unsqueeze", "4");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.unsqueeze(-5), "unsqueeze", "-5");
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.unsqueeze(1), "unsqueeze", "1");
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.unsqueeze(-2), "unsqueeze", "-2");
}

TEST_CASE("views: expand and expand_as give stride 0 on broadcast dims") {
  Tensor v = iota({3});
  CHECK_VIEW(v, v.expand({2, 3}), V{2, 3}, V{0, 1}, 0);
  CHECK_VIEW(v, v.expand({4, 2, -1}), V{4, 2, 3}, V{0, 0, 1}, 0);
  CHECK_VIEW(v, v.expand({3}), V{3}, V{1}, 0);
  CHECK_VIEW(v, v.expand({-1}), V{3}, V{1}, 0);
  CHECK(values(v.expand({2, 3})) == D{0, 1, 2, 0, 1, 2});
  Tensor col = iota({3, 1});
  CHECK_VIEW(col, col.expand({3, 4}), V{3, 4}, V{1, 0}, 0);
  CHECK_VIEW(col, col.expand({-1, 4}), V{3, 4}, V{1, 0}, 0);
  CHECK_VIEW(col, col.expand({2, 3, 4}), V{2, 3, 4}, V{0, 1, 0}, 0);
  CHECK(values(col.expand({3, 2})) == D{0, 0, 1, 1, 2, 2});
  // A size-1 dim may also expand to 0.
  CHECK_VIEW(col, col.expand({3, 0}), V{3, 0}, V{1, 0}, 0);
  // Offsets are kept.
  Tensor x = iota({2, 3});
  CHECK_VIEW(x, x[1].expand({2, 3}), V{2, 3}, V{0, 1}, 3);
  // 0-dim and zero-size inputs.
  Tensor s = x[1][1];
  CHECK_VIEW(x, s.expand({2, 2}), V{2, 2}, V{0, 0}, 4);
  CHECK(values(s.expand({2, 2})) == D{4, 4, 4, 4});
  Tensor z = zeros({0});
  CHECK_VIEW(z, z.expand({2, 0}), V{2, 0}, V{0, 1}, 0);
  // expand_as and the free function.
  CHECK_VIEW(v, v.expand_as(zeros({2, 3})), V{2, 3}, V{0, 1}, 0);
  CHECK_VIEW(v, anatomy::expand(v, {5, 3}), V{5, 3}, V{0, 1}, 0);
}

TEST_CASE("views: expand shares the version counter, writing into it is refused") {
  Tensor v = iota({3});
  Tensor e = v.expand({2, 3});
  CHECK(e.impl()->version_counter().get() == v.impl()->version_counter().get());
  const uint32_t version = v.version();
  v.fill_(5.0);
  CHECK(e.version() == version + 1);
  CHECK(values(e) == D(6, 5.0));
  v.fill_(0.0);
  EXPECT_ERROR_UNCHANGED(v, ValueError, e.fill_(1.0), "fill_", "single memory location");
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.zero_(), "fill_");
}

TEST_CASE("views: expand rejects incompatible sizes") {
  Tensor v = iota({3});
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.expand({2, 4}), "expand", "[2, 4]", "[3]");
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.expand({-1, 3}), "expand", "-1");
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.expand({2, -2}), "expand", "-2");
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.expand({}), "expand");
  Tensor col = iota({3, 1});
  EXPECT_ERROR_UNCHANGED(col, ValueError, col.expand({3}), "expand", "[3]");
  EXPECT_ERROR_UNCHANGED(col, ValueError, col.expand({2, 4}), "expand", "[2, 4]");
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.expand_as(zeros({3, 2})), "expand", "[3, 2]");
}

TEST_CASE("views: flatten") {
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.flatten(), V{24}, V{1}, 0);
  CHECK_VIEW(x, x.flatten(1), V{2, 12}, V{12, 1}, 0);
  CHECK_VIEW(x, x.flatten(0, 1), V{6, 4}, V{4, 1}, 0);
  CHECK_VIEW(x, x.flatten(-2, -1), V{2, 12}, V{12, 1}, 0);
  CHECK_VIEW(x, x.flatten(1, 1), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, anatomy::flatten(x, 0, -2), V{6, 4}, V{4, 1}, 0);
  // A non-contiguous input whose flattened dims are adjacent in memory is still a view.
  CHECK_VIEW(x, x.permute({1, 2, 0}).flatten(0, 1), V{12, 2}, V{1, 12}, 0);
  // Otherwise flatten copies.
  Tensor t = x.transpose(0, 1);
  Tensor c = t.flatten();
  CHECK_FALSE(c.is_alias_of(x));
  CHECK(values(c) == values(t));
  // 0-dim flattens to one element; zero-size.
  Tensor s = x[1][1][1];
  CHECK_VIEW(x, s.flatten(), V{1}, V{1}, 17);
  Tensor z = zeros({2, 0, 3});
  CHECK_VIEW(z, z.flatten(), V{0}, V{1}, 0);

  EXPECT_ERROR_UNCHANGED(x, ValueError, x.flatten(2, 1), "flatten", "2", "1");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.flatten(0, 3), "flatten", "3");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.flatten(-4), "flatten", "-4");
}

TEST_CASE("views: unflatten, with -1") {
  Tensor x = iota({2, 12});
  CHECK_VIEW(x, x.unflatten(1, {3, 4}), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.unflatten(1, {-1, 4}), V{2, 3, 4}, V{12, 4, 1}, 0);
  CHECK_VIEW(x, x.unflatten(-1, {2, -1, 2}), V{2, 2, 3, 2}, V{12, 6, 2, 1}, 0);
  CHECK_VIEW(x, x.unflatten(0, {1, 2}), V{1, 2, 12}, V{24, 12, 1}, 0);
  CHECK_VIEW(x, x.unflatten(1, {12}), V{2, 12}, V{12, 1}, 0);
  CHECK_VIEW(x, anatomy::unflatten(x, 1, {6, 2}), V{2, 6, 2}, V{12, 2, 1}, 0);
  // A non-contiguous input: unflattening a strided dim keeps its stride.
  Tensor t = x.t();  // (12, 2), strides (1, 12)
  CHECK_VIEW(x, t.unflatten(0, {3, 4}), V{3, 4, 2}, V{4, 1, 12}, 0);
  Tensor z = zeros({0, 6});
  CHECK_VIEW(z, z.unflatten(1, {2, 3}), V{0, 2, 3}, V{6, 3, 1}, 0);

  EXPECT_ERROR_UNCHANGED(x, ValueError, x.unflatten(1, {5, -1}), "unflatten", "[5, -1]", "12");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.unflatten(1, {5, 2}), "unflatten", "[5, 2]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.unflatten(1, {}), "unflatten");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.unflatten(2, {1, 1}), "unflatten", "2");
  Tensor s = x[0][0];
  EXPECT_ERROR_UNCHANGED(s, IndexError, s.unflatten(0, {1}), "unflatten");
}

TEST_CASE("views: unfold") {
  Tensor a = iota({7});
  Tensor w = a.unfold(0, 3, 2);
  CHECK(values(w) == D{0, 1, 2, 2, 3, 4, 4, 5, 6});
  CHECK_VIEW(a, w, V{3, 3}, V{2, 1}, 0);
  CHECK_VIEW(a, a.unfold(0, 3, 3), V{2, 3}, V{3, 1}, 0);
  CHECK_VIEW(a, a.unfold(0, 7, 1), V{1, 7}, V{1, 1}, 0);
  CHECK_VIEW(a, a.unfold(0, 0, 1), V{8, 0}, V{1, 1}, 0);
  Tensor m = iota({3, 4});
  CHECK_VIEW(m, m.unfold(1, 2, 1), V{3, 3, 2}, V{4, 1, 1}, 0);
  CHECK_VIEW(m, m.unfold(0, 2, 1), V{2, 4, 2}, V{4, 1, 4}, 0);
  CHECK_VIEW(m, m.unfold(-1, 2, 2), V{3, 2, 2}, V{4, 2, 1}, 0);
  CHECK_VIEW(m, anatomy::unfold(m[1], 0, 2, 2), V{2, 2}, V{2, 1}, 4);
  // 0-dim: one window of size 1 (or 0).
  Tensor s = m[2][3];
  CHECK_VIEW(m, s.unfold(0, 1, 1), V{1}, V{1}, 11);

  EXPECT_ERROR_UNCHANGED(a, ValueError, a.unfold(0, 8, 1), "unfold", "8", "7");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.unfold(0, -1, 1), "unfold", "-1");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.unfold(0, 2, 0), "unfold", "step", "0");
  EXPECT_ERROR_UNCHANGED(a, IndexError, a.unfold(1, 2, 1), "unfold", "1");
  EXPECT_ERROR_UNCHANGED(s, ValueError, s.unfold(0, 2, 1), "unfold", "2");
}

TEST_CASE("views: diagonal with offsets and dims") {
  Tensor m = iota({3, 4});
  Tensor d = m.diagonal();
  CHECK(values(d) == D{0, 5, 10});
  CHECK_VIEW(m, d, V{3}, V{5}, 0);
  CHECK(values(m.diagonal(1)) == D{1, 6, 11});
  CHECK_VIEW(m, m.diagonal(1), V{3}, V{5}, 1);
  CHECK_VIEW(m, m.diagonal(2), V{2}, V{5}, 2);
  CHECK(values(m.diagonal(-1)) == D{4, 9});
  CHECK_VIEW(m, m.diagonal(-1), V{2}, V{5}, 4);
  CHECK_VIEW(m, m.diagonal(-2), V{1}, V{5}, 8);
  // Past the edges: empty.
  CHECK_VIEW(m, m.diagonal(4), V{0}, V{5}, 0);
  CHECK_VIEW(m, m.diagonal(-3), V{0}, V{5}, 0);
  // Swapped dims read the transpose's diagonal.
  CHECK_VIEW(m, m.diagonal(0, 1, 0), V{3}, V{5}, 0);
  CHECK(values(m.diagonal(1, 1, 0)) == D{4, 9});
  CHECK_VIEW(m, m.diagonal(1, -1, -2), V{2}, V{5}, 4);
  // 3-D: the diagonal dim goes last.
  Tensor x = iota({2, 3, 4});
  CHECK_VIEW(x, x.diagonal(0, 1, 2), V{2, 3}, V{12, 5}, 0);
  CHECK_VIEW(x, x.diagonal(1, 0, 2), V{3, 2}, V{4, 13}, 1);
  CHECK_VIEW(x, x.diagonal(-1, 0, 1), V{4, 1}, V{1, 16}, 12);
  CHECK_VIEW(x, anatomy::diagonal(x, 0, 0, 2), V{3, 2}, V{4, 13}, 0);
  Tensor z = zeros({0, 3});
  CHECK_VIEW(z, z.diagonal(), V{0}, V{4}, 0);

  EXPECT_ERROR_UNCHANGED(m, ValueError, m.diagonal(0, 0, 0), "diagonal", "0");
  EXPECT_ERROR_UNCHANGED(m, ValueError, m.diagonal(0, 1, -1), "diagonal", "1");
  EXPECT_ERROR_UNCHANGED(m, IndexError, m.diagonal(0, 0, 2), "diagonal", "2");
  EXPECT_ERROR_UNCHANGED(m, IndexError, m.diagonal(0, -3, 1), "diagonal", "-3");
  Tensor v = iota({3});
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.diagonal(), "diagonal", "1");
}

TEST_CASE("views: split") {
  Tensor a = iota({5, 2});
  auto parts = a.split(2);
  REQUIRE(parts.size() == 3);
  CHECK_VIEW(a, parts[0], V{2, 2}, V{2, 1}, 0);
  CHECK_VIEW(a, parts[1], V{2, 2}, V{2, 1}, 4);
  CHECK_VIEW(a, parts[2], V{1, 2}, V{2, 1}, 8);
  auto cols = a.split(1, 1);
  REQUIRE(cols.size() == 2);
  CHECK_VIEW(a, cols[0], V{5, 1}, V{2, 1}, 0);
  CHECK_VIEW(a, cols[1], V{5, 1}, V{2, 1}, 1);
  auto whole = a.split(10);
  REQUIRE(whole.size() == 1);
  CHECK_VIEW(a, whole[0], V{5, 2}, V{2, 1}, 0);
  auto neg = anatomy::split(a, 3, -2);
  REQUIRE(neg.size() == 2);
  CHECK_VIEW(a, neg[1], V{2, 2}, V{2, 1}, 6);
  // A zero-size dim gives one empty piece.
  Tensor z = zeros({0, 2});
  auto zp = z.split(2);
  REQUIRE(zp.size() == 1);
  CHECK_VIEW(z, zp[0], V{0, 2}, V{2, 1}, 0);
  CHECK(z.split(0).size() == 1);

  EXPECT_ERROR_UNCHANGED(a, ValueError, a.split(0), "split", "0");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.split(-1), "split", "-1");
  EXPECT_ERROR_UNCHANGED(a, IndexError, a.split(1, 2), "split", "2");
  Tensor s = a[0][0];
  EXPECT_ERROR_UNCHANGED(s, ValueError, s.split(1), "split", "0-dim");
}

TEST_CASE("views: split_with_sizes") {
  Tensor a = iota({5, 2});
  auto p = a.split_with_sizes({1, 4});
  REQUIRE(p.size() == 2);
  CHECK_VIEW(a, p[0], V{1, 2}, V{2, 1}, 0);
  CHECK_VIEW(a, p[1], V{4, 2}, V{2, 1}, 2);
  auto q = a.split_with_sizes({0, 2, 0, 3});
  REQUIRE(q.size() == 4);
  CHECK_VIEW(a, q[0], V{0, 2}, V{2, 1}, 0);
  CHECK_VIEW(a, q[1], V{2, 2}, V{2, 1}, 0);
  CHECK_VIEW(a, q[2], V{0, 2}, V{2, 1}, 4);
  CHECK_VIEW(a, q[3], V{3, 2}, V{2, 1}, 4);
  auto r = anatomy::split_with_sizes(a, {1, 1}, 1);
  REQUIRE(r.size() == 2);
  CHECK_VIEW(a, r[1], V{5, 1}, V{2, 1}, 1);
  CHECK(values(r[1]) == D{1, 3, 5, 7, 9});

  EXPECT_ERROR_UNCHANGED(a, ValueError, a.split_with_sizes({1, 2}), "split", "[1, 2]", "3", "5");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.split_with_sizes({6, -1}), "split", "-1");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.split_with_sizes({2, 1}, 1), "split", "[2, 1]");
  EXPECT_ERROR_UNCHANGED(a, IndexError, a.split_with_sizes({5}, 2), "split", "2");
}

TEST_CASE("views: chunk, even and uneven") {
  Tensor a = iota({10});
  auto c3 = a.chunk(3);
  REQUIRE(c3.size() == 3);
  CHECK_VIEW(a, c3[0], V{4}, V{1}, 0);
  CHECK_VIEW(a, c3[1], V{4}, V{1}, 4);
  CHECK_VIEW(a, c3[2], V{2}, V{1}, 8);
  auto c4 = a.chunk(4);  // split size 3: 3, 3, 3, 1
  REQUIRE(c4.size() == 4);
  CHECK_VIEW(a, c4[3], V{1}, V{1}, 9);
  auto c5 = a.chunk(5);
  REQUIRE(c5.size() == 5);
  CHECK_VIEW(a, c5[4], V{2}, V{1}, 8);
  // Fewer chunks than asked when the split size rounds up: torch.arange(6).chunk(4) has 3.
  CHECK(iota({6}).chunk(4).size() == 3);
  CHECK(a.chunk(20).size() == 10);
  Tensor m = iota({2, 6});
  auto mc = m.chunk(2, -1);
  REQUIRE(mc.size() == 2);
  CHECK_VIEW(m, mc[1], V{2, 3}, V{6, 1}, 3);
  CHECK_VIEW(m, anatomy::chunk(m, 2)[1], V{1, 6}, V{6, 1}, 6);
  // An empty dim gives `chunks` empty pieces, as PyTorch.
  Tensor z = zeros({0});
  auto zc = z.chunk(3);
  REQUIRE(zc.size() == 3);
  for (const Tensor& piece : zc) CHECK_VIEW(z, piece, V{0}, V{1}, 0);

  EXPECT_ERROR_UNCHANGED(a, ValueError, a.chunk(0), "chunk", "0");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.chunk(-2), "chunk", "-2");
  EXPECT_ERROR_UNCHANGED(a, IndexError, a.chunk(2, 1), "chunk", "1");
  Tensor s = a[3];
  EXPECT_ERROR_UNCHANGED(s, ValueError, s.chunk(1), "chunk", "0-dim");
}

TEST_CASE("views: chains of views share storage and version with the original") {
  Tensor x = iota({2, 3, 4});
  // permute -> (4, 2, 3) strides (1, 12, 4); slice dim 0 [1, 3) -> offset 1; select dim 1
  // index 1 -> (2, 3) strides (1, 4) offset 13; unsqueeze(0) -> stride 2 * 1.
  Tensor v = x.permute({2, 0, 1}).slice(0, 1, 3).select(1, 1).unsqueeze(0);
  CHECK_VIEW(x, v, V{1, 2, 3}, V{2, 1, 4}, 13);
  CHECK(values(v) == D{13, 17, 21, 14, 18, 22});
  // The intermediate views are gone; the storage and counter live on through v.
  const uint32_t version = x.version();
  Tensor base_alias = x.view({24});
  v.zero_();
  CHECK(base_alias.version() == version + 1);
  CHECK(x.version() == version + 1);
  CHECK(values(x[1][1]) == D{16, 0, 0, 19});
  // Views of a view of a from_blob tensor also share the caller's memory.
  float buf[6] = {0, 1, 2, 3, 4, 5};
  Tensor b = from_blob(buf, {2, 3});
  b.t().select(0, 2).fill_(-1.0);
  CHECK(buf[2] == -1.0f);
  CHECK(buf[5] == -1.0f);
  CHECK(b.version() == 1);
}

TEST_CASE("views: views of fp16 and int64 tensors keep the dtype and element offsets") {
  Tensor h = arange(12, DType::Float16).view({3, 4});
  Tensor hv = h.slice(1, 1).t();
  CHECK(hv.dtype() == DType::Float16);
  CHECK(hv.storage_offset() == 1);
  CHECK(static_cast<const char*>(hv.data_ptr()) - static_cast<const char*>(h.data_ptr()) == 2);
  CHECK(values(hv) == D{1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor i = arange(12).view({3, 4});
  Tensor iv = i.select(0, 2).slice(0, 1, 4, 2);
  CHECK(iv.dtype() == DType::Int64);
  CHECK(static_cast<const char*>(iv.data_ptr()) - static_cast<const char*>(i.data_ptr()) == 9 * 8);
  CHECK(values(iv) == D{9, 11});
}

TEST_CASE("views: huge arguments never overflow into wrong or out-of-bounds views") {
  // Size arithmetic near int64's limits. None of these checks touches the data of the view it
  // gets, so a missing check fails the test without reading out of bounds.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Tensor x = iota({10});
  // narrow: start + length overflows and passes the bound check (gives an empty view).
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.narrow(0, 1, kMax), "narrow");
  // slice: (end - start + step - 1) / step overflows; x[0:2:huge] is one element, not size -1.
  Tensor s = x.slice(0, 0, 2, kMax);
  CHECK(vec(s.sizes()) == V{1});
  CHECK(vec(x.slice(0, 1, 10, kMax).sizes()) == V{1});
  // split_with_sizes: the sizes' sum wraps around to 10, and pieces of size 2^63 - 1 come out.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.split_with_sizes({kMax, kMax, 12}), "split");
  // expand: the element count 2^64 wraps to 0 (PyTorch: "numel: integer multiplication overflow").
  Tensor e = x[0];
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.expand({int64_t{1} << 32, int64_t{1} << 32}), "expand");
  // as_strided: (size - 1) * stride overflows, so the bound check passes for a view that
  // reaches 2^62 elements past a 10-element storage.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({5}, {int64_t{1} << 62}), "as_strided");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.as_strided({3}, {int64_t{1} << 62}), "as_strided");
}
