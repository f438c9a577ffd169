// Bad index values found by kernels. The CPU checks every index before it writes anything and
// raises at once; a CUDA kernel cannot raise, and checking on the host would mean copying the
// indices there and waiting, which only item(), cpu() and printing may do. So:
//
// Note [Bad indices on the device]
//   - A kernel that reads an index checks it and, when it is out of range, reports it through an
//     IndexErrorSink (passed by value) and does not touch memory with it. The first report on a
//     device wins: it claims a device flag with atomicCAS and writes the operator, the value, the
//     bound and the dim into a record in mapped host memory.
//   - The host reads that record after each wait for the device (a copy to host memory behind
//     cpu(), item() or printing, cuda::synchronize(), Stream and Event synchronize) and raises
//     the error there: IndexError with the CPU's message, plus where it came from. Work launched
//     after the bad call ran; its results are as unreliable as the bad call's.
//   - An operator that writes by index (scatter_, index_put_, one_hot's ones) also owns a
//     per-call flag: a first kernel checks every index and sets it, and the writing kernel does
//     nothing when it is set, so a bad index changes no element of the destination, as on the
//     CPU. Reading operators need no such pass: a bad element of their fresh output is written
//     as zero.
//
// This header is compiled by nvcc and the host compiler; it includes nothing that needs fmt.
#pragma once

#include <cstdint>

#include "anatomy/core/macros.h"

namespace anatomy::cuda {

// What a report says; the host turns it into the CPU's error for the same value.
enum class IndexErrorKind : int32_t {
  OutOfBounds = 0,      // IndexError: "index v is out of bounds for dimension d with size n"
  ClassOutOfRange = 1,  // ValueError (one_hot): "class value v is out of range for num_classes n"
};

// The first report on a device, in mapped host memory. `raised` is written last.
struct IndexErrorRecord {
  int32_t raised;
  IndexErrorKind kind;
  uint64_t op;  // the operator's name: the address of a string literal on the host
  int64_t value;
  int64_t bound;
  int64_t dim;
};

// Where a kernel reports a bad index: built on the host by index_error_sink(), passed by value.
struct IndexErrorSink {
  int32_t* claim = nullptr;            // device memory: 0 until a kernel on this device reports
  IndexErrorRecord* record = nullptr;  // mapped host memory, seen by the device at this address
  int32_t* call_flag = nullptr;        // device memory of one call, or null: set by its bad indices
  uint64_t op = 0;

#ifdef __CUDACC__
  __device__ void report(IndexErrorKind kind, int64_t value, int64_t bound, int64_t dim) const {
    if (call_flag != nullptr) *call_flag = 1;  // every bad thread stores the same value
    if (atomicCAS(claim, 0, 1) != 0) return;
    volatile IndexErrorRecord* r = record;
    r->kind = kind;
    r->op = op;
    r->value = value;
    r->bound = bound;
    r->dim = dim;
    __threadfence_system();  // the fields reach host memory before the flag the host tests
    r->raised = 1;
  }

  // `v` as an index into a dim of `size` elements (negative ones count from the end when
  // allow_negative): true with v wrapped into [0, size), or false after reporting it.
  __device__ bool check(int64_t& v, int64_t size, int64_t dim, bool allow_negative) const {
    if (v >= size || v < (allow_negative ? -size : 0)) {
      report(IndexErrorKind::OutOfBounds, v, size, dim);
      return false;
    }
    if (v < 0) v += size;
    return true;
  }

  // Whether an earlier kernel of this call found a bad index (the writing kernels test it first).
  __device__ bool call_failed() const {
    return call_flag != nullptr && *static_cast<volatile int32_t*>(call_flag) != 0;
  }
#endif
};

// The sink of `device` for operator `op` (a string literal), reporting into `call_flag` too when
// it is not null (a zeroed int32 in device memory: make_call_flag in index_error_host.h).
IndexErrorSink index_error_sink(int device, const char* op, int32_t* call_flag = nullptr);

// After a wait for `device`: raises the first bad index a kernel there reported (IndexError, or
// ValueError for one_hot), then forgets it. Does nothing when there is none (one load).
void raise_pending_index_error(int device);

}  // namespace anatomy::cuda
