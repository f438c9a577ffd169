// CUDA kernels of the binary rows of group math: remainder, fmod, pow, maximum, minimum (and clamp with one bound),
// atan2, threshold_backward.
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

template void launch_binary_group<BinaryGroup::math>(BinaryOp, DType, const ElementwiseArgs<2>&, double, int64_t,
                                                     cudaStream_t);

}  // namespace anatomy::cuda
