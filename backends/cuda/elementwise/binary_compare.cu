// CUDA kernels of the binary rows of group compare: eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor (bool
// out).
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

template void launch_binary_group<BinaryGroup::compare>(BinaryOp, DType, const ElementwiseArgs<2>&, double, int64_t,
                                                        cudaStream_t);

}  // namespace anatomy::cuda
