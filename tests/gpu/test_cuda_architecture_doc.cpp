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
