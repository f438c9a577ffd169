// CUDA kernels of the binary rows of group bitwise: bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift,
// bitwise_right_shift.
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

template void launch_binary_group<BinaryGroup::bitwise>(BinaryOp, DType, const ElementwiseArgs<2>&, double, int64_t,
                                                        cudaStream_t);

}  // namespace anatomy::cuda
