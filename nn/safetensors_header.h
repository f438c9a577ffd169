// The safetensors header (nn/safetensors.h): its JSON read into checked entries, and written back.
// Internal to nn/: save and load share it, and the fuzz target compiles it in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::nn::safetensors {

// One tensor of the header: its byte range [begin, end) is relative to the first byte after the
// header.
struct Entry {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::vector<Entry> entries;  // in the header's order
  std::map<std::string, std::string> metadata;
  size_t data_start = 0;  // 8 + the header length: where the tensors' bytes begin
};

// A larger header is refused before it is read, as the reference reader refuses it.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Deeper shapes are refused (the engine's CUDA kernels take at most 25 dims, PyTorch's 64).
inline constexpr size_t kMaxDims = 64;

// "F32", "BF16", ...: the format's name of a dtype.
std::string_view dtype_code(DType dtype);

// Reads and checks the header of the `size` bytes at `bytes` (a whole file): every entry's dtype,
// shape and offsets agree, and the entries tile the data after the header exactly. Anything else
// is a ValueError "load: '<file>': ..." naming the field.
Header parse_header(const uint8_t* bytes, size_t size, const std::string& file);

// The header's JSON for `entries` (offsets filled in) and `metadata`, as the reference writer
// prints it (no spaces; "__metadata__" first, then the entries in order; each entry's fields as
// dtype, shape, data_offsets), padded with spaces to a multiple of 8 bytes.
std::string format_header(const std::vector<Entry>& entries, const std::map<std::string, std::string>& metadata);

// The order the reference writer lays tensors out in: wider dtypes first, then by name.
bool reference_order(const Entry& a, const Entry& b);

}  // namespace anatomy::nn::safetensors
