// The element-wise kernel templates of the CUDA backend, in the two shapes MLX uses: a
// vectorized one for contiguous operands (each thread loads and stores whole 16-byte words)
// and a general one that walks an iteration plan's layout. An op is a functor with a __device__
// operator() taking NIn values of the computation dtype and returning the output value; one
// .cu file per op family instantiates these for its functors and dtypes. An input that is a CPU
// scalar (Note [CPU scalars in device plans]) is read from the kernel's parameters, never from
// memory: the branch on it is the same for every thread, so it costs no divergence.
//
// Device code only: included by .cu files, never by host .cpp files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "anatomy/backends/cuda/cuda_check.h"
#include "anatomy/backends/cuda/elementwise_layout.h"
#include "anatomy/backends/cuda/launch_config.h"

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

// Launches the right kernel for one functor: vectorized when contiguous and aligned, else strided.
template <int NIn, typename Out, typename In, typename F>
void launch_elementwise(const ElementwiseArgs<NIn>& args, F f, cudaStream_t stream) {
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
      elementwise_vectorized_kernel<kVec, NIn, Out, In, F>
          <<<grid_blocks((args.numel + kVec - 1) / kVec), kBlockThreads, 0, stream>>>(static_cast<Out*>(args.output), in,
                                                                                      args.numel, f);
    } else {
      elementwise_vectorized_kernel<1, NIn, Out, In, F>
          <<<grid_blocks(args.numel), kBlockThreads, 0, stream>>>(static_cast<Out*>(args.output), in, args.numel, f);
    }
  } else if (args.use_32bit) {
    elementwise_strided_kernel<uint32_t, NIn, Out, In, F><<<grid_blocks(args.numel), kBlockThreads, 0, stream>>>(
        static_cast<char*>(args.output), in, args.layout, static_cast<uint32_t>(args.numel), f);
  } else {
    elementwise_strided_kernel<int64_t, NIn, Out, In, F><<<grid_blocks(args.numel), kBlockThreads, 0, stream>>>(
        static_cast<char*>(args.output), in, args.layout, args.numel, f);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
