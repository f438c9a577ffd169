// CUDA kernels of the unary rows of group basic: neg, abs, sign, the rounding ops, relu, square,
// frac, nan_to_num, bitwise_not and the predicates (isnan, isinf, isfinite, signbit, isposinf,
// isneginf, logical_not).
#include "anatomy/backends/cuda/elementwise/unary_launch.cuh"

namespace anatomy::cuda {

template void launch_unary_group<UnaryGroup::basic>(UnaryOp, DType, const ElementwiseArgs<1>&, const UnaryScalars&,
                                                    cudaStream_t);

}  // namespace anatomy::cuda
