// Launchers of one_hot (one_hot.cu), called by one_hot_cuda.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/index_error.h"

namespace anatomy::cuda {

// The values are one strided run (strided_run.h): value i is in[i * stride].
//
// min_max[0], min_max[1] = the least and the greatest of the numel (> 0) values, in one CUB
// reduction. Like CUB's entry points: with temp == nullptr it only writes the bytes of temporary
// storage it needs into temp_bytes.
void one_hot_min_max(void* temp, size_t& temp_bytes, const int64_t* in, int64_t stride, int64_t numel, int64_t* min_max,
                     cudaStream_t stream);

// out (contiguous [numel, num_classes]) = 1 where the class is value i, else 0, every
// element written once. A value outside [0, num_classes) is reported through `sink`
// (IndexErrorKind::ClassOutOfRange) and its row stays all zeros; with num_classes 0 the output
// is empty and the first value is reported.
void launch_one_hot(const int64_t* in, int64_t stride, int64_t numel, int64_t num_classes, int64_t* out,
                    const IndexErrorSink& sink, cudaStream_t stream);

}  // namespace anatomy::cuda
