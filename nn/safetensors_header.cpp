// The safetensors header's JSON, read with nlohmann-json (a private dependency: nothing of it
// reaches the public headers) and checked field by field, so that a malformed file is a
// ValueError naming the file and the field, never an out-of-bounds read later.
#include "anatomy/nn/safetensors_header.h"

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>

namespace anatomy::nn::safetensors {

using nlohmann::json;

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian bytes");

namespace {

struct DTypeCode {
  DType dtype;
  std::string_view code;
  int rank;  // the reference's dtype order (its Dtype enum), by which wider dtypes come first
};

constexpr DTypeCode kCodes[] = {
    {DType::Bool, "BOOL", 0},   {DType::UInt8, "U8", 1},      {DType::Int8, "I8", 2},
    {DType::Float16, "F16", 3}, {DType::BFloat16, "BF16", 4}, {DType::Int32, "I32", 5},
    {DType::Float32, "F32", 6}, {DType::Float64, "F64", 7},   {DType::Int64, "I64", 8},
};

const DTypeCode& code_of(DType dtype) {
  for (const DTypeCode& c : kCodes) {
    if (c.dtype == dtype) return c;
  }
  ANATOMY_INTERNAL_ASSERT(false, "safetensors: no code for dtype {}", name(dtype));
}

template <typename... Args>
[[noreturn]] void malformed(const std::string& file, fmt::format_string<Args...> what, Args&&... args) {
  throw ValueError(fmt::format("load: '{}': {}", file, fmt::format(what, std::forward<Args>(args)...)));
}

// nlohmann-json keeps the last of duplicate keys without a word, and nests as deep as the text
// does: this callback refuses both while the text is parsed. The deepest a header nests is an
// entry's shape: the header's object, the entry's object, the shape's array.
class StrictKeys {
 public:
  explicit StrictKeys(const std::string& file) : file_(file) {}
  bool operator()(int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (open_.size() == 3) malformed(file_, "the header nests deeper than 3 levels");
        open_.emplace_back();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        open_.pop_back();
        break;
      case json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!open_.back().insert(key).second) {
          malformed(file_, "the key \"{}\" appears twice in {}", key,
                    open_.size() == 1 ? std::string("the header") : "one object of the header");
        }
        break;
      }
      case json::parse_event_t::value:
        break;
    }
    return true;
  }

 private:
  const std::string& file_;
  std::vector<std::set<std::string>> open_;
};

// A non-negative integer that fits int64 (JSON numbers past 2^64 are parsed as floats).
uint64_t count(const json& value, const std::string& file, const std::string& field) {
  // nlohmann-json keeps an integer written with a minus sign as signed: a negative one or -0.
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    if (value.get<int64_t>() < 0) malformed(file, "{} is negative ({})", field, value.get<int64_t>());
    return 0;
  }
  if (!value.is_number_unsigned()) malformed(file, "{} is not a non-negative integer (it is {})", field, value.dump());
  const uint64_t v = value.get<uint64_t>();
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) malformed(file, "{} ({}) is too large", field, v);
  return v;
}

const json& field_of(const json& entry, const char* key, const std::string& file, const std::string& name) {
  auto it = entry.find(key);
  if (it == entry.end()) malformed(file, "tensor '{}' has no \"{}\"", name, key);
  return *it;
}

Entry read_entry(const std::string& name, const json& info, const std::string& file, uint64_t data_size) {
  if (!info.is_object()) malformed(file, "tensor '{}' is not a JSON object (it is {})", name, info.type_name());
  Entry e;
  e.name = name;
  const json& dtype = field_of(info, "dtype", file, name);
  if (!dtype.is_string()) malformed(file, "tensor '{}': dtype is not a string", name);
  const auto& code = dtype.get_ref<const std::string&>();
  auto known = std::find_if(std::begin(kCodes), std::end(kCodes), [&](const DTypeCode& c) { return c.code == code; });
  if (known == std::end(kCodes)) {
    malformed(file, "tensor '{}': unknown dtype \"{}\" (anatomy reads BOOL, U8, I8, F16, BF16, I32, F32, F64, I64)",
              name, code);
  }
  e.dtype = known->dtype;

  const json& shape = field_of(info, "shape", file, name);
  if (!shape.is_array()) malformed(file, "tensor '{}': shape is not an array", name);
  if (shape.size() > kMaxDims)
    malformed(file, "tensor '{}': shape has {} dims, more than {}", name, shape.size(), kMaxDims);
  // The product of the non-zero dims must fit int64 even where a zero dim makes the tensor empty,
  // as the engine computes it dim by dim.
  int64_t elements = 1;
  bool empty = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const uint64_t n = count(shape[i], file, fmt::format("tensor '{}': shape[{}]", name, i));
    e.shape.push_back(static_cast<int64_t>(n));
    if (n == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(elements, static_cast<int64_t>(n), &elements)) {
      malformed(file, "tensor '{}': shape {} overflows a 64-bit element count", name, shape.dump());
    }
  }
  uint64_t bytes = 0;
  if (!empty && __builtin_mul_overflow(static_cast<uint64_t>(elements), element_size(e.dtype), &bytes)) {
    malformed(file, "tensor '{}': shape {} overflows a 64-bit byte count", name, shape.dump());
  }

  const json& offsets = field_of(info, "data_offsets", file, name);
  if (!offsets.is_array() || offsets.size() != 2) {
    malformed(file, "tensor '{}': data_offsets is not an array [begin, end] (it is {})", name, offsets.dump());
  }
  e.begin = count(offsets[0], file, fmt::format("tensor '{}': data_offsets[0]", name));
  e.end = count(offsets[1], file, fmt::format("tensor '{}': data_offsets[1]", name));
  if (e.end < e.begin)
    malformed(file, "tensor '{}': data_offsets [{}, {}] end before they begin", name, e.begin, e.end);
  if (e.end - e.begin != bytes) {
    malformed(file, "tensor '{}': data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}", name, e.begin,
              e.end, e.end - e.begin, shape.dump(), code, bytes);
  }
  if (e.end > data_size) {
    malformed(file, "tensor '{}': data_offsets [{}, {}] run past the end of the data ({} bytes)", name, e.begin, e.end,
              data_size);
  }
  return e;
}

// The entries must tile [0, data_size) exactly: no overlap, no gap, nothing after the last.
void check_tiling(const std::vector<Entry>& entries, const std::string& file, uint64_t data_size) {
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : sorted) {
    if (e->begin < covered) {
      malformed(file, "tensor '{}': data_offsets [{}, {}] overlap tensor '{}''s [{}, {}]", e->name, e->begin, e->end,
                previous->name, previous->begin, previous->end);
    }
    if (e->begin > covered) {
      malformed(file, "bytes [{}, {}) of the data belong to no tensor (data_offsets leave a gap)", covered, e->begin);
    }
    covered = e->end;
    previous = e;
  }
  if (covered != data_size) {
    malformed(file, "the tensors' data_offsets cover {} bytes, but the data after the header is {} bytes", covered,
              data_size);
  }
}

}  // namespace

std::string_view dtype_code(DType dtype) { return code_of(dtype).code; }

bool reference_order(const Entry& a, const Entry& b) {
  const int ra = code_of(a.dtype).rank, rb = code_of(b.dtype).rank;
  return ra != rb ? ra > rb : a.name < b.name;
}

Header parse_header(const uint8_t* bytes, size_t size, const std::string& file) {
  if (size < 8) malformed(file, "the file is {} bytes, shorter than the 8-byte header length", size);
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);
  if (n > kMaxHeaderBytes) malformed(file, "the header length {} is larger than the {} byte limit", n, kMaxHeaderBytes);
  if (n > size - 8) malformed(file, "the header length {} runs past the end of the file ({} bytes)", n, size);

  const char* text = reinterpret_cast<const char*>(bytes + 8);
  json root;
  try {
    root = json::parse(text, text + n, StrictKeys(file));
  } catch (const json::exception& e) {
    malformed(file, "the header is not valid JSON ({})", e.what());
  }
  if (!root.is_object()) malformed(file, "the header is not a JSON object (it is {})", root.type_name());

  Header h;
  h.data_start = 8 + n;
  const uint64_t data_size = size - h.data_start;
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) malformed(file, "__metadata__ is not a JSON object (it is {})", value.type_name());
      for (const auto& [mkey, mvalue] : value.items()) {
        if (!mvalue.is_string())
          malformed(file, "__metadata__[\"{}\"] is not a string (it is {})", mkey, mvalue.dump());
        h.metadata.emplace(mkey, mvalue.get<std::string>());
      }
      continue;
    }
    h.entries.push_back(read_entry(key, value, file, data_size));
  }
  check_tiling(h.entries, file, data_size);
  return h;
}

std::string format_header(const std::vector<Entry>& entries, const std::map<std::string, std::string>& metadata) {
  std::string out = "{";
  auto quoted = [](const std::string& text, const char* what) {
    try {
      return json(text).dump();
    } catch (const json::exception&) {
      throw ValueError(fmt::format("save: {} \"{}\" is not valid UTF-8", what, text));
    }
  };
  if (!metadata.empty()) {
    out += "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it) {
      if (it != metadata.begin()) out += ',';
      out += quoted(it->first, "metadata key") + ':' + quoted(it->second, "metadata value");
    }
    out += '}';
  }
  for (const Entry& e : entries) {
    if (out.size() > 1) out += ',';
    out += fmt::format("{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", quoted(e.name, "tensor name"),
                       dtype_code(e.dtype), fmt::join(e.shape, ","), e.begin, e.end);
  }
  out += '}';
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

}  // namespace anatomy::nn::safetensors
