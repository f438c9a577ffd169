// MemoryFormat: the order in which a tensor's dimensions are laid out in memory.
#pragma once

#include <cstdint>
#include <string_view>

namespace anatomy {

// Contiguous: row-major (the last dim varies fastest). ChannelsLast: a 4-D NCHW tensor laid out
// as NHWC, the layout convolution kernels prefer. Preserve: keep the input's layout when it is
// dense, else Contiguous (what clone and the _like factories do by default).
enum class MemoryFormat : int8_t { Contiguous, ChannelsLast, Preserve };

constexpr std::string_view to_string(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::Preserve:
      return "preserve_format";
  }
  return "?";
}

}  // namespace anatomy
