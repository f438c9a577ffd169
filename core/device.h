// Device: where a tensor's memory lives, {type, index}, and its text form ("cpu", "cuda:1").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace anatomy {

// PrivateUse1 is the slot for a backend defined outside anatomy (a test, a user's program);
// it can be given a name with register_privateuse1_backend.
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2, PrivateUse1 = 3 };
inline constexpr int kNumDeviceTypes = 4;

std::string device_type_name(DeviceType t);

// Names the PrivateUse1 device type ("npu", "mydev"): Device("mydev:0") then parses to it and
// tensors print it. Throws ValueError for a name that is not a lower-case identifier or that
// clashes with a built-in one; registering the same name again is allowed.
void register_privateuse1_backend(std::string_view name);

class Device {
 public:
  using Index = int8_t;

  // Inline because every DataPtr and tensor handle makes Devices: the common case (index -1, or
  // any index on a type that takes one) costs a compare; the rest goes to normalize().
  Device(DeviceType type = DeviceType::CPU, Index index = -1) : type_(type), index_(index) {
    if (index != -1) normalize();
  }
  // "cpu", "cuda", "cuda:1", "meta", or the registered PrivateUse1 name. Throws ValueError.
  explicit Device(std::string_view text);
  Device(const char* text) : Device(std::string_view(text)) {}
  Device(const std::string& text) : Device(std::string_view(text)) {}

  DeviceType type() const { return type_; }
  // -1 means "the current device of this type" for CUDA; CPU and Meta always have -1.
  Index index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_meta() const { return type_ == DeviceType::Meta; }

  std::string str() const;
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  // Checks an explicit index and drops it for CPU and Meta (which have one device).
  void normalize();

  DeviceType type_;
  Index index_;
};

inline const Device kCPU{DeviceType::CPU};
inline const Device kMeta{DeviceType::Meta};

}  // namespace anatomy

template <>
struct std::hash<anatomy::Device> {
  size_t operator()(const anatomy::Device& d) const noexcept {
    return (static_cast<size_t>(d.type()) << 8) ^ static_cast<size_t>(static_cast<uint8_t>(d.index()));
  }
};
