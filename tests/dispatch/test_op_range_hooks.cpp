// The dispatcher's op-range hooks (dispatch/current_op.h), which the CUDA backend's NVTX op
// ranges use: every call pushes its operator's name and pops it when done, nested calls inside,
// redispatches not counted twice; removing the hooks stops them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/dispatch/current_op.h"

using namespace anatomy;

namespace {

std::vector<std::string> g_events;
void push(const char* name) { g_events.push_back(std::string("+") + name); }
void pop() { g_events.push_back("-"); }

}  // namespace

TEST_CASE("op range hooks: each call is one balanced range, nested calls inside it") {
  const Tensor x = ones({2, 3}), w = ones({4, 3}).requires_grad_(), b = ones({4});
  g_events.clear();
  dispatch::set_op_range_hooks(&push, &pop);
  const Tensor y = linear(x, w, b);  // a composite: aten::t and aten::addmm inside
  dispatch::set_op_range_hooks(nullptr, nullptr);
  REQUIRE_FALSE(g_events.empty());
  CHECK(g_events.front() == "+aten::linear");
  CHECK(g_events.back() == "-");
  int depth = 0, max_depth = 0, addmms = 0;
  for (const std::string& e : g_events) {
    depth += e == "-" ? -1 : 1;
    CHECK(depth >= 0);
    max_depth = std::max(max_depth, depth);
    if (e == "+aten::addmm") ++addmms;
  }
  CHECK(depth == 0);
  CHECK(addmms == 1);     // the Autograd kernel's redispatch to the CPU is not a second range
  CHECK(max_depth >= 2);  // addmm runs inside linear's range
  // Removed: nothing more is recorded.
  const size_t n = g_events.size();
  (void)linear(x, w, b);
  CHECK(g_events.size() == n);
  CHECK(dispatch::current_op_name() == nullptr);
}
