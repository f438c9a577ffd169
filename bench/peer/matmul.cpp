// CUDA pairs of the matrix products: mm of 8192^3 in fp32, TF32 (the switch on both sides), fp16
// and bf16 (the target: at least 0.98x torch), and products whose operands sit one element
// past an aligned address (x[1:] of a flat buffer: Note [Misaligned cuBLAS operands]) next to
// their aligned twins, fp16 2048^3 and bf16 4096^3, where torch's cuBLAS call runs 5-6x slower.
// Two cuBLASLt pairs: int8 4096^3 (anatomy's mm against at::_int_mm, both returning int32) and
// linear + relu fused into the bias epilogue on fp16 8192^3 (_addmm_activation on both sides).
// Device time between CUDA events. Each row is skipped unless anatomy has its CUDA backend and
// both libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);

at::ScalarType torch_dtype(anatomy::DType d) {
  switch (d) {
    case anatomy::DType::Float16:
      return at::kHalf;
    case anatomy::DType::BFloat16:
      return at::kBFloat16;
    default:
      return at::kFloat;
  }
}

// A [n, n] matrix of dtype D on both sides, with the same values, whose first element sits
// `offset` elements into its storage.
struct Operand {
  anatomy::Tensor a;
  at::Tensor t;
  Operand(int64_t n, anatomy::DType d, int64_t offset) {
    const anatomy::Tensor cpu = anatomy::randn({n * n + offset});
    a = cpu.to(kCuda).to(d).slice(0, offset, n * n + offset).view({n, n});
    t = to_torch(cpu).to(at::kCUDA).to(torch_dtype(d)).slice(0, offset, n * n + offset).view({n, n});
  }
};

// Both sides' TF32 switch for the life of a case.
struct Tf32Scope {
  bool on;
  explicit Tf32Scope(bool tf32) : on(tf32) {
    if (!on) return;
    anatomy::set_allow_tf32_matmul(true);
    at::globalContext().setAllowTF32CuBLAS(true);
  }
  ~Tf32Scope() {
    if (!on) return;
    anatomy::set_allow_tf32_matmul(false);
    at::globalContext().setAllowTF32CuBLAS(false);
  }
  // Movable (a case is returned by value): only the last owner switches TF32 back off.
  Tf32Scope(Tf32Scope&& o) noexcept : on(o.on) { o.on = false; }
  Tf32Scope(const Tf32Scope&) = delete;
  Tf32Scope& operator=(const Tf32Scope&) = delete;
  Tf32Scope& operator=(Tf32Scope&&) = delete;
};

// Results are sums of n products of N(0, 1) values, of size about sqrt(n): atol covers a few
// roundings of the output dtype at that size (both sides round in different orders).
template <int64_t N, anatomy::DType D, int64_t Offset, bool Tf32, double Atol>
struct MmCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMillisecond;
  static constexpr double kFlops = 2.0 * N * N * N;
  static constexpr Tolerance kTol{Atol, 1e-2};
  Tf32Scope tf32{Tf32};
  Operand x{N, D, Offset}, y{N, D, Offset};
  anatomy::Tensor run_anatomy() { return anatomy::mm(x.a, y.a); }
  at::Tensor run_torch() { return at::mm(x.t, y.t); }
};

using F32 = MmCase<8192, anatomy::DType::Float32, 0, false, 1e-2>;
using Tf32 = MmCase<8192, anatomy::DType::Float32, 0, true, 1.0>;
using F16 = MmCase<8192, anatomy::DType::Float16, 0, false, 0.5>;
using Bf16 = MmCase<8192, anatomy::DType::BFloat16, 0, false, 4.0>;
using F16Small = MmCase<2048, anatomy::DType::Float16, 0, false, 0.25>;
using F16Misaligned = MmCase<2048, anatomy::DType::Float16, 1, false, 0.25>;
using Bf16Mid = MmCase<4096, anatomy::DType::BFloat16, 0, false, 2.0>;
using Bf16Misaligned = MmCase<4096, anatomy::DType::BFloat16, 1, false, 2.0>;

struct MmF32 : F32 {
  static constexpr const char* kName = "mm_fp32_8192_cuda";
};
struct MmTf32 : Tf32 {
  static constexpr const char* kName = "mm_tf32_8192_cuda";
};
struct MmF16 : F16 {
  static constexpr const char* kName = "mm_fp16_8192_cuda";
};
struct MmBf16 : Bf16 {
  static constexpr const char* kName = "mm_bf16_8192_cuda";
};
struct MmF16Aligned : F16Small {
  static constexpr const char* kName = "mm_fp16_2048_cuda";
};
struct MmF16Misaligned : F16Misaligned {
  static constexpr const char* kName = "mm_fp16_2048_misaligned_cuda";
};
struct MmBf16Aligned : Bf16Mid {
  static constexpr const char* kName = "mm_bf16_4096_cuda";
};
struct MmBf16Misaligned : Bf16Misaligned {
  static constexpr const char* kName = "mm_bf16_4096_misaligned_cuda";
};

// int8 operands with values in [-8, 8): sums of 4096 products stay below 2^24, exact in the fp32
// the comparison reads them in, so the two int32 results must agree exactly.
struct Int8Operand {
  anatomy::Tensor a;
  at::Tensor t;
  explicit Int8Operand(int64_t n) {
    const anatomy::Tensor cpu = anatomy::randint(-8, 8, {n, n}, anatomy::DType::Int32).to(anatomy::DType::Float32);
    a = cpu.to(kCuda).to(anatomy::DType::Int8);
    t = to_torch(cpu).to(at::kCUDA).to(at::kChar);
  }
};

struct MmInt8 : CaseDefaults {
  static constexpr const char* kName = "mm_int8_4096_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr double kFlops = 2.0 * 4096 * 4096 * 4096;  // integer multiply-adds, counted as two
  static constexpr Tolerance kTol{0, 0};
  Int8Operand x{4096}, y{4096};
  anatomy::Tensor run_anatomy() { return anatomy::mm(x.a, y.a); }
  at::Tensor run_torch() { return at::_int_mm(x.t, y.t); }
};

// linear's weight layout (w.t()) and a bias vector: relu(x @ w^T + b) in one cuBLASLt call.
struct LinearReluF16 : CaseDefaults {
  static constexpr const char* kName = "linear_relu_fp16_8192_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMillisecond;
  static constexpr double kFlops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  static constexpr Tolerance kTol{0.5, 1e-2};
  Operand x{8192, anatomy::DType::Float16, 0}, w{8192, anatomy::DType::Float16, 0};
  anatomy::Tensor bias = anatomy::randn({8192}).to(kCuda).to(anatomy::DType::Float16);
  at::Tensor bias_t = to_torch(bias.cpu().to(anatomy::DType::Float32).contiguous()).to(at::kCUDA).to(at::kHalf);
  anatomy::Tensor run_anatomy() { return anatomy::_addmm_activation(bias, x.a, w.a.t()); }
  at::Tensor run_torch() { return at::_addmm_activation(bias_t, x.t, w.t.t()); }
};

const int registered =
    (register_pair<MmF32>(), register_pair<MmTf32>(), register_pair<MmF16>(), register_pair<MmBf16>(),
     register_pair<MmF16Aligned>(), register_pair<MmF16Misaligned>(), register_pair<MmBf16Aligned>(),
     register_pair<MmBf16Misaligned>(), register_pair<MmInt8>(), register_pair<LinearReluF16>(), 0);

}  // namespace
}  // namespace peer
