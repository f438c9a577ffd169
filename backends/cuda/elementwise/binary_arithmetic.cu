// CUDA kernels of the binary rows of group arithmetic: add, sub, mul, div (true, trunc and floor rounding).
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

template void launch_binary_group<BinaryGroup::arithmetic>(BinaryOp, DType, const ElementwiseArgs<2>&, double, int64_t,
                                                           cudaStream_t);

}  // namespace anatomy::cuda
