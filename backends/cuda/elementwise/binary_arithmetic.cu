// CUDA kernels of the binary rows of group arithmetic: add, sub, mul, div (true, trunc and floor rounding).
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

void launch_binary_arithmetic(BinaryOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float, int64_t alpha_int,
                      cudaStream_t stream) {
  launch_binary_group<BinaryGroup::arithmetic>(op, dtype, args, alpha_float, alpha_int, stream);
}

}  // namespace anatomy::cuda
