// The element-wise room's launchers: every kernel of backends/cuda/elementwise/ is started
// through one of these (declared here, defined in the .cu files, called by the *_cuda.cpp files).
#pragma once

#include <cuda_runtime_api.h>
#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/backends/cuda/elementwise/elementwise_layout.h"
#include "anatomy/core/dtype.h"
#include "anatomy/dispatch/ops/binary_rows.h"
#include "anatomy/dispatch/ops/unary_rows.h"

// ---- binary ------------------------------------------------------------------------------------
// Launchers of the element-wise binary and ternary kernels, one per family and .cu file, called
// by elementwise_cuda.cpp with an iteration plan's arguments. Every input has the plan's common dtype;
// the output too, except for comparisons and logical ops (bool).

namespace anatomy::cuda {

// The rows of one group of dispatch/ops/binary_rows.h, with the row's functor (binary_launch.cuh);
// binary_<group>.cu instantiates it for its group. `alpha` is add's and sub's scale and
// threshold_backward's threshold (unused by the other ops): a double for floating dtypes, an
// int64 for integral ones.
template <BinaryGroup G>
void launch_binary_group(BinaryOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float,
                         int64_t alpha_int, cudaStream_t stream);

// ternary.cu: the ternary rows (core/op_lists.h): where(condition, a, b) with the condition
// already cast to `dtype` by the plan; lerp(a, end, weight) for floating dtypes; clamp(x, min,
// max) for numeric ones.
void launch_ternary(TernaryOp op, DType dtype, const ElementwiseArgs<3>& args, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- unary -------------------------------------------------------------------------------------
// Launchers of the element-wise unary kernels, one per family and .cu file, called by
// elementwise_cuda.cpp with an iteration plan's arguments (one input, one output).

namespace anatomy::cuda {

// The rows of one group of dispatch/ops/unary_rows.h, with the row's functor (unary_launch.cuh),
// for the dtypes its kind takes; unary_<group>.cu instantiates it for its group. `k` holds the
// op's non-tensor arguments (softplus's, nan_to_num's), zero for the others.
template <UnaryGroup G>
void launch_unary_group(UnaryOp op, DType dtype, const ElementwiseArgs<1>& args, const UnaryScalars& k,
                        cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- cast --------------------------------------------------------------------------------------
// Launcher of the dtype-conversion kernel (cast.cu), called by copy_cuda.cpp for a copy between
// two dtypes on one device: one kernel reads `src` values and writes `dst` values, any strides.

namespace anatomy::cuda {

// args.output holds `dst` elements, args.inputs[0] `src` ones (dst != src); the values convert
// as the CPU's copy_ converts them (Note [CUDA casts match the CPU's], cast.cu).
void launch_cast(DType dst, DType src, const ElementwiseArgs<1>& args, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- copy --------------------------------------------------------------------------------------
// Launcher of the strided copy kernel (copy.cu), called by copy_cuda.cpp for device-to-device
// copies of one dtype: a gather (contiguous destination), a scatter (contiguous source) or both
// strided. One instantiation per element size (1, 2, 4 or 8 bytes) serves every dtype, since a
// same-dtype copy only moves bits.

namespace anatomy::cuda {

// dst[layout.offsets(i)[0]] = src[layout.offsets(i)[1]] for i in [0, numel). dst and src must
// not overlap.
void launch_strided_copy(void* dst, const void* src, size_t element_size, const StridedLayout<2>& layout, int64_t numel,
                         cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- fill --------------------------------------------------------------------------------------
// Launchers of the fill kernels (fill.cu), called by fill_cuda.cpp. `value_bits` holds the value
// already converted to the element type on the host, in its first `element_size` bytes, so the
// kernels only need one instantiation per element size (1, 2, 4 or 8 bytes) for all dtypes.

namespace anatomy::cuda {

// `numel` elements starting at `data`, one after another.
void launch_fill_dense(void* data, size_t element_size, int64_t numel, uint64_t value_bits, cudaStream_t stream);
// Elements at data + layout.offsets(i) for i in [0, numel).
void launch_fill_strided(void* data, size_t element_size, const StridedLayout<1>& layout, int64_t numel,
                         uint64_t value_bits, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- range -------------------------------------------------------------------------------------
// Launchers of the arange and linspace kernels (range.cu), called by range_cuda.cpp. Each value is
// computed on the device exactly as the CPU kernel (backends/cpu/range_cpu.cpp) computes it: int64
// arithmetic for integral ranges, double for floating ones, rounded once to the element type.

namespace anatomy::cuda {

// out[i] = start + i * step in int64, converted to `dtype`.
void launch_arange_integral(DType dtype, void* out, int64_t n, int64_t start, int64_t step, cudaStream_t stream);
// out[i] = start + i * step in double, converted to `dtype`.
void launch_arange_floating(DType dtype, void* out, int64_t n, double start, double step, cudaStream_t stream);
// linspace's symmetric form: the first half counts up from `start`, the rest down from `end`.
void launch_linspace(DType dtype, void* out, int64_t steps, double start, double end, double step, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- reorder -----------------------------------------------------------------------------------
// Launchers of the reorder kernels (reorder.cu), called by reorder_cuda.cpp: flip, tril and triu.
// Their outputs are fresh contiguous tensors, so element i of the output is the i-th in
// row-major order; the kernels move bits only and are instantiated per element size (1, 2, 4, 8
// bytes), which covers every dtype.

namespace anatomy::cuda {

// out[i] = in[layout.offsets(i)] for i in [0, numel). `in` points at the element the walk starts
// from (the last one along each flipped dim), whose strides in `layout` are negated.
void launch_flip(const void* in, void* out, size_t element_size, const StridedLayout<1>& layout, int64_t numel,
                 cudaStream_t stream);

// Matrices of `rows` x `cols` in the last two dims: out[i] = in[layout.offsets(i)] where element
// (r, c) of i's matrix is on the kept side of `diagonal` (upper: c - r >= diagonal, lower:
// c - r <= diagonal), else zero bits (false, 0, +0.0 in every dtype).
void launch_triangle(bool upper, const void* in, void* out, size_t element_size, const StridedLayout<1>& layout,
                     int64_t numel, int64_t rows, int64_t cols, int64_t diagonal, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- mask --------------------------------------------------------------------------------------
// Launcher of the masked_fill_ kernel (mask.cu), called by mask_cuda.cpp. As for fill_ (above),
// `value_bits` holds the value already converted to the element type on the host, so there is
// one instantiation per element size (1, 2, 4 or 8 bytes) for all dtypes.

namespace anatomy::cuda {

// For i in [0, numel): data[offsets(i)[0]] = value where mask[offsets(i)[1]] is true (the mask
// is a bool tensor's bytes, already broadcast to data's shape by its strides).
void launch_masked_fill(void* data, size_t element_size, const uint8_t* mask, const StridedLayout<2>& layout,
                        int64_t numel, uint64_t value_bits, cudaStream_t stream);

}  // namespace anatomy::cuda
