// What DLPack export and import share: anatomy's dtypes as DLPack type codes (one table, read
// both ways), and the names of DLPack's codes for error messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/interop/dlpack_versioned.h"

namespace anatomy::interop {

// The DLPack type of a dtype: every anatomy dtype has one, with one lane.
DLDataType to_dl_dtype(DType dtype);
// The dtype of a DLPack type with one lane; nullopt where anatomy has none (uint16, int16,
// complex, float8, ...).
std::optional<DType> from_dl_dtype(DLDataType dtype);

// "kDLUInt, 16 bits": a type code and its bits, as errors show them.
std::string dl_dtype_str(DLDataType dtype);
// "kDLOpenCL (4)", or "99" for a code DLPack does not define.
std::string dl_device_type_str(int32_t device_type);

// DLDevice.device_type as the integer it is in memory: a producer may write a code this
// header's enumeration does not list, and loading such a value as the enumeration would be
// undefined behaviour.
int32_t dl_device_type(const DLDevice& device);

}  // namespace anatomy::interop
