// The cuBLASLt plan cache (see lt_matmul.h). cuBLASLt needs a matmul descriptor, three matrix
// layouts and an algorithm from its heuristic before a matmul; building them costs more host
// time than the launch itself, so they are cached per thread, keyed by everything they depend
// on (LtMatmulKey: types, compute and scale type, epilogue, ops, sizes, leading dimensions,
// batch strides, alignments, the reduction switch), and only the pointers change per call.
//
// The alignments are part of the key because the heuristic assumes 256-byte aligned matrices
// unless told otherwise (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES): an algorithm chosen for
// one alignment may not run on a lesser one.
#include "anatomy/backends/cuda/blas/lt_matmul.h"

#include <map>
#include <memory>
#include <utility>

#include "anatomy/backends/cuda/blas/cublas_handles.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"

namespace anatomy::cuda {
namespace {

// A matmul descriptor, the three layouts (C shares D's) and the chosen algorithm of one key.
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
// heuristics). Bounded: keys beyond kMaxPlans are planned and dropped each call.
constexpr size_t kMaxPlans = 256;
thread_local std::map<std::pair<int, LtMatmulKey>, std::unique_ptr<LtPlan>> t_plans;

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}
template <typename T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
}

// A layout of `rows` x `cols` with leading dimension `ld`, strided over the key's batches.
cublasLtMatrixLayout_t make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, const LtMatmulKey& key,
                                   int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  ANATOMY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld));
  if (key.batches > 1) {
    const int32_t count = static_cast<int32_t>(key.batches);
    auto set = [&](cublasLtMatrixLayoutAttribute_t attr, const auto& v) {
      const cublasStatus_t s = cublasLtMatrixLayoutSetAttribute(layout, attr, &v, sizeof(v));
      if (s != CUBLAS_STATUS_SUCCESS) {
        cublasLtMatrixLayoutDestroy(layout);
        ANATOMY_CUBLAS_CHECK(s);
      }
    };
    set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count);
    set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }
  return layout;
}

std::unique_ptr<LtPlan> make_plan(const LtMatmulKey& key, size_t workspace) {
  auto plan = std::make_unique<LtPlan>();
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, key.compute, key.scale));
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, key.op_a);
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, key.op_b);
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, key.epilogue);
  // Stored shapes follow the ops: A is m x k as used, B k x n.
  const bool an = key.op_a == CUBLAS_OP_N, bn = key.op_b == CUBLAS_OP_N;
  plan->a = make_layout(key.ab_type, an ? key.m : key.k, an ? key.k : key.m, key.lda, key, key.stride_a);
  plan->b = make_layout(key.ab_type, bn ? key.k : key.n, bn ? key.n : key.k, key.ldb, key, key.stride_b);
  plan->d = make_layout(key.d_type, key.m, key.n, key.m, key, key.m * key.n);
  cublasLtMatmulPreference_t pref = nullptr;
  ANATOMY_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  try {
    set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_a);
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_b);
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_d);
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_d);
    if (!key.reduced) {
      // Split-k partial sums reduced in the compute type only, as cuBLAS's
      // CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION.
      const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_MASK & ~CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
      set_pref(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, mask);
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

uint32_t lt_alignment(const void* ptr, int64_t stride_bytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(ptr) | 256u;
  if (stride_bytes != 0) bits |= static_cast<uint64_t>(stride_bytes < 0 ? -stride_bytes : stride_bytes);
  return static_cast<uint32_t>(bits & (~bits + 1));  // the lowest set bit
}

bool lt_matmul(const LtMatmulKey& key, const LtMatmulArgs& args) {
  const BlasWorkspace ws = blas_workspace();
  const auto map_key = std::make_pair(static_cast<int>(current_device()), key);
  std::unique_ptr<LtPlan> uncached;
  LtPlan* plan = nullptr;
  if (auto it = t_plans.find(map_key); it != t_plans.end()) {
    plan = it->second.get();
  } else {
    uncached = make_plan(key, ws.bytes);
    plan = uncached.get();
    if (t_plans.size() < kMaxPlans) plan = t_plans.emplace(map_key, std::move(uncached)).first->second.get();
  }
  if (!plan->usable) return false;
  if (args.bias != nullptr) set_desc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, args.bias);
  ANATOMY_CUBLAS_CHECK(cublasLtMatmul(cublaslt_handle(), plan->desc, args.alpha, args.a, plan->a, args.b, plan->b,
                                      args.beta, args.d, plan->d, args.d, plan->d, &plan->algo, ws.data, ws.bytes,
                                      current_stream()));
  return true;
}

}  // namespace anatomy::cuda
