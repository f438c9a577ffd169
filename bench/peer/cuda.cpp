// CUDA pairs of element-wise binary ops and copies: host overhead of a 1-element add, the rate of
// back-to-back 4 MiB adds, and device time of a 64 MiB add and copy next to a cudaMemcpyAsync of
// the same size (the bandwidth ceiling in the same run). Each row is skipped unless anatomy has its CUDA backend and
// both libraries see a GPU. Inputs are made on the CPU and copied to the device, so both sides add the same values.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device

// One input on both sides: anatomy's CPU values copied to the GPU by each library.
struct CudaPair {
  anatomy::Tensor a;
  at::Tensor t;
  explicit CudaPair(const anatomy::Tensor& cpu) : a(cpu.to(kCuda)), t(to_torch(cpu).to(at::kCUDA)) {}
};

// Host time per call, end to end with the output's allocation: what the host pays to queue one
// tiny kernel (the device synchronize at the end of the loop keeps the queue honest).
struct AddTinyCuda : CaseDefaults {
  static constexpr const char* kName = "add_tiny_cuda";
  static constexpr Timing kTiming = Timing::kHostSynced;
  CudaPair a{anatomy::randn({1})}, b{anatomy::randn({1})};
  anatomy::Tensor run_anatomy() { return a.a + b.a; }
  at::Tensor run_torch() { return a.t + b.t; }
};

// A 4 MiB add into a fresh output, called back to back: the rate an eager loop of mid-sized
// element-wise ops runs at, where the launch (host) and the kernel (about 2.7 us on an H100) take
// similar time, so whatever the launch's attributes cost shows here (docs/perf.md, "Element-wise
// kernels release their successor before they wait").
struct AddMidCuda : CaseDefaults {
  static constexpr const char* kName = "add_4mib_cuda";
  static constexpr Timing kTiming = Timing::kHostSynced;
  static constexpr int64_t kFloats = int64_t{1} << 20;  // not a bandwidth row: kBytes stays 0
  CudaPair a{anatomy::randn({kFloats})}, b{anatomy::randn({kFloats})};
  anatomy::Tensor run_anatomy() { return a.a + b.a; }
  at::Tensor run_torch() { return a.t + b.t; }
};

struct LargeCudaCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = 3 * k64MiBFloats * 4;
  CudaPair a{anatomy::randn({k64MiBFloats})}, b{anatomy::randn({k64MiBFloats})};
};

// Into an output allocated once: the kernel alone.
struct AddOutCuda : LargeCudaCase {
  static constexpr const char* kName = "add_out_64mib_cuda";
  anatomy::Tensor out = anatomy::empty({k64MiBFloats}, kCuda);
  at::Tensor tout = at::empty({k64MiBFloats}, at::kCUDA);
  anatomy::Tensor run_anatomy() { return anatomy::add_out(out, a.a, b.a); }
  at::Tensor run_torch() { return at::add_out(tout, a.t, b.t); }
};

// A fresh output per call: the kernel plus whatever the device allocator does between the events
// (torch's caching allocator reuses the block; a driver allocation would show here).
struct AddCuda : LargeCudaCase {
  static constexpr const char* kName = "add_64mib_cuda";
  anatomy::Tensor run_anatomy() { return a.a + b.a; }
  at::Tensor run_torch() { return a.t + b.t; }
};

// The ceiling: one cudaMemcpyAsync, the same code on both sides (each copying its own tensors).
// Bytes read plus written, as for memcpy on the CPU.
struct MemcpyCuda : LargeCudaCase {
  static constexpr const char* kName = "memcpy_64mib_cuda";
  static constexpr int64_t kBytes = 2 * k64MiBFloats * 4;
  anatomy::Tensor out = anatomy::empty({k64MiBFloats}, kCuda);
  at::Tensor tout = at::empty({k64MiBFloats}, at::kCUDA);
  anatomy::Tensor run_anatomy() {
    cuda_memcpy_device(out.data_ptr(), a.a.data_ptr(), out.nbytes());
    return out;
  }
  at::Tensor run_torch() {
    cuda_memcpy_device(tout.data_ptr(), a.t.data_ptr(), tout.nbytes());
    return tout;
  }
};

// Each library's own device-to-device copy_ between contiguous tensors.
struct CopyCuda : LargeCudaCase {
  static constexpr const char* kName = "copy_64mib_cuda";
  static constexpr int64_t kBytes = 2 * k64MiBFloats * 4;
  anatomy::Tensor out = anatomy::empty({k64MiBFloats}, kCuda);
  at::Tensor tout = at::empty({k64MiBFloats}, at::kCUDA);
  anatomy::Tensor run_anatomy() { return out.copy_(a.a); }
  at::Tensor run_torch() { return tout.copy_(a.t); }
};

// a + b.t() on 8192 x 8192 fp32 into an output allocated once: one operand is read across its
// rows (Note [Transposed element-wise operands]). Bytes: two inputs read and one output written.
struct AddTransposedCuda : CaseDefaults {
  static constexpr const char* kName = "add_transposed_8192_fp32_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kSide = 8192;
  static constexpr int64_t kBytes = 3 * kSide * kSide * 4;
  CudaPair a{anatomy::randn({kSide, kSide})}, b{anatomy::randn({kSide, kSide})};
  anatomy::Tensor out = anatomy::empty({kSide, kSide}, kCuda);
  at::Tensor tout = at::empty({kSide, kSide}, at::kCUDA);
  anatomy::Tensor run_anatomy() { return anatomy::add_out(out, a.a, b.a.t()); }
  at::Tensor run_torch() { return at::add_out(tout, a.t, b.t.t()); }
};

// out.copy_(b.t()) on 8192 x 8192 fp32: a transpose, the same tile path. Bytes read plus written.
struct CopyTransposedCuda : AddTransposedCuda {
  static constexpr const char* kName = "copy_transposed_8192_fp32_cuda";
  static constexpr int64_t kBytes = 2 * kSide * kSide * 4;
  anatomy::Tensor run_anatomy() { return out.copy_(b.a.t()); }
  at::Tensor run_torch() { return tout.copy_(b.t.t()); }
};

const int registered = (register_pair<AddTinyCuda>(), register_pair<AddMidCuda>(), register_pair<MemcpyCuda>(),
                        register_pair<CopyCuda>(), register_pair<AddOutCuda>(), register_pair<AddCuda>(),
                        register_pair<AddTransposedCuda>(), register_pair<CopyTransposedCuda>(), 0);

}  // namespace
}  // namespace peer
