// A building block elementwise/ shares with blas/, channel_norm/, pooling/ and reduce/ (not a
// launcher: the room's is launch.h).
// The element-wise kernel templates of the CUDA backend, in the two shapes MLX uses: a
// vectorized one for contiguous operands (each thread loads and stores whole 16-byte words)
// and a general one that walks an iteration plan's layout. An op is a functor with a __device__
// operator() taking NIn values of the computation dtype and returning the output value; one
// .cu file per op family instantiates these for its functors and dtypes. An input that is a CPU
// scalar (Note [CPU scalars in device plans]) is read from the kernel's parameters, never from
// memory: the branch on it is the same for every thread, so it costs no divergence. The
// vectorized and strided kernels are launched as dependents of the kernel ahead of them (Note
// [Programmatic dependent launch]).
//
// Device code only: included by .cu files, never by host .cpp files.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/dependent_launch.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_layout.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/core/call_path.h"

namespace anatomy::cuda {

template <typename T, int N>
struct alignas(sizeof(T) * N) AlignedVector {
  T v[N];
};

template <typename F, typename In, int NIn>
__device__ __forceinline__ auto apply(const F& f, const In (&x)[NIn]) {
  if constexpr (NIn == 1) return f(x[0]);
  else if constexpr (NIn == 2) return f(x[0], x[1]);
  else return f(x[0], x[1], x[2]);
}

// Contiguous operands, every pointer aligned to Vec elements: thread t handles elements
// [t * Vec, t * Vec + Vec) with one vector load per input and one vector store; the tail of
// fewer than Vec elements is done one by one by the first threads.
template <int Vec, int NIn, typename Out, typename In, typename F>
__global__ void elementwise_vectorized_kernel(Out* out, ElementwiseInputs<In, NIn> in, int64_t n, F f) {
  release_next_kernel();  // first: Note [Programmatic dependent launch]
  wait_for_prior_kernel();
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t vectors = n / Vec;
  for (int64_t v = first; v < vectors; v += step) {
    AlignedVector<In, Vec> loaded[NIn];
    for (int k = 0; k < NIn; ++k) {
      if (!in.is_scalar[k]) loaded[k] = reinterpret_cast<const AlignedVector<In, Vec>*>(in.ptr[k])[v];
    }
    AlignedVector<Out, Vec> result;
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      In x[NIn];
      for (int k = 0; k < NIn; ++k) x[k] = in.is_scalar[k] ? in.scalar[k] : loaded[k].v[j];
      result.v[j] = apply(f, x);
    }
    reinterpret_cast<AlignedVector<Out, Vec>*>(out)[v] = result;
  }
  for (int64_t i = vectors * Vec + first; i < n; i += step) {
    In x[NIn];
    for (int k = 0; k < NIn; ++k) x[k] = in.is_scalar[k] ? in.scalar[k] : in.ptr[k][i];
    out[i] = apply(f, x);
  }
}

// Any layout: element i's byte offsets come from the plan's loop shape. Index is 32-bit when the
// plan says every offset fits (cheaper division), else 64-bit.
template <typename Index, int NIn, typename Out, typename In, typename F>
__global__ void elementwise_strided_kernel(char* out, ElementwiseInputs<In, NIn> in, ElementwiseLayout<NIn + 1> layout,
                                           Index n, F f) {
  release_next_kernel();  // first: Note [Programmatic dependent launch]
  wait_for_prior_kernel();
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index offsets[NIn + 1];
    layout.byte_offsets(i, offsets);
    In x[NIn];
    for (int k = 0; k < NIn; ++k) {
      x[k] = in.is_scalar[k] ? in.scalar[k]
                             : *reinterpret_cast<const In*>(reinterpret_cast<const char*>(in.ptr[k]) + offsets[k + 1]);
    }
    *reinterpret_cast<Out*>(out + offsets[0]) = apply(f, x);
  }
}

// Note [Transposed element-wise operands]
// `a + b.t()` walks the output (and a) along their contiguous dim, where b.t()'s elements are a
// whole row apart: each warp's 32 loads of b touch 32 different 32-byte sectors, and the strided
// kernel moves about 40% of a copy's bandwidth. When the plan is 2-D (or 2-D with an outer batch
// dim), the output is contiguous along the inner dim and some input is contiguous along the
// outer one instead, the tile kernel below goes through shared memory, as a transpose does: a
// block reads a 32 x 32 tile of each transposed input along its own contiguous dim (coalesced),
// then computes the tile along the output's (coalesced too), reading those inputs from shared
// memory (rows padded to 33 so neither pass has bank conflicts). Other inputs are read in place.
inline constexpr int kTransposeTile = 32;
inline constexpr int kTransposeRows = 8;  // a block is 32 x 8 threads; each does 4 rows of a tile
static_assert(kTransposeTile % kTransposeRows == 0);

template <int NIn, typename Out, typename In, typename F>
__global__ void __launch_bounds__(kTransposeTile* kTransposeRows)
    elementwise_transposed_kernel(char* out, ElementwiseInputs<In, NIn> in, ElementwiseLayout<NIn + 1> layout,
                                  unsigned transposed, int64_t tiles0, int64_t tiles1, int64_t batches, F f) {
  __shared__ In tile[NIn][kTransposeTile][kTransposeTile + 1];
  const int64_t size0 = layout.sizes[0], size1 = layout.sizes[1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles = tiles0 * tiles1 * batches;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t b = t / (tiles0 * tiles1), in_batch = t % (tiles0 * tiles1);
    const int64_t first0 = (in_batch % tiles0) * kTransposeTile, first1 = (in_batch / tiles0) * kTransposeTile;
    int64_t base[NIn + 1];
    for (int k = 0; k <= NIn; ++k) base[k] = layout.ndim == 3 ? b * layout.byte_strides[k][2] : 0;
    auto input_at = [&](int k, int64_t i0, int64_t i1) {
      return *reinterpret_cast<const In*>(reinterpret_cast<const char*>(in.ptr[k]) + base[k + 1] +
                                          i0 * layout.byte_strides[k + 1][0] + i1 * layout.byte_strides[k + 1][1]);
    };
    // Pass 1: the transposed inputs, a thread per element along dim 1 (their contiguous dim),
    // into shared memory; and the other inputs' elements of pass 2 into registers, so that both
    // reads are in flight at once rather than one after the other around the barrier.
    for (int k = 0; k < NIn; ++k) {
      if (!(transposed & (1u << k))) continue;
      for (int r = ty; r < kTransposeTile; r += kTransposeRows) {
        const int64_t i0 = first0 + r, i1 = first1 + tx;
        if (i0 < size0 && i1 < size1) tile[k][r][tx] = input_at(k, i0, i1);
      }
    }
    In direct[kTransposeTile / kTransposeRows][NIn];
    const int64_t i0 = first0 + tx;
    for (int j = 0; j < kTransposeTile / kTransposeRows; ++j) {
      const int64_t i1 = first1 + ty + j * kTransposeRows;
      for (int k = 0; k < NIn; ++k) {
        direct[j][k] = in.is_scalar[k]                                          ? in.scalar[k]
                       : (transposed & (1u << k)) || i0 >= size0 || i1 >= size1 ? In()
                                                                                : input_at(k, i0, i1);
      }
    }
    __syncthreads();
    // Pass 2: the output, a thread per element along dim 0 (its contiguous dim).
    for (int j = 0; j < kTransposeTile / kTransposeRows; ++j) {
      const int r = ty + j * kTransposeRows;
      const int64_t i1 = first1 + r;
      if (i0 < size0 && i1 < size1) {
        In x[NIn];
        for (int k = 0; k < NIn; ++k) x[k] = (transposed & (1u << k)) ? tile[k][tx][r] : direct[j][k];
        *reinterpret_cast<Out*>(out + base[0] + i0 * layout.byte_strides[0][0] + i1 * layout.byte_strides[0][1]) =
            apply(f, x);
      }
    }
    __syncthreads();  // the next tile overwrites the shared memory
  }
}

// The inputs the tile kernel should stage (bit k: input k), or 0 when it does not apply: a 2-D
// plan (3-D with a batch dim outermost) whose output is contiguous along dim 0, with an input
// contiguous along dim 1 rather than dim 0, and both dims at least a tile wide.
template <int NIn, typename Out, typename In>
unsigned transposed_inputs(const ElementwiseArgs<NIn>& args) {
  const ElementwiseLayout<NIn + 1>& l = args.layout;
  if (args.contiguous || l.ndim < 2 || l.ndim > 3) return 0;
  if (l.sizes[0] < kTransposeTile || l.sizes[1] < kTransposeTile) return 0;
  if (l.byte_strides[0][0] != static_cast<int64_t>(sizeof(Out))) return 0;
  unsigned mask = 0;
  for (int k = 0; k < NIn; ++k) {
    if (args.is_scalar[k]) continue;
    const int64_t s0 = l.byte_strides[k + 1][0], s1 = l.byte_strides[k + 1][1];
    if (s1 == static_cast<int64_t>(sizeof(In)) && s0 != s1) mask |= 1u << k;
  }
  return mask;
}

// Launches the right kernel for one functor: vectorized when contiguous and aligned, tiled when
// an input is transposed against the output (Note [Transposed element-wise operands]), else strided.
template <int NIn, typename Out, typename In, typename F>
void launch_elementwise(const ElementwiseArgs<NIn>& args, F f, cudaStream_t stream) {
  ANATOMY_CALL_PATH_STEP();
  if (args.numel == 0) return;
  ElementwiseInputs<In, NIn> in;
  for (int k = 0; k < NIn; ++k) {
    in.ptr[k] = static_cast<const In*>(args.inputs[k]);
    in.is_scalar[k] = args.is_scalar[k];
    in.scalar[k] = In();
    // The host wrote a value of the kernel's input dtype there (make_elementwise_args).
    if (args.is_scalar[k]) std::memcpy(&in.scalar[k], &args.scalar_bits[k], sizeof(In));
  }
  if (args.contiguous) {
    constexpr int kVec = 16 / (sizeof(Out) > sizeof(In) ? sizeof(Out) : sizeof(In));
    bool aligned = reinterpret_cast<uintptr_t>(args.output) % 16 == 0;
    // A CPU scalar's pointer is null, which counts as aligned: it is never loaded.
    for (int k = 0; k < NIn; ++k) aligned = aligned && reinterpret_cast<uintptr_t>(args.inputs[k]) % 16 == 0;
    if (aligned && kVec > 1) {
      launch_dependent(elementwise_vectorized_kernel<kVec, NIn, Out, In, F>,
                       grid_blocks((args.numel + kVec - 1) / kVec), kBlockThreads, stream,
                       static_cast<Out*>(args.output), in, args.numel, f);
    } else {
      launch_dependent(elementwise_vectorized_kernel<1, NIn, Out, In, F>, grid_blocks(args.numel), kBlockThreads,
                       stream, static_cast<Out*>(args.output), in, args.numel, f);
    }
  } else if (const unsigned transposed = transposed_inputs<NIn, Out, In>(args); transposed != 0) {
    const int64_t tiles0 = (args.layout.sizes[0] + kTransposeTile - 1) / kTransposeTile;
    const int64_t tiles1 = (args.layout.sizes[1] + kTransposeTile - 1) / kTransposeTile;
    const int64_t batches = args.layout.ndim == 3 ? args.layout.sizes[2] : 1;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(tiles0 * tiles1 * batches, kMaxBlocks));
    elementwise_transposed_kernel<NIn, Out, In, F><<<blocks, dim3(kTransposeTile, kTransposeRows), 0, stream>>>(
        static_cast<char*>(args.output), in, args.layout, transposed, tiles0, tiles1, batches, f);
  } else if (args.use_32bit) {
    launch_dependent(elementwise_strided_kernel<uint32_t, NIn, Out, In, F>, grid_blocks(args.numel), kBlockThreads,
                     stream, static_cast<char*>(args.output), in, args.layout, static_cast<uint32_t>(args.numel), f);
  } else {
    launch_dependent(elementwise_strided_kernel<int64_t, NIn, Out, In, F>, grid_blocks(args.numel), kBlockThreads,
                     stream, static_cast<char*>(args.output), in, args.layout, args.numel, f);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

// The launchers of the element-wise rows: f(TypeTag<T>) launches the row's kernel for the dtype's
// type T and returns true, or returns false for a dtype the row does not take. The host's checks
// refuse those before anything is launched, so reaching one is an internal error, named `what`.
template <typename F>
void launch_for_dtype(DType dtype, const char* what, F&& f) {
  if (!dtype_switch(dtype, f)) detail::throw_cuda_error(cudaErrorInvalidValue, what, __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
