// docs/architecture.md's trace of a + b on CUDA tensors is the one the call prints, with the
// files that registered its kernels (tests/docs/test_architecture_doc.cpp checks the CPU's).
#include "../docs/doc_blocks.h"
#include "gpu_test_util.h"

using namespace anatomy;

TEST_CASE("architecture.md: the trace of a + b on CUDA tensors is the one the call prints") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = ones({2, 3}).to(gpu_test::kCuda), b = ones({2, 3}).to(gpu_test::kCuda);
  const std::string trace = doc_blocks::trace_of([&] { (void)(a + b); }, dispatch::TraceDetail::KernelFiles);
  CHECK(doc_blocks::block_starting_with(doc_blocks::architecture_doc(), "[dispatch] aten::add.Tensor [AutogradCUDA") ==
        trace);
}

TEST_CASE("architecture.md: the path of a + b on CUDA tensors is the one the call records, step by step") {
  ANATOMY_REQUIRE_GPU();
  const auto tables = doc_blocks::path_tables(doc_blocks::architecture_doc(), "### `c = a + b`");
  REQUIRE(tables.size() == 2);
  // The CPU's rows up to step 5 (the same files), then CUDA's.
  std::vector<doc_blocks::PathRow> rows;
  for (const doc_blocks::PathRow& r : tables[0]) {
    if (r.step <= 5) rows.push_back(r);
  }
  rows.insert(rows.end(), tables[1].begin(), tables[1].end());
  const Tensor a = ones({2, 3}).to(gpu_test::kCuda), b = ones({2, 3}).to(gpu_test::kCuda);
  CHECK(doc_blocks::recorded_path([&] { (void)(a + b); }) == doc_blocks::path_of(rows));
  doc_blocks::check_step_numbers(rows, 8);
}
