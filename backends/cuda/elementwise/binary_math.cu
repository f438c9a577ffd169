// CUDA kernels of the binary rows of group math: remainder, fmod, pow, maximum, minimum (and clamp with one bound), atan2, threshold_backward.
#include "anatomy/backends/cuda/elementwise/binary_launch.cuh"

namespace anatomy::cuda {

void launch_binary_math(BinaryOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float, int64_t alpha_int,
                      cudaStream_t stream) {
  launch_binary_group<BinaryGroup::math>(op, dtype, args, alpha_float, alpha_int, stream);
}

}  // namespace anatomy::cuda
