// The op table on CUDA: every entry whose operator has a CUDA kernel is run on the GPU with each
// sample moved there (same sizes, strides and offsets; wrapped scalars stay on the CPU, as a
// Python scalar would) and compared with the same fp64 reference the CPU tests use; a random
// entry, which has none, runs its own check of the results (dropout: the kept fraction and the
// scaling). Every entry must run on CUDA: NotImplementedError (no CUDA kernel) fails the test
// unless the entry is in kCpuOnly, the operators that are CPU-only by design, each with why. The
// test prints how many entries ran on CUDA.
//
// The CUDA kernels differ from the CPU's where the CPU raises on a value in memory (an integer
// zero divisor, an integer to a negative power: Note [Integer division by zero on CUDA]). No
// sample holds one (the divisors' domains exclude zero, the exponents' are non-negative) and the
// bad inputs are not run here, so no sample is skipped; tests/gpu/test_cuda_binary.cpp checks
// those values.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "anatomy/testing/op_table.h"
#include "gpu_test_util.h"

using namespace anatomy;
using namespace anatomy::testing;
using anatomy::gpu_test::kCuda;

namespace {

// Entries whose operators have no CUDA kernel by design, with why. docs/ops.md's CUDA column has
// a kernel or a composite for every operator of the op table, so the list is empty; an entry
// added here must also raise NotImplementedError on CUDA (checked below).
const std::map<std::string, std::string> kCpuOnly = {};

}  // namespace

TEST_CASE("op table on CUDA: every entry with a CUDA kernel matches its reference") {
  ANATOMY_REQUIRE_GPU();
  // fp32 convolutions in full fp32, as the table's tolerances assume: TF32 (cuDNN's default, as
  // PyTorch's) keeps 10 mantissa bits. tests/gpu/test_cuda_conv.cpp checks TF32 on and off.
  PrecisionSwitchGuard full_fp32(&allow_tf32_cudnn, &set_allow_tf32_cudnn, false);
  std::set<std::string> ran, missing;
  for (const OpInfo& info : op_table()) {
    for (DType dtype : info.dtypes) {
      manual_seed(1234);
      for (const SampleInput& cpu_sample : info.samples(dtype)) {
        SampleInput sample = cpu_sample;
        for (Tensor& t : sample.tensors) t = gpu_test::to_cuda_same_layout(t);
        INFO(info.name, " ", name(dtype), " ", cpu_sample.label);
        std::vector<RefTensor> inputs;
        for (const Tensor& t : cpu_sample.tensors) inputs.push_back(to_ref(t));
        std::vector<Tensor> got;
        try {
          got = info.op(sample);
        } catch (const NotImplementedError& e) {
          CHECK_MESSAGE(kCpuOnly.count(info.name) == 1, "no CUDA kernel: ", std::string(e.what()));
          missing.insert(info.name);
          continue;
        } catch (const std::exception& e) {
          FAIL_CHECK("threw: ", std::string(e.what()));
          continue;
        }
        ran.insert(info.name);
        if (info.check) {
          // Random entries (dropout) have no reference; their own check reads the results (on
          // the device) and the sample. tests/gpu/test_cuda_random.cpp compares the numbers
          // with the CPU's.
          for (const Tensor& t : got) CHECK(t.is_cuda());
          const std::string problem = info.check(got, sample);
          CHECK_MESSAGE(problem.empty(), problem);
          continue;
        }
        const std::vector<RefTensor> want = info.reference(inputs, cpu_sample);
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          CHECK(got[i].is_cuda());
          const std::string diff = compare(got[i], want[i], tolerance_for(info, dtype, want[i].dtype));
          CHECK_MESSAGE(diff.empty(), "result ", i, ": ", diff);
        }
        if (info.out && !want.empty()) {
          Tensor out = empty(want[0].shape, TensorOptions().dtype(want[0].dtype).device(kCuda));
          info.out(out, sample);
          const std::string diff = compare(out, want[0], tolerance_for(info, dtype, want[0].dtype));
          CHECK_MESSAGE(diff.empty(), "out=: ", diff);
        }
      }
    }
  }
  for (const std::string& m : missing) ran.erase(m);  // partly missing counts as missing
  MESSAGE("ran on CUDA: ", ran.size(), " of ", op_table().size(),
          " entries: ", fmt::format("{}", fmt::join(ran, ", ")));
  MESSAGE("no CUDA kernel: ", missing.size(), " entries: ", fmt::format("{}", fmt::join(missing, ", ")));
  // Every entry ran on CUDA, every sample of it, but the CPU-only ones, which ran on none.
  for (const OpInfo& info : op_table()) {
    INFO(info.name);
    if (kCpuOnly.count(info.name) == 1) {
      CHECK_MESSAGE(ran.count(info.name) == 0, "listed as CPU-only, yet it ran on CUDA");
    } else {
      CHECK_MESSAGE(ran.count(info.name) == 1, "did not run on CUDA");
    }
  }
}
