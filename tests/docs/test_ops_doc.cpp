// docs/ops.md must list every registered aten:: operator's schema verbatim.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "anatomy/anatomy.h"

TEST_CASE("docs/ops.md lists every built-in operator's schema") {
  std::ifstream in(ANATOMY_SOURCE_DIR "/docs/ops.md");
  REQUIRE(in.good());
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  int checked = 0;
  for (const auto& name : anatomy::dispatch::list_ops()) {
    if (name.rfind("aten::", 0) != 0) continue;
    auto op = anatomy::dispatch::Dispatcher::singleton().find_or_throw(name);
    INFO("operator " << name);
    CHECK(doc.find(fmt::format("`{}`", op.schema().to_string())) != std::string::npos);
    ++checked;
  }
  CHECK(checked >= 40);
}
