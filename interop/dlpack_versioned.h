// The DLPack ABI anatomy speaks: the system's <dlpack/dlpack.h>, plus what DLPack 1.x added when
// that header is older.
//
// Debian's libdlpack-dev is DLPack 0.6 (DLPACK_VERSION 60): it declares DLManagedTensor but not
// the versioned DLManagedTensorVersioned of DLPack 1.x, nor the kDLBool type code (0.8). This
// header declares them as the specification lays them out (dmlc/dlpack include/dlpack/dlpack.h,
// v1.1), and only where the system header lacks them: a 1.x header defines DLPACK_MAJOR_VERSION
// and is used as it is. A header that another library vendors under the same include guard
// (DLPACK_DLPACK_H_, as PyTorch's ATen/dlpack.h) and that is included first is used instead of
// the system's, by the same rule.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>

#if !defined(DLPACK_MAJOR_VERSION)

extern "C" {

// DLPack 1.x: a change of `major` changes the layout of DLManagedTensorVersioned after `flags`
// (so a consumer reads only the version of a tensor whose major it does not know); a change of
// `minor` adds enumeration values only.
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

// DLPack 1.x's managed tensor: the version and the fields up to `flags` come first, so that any
// consumer can read the version and find the deleter.
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;  // the producer's, for its deleter; may be null
  // Called once by the consumer when it no longer needs the tensor; frees this struct too. May
  // be null when the producer has nothing to free.
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;  // DLPACK_FLAG_BITMASK_*
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

}  // extern "C"

#endif  // !defined(DLPACK_MAJOR_VERSION)

#ifndef DLPACK_FLAG_BITMASK_READ_ONLY
// The consumer must not write to the tensor.
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
// The producer made the tensor for this export: the consumer is its only user until it calls
// the deleter.
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif

#if !defined(DLPACK_MAJOR_VERSION) && (!defined(DLPACK_VERSION) || DLPACK_VERSION < 80)
// DLPack 0.8's boolean type code: one byte per element (bits 8), 0 or 1.
inline constexpr DLDataTypeCode kDLBool = static_cast<DLDataTypeCode>(6);
#endif

namespace anatomy::interop {

// The DLPack version anatomy stamps on what it exports, and the major version it reads.
inline constexpr uint32_t kDLPackMajorVersion = 1;
inline constexpr uint32_t kDLPackMinorVersion = 1;

// The layout both sides of an exchange agree on (LP64): a mismatch here would be a header that
// does not follow the specification.
static_assert(sizeof(void*) != 8 || sizeof(DLTensor) == 48, "DLTensor is 48 bytes in DLPack's ABI");
static_assert(sizeof(void*) != 8 || offsetof(DLManagedTensorVersioned, flags) == 24,
              "DLManagedTensorVersioned's flags follow the version, manager_ctx and deleter");
static_assert(sizeof(void*) != 8 || offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
              "DLManagedTensorVersioned's dl_tensor follows its flags");
static_assert(sizeof(DLDeviceType) == sizeof(int32_t), "DLDevice.device_type is 32 bits");

}  // namespace anatomy::interop
