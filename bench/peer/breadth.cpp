// CUDA pairs of the operators a PyTorch user reaches for (docs/ops.md): element-wise functions on
// 64 MiB of fp32 (a fresh output per call, as `torch.erfc(x)`; bytes are the inputs read and the
// output written), unique of 16M int64 values with many repeats (sorted, with the inverse and the
// counts), and an attention-like batched contraction as einsum and as the bmm it plans onto (the
// two rows of each engine compare its einsum with its hand-written bmm). Each row is skipped
// unless anatomy has its CUDA backend and both libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device

// Inputs where every function below is finite: x in [lo, lo + span), both libraries fed the
// same values.
struct Input {
  anatomy::Tensor a;
  at::Tensor t;
  Input(double lo, double span) {
    const anatomy::Tensor cpu = anatomy::rand({k64MiBFloats}) * span + lo;
    a = cpu.to(kCuda);
    t = to_torch(cpu).to(at::kCUDA);
  }
};

struct ElementwiseCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr Tolerance kTol{1e-5, 1e-5};  // different polynomial approximations, a few ulp
};

struct UnaryCase : ElementwiseCase {
  static constexpr int64_t kBytes = 2 * k64MiBFloats * 4;
};

struct BinaryCase : ElementwiseCase {
  static constexpr int64_t kBytes = 3 * k64MiBFloats * 4;
};

struct Log10Cuda : UnaryCase {
  static constexpr const char* kName = "log10_64mib_cuda";
  Input x{0.1, 10};
  anatomy::Tensor run_anatomy() { return anatomy::log10(x.a); }
  at::Tensor run_torch() { return at::log10(x.t); }
};

struct ErfcCuda : UnaryCase {
  static constexpr const char* kName = "erfc_64mib_cuda";
  Input x{-3, 6};
  anatomy::Tensor run_anatomy() { return anatomy::erfc(x.a); }
  at::Tensor run_torch() { return at::erfc(x.t); }
};

struct ErfinvCuda : UnaryCase {
  static constexpr const char* kName = "erfinv_64mib_cuda";
  Input x{-0.95, 1.9};
  anatomy::Tensor run_anatomy() { return anatomy::erfinv(x.a); }
  at::Tensor run_torch() { return at::erfinv(x.t); }
};

struct LgammaCuda : UnaryCase {
  static constexpr const char* kName = "lgamma_64mib_cuda";
  Input x{0.1, 20};
  anatomy::Tensor run_anatomy() { return anatomy::lgamma(x.a); }
  at::Tensor run_torch() { return at::lgamma(x.t); }
};

struct HardswishCuda : UnaryCase {
  static constexpr const char* kName = "hardswish_64mib_cuda";
  Input x{-5, 10};
  anatomy::Tensor run_anatomy() { return anatomy::hardswish(x.a); }
  at::Tensor run_torch() { return at::hardswish(x.t); }
};

struct MishCuda : UnaryCase {
  static constexpr const char* kName = "mish_64mib_cuda";
  Input x{-5, 10};
  anatomy::Tensor run_anatomy() { return anatomy::mish(x.a); }
  at::Tensor run_torch() { return at::mish(x.t); }
};

struct HypotCuda : BinaryCase {
  static constexpr const char* kName = "hypot_64mib_cuda";
  Input x{-3, 6}, y{-3, 6};
  anatomy::Tensor run_anatomy() { return anatomy::hypot(x.a, y.a); }
  at::Tensor run_torch() { return at::hypot(x.t, y.t); }
};

struct LogaddexpCuda : BinaryCase {
  static constexpr const char* kName = "logaddexp_64mib_cuda";
  Input x{-5, 10}, y{-5, 10};
  anatomy::Tensor run_anatomy() { return anatomy::logaddexp(x.a, y.a); }
  at::Tensor run_torch() { return at::logaddexp(x.t, y.t); }
};

struct XlogyCuda : BinaryCase {
  static constexpr const char* kName = "xlogy_64mib_cuda";
  Input x{-3, 6}, y{0.1, 10};
  anatomy::Tensor run_anatomy() { return anatomy::xlogy(x.a, y.a); }
  at::Tensor run_torch() { return at::xlogy(x.t, y.t); }
};

struct CopysignCuda : BinaryCase {
  static constexpr const char* kName = "copysign_64mib_cuda";
  Input x{-3, 6}, y{-3, 6};
  anatomy::Tensor run_anatomy() { return anatomy::copysign(x.a, y.a); }
  at::Tensor run_torch() { return at::copysign(x.t, y.t); }
};

// 16M int64 values in [0, 65536): about 256 repeats of each. The timed call asks for the
// inverse and the counts too; the unique values are compared.
struct Unique16MCuda : CaseDefaults {
  static constexpr const char* kName = "unique_16m_int64_inverse_counts_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kValues = int64_t{1} << 24;
  static constexpr int64_t kBytes = kValues * 8 * 2;  // the values read, the inverse written
  anatomy::Tensor cpu = anatomy::randint(0, 65536, {kValues}, anatomy::DType::Int64);
  anatomy::Tensor x = cpu.to(kCuda);
  at::Tensor tx = to_torch(cpu).to(at::kCUDA);
  anatomy::Tensor run_anatomy() { return std::get<0>(anatomy::unique(x, true, true, true)); }
  at::Tensor run_torch() { return std::get<0>(at::_unique2(tx, true, true, true)); }
};

// Scores of attention: q [b, h, s, d] against k [b, h, s, d], fp32 (no TF32 on either side).
struct AttentionScores : CaseDefaults {
  static constexpr int64_t kB = 8, kH = 16, kS = 1024, kD = 64;
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr double kFlops = 2.0 * kB * kH * kS * kS * kD;
  static constexpr Tolerance kTol{1e-3, 1e-4};  // sums of 64 products, in different orders
  anatomy::Tensor q_cpu = anatomy::randn({kB, kH, kS, kD}), k_cpu = anatomy::randn({kB, kH, kS, kD});
  anatomy::Tensor q = q_cpu.to(kCuda), k = k_cpu.to(kCuda);
  at::Tensor tq = to_torch(q_cpu).to(at::kCUDA), tk = to_torch(k_cpu).to(at::kCUDA);
};

struct EinsumScoresCuda : AttentionScores {
  static constexpr const char* kName = "einsum_bhqd_bhkd_8x16x1024x64_cuda";
  anatomy::Tensor run_anatomy() { return anatomy::einsum("bhqd,bhkd->bhqk", {q, k}); }
  at::Tensor run_torch() { return at::einsum("bhqd,bhkd->bhqk", {tq, tk}); }
};

// The same product written by hand: [b h, s, d] @ [b h, d, s] (k's transpose a view).
struct BmmScoresCuda : AttentionScores {
  static constexpr const char* kName = "bmm_bhqd_bhkd_8x16x1024x64_cuda";
  anatomy::Tensor run_anatomy() {
    return anatomy::bmm(q.reshape({kB * kH, kS, kD}), k.reshape({kB * kH, kS, kD}).transpose(1, 2))
        .reshape({kB, kH, kS, kS});
  }
  at::Tensor run_torch() {
    return at::bmm(tq.reshape({kB * kH, kS, kD}), tk.reshape({kB * kH, kS, kD}).transpose(1, 2))
        .reshape({kB, kH, kS, kS});
  }
};

const int registered =
    (register_pair<Log10Cuda>(), register_pair<ErfcCuda>(), register_pair<ErfinvCuda>(), register_pair<LgammaCuda>(),
     register_pair<HardswishCuda>(), register_pair<MishCuda>(), register_pair<HypotCuda>(),
     register_pair<LogaddexpCuda>(), register_pair<XlogyCuda>(), register_pair<CopysignCuda>(),
     register_pair<Unique16MCuda>(), register_pair<EinsumScoresCuda>(), register_pair<BmmScoresCuda>(), 0);

}  // namespace
}  // namespace peer
