// CUDA: cummax and cummin (launch.h), the kernels of scan_kernels.cuh over (value, index) pairs
// combined by the CPU's rule (scan::ExtremumOp in dispatch/ops/scan_functors.h: ties take the
// latest index, NaN sticks with the latest NaN's index). The op picks one of its operands, so
// every path gives the CPU's values and indices exactly, whatever the grouping.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/scan/scan_kernels.cuh"
#include "anatomy/dispatch/ops/scan_functors.h"

namespace anatomy::cuda {
namespace {

// Note [Scan policies]: each element paired with its index along the row; values and indices
// stored at the same offset (both results are contiguous, of one shape).
template <typename T, bool IsMax>
struct ExtremumScan {
  using In = T;
  using Acc = scan::ValueIndex<T>;
  struct Out {
    T* values;
    int64_t* indices;
  };
  using Op = scan::ExtremumOp<IsMax>;
  using Totals = scan_kernels::CarryScan<Acc, Op>;
  __device__ __forceinline__ static Acc load(const T* in, int64_t offset, int64_t i) {
    return scan::value_index(in[offset], i);
  }
  __device__ __forceinline__ static void store(Out out, int64_t offset, Acc v) {
    out.values[offset] = convert<T>(v.value);
    out.indices[offset] = v.index;
  }
};

template <bool IsMax>
bool launch(DType dtype, const void* in, ScanOut out, const ScanRows& rows, bool innermost, void* scratch,
            cudaStream_t stream) {
  return dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = ExtremumScan<T, IsMax>;
    scan_kernels::scan<S>(static_cast<const T*>(in), typename S::Out{static_cast<T*>(out.values), out.indices}, rows,
                          innermost, scratch, stream);
    return true;
  });
}

}  // namespace

size_t extremum_scan_scratch_bytes(DType dtype, const ScanRows& rows, bool innermost) {
  size_t acc_bytes = 0;
  dtype_switch(dtype, [&](auto tag) {
    acc_bytes = sizeof(scan::ValueIndex<typename decltype(tag)::type>);
    return true;
  });
  return scan_kernels::scratch_bytes(acc_bytes, rows, innermost);
}

bool launch_extremum_scan(bool is_max, DType dtype, const void* in, ScanOut out, const ScanRows& rows, bool innermost,
                          void* scratch, cudaStream_t stream) {
  return is_max ? launch<true>(dtype, in, out, rows, innermost, scratch, stream)
                : launch<false>(dtype, in, out, rows, innermost, scratch, stream);
}

}  // namespace anatomy::cuda
