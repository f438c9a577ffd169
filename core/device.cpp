// Device parsing and printing, and the name of the PrivateUse1 backend.
#include "anatomy/core/device.h"

#include <cctype>
#include <charconv>
#include <mutex>

#include "anatomy/core/error.h"

namespace anatomy {
namespace {

std::mutex& privateuse1_mutex() {
  static std::mutex m;
  return m;
}
std::string& privateuse1_name() {
  static std::string name = "privateuse1";
  return name;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  }
  return true;
}

}  // namespace

std::string device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
    case DeviceType::Meta:
      return "meta";
    case DeviceType::PrivateUse1: {
      std::lock_guard<std::mutex> g(privateuse1_mutex());
      return privateuse1_name();
    }
  }
  return "unknown";
}

void register_privateuse1_backend(std::string_view name) {
  ANATOMY_CHECK(is_identifier(name), ValueError, "register_privateuse1_backend: '{}' is not a lower-case identifier",
                name);
  ANATOMY_CHECK(name != "cpu" && name != "cuda" && name != "meta", ValueError,
                "register_privateuse1_backend: '{}' is a built-in device type", name);
  std::lock_guard<std::mutex> g(privateuse1_mutex());
  privateuse1_name() = std::string(name);
}

void Device::normalize() {
  const DeviceType type = type_;
  const Index index = index_;
  ANATOMY_CHECK(index >= -1, ValueError, "Device: index {} must be >= 0 (or -1 for the current device)", index);
  ANATOMY_CHECK(type == DeviceType::CUDA || type == DeviceType::PrivateUse1 || index <= 0, ValueError,
                "Device: {} takes no index other than 0, got {}", device_type_name(type), index);
  if (type == DeviceType::CPU || type == DeviceType::Meta) index_ = -1;
}

Device::Device(std::string_view text) : type_(DeviceType::CPU), index_(-1) {
  std::string_view type_part = text, index_part;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    type_part = text.substr(0, colon);
    index_part = text.substr(colon + 1);
    ANATOMY_CHECK(!index_part.empty(), ValueError, "Device: '{}' has an empty index after ':'", text);
  }
  std::string pu1 = device_type_name(DeviceType::PrivateUse1);
  if (type_part == "cpu") {
    type_ = DeviceType::CPU;
  } else if (type_part == "cuda") {
    type_ = DeviceType::CUDA;
  } else if (type_part == "meta") {
    type_ = DeviceType::Meta;
  } else if (type_part == pu1) {
    type_ = DeviceType::PrivateUse1;
  } else {
    ANATOMY_THROW(ValueError,
                  "Device: unknown device type in '{}'; expected cpu, cuda, meta or {} (optionally with ':index')",
                  text, pu1);
  }
  if (!index_part.empty()) {
    int value = -1;
    auto [end, ec] = std::from_chars(index_part.data(), index_part.data() + index_part.size(), value);
    ANATOMY_CHECK(ec == std::errc() && end == index_part.data() + index_part.size() && value >= 0 && value < 128 &&
                      (index_part.size() == 1 || index_part[0] != '0'),
                  ValueError, "Device: bad index '{}' in '{}'; expected an integer in [0, 127]", index_part, text);
    ANATOMY_CHECK(type_ == DeviceType::CUDA || type_ == DeviceType::PrivateUse1 || value == 0, ValueError,
                  "Device: {} takes no index other than 0, got '{}'", type_part, text);
    if (type_ == DeviceType::CUDA || type_ == DeviceType::PrivateUse1) index_ = static_cast<Index>(value);
  }
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (index_ >= 0) {
    s += ':';
    s += std::to_string(index_);
  }
  return s;
}

}  // namespace anatomy
