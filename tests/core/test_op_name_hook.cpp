// core/op_name_hook.h: the dispatcher's current operator, reached from below it. The dispatcher
// installs the hooks when the library loads, so by the time a test runs they answer as
// dispatch/current_op.h does, and listeners registered through them switch the dispatcher's
// naming on and off (tests/alloc/test_memory_snapshot.cpp checks the names the memory history
// records through them).
#include <doctest/doctest.h>

#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/core/op_name_hook.h"
#include "anatomy/dispatch/current_op.h"

namespace op_name_hook = anatomy::op_name_hook;
using anatomy::dispatch::CurrentOpScope;

TEST_CASE("op_name_hook: current() is the dispatcher's current operator") {
  CHECK(op_name_hook::current() == nullptr);
  {
    CurrentOpScope outer("test_hook::outer");
    CurrentOpScope inner("test_hook::inner");  // the outermost name stays
    REQUIRE(op_name_hook::current() != nullptr);
    CHECK(std::string(op_name_hook::current()) == "test_hook::outer");
    CHECK(op_name_hook::current() == anatomy::dispatch::current_op_name());
  }
  CHECK(op_name_hook::current() == nullptr);
}

TEST_CASE("op_name_hook: a listener switches the dispatcher's naming on until it is removed") {
  const uint32_t before = anatomy::dispatch::detail::g_trace_state.load();
  op_name_hook::add_listener();
  CHECK(anatomy::dispatch::trace_enabled());
  CHECK(anatomy::dispatch::detail::g_trace_state.load() == before + anatomy::dispatch::detail::kOpNameListener);
  op_name_hook::add_listener();
  op_name_hook::remove_listener();
  CHECK(anatomy::dispatch::detail::g_trace_state.load() == before + anatomy::dispatch::detail::kOpNameListener);
  op_name_hook::remove_listener();
  CHECK(anatomy::dispatch::detail::g_trace_state.load() == before);
}
