// CUDA kernels of the unary rows of group math: exp, exp2, expm1, log, log1p, log2, log10, sqrt,
// rsqrt, reciprocal, asin, acos, atan, asinh, acosh, atanh, lgamma, digamma, polygamma.
#include "anatomy/backends/cuda/elementwise/unary_launch.cuh"

namespace anatomy::cuda {

template void launch_unary_group<UnaryGroup::math>(UnaryOp, DType, const ElementwiseArgs<1>&, const UnaryScalars&,
                                                   cudaStream_t);

}  // namespace anatomy::cuda
