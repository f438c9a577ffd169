// docs/architecture.md cannot drift from the code: its dispatch traces are what the calls print,
// and every file or folder it names exists.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <thread>

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

TEST_CASE("architecture.md: the path of a + b on the CPU is the one the call records, step by step") {
  const auto tables = doc_blocks::path_tables(architecture_doc(), "### `c = a + b`");
  REQUIRE(tables.size() == 2);  // the CPU's steps, then CUDA's after step 5
  const Tensor a = ones({2, 3}), b = ones({2, 3});
  CHECK(doc_blocks::recorded_path([&] { (void)(a + b); }) == doc_blocks::path_of(tables[0]));
  doc_blocks::check_step_numbers(tables[0], 6);
  // The trace names the files that registered the autograd and CPU kernels; the page names both.
  const std::string trace = trace_of([&] { (void)(a + b); }, dispatch::TraceDetail::KernelFiles);
  for (const char* file : {"autograd/derivatives_binary.cpp", "backends/cpu/binary_cpu.cpp"}) {
    INFO(file);
    CHECK(trace.find(file) != std::string::npos);
    CHECK(architecture_doc().find(std::string("`") + file + "`") != std::string::npos);
  }
}

TEST_CASE("architecture.md: a step's file is named alike whether __FILE__ is absolute or relative") {
  // ccache with CCACHE_BASEDIR (scripts/build.sh) hands the compiler paths relative to the build
  // directory; without it they are absolute.
  namespace fs = std::filesystem;
  const fs::path source(ANATOMY_SOURCE_DIR), build(ANATOMY_BINARY_DIR);
  const fs::path cpp = source / "dispatch/ops/binary.cpp";
  const fs::path header = build / "include/anatomy/dispatch/dispatcher.h";
  CHECK(doc_blocks::source_relative(cpp.string()) == "dispatch/ops/binary.cpp");
  CHECK(doc_blocks::source_relative(cpp.lexically_relative(build).string()) == "dispatch/ops/binary.cpp");
  CHECK(doc_blocks::source_relative(header.string()) == "dispatch/dispatcher.h");
  CHECK(doc_blocks::source_relative(header.lexically_relative(build).string()) == "dispatch/dispatcher.h");
}

TEST_CASE("CallPathRecorder: records the steps of its own thread, and does not nest") {
  const Tensor a = ones({4}), b = ones({4});
  CallPathRecorder recorder;
  CHECK_THROWS_AS(CallPathRecorder(), ValueError);
  size_t other_thread_steps = 0;
  std::thread([&] {
    CallPathRecorder other;  // a recorder of its own on another thread
    (void)(a + b);
    other_thread_steps = other.steps().size();
  }).join();
  CHECK(other_thread_steps > 0);
  CHECK(recorder.steps().empty());
  (void)(a + b);
  CHECK(!recorder.steps().empty());
  CHECK(recorder.steps().front().function == "add");
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
