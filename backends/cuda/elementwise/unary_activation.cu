// CUDA kernels of the unary rows of group activation: sin, cos, tan, sinh, cosh, tanh, sigmoid,
// silu, erf, erfc, erfinv, gelu (both forms), softplus, logit, mish, hardswish, hardsigmoid,
// leaky_relu, hardtanh, elu, selu.
#include "anatomy/backends/cuda/elementwise/unary_launch.cuh"

namespace anatomy::cuda {

template void launch_unary_group<UnaryGroup::activation>(UnaryOp, DType, const ElementwiseArgs<1>&, const UnaryScalars&,
                                                         cudaStream_t);

}  // namespace anatomy::cuda
