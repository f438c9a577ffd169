// CUDA kernels of the binary rows of group compare: eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor (bool out).
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

void launch_binary_compare(BinaryOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float, int64_t alpha_int,
                      cudaStream_t stream) {
  launch_binary_group<BinaryGroup::compare>(op, dtype, args, alpha_float, alpha_int, stream);
}

}  // namespace anatomy::cuda
