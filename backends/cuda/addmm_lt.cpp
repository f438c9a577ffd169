// addmm's bias epilogue through cuBLASLt (see addmm_lt.h). cuBLASLt needs descriptors and an
// algorithm from its heuristic before a matmul; building them costs more host time than the
// launch itself, so they are cached per thread, keyed by everything they depend on (dtype,
// compute type, ops, sizes, leading dimensions, the switches), and only the pointers change per
// call. The row-major product runs transposed, as in blas_cuda.cpp: D^T [m, n] = mat2^T mat1^T,
// and the bias, one value per column of the row-major result, is one value per row of D^T,
// which is what the epilogue broadcasts.
#include "anatomy/backends/cuda/addmm_lt.h"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <tuple>

#include "anatomy/backends/cuda/cublas_handles.h"
#include "anatomy/backends/cuda/current_stream.h"
#include "anatomy/backends/cuda/gemm_operand.h"
#include "anatomy/core/precision_switches.h"

namespace anatomy::cuda {
namespace {

using PlanKey = std::tuple<int, int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t, bool>;

// A matmul descriptor, the three layouts and the chosen algorithm of one product shape.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool usable = false;  // the heuristic found an algorithm
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

// Per thread (a plan's bias pointer is set per call) and per device (plans hold device
// heuristics). Bounded: shapes beyond kMaxPlans are planned and dropped each call.
constexpr size_t kMaxPlans = 256;
thread_local std::map<std::pair<int, PlanKey>, std::unique_ptr<LtPlan>> t_plans;

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

std::unique_ptr<LtPlan> make_plan(DType dtype, cublasComputeType_t compute, const GemmOperand& a,
                                  const GemmOperand& b, int64_t n, int64_t m, int64_t k, bool reduced,
                                  size_t workspace) {
  auto plan = std::make_unique<LtPlan>();
  const cudaDataType_t type = cuda_data_type(dtype);
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F));
  // cuBLAS's A is mat2 (m x k as used), B is mat1 (k x n as used); stored shapes follow the ops.
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, b.op);
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, a.op);
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
  const bool bn = b.op == CUBLAS_OP_N, an = a.op == CUBLAS_OP_N;
  ANATOMY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, type, bn ? m : k, bn ? k : m, b.ld));
  ANATOMY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, type, an ? k : n, an ? n : k, a.ld));
  ANATOMY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->d, type, m, n, m));
  cublasLtMatmulPreference_t pref = nullptr;
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  try {
    ANATOMY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                              &workspace, sizeof(workspace)));
    if (!reduced) {
      // Split-k partial sums reduced in fp32 only, as cuBLAS's
      // CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION.
      const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_MASK & ~CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
      ANATOMY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                                &mask, sizeof(mask)));
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(cublaslt_handle(), plan->desc, plan->a, plan->b, plan->d,
                                                            plan->d, pref, 1, &result, &found);
    plan->usable = s == CUBLAS_STATUS_SUCCESS && found > 0;
    if (plan->usable) plan->algo = result.algo;
  } catch (...) {
    cublasLtMatmulPreferenceDestroy(pref);
    throw;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  return plan;
}

}  // namespace

bool addmm_bias_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                         const Scalar& beta, const Scalar& alpha) {
  const DType dtype = out.dtype();
  const int64_t n = out.sizes()[0], m = out.sizes()[1], k = mat1.sizes()[1];
  // The epilogue's case: a bias vector added once, a 16-bit or fp32 product cuBLASLt computes
  // in fp32, no empty dims, and every address aligned for its kernels.
  if (self.dim() != 1 || self.sizes()[0] != m || self.strides()[0] != 1 || self.dtype() != dtype) return false;
  if (beta.to<double>() != 1.0) return false;
  if (dtype != DType::Float32 && dtype != DType::Float16 && dtype != DType::BFloat16) return false;
  if (dtype == DType::Float16 && allow_fp16_accumulation()) return false;
  if (n <= 1 || m == 0 || k == 0 || std::max({n, m, k}) > INT_MAX) return false;
  for (const Tensor* t : {&out, &self, &mat1, &mat2}) {
    if (!is_gemm_aligned(*t)) return false;
  }
  auto la = cublas_layout(mat1.unsqueeze(0)), lb = cublas_layout(mat2.unsqueeze(0));
  if (!la || !lb || la->ld > INT_MAX || lb->ld > INT_MAX) return false;

  const cublasComputeType_t compute =
      dtype == DType::Float32 && allow_tf32_matmul() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const bool reduced = (dtype == DType::Float16 && allow_fp16_reduced_precision_reduction()) ||
                       (dtype == DType::BFloat16 && allow_bf16_reduced_precision_reduction()) ||
                       dtype == DType::Float32;
  const BlasWorkspace ws = blas_workspace();
  const PlanKey key{static_cast<int>(dtype), static_cast<int>(compute), la->op, lb->op, n, m, k, la->ld, lb->ld,
                    reduced};
  const auto map_key = std::make_pair(static_cast<int>(out.device().index()), key);
  std::unique_ptr<LtPlan> uncached;
  LtPlan* plan = nullptr;
  if (auto it = t_plans.find(map_key); it != t_plans.end()) {
    plan = it->second.get();
  } else {
    uncached = make_plan(dtype, compute, *la, *lb, n, m, k, reduced, ws.bytes);
    plan = uncached.get();
    if (t_plans.size() < kMaxPlans) plan = t_plans.emplace(map_key, std::move(uncached)).first->second.get();
  }
  if (!plan->usable) return false;
  const void* bias = self.data_ptr();
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  const float al = alpha.to<float>(), zero = 0.0f;
  ANATOMY_CUBLAS_CHECK(cublasLtMatmul(cublaslt_handle(), plan->desc, &al, mat2.data_ptr(), plan->a, mat1.data_ptr(),
                                      plan->b, &zero, out.data_ptr(), plan->d, out.data_ptr(), plan->d, &plan->algo,
                                      ws.data, ws.bytes, current_stream()));
  return true;
}

}  // namespace anatomy::cuda
