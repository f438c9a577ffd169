// What from_dlpack refuses (interop/dlpack.h): each malformed or unsupported managed tensor, of
// both ABIs, gives a typed error naming from_dlpack and the field, and changes nothing: the
// managed tensor keeps every byte and its deleter is not called (it is still the caller's).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"
#include "dlpack_test_util.h"

using namespace anatomy;
using namespace anatomy::dlpack_test;
using interop::from_dlpack;

namespace {

// from_dlpack(h) throws ErrorType with `message` in its text, and h is as it was.
template <typename ErrorType, typename Managed>
void check_refused(Handmade<Managed>& h, const std::string& message) {
  unsigned char before[sizeof(Managed)];
  std::memcpy(before, &h.managed, sizeof(Managed));
  const std::vector<int64_t> shape = h.shape, strides = h.strides;
  CHECK_THROWS_WITH_AS(from_dlpack(&h.managed), doctest::Contains(message.c_str()), ErrorType);
  CHECK(std::memcmp(before, &h.managed, sizeof(Managed)) == 0);
  CHECK(h.shape == shape);
  CHECK(h.strides == strides);
  CHECK(h.deleted == 0);
}

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

}  // namespace

TEST_CASE_TEMPLATE("dlpack refused: a null managed tensor", Managed, DLManagedTensor, DLManagedTensorVersioned) {
  const std::string expected = kVersioned<Managed> ? "from_dlpack: the DLManagedTensorVersioned is null"
                                                   : "from_dlpack: the DLManagedTensor is null";
  CHECK_THROWS_WITH_AS(from_dlpack(static_cast<Managed*>(nullptr)), expected.c_str(), ValueError);
}

TEST_CASE_TEMPLATE("dlpack refused: null data for a tensor with elements", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  auto h = handmade<Managed>(nullptr, {2, 3}, std::nullopt, kFloat32);
  check_refused<ValueError>(*h, "from_dlpack: dl_tensor.data is null, but the tensor has elements (shape [2, 3])");
}

TEST_CASE_TEMPLATE("dlpack refused: negative sizes and element counts past int64", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  float cell = 0;
  auto negative = handmade<Managed>(&cell, {2, -3}, std::nullopt, kFloat32);
  check_refused<ValueError>(*negative, "from_dlpack: dl_tensor.shape[1] is -3; sizes must be >= 0");
  auto lowest = handmade<Managed>(&cell, {std::numeric_limits<int64_t>::min()}, std::nullopt, kFloat32);
  check_refused<ValueError>(*lowest, "from_dlpack: dl_tensor.shape[0] is -9223372036854775808");
  auto many = handmade<Managed>(&cell, {int64_t{1} << 32, int64_t{1} << 32}, std::nullopt, kFloat32);
  check_refused<ValueError>(*many,
                            "from_dlpack: dl_tensor.shape [4294967296, 4294967296] has more elements than int64");
  // An empty tensor's other dims must still multiply within int64 (their strides exist).
  auto empty = handmade<Managed>(nullptr, {0, int64_t{1} << 40, int64_t{1} << 40}, std::nullopt, kFloat32);
  check_refused<ValueError>(*empty, "has more elements than int64 counts");
}

TEST_CASE_TEMPLATE("dlpack refused: strides that reach past int64 bytes", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  float cells[4] = {};
  const std::vector<std::vector<int64_t>> shapes = {{2, 2}, {3}, {2}, {2, 3}};
  const std::vector<std::vector<int64_t>> strides = {
      {int64_t{1} << 62, 1},      // 2^63 elements one step past the end
      {kInt64Max / 2},            // the sum overflows
      {int64_t{1} << 61},         // 2^62 elements fit, 2^64 bytes do not
      {kInt64Max / 4, kInt64Max}  // the product overflows
  };
  for (size_t i = 0; i < shapes.size(); ++i) {
    CAPTURE(i);
    auto h = handmade<Managed>(cells, shapes[i], strides[i], kFloat32);
    check_refused<ValueError>(*h, "with strides");
    check_refused<ValueError>(*h, "reaches past int64 bytes (4 bytes an element)");
  }
}

TEST_CASE_TEMPLATE("dlpack refused: a negative stride over elements", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  float cells[3] = {};
  auto h = handmade<Managed>(cells + 2, {3}, std::vector<int64_t>{-1}, kFloat32);
  check_refused<ValueError>(*h, "from_dlpack: dl_tensor.strides[0] is -1; anatomy has no negative strides");
}

TEST_CASE_TEMPLATE("dlpack refused: a byte_offset or data misaligned for the element size", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  alignas(8) unsigned char bytes[64] = {};
  auto offset = handmade<Managed>(bytes, {2}, std::nullopt, kFloat32, 2);
  check_refused<ValueError>(*offset, "from_dlpack: dl_tensor.byte_offset is 2, not a multiple of fp32's 4 bytes");
  auto data = handmade<Managed>(bytes + 1, {2}, std::nullopt, DLDataType{kDLInt, 64, 1});
  check_refused<ValueError>(*data, "is not aligned to int64's 8 bytes");
  // Bytes are never misaligned.
  auto u8 = handmade<Managed>(bytes + 1, {2}, std::nullopt, DLDataType{kDLUInt, 8, 1}, 3);
  CHECK(from_dlpack(&u8->managed).data_ptr() == bytes + 4);
}

TEST_CASE_TEMPLATE("dlpack refused: a byte_offset or data that overflows", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  float cells[2] = {};
  auto huge = handmade<Managed>(cells, {2}, std::nullopt, kFloat32, uint64_t{1} << 63);
  check_refused<ValueError>(*huge, "from_dlpack: dl_tensor.byte_offset 9223372036854775808 and the tensor's 8 bytes");
  auto edge = handmade<Managed>(cells, {2}, std::nullopt, kFloat32, uint64_t{kInt64Max} - 3);
  check_refused<ValueError>(*edge, "overflow int64");
  // An address near the top: its 400 bytes would wrap (never dereferenced).
  void* top = reinterpret_cast<void*>(std::numeric_limits<uintptr_t>::max() & ~uintptr_t{63});
  auto wrap = handmade<Managed>(top, {100}, std::nullopt, kFloat32);
  check_refused<ValueError>(*wrap, "plus 400 bytes wraps around the address space");
}

TEST_CASE_TEMPLATE("dlpack refused: dtypes anatomy does not have", Managed, DLManagedTensor, DLManagedTensorVersioned) {
  alignas(16) unsigned char bytes[64] = {};
  const std::vector<std::pair<DLDataType, std::string>> refused = {
      {{kDLUInt, 16, 1}, "kDLUInt, 16 bits"},       {{kDLUInt, 32, 1}, "kDLUInt, 32 bits"},
      {{kDLUInt, 64, 1}, "kDLUInt, 64 bits"},       {{kDLInt, 16, 1}, "kDLInt, 16 bits"},
      {{kDLInt, 4, 1}, "kDLInt, 4 bits"},           {{kDLFloat, 8, 1}, "kDLFloat, 8 bits"},
      {{kDLFloat, 128, 1}, "kDLFloat, 128 bits"},   {{kDLBfloat, 32, 1}, "kDLBfloat, 32 bits"},
      {{kDLComplex, 64, 1}, "kDLComplex, 64 bits"}, {{kDLBool, 16, 1}, "kDLBool, 16 bits"},
      {{kDLBool, 1, 1}, "kDLBool, 1 bits"},         {{kDLOpaqueHandle, 64, 1}, "kDLOpaqueHandle, 64 bits"},
      {{12, 8, 1}, "type code 12, 8 bits"},         {{200, 32, 1}, "type code 200, 32 bits"},
  };
  for (const auto& [dtype, text] : refused) {
    CAPTURE(text);
    auto h = handmade<Managed>(bytes, {2}, std::nullopt, dtype);
    check_refused<TypeError>(*h, "from_dlpack: dl_tensor.dtype (" + text + ") has no anatomy dtype");
  }
  for (uint16_t lanes : {0, 2, 4}) {
    auto h = handmade<Managed>(bytes, {2}, std::nullopt, DLDataType{kDLFloat, 32, lanes});
    check_refused<TypeError>(*h, "from_dlpack: dl_tensor.dtype.lanes is " + std::to_string(lanes) + ";");
  }
}

TEST_CASE_TEMPLATE("dlpack refused: ndim out of range, and no shape", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  float cells[4] = {};
  // The shape has two entries whatever ndim says: from_dlpack must refuse before reading more.
  for (int32_t ndim : {-1, 65, 1000, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}) {
    auto h = handmade<Managed>(cells, {2, 2}, std::nullopt, kFloat32);
    h->managed.dl_tensor.ndim = ndim;
    check_refused<ValueError>(*h, "from_dlpack: dl_tensor.ndim is " + std::to_string(ndim) + "; it must be 0 to 64");
  }
  auto h = handmade<Managed>(cells, {2, 2}, std::nullopt, kFloat32);
  h->managed.dl_tensor.shape = nullptr;
  check_refused<ValueError>(*h, "from_dlpack: dl_tensor.shape is null for ndim 2");
}

TEST_CASE_TEMPLATE("dlpack refused: device types anatomy does not import", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  float cells[2] = {};
  const std::vector<std::pair<int32_t, std::string>> refused = {
      {4, "kDLOpenCL (4)"}, {7, "kDLVulkan (7)"},
      {10, "kDLROCM (10)"}, {13, "kDLCUDAManaged (13)"},
      {18, "kDLTrn (18)"},  {0, "0"},
      {99, "99"},           {-5, "-5"},
  };
  for (const auto& [type, text] : refused) {
    CAPTURE(type);
    auto h = handmade<Managed>(cells, {2}, std::nullopt, kFloat32);
    set_device_type(h->managed.dl_tensor.device, type);
    check_refused<DeviceError>(*h, "from_dlpack: dl_tensor.device.device_type is " + text + "; anatomy imports");
  }
  // A CUDA device that does not exist (where no GPU is: any).
  for (int32_t id : {cuda::device_count(), -1, 200}) {
    CAPTURE(id);
    auto h = handmade<Managed>(cells, {2}, std::nullopt, kFloat32);
    h->managed.dl_tensor.device = DLDevice{kDLCUDA, id};
    check_refused<DeviceError>(*h, "from_dlpack: dl_tensor.device");
  }
}

TEST_CASE("dlpack refused: a versioned tensor of another major version is read no further than its version") {
  for (uint32_t major : {0u, 2u, 0xffffffffu}) {
    CAPTURE(major);
    // Only the version's bytes exist: reading past them is caught under AddressSanitizer.
    void* bytes = std::malloc(sizeof(DLPackVersion));
    REQUIRE(bytes != nullptr);
    const DLPackVersion version{major, 0};
    std::memcpy(bytes, &version, sizeof(version));
    CHECK_THROWS_WITH_AS(
        from_dlpack(static_cast<DLManagedTensorVersioned*>(bytes)),
        doctest::Contains(
            ("from_dlpack: version.major is " + std::to_string(major) + "; anatomy reads DLPack 1.x").c_str()),
        NotImplementedError);
    CHECK(std::memcmp(bytes, &version, sizeof(version)) == 0);
    std::free(bytes);
  }
}
