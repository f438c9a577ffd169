// The global precision and math switches, in one place, as PyTorch's torch.backends.cuda.matmul
// flags. They are process-wide (atomics; set them before the work they should affect) and are
// read by the CUDA matrix products on every call. docs/cuda.md lists what each one changes.
//
//   anatomy::set_allow_tf32_matmul(true);   // fp32 matmuls on tensor cores (10-bit mantissa)
#pragma once

#include <cstdint>

namespace anatomy {

// fp32 matrix products may round their inputs to TF32 (cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32).
// Off by default, as torch.backends.cuda.matmul.allow_tf32.
bool allow_tf32_matmul() noexcept;
void set_allow_tf32_matmul(bool allow) noexcept;

// fp16 / bf16 products may reduce split-k partial sums in the input precision rather than fp32
// (cuBLAS's CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION when off). On by default, as
// torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction and its bf16 twin.
bool allow_fp16_reduced_precision_reduction() noexcept;
void set_allow_fp16_reduced_precision_reduction(bool allow) noexcept;
bool allow_bf16_reduced_precision_reduction() noexcept;
void set_allow_bf16_reduced_precision_reduction(bool allow) noexcept;

// fp16 products accumulate in fp16 (CUBLAS_COMPUTE_16F): faster on some GPUs, and far less
// accurate. Off by default, as torch.backends.cuda.matmul.allow_fp16_accumulation.
bool allow_fp16_accumulation() noexcept;
void set_allow_fp16_accumulation(bool allow) noexcept;

// cuDNN's convolutions may compute fp32 in TF32 on tensor cores. On by default, as
// torch.backends.cudnn.allow_tf32 (unlike the matmul switch above, also as PyTorch's).
bool allow_tf32_cudnn() noexcept;
void set_allow_tf32_cudnn(bool allow) noexcept;

// cuDNN's convolution algorithm per shape: off (the default), its heuristic's first choice; on,
// every algorithm is timed on the first call of a shape and the fastest kept, as
// torch.backends.cudnn.benchmark. The choice is cached per shape either way.
bool cudnn_benchmark() noexcept;
void set_cudnn_benchmark(bool enabled) noexcept;

// Which library computes the CPU's fp32 matrix products (fp16 and bf16 ones convert to fp32 and
// go the same way; fp64 is always OpenBLAS's dgemm). Default picks per product: oneDNN's sgemm
// (faster on every product but the smallest, docs/perf.md "The CPU's sgemm: OpenBLAS, BLIS and
// oneDNN") and OpenBLAS's for products of at most 64^3 multiply-adds, whose call it makes
// cheaper; OpenBLAS alone in a build without oneDNN. The other two force one library, for
// comparisons.
enum class CpuBlasLibrary : uint8_t { Default, OpenBLAS, OneDNN };
CpuBlasLibrary preferred_cpu_blas_library() noexcept;
// OneDNN in a build without oneDNN is a ValueError, and nothing changes.
void set_preferred_cpu_blas_library(CpuBlasLibrary library);
// Whether this build can run `library` (Default and OpenBLAS always).
bool cpu_blas_library_available(CpuBlasLibrary library) noexcept;

// Restores every switch above to its default (tests use it to leave no state behind).
void reset_precision_switches() noexcept;

// Sets one switch for a scope and restores its previous value on exit.
class PrecisionSwitchGuard {
 public:
  using Getter = bool (*)() noexcept;
  using Setter = void (*)(bool) noexcept;
  PrecisionSwitchGuard(Getter get, Setter set, bool value) : set_(set), previous_(get()) { set(value); }
  ~PrecisionSwitchGuard() { set_(previous_); }
  PrecisionSwitchGuard(const PrecisionSwitchGuard&) = delete;
  PrecisionSwitchGuard& operator=(const PrecisionSwitchGuard&) = delete;

 private:
  Setter set_;
  bool previous_;
};

}  // namespace anatomy
