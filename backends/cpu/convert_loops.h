// Vectorized conversions between fp32 and the 16-bit floats over contiguous arrays, for copy_
// (and so `to`) between dtypes: bf16 by bit arithmetic the compiler vectorizes, fp16 by the
// CPU's F16C instructions (8 at a time). The generic loop of copy_loops.h converts one
// element at a time through core/half.h's and core/bfloat16.h's integer code, whose branches
// keep it scalar: 16M fp32 to fp16 took 34 ms at 1 thread on the development VM.
//
// The results are those of core/half.h and core/bfloat16.h bit for bit (round to nearest even,
// overflow to inf, subnormals, NaN quieted with its top payload bits; tests/core/test_convert_loops.cpp).
#pragma once

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cpu {

// dst[i] = src[i] converted, for i in [0, n); src and dst of the two dtypes, not overlapping.
using ConvertLoop = void (*)(const void* src, void* dst, int64_t n);

// The vectorized loop from `from` to `to` on this CPU (fp32 <-> bf16 everywhere, fp32 <-> fp16
// where the CPU has AVX2 and F16C), or nullptr for any other pair.
ConvertLoop convert_loop(DType from, DType to);

}  // namespace anatomy::cpu
