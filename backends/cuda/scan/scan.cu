// CUDA: cumsum, cumprod and logcumsumexp (launch.h), the kernels of scan_kernels.cuh over a fold
// policy. The running value and each step are the CPU's (dispatch/ops/scan_functors.h: float for
// fp16/bf16, double for fp32 and fp64, and for integers and bool a uint64 whose wrapping
// arithmetic gives two's-complement results). Integer scans are therefore exactly the CPU's
// (sums and products modulo 2^64 do not depend on the order); floating ones differ from the
// CPU's serial loop by rounding only where the parallel scans regroup it.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/scan/scan_kernels.cuh"
#include "anatomy/dispatch/ops/scan_functors.h"

namespace anatomy::cuda {
namespace {

// Note [Scan policies]: elements converted to the accumulation type and back.
template <typename T, typename CombineOp>
struct FoldScan {
  using In = T;
  using Acc = scan::scan_acc_t<T>;
  using Out = T*;
  using Op = CombineOp;
  // The totals are Acc values, scanned like elements of that type (fp16's float totals in double).
  using Totals = FoldScan<Acc, CombineOp>;
  __device__ __forceinline__ static Acc load(const T* in, int64_t offset, int64_t) {
    return scan::to_scan_acc<T>(in[offset]);
  }
  __device__ __forceinline__ static void store(T* out, int64_t offset, Acc v) {
    out[offset] = scan::from_scan_acc<T>(v);
  }
};

size_t fold_scratch_bytes(DType dtype, const ScanRows& rows, bool innermost) {
  size_t acc_bytes = 0;
  dtype_switch(dtype, [&](auto tag) {
    acc_bytes = sizeof(scan::scan_acc_t<typename decltype(tag)::type>);
    return true;
  });
  return scan_kernels::scratch_bytes(acc_bytes, rows, innermost);
}

template <typename Op>
bool launch_fold(DType dtype, const void* in, void* out, const ScanRows& rows, bool innermost, void* scratch,
                 cudaStream_t stream) {
  return dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (Op::template takes_v<T>) {
      scan_kernels::scan<FoldScan<T, Op>>(static_cast<const T*>(in), static_cast<T*>(out), rows, innermost, scratch,
                                          stream);
      return true;
    } else {
      return false;
    }
  });
}

}  // namespace

size_t scan_scratch_bytes(ScanKind kind, DType dtype, const ScanRows& rows, bool innermost) {
  switch (kind) {
    case ScanKind::Max:
    case ScanKind::Min:
      return extremum_scan_scratch_bytes(dtype, rows, innermost);
    default:
      return fold_scratch_bytes(dtype, rows, innermost);
  }
}

bool launch_scan(ScanKind kind, DType dtype, const void* in, ScanOut out, const ScanRows& rows, bool innermost,
                 void* scratch, cudaStream_t stream) {
  switch (kind) {
    case ScanKind::Sum:
      return launch_fold<scan::SumOp>(dtype, in, out.values, rows, innermost, scratch, stream);
    case ScanKind::Prod:
      return launch_fold<scan::ProdOp>(dtype, in, out.values, rows, innermost, scratch, stream);
    case ScanKind::LogSumExp:
      return launch_fold<scan::LogAddExpOp>(dtype, in, out.values, rows, innermost, scratch, stream);
    case ScanKind::Max:
    case ScanKind::Min:
      return launch_extremum_scan(kind == ScanKind::Max, dtype, in, out, rows, innermost, scratch, stream);
  }
  return false;
}

}  // namespace anatomy::cuda
