// CUDA layer_norm and rms_norm over a transposed fp32 or fp64 input (rows 1 element apart, their
// values a multiple of 16 bytes apart: c01 contiguity-bench's transposed_view) on GPUs with thread
// block clusters. Same formulas as norm.cu (Note [Two-pass statistics in fp32]).
//
// Note [Clusters over a tile of rows]
//   The tile kernel (norm_tile.cu) keeps R adjacent rows whole in one block's shared memory. A
//   long row then allows R of only 16 bytes: each load uses half of a 32-byte sector whose other
//   half the next tile's block reads again, maybe after L2 dropped it, and one block fills an SM.
//   Here a cluster of K blocks shares a tile whose columns are whole sectors (W = 64 or 128 bytes
//   of adjacent rows: 16 or 32 floats, 8 or 16 doubles): each block loads n / K columns into its
//   shared memory, summing each row on the way; the blocks' partial sums meet through distributed
//   shared memory, every block adding the K partials in rank order (so all hold the same bits);
//   the deviations' sums take a second pass over shared memory and a second exchange; then each
//   block normalizes its own columns and writes them, consecutive threads to consecutive columns
//   of one output row. One read and one write of each element, as the contiguous kernels.
//   Shared memory holds a column's 16-byte chunks in an order that depends on the column (an XOR
//   swizzle), so that neither the loads' stores (the chunks of a few columns) nor the output's
//   reads (one chunk of 8 consecutive columns) meet two chunks in one bank group.
//
//   For fp32 the clusters are faster than the tile kernel; for fp16 and bf16 they are no faster
//   (32 and 64 tiles read at a fraction of DRAM's bandwidth, and output stores of 2 bytes a lane),
//   so 2-byte elements take the tile kernel (docs/perf.md, "max_pool2d in NHWC words, DLPack's
//   stream objects, the CPU rows from 1 to 16 threads").
#include <cooperative_groups.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/norm/row_norm.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"

namespace anatomy::cuda {
namespace {

namespace cg = cooperative_groups;

inline constexpr int kClusterThreads = 512;
inline constexpr int kClusterWarps = kClusterThreads / 32;
inline constexpr int kMaxClusterBlocks = 8;  // the portable cluster size
inline constexpr int kColumnsPerLoad = 4;    // columns a thread has in flight while loading
// Blocks an SM holds at once (its registers allow two of 512 threads at 64 registers): one block's
// loads run beside the other's reductions and writes.
inline constexpr int kClusterBlocksPerSm = 2;

template <typename A, int R>
struct ClusterShared {
  SumPair<A> warp_sums[kClusterWarps][R];
  SumPair<A> block_sums[2][R];  // this block's partials, read by the cluster: one per exchange
  A mean[R];
  RowScale<A> scale[R];
};

// Where chunk q (of Q) of local column c lies, in 16-byte chunks from the tile's start: 8
// consecutive columns put a given q in 8 different bank groups, and one column's Q chunks too.
template <int Q>
__device__ __forceinline__ int chunk_slot(int c, int q) {
  return c * Q + (q ^ ((c / (8 / Q)) & (Q - 1)));
}

// Each row's sum over the block (s: this thread's rows q * Vec ... + Vec - 1), then over the
// cluster; returns the cluster's total of row threadIdx.x for threads below R.
template <int Q, int Vec, int R, typename A>
__device__ __forceinline__ SumPair<A> cluster_row_sums(SumPair<A> (&s)[Vec], ClusterShared<A, R>& sh, int turn) {
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
  const AddPairOp<A> op;
#pragma unroll
  for (int j = 0; j < Vec; ++j) {
#pragma unroll
    for (int offset = Q; offset < 32; offset <<= 1) s[j] = op.combine(s[j], shfl_from(s[j], lane ^ offset));
  }
  if (lane < Q) {
#pragma unroll
    for (int j = 0; j < Vec; ++j) sh.warp_sums[warp][lane * Vec + j] = s[j];
  }
  __syncthreads();
  if (t < R) {
    SumPair<A> total = op.identity();
#pragma unroll
    for (int w = 0; w < kClusterWarps; ++w) total = op.combine(total, sh.warp_sums[w][t]);
    sh.block_sums[turn][t] = total;
  }
  // Every block's partials written (and, the first time, every block of the cluster running).
  cg::this_cluster().sync();
  SumPair<A> total = op.identity();
  if (t < R) {
    const unsigned blocks = cg::this_cluster().num_blocks();
    for (unsigned k = 0; k < blocks; ++k) {
      total = op.combine(total, cg::this_cluster().map_shared_rank(&sh.block_sums[turn][0], static_cast<int>(k))[t]);
    }
  }
  return total;
}

// One tile of R rows per cluster of gridDim's blocks taken K at a time; block k of the cluster
// holds columns [k * chunk, (k + 1) * chunk) of it in W-byte columns.
template <typename T, int W, bool Rms>
__global__ void __launch_bounds__(kClusterThreads, kClusterBlocksPerSm)
    norm_cluster_kernel(NormKernelArgs<T> a, int64_t chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using A = opmath_t<T>;
  constexpr int Vec = 16 / static_cast<int>(sizeof(T)), Q = W / 16, R = W / static_cast<int>(sizeof(T));
  using V = AlignedVector<T, Vec>;
  extern __shared__ __align__(16) unsigned char norm_cluster_smem[];
  V* tile = reinterpret_cast<V*>(norm_cluster_smem);
  __shared__ ClusterShared<A, R> sh;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int64_t row0 = static_cast<int64_t>(blockIdx.x / cluster.num_blocks()) * R;
  const int rows_here = a.rows - row0 < R ? static_cast<int>(a.rows - row0) : R;
  const int64_t c_begin = rank * chunk < a.n ? rank * chunk : a.n;
  const int cols = static_cast<int>((a.n - c_begin < chunk ? a.n - c_begin : chunk));
  const int t = static_cast<int>(threadIdx.x), q = t % Q, r0 = q * Vec;
  const bool full = r0 + Vec <= rows_here;
  const A zero = A(0);

  // Load the columns, summing each row (its squares for rms_norm) on the way.
  SumPair<A> s[Vec];
#pragma unroll
  for (int j = 0; j < Vec; ++j) s[j] = {zero, zero};
  const T* base = a.x + row0 + r0 + c_begin * a.x_col_stride;
  constexpr int kStep = kClusterThreads / Q;
  for (int c0 = t / Q; c0 < cols; c0 += kColumnsPerLoad * kStep) {
    V v[kColumnsPerLoad];
#pragma unroll
    for (int u = 0; u < kColumnsPerLoad; ++u) {
      const int c = c0 + u * kStep;
      if (c >= cols) continue;
      const T* p = base + c * a.x_col_stride;
      if (full) {
        v[u] = *reinterpret_cast<const V*>(p);
      } else {
#pragma unroll
        for (int j = 0; j < Vec; ++j) v[u].v[j] = r0 + j < rows_here ? p[j] : static_cast<T>(zero);
      }
    }
#pragma unroll
    for (int u = 0; u < kColumnsPerLoad; ++u) {
      const int c = c0 + u * kStep;
      if (c >= cols) continue;
      tile[chunk_slot<Q>(c, q)] = v[u];
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        const A x = to_compute<A>(v[u].v[j]);
        s[j].a += Rms ? x * x : x;
      }
    }
  }
  SumPair<A> total = cluster_row_sums<Q, Vec>(s, sh, 0);
  if constexpr (Rms) {
    if (t < R) sh.scale[t] = rms_norm_scale(total.a, a);
  } else {
    if (t < R) sh.mean[t] = total.a / static_cast<A>(a.n);
    __syncthreads();
    // The second pass of the statistics, over the columns in shared memory.
    A m[Vec];
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      m[j] = sh.mean[r0 + j];
      s[j] = {zero, zero};
    }
    for (int c = t / Q; c < cols; c += kStep) {
      const V v = tile[chunk_slot<Q>(c, q)];
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        const A d = to_compute<A>(v.v[j]) - m[j];
        s[j].a += d;
        s[j].b += d * d;
      }
    }
    total = cluster_row_sums<Q, Vec>(s, sh, 1);
    if (t < R) sh.scale[t] = layer_norm_scale(sh.mean[t], total, a, row0 + t, rank == 0 && t < rows_here);
  }
  // This block has read the cluster's partials for the last time; the others may still read its
  // own, so it waits for them before leaving (barrier_wait below), not before writing.
  cluster.barrier_arrive();
  __syncthreads();

  // Write the columns: warp w takes chunk w % Q (rows qo * Vec ... + Vec - 1) of 32 consecutive
  // columns, one output row per store, consecutive lanes to consecutive columns.
  const int lane = t % 32, warp = t / 32, qo = warp % Q;
  RowScale<A> sc[Vec];
#pragma unroll
  for (int j = 0; j < Vec; ++j) sc[j] = sh.scale[qo * Vec + j];
  constexpr int kOutStep = (kClusterWarps / Q) * 32;
  for (int c = (warp / Q) * 32 + lane; c < cols; c += kOutStep) {
    const V v = tile[chunk_slot<Q>(c, qo)];
    const int64_t col = c_begin + c;
    const A w = a.w ? to_compute<A>(a.w[col]) : A(1), b = a.b ? to_compute<A>(a.b[col]) : zero;
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      const int r = qo * Vec + j;
      if (r >= rows_here) break;
      A o = ((to_compute<A>(v.v[j]) - sc[j].shift) - sc[j].correction) * sc[j].rstd;
      if (a.w) o *= w;
      if (a.b) o += b;
      a.y[(row0 + r) * a.n + col] = from_compute<T>(o);
    }
  }
  cluster.barrier_wait();
#else
  __trap();  // launched only where the device and this binary have clusters (cluster_shape)
#endif
}

template <typename T, int W>
inline constexpr int64_t kClusterStaticBytes = static_cast<int64_t>(sizeof(ClusterShared<opmath_t<T>, W / sizeof(T)>));

// Shared memory a block may take so that kClusterBlocksPerSm share an SM, and at most what one
// block may ask for.
int64_t cluster_block_budget() {
  const DeviceLimits& l = current_device_limits();
  return std::min<int64_t>(
      l.shared_memory_per_multiprocessor / kClusterBlocksPerSm - l.reserved_shared_memory_per_block,
      l.shared_memory_per_block_optin);
}

// Whether clusters of k blocks of `Kernel` run on the current device: the binary holds the kernel
// for a cluster-capable architecture (a build for older GPUs, run through its PTX on a newer one,
// holds the __trap instead), and k blocks with the largest shared memory cluster_blocks may give
// each fit the device's SMs at once (a partitioned GPU may hold fewer). The first call per device
// also lets the kernel take that shared memory; each answer is asked of the runtime once.
template <auto Kernel, typename T, int W>
bool clusters_run(int k) {
  constexpr int kSizes = 4;  // k = 1, 2, 4, 8
  // 0: not asked, 1: yes, -1: no; read without the lock on every launch once answered.
  static std::array<std::array<std::atomic<int8_t>, kSizes>, kDeviceLimitsDevices> known{};
  static std::mutex mutex;
  const int device = current_device_limits().device, slot = std::countr_zero(static_cast<unsigned>(k));
  std::atomic<int8_t>& answer = known[device][slot];
  if (const int8_t a = answer.load(std::memory_order_acquire); a != 0) return a > 0;
  const std::lock_guard<std::mutex> lock(mutex);
  if (answer.load(std::memory_order_relaxed) == 0) {
    const int64_t bytes = cluster_block_budget() - kClusterStaticBytes<T, W>;
    cudaFuncAttributes attributes{};
    ANATOMY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, Kernel));
    ANATOMY_CUDA_CHECK(
        cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    int clusters = 0;
    if (std::min(attributes.binaryVersion, attributes.ptxVersion) >= 90) {
      cudaLaunchAttribute attribute{};
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim = {static_cast<unsigned>(k), 1, 1};
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(static_cast<unsigned>(k));
      config.blockDim = dim3(kClusterThreads);
      config.dynamicSmemBytes = static_cast<size_t>(bytes);
      config.attrs = &attribute;
      config.numAttrs = 1;
      ANATOMY_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, Kernel, &config));
    }
    answer.store(clusters > 0 ? 1 : -1, std::memory_order_release);
  }
  return answer.load(std::memory_order_relaxed) > 0;
}

// Blocks per cluster for a tile of W-byte columns: the fewest whose share of the columns fits the
// block budget, more (while each keeps 64 columns) until the grid fills every SM's blocks; 0 when
// 8 do not fit.
template <typename T, int W>
int cluster_blocks(int64_t rows, int64_t cols) {
  const DeviceLimits& l = current_device_limits();
  const int64_t budget = cluster_block_budget() - kClusterStaticBytes<T, W>;
  const int64_t tiles = (rows + W / static_cast<int64_t>(sizeof(T)) - 1) / (W / static_cast<int64_t>(sizeof(T)));
  for (int k = 1; k <= kMaxClusterBlocks; k *= 2) {
    const int64_t chunk = (cols + k - 1) / k;
    if (chunk * W > budget) continue;
    while (k < kMaxClusterBlocks && tiles * k < int64_t{kClusterBlocksPerSm} * l.multiprocessors &&
           (cols + 2 * k - 1) / (2 * k) >= 64) {
      k *= 2;
    }
    return k;
  }
  return 0;
}

template <typename T, int W, bool Rms>
bool launch_clusters_of(const NormKernelArgs<T>& a, cudaStream_t stream) {
  constexpr auto kernel = norm_cluster_kernel<T, W, Rms>;
  const int k = cluster_blocks<T, W>(a.rows, a.n);
  if (k == 0 || !clusters_run<kernel, T, W>(k)) return false;
  constexpr int64_t R = W / static_cast<int64_t>(sizeof(T));
  const int64_t chunk = (a.n + k - 1) / k, tiles = (a.rows + R - 1) / R;
  const int64_t bytes = chunk * W;
  if (tiles * k > int64_t{INT32_MAX}) return false;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(k);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(tiles * k));
  config.blockDim = dim3(kClusterThreads);
  config.dynamicSmemBytes = static_cast<size_t>(bytes);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  ANATOMY_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, a, chunk));
  return true;
}

template <typename T, bool Rms>
bool launch_clusters(const NormKernelArgs<T>& a, cudaStream_t stream) {
  if (!current_device_limits().cluster_launch || a.x_stride != 1 || reinterpret_cast<uintptr_t>(a.x) % 16 != 0 ||
      (a.x_col_stride * static_cast<int64_t>(sizeof(T))) % 16 != 0) {
    return false;
  }
  // Whole 128-byte lines where a block's share fits, else 64 bytes (two sectors).
  return launch_clusters_of<T, 128, Rms>(a, stream) || launch_clusters_of<T, 64, Rms>(a, stream);
}

}  // namespace

bool launch_row_norm_clusters(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols,
                              double eps, cudaStream_t stream) {
  bool launched = false;
  dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // 2-byte elements stay with the tile kernel, which measured as fast (Note [Clusters over a tile
    // of rows]).
    if constexpr (is_floating_v<T> && sizeof(T) >= 4) {
      const NormKernelArgs<T> a = norm_kernel_args<T>(b, rows, cols, eps);
      launched = kind == RowNormKind::Rms ? launch_clusters<T, true>(a, stream) : launch_clusters<T, false>(a, stream);
    }
    return true;
  });
  return launched;
}

}  // namespace anatomy::cuda
