// MemoryFormat: the order in which a tensor's dimensions are laid out in memory.
#pragma once

#include <cstdint>
#include <string_view>

#include "anatomy/core/dim_vector.h"

namespace anatomy {

// Contiguous: row-major (the last dim varies fastest). ChannelsLast: a 4-D NCHW tensor laid out
// as NHWC, the layout convolution kernels prefer. ChannelsLast3d: a 5-D NCDHW tensor laid out as
// NDHWC. Preserve: keep the input's layout when it is dense, else Contiguous (what clone and the
// _like factories do by default).
enum class MemoryFormat : int8_t { Contiguous, ChannelsLast, Preserve, ChannelsLast3d };

constexpr std::string_view to_string(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
    case MemoryFormat::Preserve:
      return "preserve_format";
  }
  return "?";
}

constexpr bool is_channels_last(MemoryFormat f) {
  return f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d;
}

// The dims of a channels-last format from the fastest: C, the spatial dims from the last, then N
// (NHWC: 1, 3, 2, 0; NDHWC: 1, 4, 3, 2, 0). Its size is the number of dims the format needs.
inline IntArrayRef channels_last_order(MemoryFormat f) {
  static constexpr int64_t k2d[] = {1, 3, 2, 0};
  static constexpr int64_t k3d[] = {1, 4, 3, 2, 0};
  return f == MemoryFormat::ChannelsLast3d ? IntArrayRef(k3d, 5) : IntArrayRef(k2d, 4);
}

}  // namespace anatomy
