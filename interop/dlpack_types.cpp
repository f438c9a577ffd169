// anatomy's dtypes as DLPack type codes, and the names of DLPack's codes (see dlpack_types.h).
#include "anatomy/interop/dlpack_types.h"

#include <fmt/format.h>

#include <cstring>
#include <iterator>
#include <string_view>

namespace anatomy::interop {
namespace {

struct DTypeCode {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};

// One row per anatomy dtype; the static_asserts below fail when a dtype is added without one.
constexpr DTypeCode kDTypeCodes[] = {
    {DType::Bool, kDLBool, 8},        {DType::UInt8, kDLUInt, 8},     {DType::Int8, kDLInt, 8},
    {DType::Int32, kDLInt, 32},       {DType::Int64, kDLInt, 64},     {DType::Float16, kDLFloat, 16},
    {DType::BFloat16, kDLBfloat, 16}, {DType::Float32, kDLFloat, 32}, {DType::Float64, kDLFloat, 64},
};

constexpr bool table_is_complete() {
  if (std::size(kDTypeCodes) != static_cast<size_t>(kNumDTypes)) return false;
  for (size_t i = 0; i < std::size(kDTypeCodes); ++i) {
    // In the order of ANATOMY_FORALL_DTYPES, so that to_dl_dtype is an index.
    if (static_cast<size_t>(kDTypeCodes[i].dtype) != i) return false;
    if (kDTypeCodes[i].bits != element_size(kDTypeCodes[i].dtype) * 8) return false;
  }
  return true;
}
static_assert(table_is_complete(), "every anatomy dtype has one DLPack code, in dtype order, with its bits");

// DLPack's type codes and device types by number (the 1.1 specification's names; the system
// header may be older and lack some).
constexpr std::string_view kTypeCodeNames[] = {"kDLInt",    "kDLUInt",    "kDLFloat", "kDLOpaqueHandle",
                                               "kDLBfloat", "kDLComplex", "kDLBool"};
constexpr std::string_view kDeviceTypeNames[] = {
    "",          "kDLCPU",    "kDLCUDA",    "kDLCUDAHost", "kDLOpenCL",   "",          "",
    "kDLVulkan", "kDLMetal",  "kDLVPI",     "kDLROCM",     "kDLROCMHost", "kDLExtDev", "kDLCUDAManaged",
    "kDLOneAPI", "kDLWebGPU", "kDLHexagon", "kDLMAIA",     "kDLTrn",
};

}  // namespace

DLDataType to_dl_dtype(DType dtype) {
  const DTypeCode& row = kDTypeCodes[static_cast<size_t>(dtype)];
  return DLDataType{row.code, row.bits, 1};
}

std::optional<DType> from_dl_dtype(DLDataType dtype) {
  if (dtype.lanes != 1) return std::nullopt;
  for (const DTypeCode& row : kDTypeCodes) {
    if (row.code == dtype.code && row.bits == dtype.bits) return row.dtype;
  }
  return std::nullopt;
}

std::string dl_dtype_str(DLDataType dtype) {
  const std::string code = dtype.code < std::size(kTypeCodeNames) ? std::string(kTypeCodeNames[dtype.code])
                                                                  : fmt::format("type code {}", dtype.code);
  return fmt::format("{}, {} bits", code, dtype.bits);
}

std::string dl_device_type_str(int32_t device_type) {
  if (device_type >= 0 && static_cast<size_t>(device_type) < std::size(kDeviceTypeNames) &&
      !kDeviceTypeNames[device_type].empty()) {
    return fmt::format("{} ({})", kDeviceTypeNames[device_type], device_type);
  }
  return std::to_string(device_type);
}

int32_t dl_device_type(const DLDevice& device) {
  int32_t type = 0;
  std::memcpy(&type, &device.device_type, sizeof(type));
  return type;
}

}  // namespace anatomy::interop
