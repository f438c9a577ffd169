// docs/architecture.md cannot drift from the code: its dispatch traces are what the calls print,
// and every file or folder it names exists.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "doc_blocks.h"

using namespace anatomy;

using doc_blocks::architecture_doc;
using doc_blocks::block_starting_with;
using doc_blocks::trace_of;

TEST_CASE("architecture.md: the traces of zeros, clone and a + b are the ones the calls print") {
  const std::string doc = architecture_doc();
  const Tensor a = ones({2, 3}), b = ones({2, 3}), x = zeros({2, 3});
  const std::string zeros_trace = trace_of([] { (void)zeros({2, 3}); });
  const std::string clone_trace = trace_of([&] { (void)x.clone(); });
  const std::string add_trace = trace_of([&] { (void)(a + b); }, dispatch::TraceDetail::KernelFiles);
  CHECK(block_starting_with(doc, "[dispatch] aten::zeros") == zeros_trace);
  CHECK(block_starting_with(doc, "[dispatch] aten::clone") == clone_trace);
  CHECK(block_starting_with(doc, "[dispatch] aten::add.Tensor [AutogradCPU") == add_trace);
}

TEST_CASE("architecture.md: the files of a + b's path are the ones its kernels were registered from") {
  // The trace names the files that registered the autograd and CPU kernels; the page's table of
  // steps must name both (step 3 and step 4's registration).
  const std::string doc = architecture_doc();
  const Tensor a = ones({2}), b = ones({2});
  const std::string trace = trace_of([&] { (void)(a + b); }, dispatch::TraceDetail::KernelFiles);
  for (const char* file : {"autograd/derivatives_binary.cpp", "backends/cpu/binary_cpu.cpp"}) {
    INFO(file);
    CHECK(trace.find(file) != std::string::npos);
    CHECK(doc.find(std::string("`") + file + "`") != std::string::npos);
  }
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
