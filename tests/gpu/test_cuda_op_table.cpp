// The op table on CUDA: every entry whose operator has a CUDA kernel is run on the GPU with each
// sample moved there (same sizes, strides and offsets; wrapped scalars stay on the CPU, as a
// Python scalar would) and compared with the same fp64 reference the CPU tests use; a random
// entry, which has none, runs its own check of the results (dropout: the kept fraction and the
// scaling). Entries without a CUDA kernel raise NotImplementedError and are counted, not failed:
// the list printed at the end is the CUDA backend's to-do list.
//
// The CUDA kernels differ from the CPU's where the CPU raises on a value in memory (an integer
// zero divisor, an integer to a negative power: Note [Integer division by zero on CUDA]). No
// sample holds one (the divisors' domains exclude zero, the exponents' are non-negative) and the
// bad inputs are not run here, so no sample is skipped; tests/gpu/test_cuda_binary.cpp checks
// those values.
#include <algorithm>
#include <set>

#include "anatomy/testing/op_table.h"
#include "gpu_test_util.h"

using namespace anatomy;
using namespace anatomy::testing;
using anatomy::gpu_test::kCuda;

namespace {}  // namespace

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
        } catch (const NotImplementedError&) {
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
  MESSAGE("ran on CUDA: ", fmt::format("{}", fmt::join(ran, ", ")));
  MESSAGE("no CUDA kernel: ", fmt::format("{}", fmt::join(missing, ", ")));
  // One entry or more of every family that has CUDA kernels must have run.
  const char* const kMustRun[] = {"add",
                                  "mul",
                                  "div_floor",
                                  "remainder",
                                  "pow",
                                  "maximum",
                                  "atan2",
                                  "eq",
                                  "logical_xor",
                                  "bitwise_left_shift",
                                  "where",
                                  "lerp_tensor",
                                  "clamp",
                                  "clamp_tensor",
                                  "neg",
                                  "round",
                                  "exp",
                                  "log1p",
                                  "tan",
                                  "gelu_tanh",
                                  "sinh",
                                  "cosh",
                                  "softplus",
                                  "nan_to_num",
                                  "isnan",
                                  "logical_not",
                                  "bitwise_not",
                                  "_to_copy_int8",
                                  "_to_copy_bf16",
                                  "sum",
                                  "sum_dtype",
                                  "mean",
                                  "prod",
                                  "amax",
                                  "max",
                                  "argmin",
                                  "var",
                                  "std_population",
                                  "norm",
                                  "logsumexp",
                                  "any",
                                  "all",
                                  "count_nonzero",
                                  "softmax",
                                  "log_softmax",
                                  "dropout",
                                  "index_select",
                                  "gather",
                                  "take",
                                  "embedding",
                                  "scatter",
                                  "scatter_add",
                                  "scatter_value",
                                  "sort",
                                  "argsort",
                                  "topk",
                                  "flip",
                                  "tril",
                                  "triu",
                                  "index",
                                  "index_put",
                                  "masked_fill",
                                  "masked_select",
                                  "nonzero",
                                  "cumsum",
                                  "cumprod",
                                  "cummax",
                                  "cummin",
                                  "logcumsumexp",
                                  "one_hot",
                                  "scaled_dot_product_attention",
                                  "_addmm_activation",
                                  "_softmax_backward_data",
                                  "_log_softmax_backward_data",
                                  "native_layer_norm_backward",
                                  "_rms_norm_backward"};
  for (const char* op : kMustRun) {
    CHECK_MESSAGE(ran.count(op) == 1, op);
  }
}
