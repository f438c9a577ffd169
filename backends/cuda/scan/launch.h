// The scan room's launchers: the scan kernels (scan_kernels.cuh): cumsum, cumprod and logcumsumexp in scan.cu,
// cummax and cummin in scan_extremum.cu; called by scan_cuda.cpp.
//
// A scan walks rows: the elements along the scanned dim, `length` of them, `in_stride` and
// `out_stride` apart. `rows` holds the other dims (the input's strides, then the output's), so
// row r starts at offsets(r); `num_rows` is their product. The input already has the result
// dtype (as on the CPU, cumsum and cumprod cast it first).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

struct ScanRows {
  StridedLayout<2> rows;
  int64_t num_rows = 0;
  int64_t length = 0;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
};

enum class ScanKind { Sum, Prod, LogSumExp, Max, Min };

// Where results go: `values` of the input's dtype, and for Max and Min the int64 `indices`,
// laid out like the values.
struct ScanOut {
  void* values = nullptr;
  int64_t* indices = nullptr;
};

// `innermost`: the rows are contiguous in the output (out_stride 1), so a warp or a block scans
// each row; otherwise neighbouring rows are neighbours in memory and one thread walks each row.
// A few long rows are cut into tiles scanned in parallel (Note [Tiled scans] in
// scan_kernels.cuh), which needs scratch memory: scan_scratch_bytes says how much (0: none), and
// launch_scan gets it.
size_t scan_scratch_bytes(ScanKind kind, DType dtype, const ScanRows& rows, bool innermost);

// Inclusive sums, products, log-sum-exps (in the CPU's accumulation types) or running extrema
// with their indices, of each row. Returns false for a dtype the kind does not take.
bool launch_scan(ScanKind kind, DType dtype, const void* in, ScanOut out, const ScanRows& rows, bool innermost,
                 void* scratch, cudaStream_t stream);

// cummax and cummin (scan_extremum.cu), which launch_scan calls for Max and Min.
size_t extremum_scan_scratch_bytes(DType dtype, const ScanRows& rows, bool innermost);
bool launch_extremum_scan(bool is_max, DType dtype, const void* in, ScanOut out, const ScanRows& rows, bool innermost,
                          void* scratch, cudaStream_t stream);

}  // namespace anatomy::cuda
