// DLPack export and import: tensors cross to and from PyTorch, JAX, CuPy and NumPy (or any
// library that speaks DLPack) without a copy.
//
//   DLManagedTensor* m = anatomy::interop::to_dlpack(t);   // the legacy (0.x) ABI
//   anatomy::Tensor u = anatomy::interop::from_dlpack(m);  // shares t's memory
//
// Both ABIs are spoken: DLManagedTensor as Debian's dlpack.h (0.6) declares it, and
// DLManagedTensorVersioned as DLPack 1.x defines it (interop/dlpack_versioned.h declares the 1.x
// structures where the system header lacks them). docs/interop.md has the rules in full.
#pragma once

#include <cstdint>

#include "anatomy/anatomy.h"
#include "anatomy/interop/dlpack_versioned.h"

namespace anatomy::interop {

// Exports `t` without a copy. The returned tensor keeps t's storage alive until the consumer
// calls its deleter (exactly once); sizes and strides are in elements, strides always given (1
// for a dim of one element, as PyTorch exports), `data` is t's first element and byte_offset 0.
// A CPU tensor (pinned or not) is kDLCPU, a CUDA tensor kDLCUDA with its device index (the
// current device for a tensor on "cuda" without one). Throws a typed anatomy error naming
// to_dlpack for what DLPack cannot say: an undefined tensor (ValueError), a meta tensor
// (DeviceError).
DLManagedTensor* to_dlpack(const Tensor& t);

// The same as DLPack 1.x's DLManagedTensorVersioned (version 1.1). `flags` is a mask of
// DLPACK_FLAG_BITMASK_READ_ONLY and DLPACK_FLAG_BITMASK_IS_COPIED, passed through (the caller
// says whether `t` is a copy it made for this export); other bits are a ValueError.
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t, uint64_t flags = 0);

// Imports without a copy. On success the tensor owns `managed`: its deleter (when not null) is
// called once, on the thread that drops the last tensor viewing that memory. On failure nothing
// changes: a typed anatomy error names from_dlpack and the offending field, and `managed` is
// still the caller's (so a capsule that failed to import can be kept, or given back to its
// deleter, by the caller). Takes kDLCPU, kDLCUDAHost (a CPU tensor) and kDLCUDA; the dtypes
// anatomy has, one lane each; any strides >= 0 (null: row-major) and a byte_offset aligned to
// the element size. A versioned tensor must be of major version 1 (NotImplementedError
// otherwise, without reading past the version); its read-only flag is not kept (anatomy has no
// read-only tensors; docs/interop.md, "Read-only tensors").
Tensor from_dlpack(DLManagedTensor* managed);
Tensor from_dlpack(DLManagedTensorVersioned* managed);

// The stream handshake of the Python protocol (`__dlpack__(stream=...)`): before a consumer
// uses `t` on `consumer_stream`, that stream waits for the work queued so far on the current
// stream of t's device, through an event: the host never waits. `consumer_stream` is spelled as
// the protocol spells it for CUDA: 1 is the legacy default stream, 2 the per-thread default
// stream, any other value a cudaStream_t of t's device; -1 means "do not synchronize", and 0
// or another negative value is a ValueError. Nothing happens for a tensor that is not on a CUDA
// device, or when the consumer's stream is the current one.
void order_for_consumer(const Tensor& t, std::intptr_t consumer_stream);

// The same handshake seen from the consumer: the current stream of t's device waits, through an
// event, for the work queued so far on `producer_stream`, a stream of t's device that the
// producer names as CUDA does (0 or 1 the legacy default stream, 2 the per-thread default
// stream, any other value a cudaStream_t). For an import that made the capsule itself rather
// than through `__dlpack__` (docs/interop.md, "Importing a torch.Tensor"). A negative value is a
// ValueError; nothing happens for a tensor that is not on a CUDA device, or when the producer's
// stream is the current one.
void order_after_producer(const Tensor& t, std::intptr_t producer_stream);

}  // namespace anatomy::interop
