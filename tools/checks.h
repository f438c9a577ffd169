// What the experiments check a result with before they time it, and the inputs they make: random
// tensors that are never all zeros, and the relative error of a result against an fp64 (or, for
// int8, an exact int64) reference computed on the CPU from the same inputs.
#pragma once

#include "anatomy/anatomy.h"

namespace anatomy::tools {

// Normal values for floating dtypes (drawn in fp32, then rounded to `dtype`), small integers in
// [-2, 2] for integer dtypes (so that products' sums stay small on both sides of a check).
Tensor random_tensor(IntArrayRef shape, DType dtype, Device device);

// The largest difference between `got` and `want`, relative to want's largest magnitude.
double relative_error(const Tensor& got, const Tensor& want);

// The error of the first `rows` rows of out = a @ b against the product of the same rows in
// fp64 on the CPU (int8: in int64, wrapped back to int8 as the product wraps).
double matmul_error(const Tensor& a, const Tensor& b, const Tensor& out, int64_t rows = 4);

// The largest relative error a product of `dtype` may show and still be right: fp16 1e-2, bf16
// 5e-2, fp32 5e-3 (TF32 when its switch is on), fp64 1e-10, integers exact.
double product_tolerance(DType dtype);

}  // namespace anatomy::tools
