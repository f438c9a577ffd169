// CUDA kernels of the binary rows of group bitwise: bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift.
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

void launch_binary_bitwise(BinaryOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float, int64_t alpha_int,
                      cudaStream_t stream) {
  launch_binary_group<BinaryGroup::bitwise>(op, dtype, args, alpha_float, alpha_int, stream);
}

}  // namespace anatomy::cuda
