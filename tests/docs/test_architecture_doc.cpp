// docs/architecture.md cannot drift from the code: its dispatch traces are what the calls print
// today, and every file or folder it names exists.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

std::string architecture_doc() {
  std::ifstream in(ANATOMY_SOURCE_DIR "/docs/architecture.md");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fenced block of the page whose first line starts with `first_line`.
std::string block_starting_with(const std::string& doc, const std::string& first_line) {
  const size_t at = doc.find("```\n" + first_line);
  if (at == std::string::npos) return "";
  const size_t begin = at + 4;
  return doc.substr(begin, doc.find("```", begin) - begin);
}

std::string trace_of(const std::function<void()>& call) {
  dispatch::TraceCapture capture;
  call();
  return capture.text();
}

}  // namespace

TEST_CASE("architecture.md: the traces of zeros, clone and a + b are the ones the calls print") {
  const std::string doc = architecture_doc();
  const Tensor a = ones({2, 3}), b = ones({2, 3}), x = zeros({2, 3});
  const std::string zeros_trace = trace_of([] { (void)zeros({2, 3}); });
  const std::string clone_trace = trace_of([&] { (void)x.clone(); });
  const std::string add_trace = trace_of([&] { (void)(a + b); });
  CHECK(block_starting_with(doc, "[dispatch] aten::zeros") == zeros_trace);
  CHECK(block_starting_with(doc, "[dispatch] aten::clone") == clone_trace);
  CHECK(block_starting_with(doc, "[dispatch] aten::add.Tensor") == add_trace);
}

TEST_CASE("architecture.md: every file and folder it names exists") {
  const std::string doc = architecture_doc();
  // `dir/file.ext` and `dir/` in backticks: paths of the tree (a trailing `/*` or `<family>`
  // pattern is not a path).
  const std::regex path(R"(`((?:[a-z_]+/)+(?:[A-Za-z0-9_.]+\.(?:h|cpp|cu|cuh|py|md|txt))?)`)");
  int checked = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), path); it != std::sregex_iterator(); ++it) {
    const std::string p = (*it)[1];
    INFO("docs/architecture.md names ", p);
    CHECK(std::filesystem::exists(std::filesystem::path(ANATOMY_SOURCE_DIR) / p));
    ++checked;
  }
  CHECK(checked > 30);
}
