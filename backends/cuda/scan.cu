// CUDA kernels of cumsum and cumprod (scan.h). The running value has the CPU's type (scan_cpu.cpp):
// float for fp16/bf16, double for fp32 and fp64, and for integers and bool a uint64 whose wrapping
// arithmetic gives two's-complement results. Integer scans are therefore exactly the CPU's (sums
// and products modulo 2^64 do not depend on the order); floating ones differ from the CPU's
// serial loop by rounding only where the parallel scans below regroup it.
//
// Three shapes, all in a fixed order (bit-identical run to run, no atomics):
//   - rows contiguous in the output, up to kWarpRowMax long: one warp per row, chunks of 32
//     scanned with cub::WarpScan, each chunk's result combined with the carry of the chunks before;
//   - longer contiguous rows: one block per row, chunks of kBlockChunk with cub::BlockScan, the
//     same carry;
//   - a dim that is not innermost: one thread per row, walking it serially like the CPU (the same
//     bits as the CPU for every dtype), threads of a warp on neighbouring rows, so coalesced.
// A chunk's carry is combined only from the second chunk on: the first chunk's values are the
// scan of the row's own elements, so a row of -0.0 sums to -0.0, as on the CPU.
#include <cub/block/block_scan.cuh>
#include <cub/util_ptx.cuh>
#include <cub/warp/warp_scan.cuh>
#include <type_traits>

#include "anatomy/backends/cuda/cuda_check.h"
#include "anatomy/backends/cuda/dtype_switch.h"
#include "anatomy/backends/cuda/launch_config.h"
#include "anatomy/backends/cuda/scan.h"
#include "anatomy/backends/cuda/strided_offsets.cuh"
#include "anatomy/core/convert.h"

namespace anatomy::cuda {
namespace {

constexpr int64_t kWarpRowMax = 256;
constexpr int kWarpsPerBlock = kBlockThreads / 32;
constexpr int kScanThreads = 256;
constexpr int kScanItems = 4;  // per thread: a block scans 1024 elements at a time
constexpr int64_t kBlockChunk = kScanThreads * kScanItems;

// The CPU's accumulation type and conversions (scan_cpu.cpp's Acc, to_acc, from_acc).
template <typename T>
using scan_acc_t =
    std::conditional_t<is_reduced_float_v<T>, float, std::conditional_t<std::is_integral_v<T>, uint64_t, double>>;

template <typename T>
__device__ __forceinline__ scan_acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return convert<scan_acc_t<T>>(v);
}

template <typename T>
__device__ __forceinline__ T from_acc(scan_acc_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return convert<T>(v);
}

template <bool Prod>
struct ScanOp {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    if constexpr (Prod) return a * b;
    else return a + b;
  }
  // What pads a partial chunk; it only ever follows the row's last element.
  template <typename A>
  __device__ __forceinline__ static A identity() {
    return Prod ? A(1) : A(0);
  }
};

template <typename T, bool Prod>
__global__ void scan_rows_warp_kernel(const T* in, T* out, ScanRows r) {
  using Acc = scan_acc_t<T>;
  using WarpScan = cub::WarpScan<Acc>;
  __shared__ typename WarpScan::TempStorage temp[kWarpsPerBlock];
  const ScanOp<Prod> op;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; row < r.num_rows; row += warps) {
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0];
    T* b = out + o[1];
    Acc carry = ScanOp<Prod>::template identity<Acc>();
    for (int64_t base = 0; base < r.length; base += 32) {
      const int64_t i = base + lane;
      Acc x = i < r.length ? to_acc<T>(a[i * r.in_stride]) : ScanOp<Prod>::template identity<Acc>();
      WarpScan(temp[warp]).InclusiveScan(x, x, op);
      if (base > 0) x = op(carry, x);
      if (i < r.length) b[i * r.out_stride] = from_acc<T>(x);
      carry = cub::ShuffleIndex<32>(x, 31, 0xffffffffu);
      __syncwarp();
    }
  }
}

template <typename T, bool Prod>
__global__ void __launch_bounds__(kScanThreads) scan_rows_block_kernel(const T* in, T* out, ScanRows r) {
  using Acc = scan_acc_t<T>;
  using BlockScan = cub::BlockScan<Acc, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const ScanOp<Prod> op;
  for (int64_t row = blockIdx.x; row < r.num_rows; row += gridDim.x) {
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0];
    T* b = out + o[1];
    Acc carry = ScanOp<Prod>::template identity<Acc>();
    for (int64_t base = 0; base < r.length; base += kBlockChunk) {
      // A blocked arrangement: thread t holds elements base + t * kScanItems + k.
      const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kScanItems;
      Acc x[kScanItems];
#pragma unroll
      for (int k = 0; k < kScanItems; ++k) {
        const int64_t i = first + k;
        x[k] = i < r.length ? to_acc<T>(a[i * r.in_stride]) : ScanOp<Prod>::template identity<Acc>();
      }
      Acc aggregate;
      BlockScan(temp).InclusiveScan(x, x, op, aggregate);
#pragma unroll
      for (int k = 0; k < kScanItems; ++k) {
        const int64_t i = first + k;
        if (base > 0) x[k] = op(carry, x[k]);
        if (i < r.length) b[i * r.out_stride] = from_acc<T>(x[k]);
      }
      carry = base > 0 ? op(carry, aggregate) : aggregate;
      __syncthreads();  // temp is reused by the next chunk
    }
  }
}

template <typename T, bool Prod>
__global__ void scan_columns_kernel(const T* in, T* out, ScanRows r) {
  using Acc = scan_acc_t<T>;
  const ScanOp<Prod> op;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < r.num_rows; row += step) {
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0];
    T* b = out + o[1];
    Acc acc = to_acc<T>(a[0]);
    b[0] = from_acc<T>(acc);
    for (int64_t i = 1; i < r.length; ++i) {
      acc = op(acc, to_acc<T>(a[i * r.in_stride]));
      b[i * r.out_stride] = from_acc<T>(acc);
    }
  }
}

template <typename T, bool Prod>
void scan(const T* in, T* out, const ScanRows& r, bool innermost, cudaStream_t stream) {
  if (!innermost) {
    scan_columns_kernel<T, Prod><<<grid_blocks(r.num_rows), kBlockThreads, 0, stream>>>(in, out, r);
  } else if (r.length <= kWarpRowMax) {
    const int64_t blocks = std::min<int64_t>((r.num_rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks);
    scan_rows_warp_kernel<T, Prod><<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(in, out, r);
  } else {
    const int64_t blocks = std::min<int64_t>(r.num_rows, kMaxBlocks);
    scan_rows_block_kernel<T, Prod><<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(in, out, r);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool launch_scan(bool prod, DType dtype, const void* in, void* out, const ScanRows& rows, bool innermost,
                 cudaStream_t stream) {
  return dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (prod) scan<T, true>(static_cast<const T*>(in), static_cast<T*>(out), rows, innermost, stream);
    else scan<T, false>(static_cast<const T*>(in), static_cast<T*>(out), rows, innermost, stream);
    return true;
  });
}

}  // namespace anatomy::cuda
