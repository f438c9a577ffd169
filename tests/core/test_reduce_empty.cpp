// Reductions over an empty extent: those without an identity (max, min, the inf-norms) refuse
// it with a message that names the empty dim; the others return their identity.
#include <doctest/doctest.h>

#include <cmath>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

TEST_CASE("norm of an empty extent: p = inf and -inf refuse it, other p give 0") {
  const Tensor x = empty({0});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.norm(INFINITY), "norm", "inf norm", "[0]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.norm(-INFINITY), "norm", "-inf norm", "[0]");
  const Tensor rows = empty({0, 3});
  EXPECT_ERROR(ValueError, rows.norm(INFINITY, {0}), "norm", "[0, 3]");
  CHECK(rows.norm(INFINITY, {1}).sizes() == IntArrayRef({0}));  // nothing empty is reduced
  CHECK(x.norm(2).item<double>() == 0);
  CHECK(x.norm(1).item<double>() == 0);
}

TEST_CASE("amax and amin of an empty tensor over every dim name the dim of size 0") {
  const Tensor x = empty({2, 0, 3});
  EXPECT_ERROR(IndexError, x.amax(), "amax", "reduction dim 1", "[2, 0, 3]");
  EXPECT_ERROR(IndexError, x.amin({-2}), "amin", "reduction dim 1", "[2, 0, 3]");
  EXPECT_ERROR(IndexError, x.amax({0, 1}), "amax", "reduction dim 1");
  CHECK(x.amax({0, 2}).sizes() == IntArrayRef({0}));
}
