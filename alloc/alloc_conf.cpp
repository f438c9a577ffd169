// The ALLOC_CONF parser (see alloc_conf.h). Every key is described once, in kKnobs: its name,
// what it allows (for error messages) and how its value is applied.
#include "anatomy/alloc/alloc_conf.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <vector>

#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits at `sep`, except inside [...], so that a bracketed list stays one value.
std::vector<std::string_view> split_top(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (s[i] == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

struct Ctx {
  std::string_view source, key, allowed;
};

[[noreturn]] void bad_value(const Ctx& c, std::string_view value) {
  ANATOMY_THROW(ValueError, "{}: bad value '{}' for {}; allowed: {}", c.source, value, c.key, c.allowed);
}

size_t parse_size(const Ctx& c, std::string_view v) {
  size_t out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) bad_value(c, v);
  return out;
}

double parse_double(const Ctx& c, std::string_view v) {
  double out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) bad_value(c, v);
  return out;
}

bool parse_bool(const Ctx& c, std::string_view v) {
  if (v == "True" || v == "true") return true;
  if (v == "False" || v == "false") return false;
  bad_value(c, v);
}

size_t parse_divisions(const Ctx& c, std::string_view v) {
  size_t d = parse_size(c, v);
  if (d != 0 && !std::has_single_bit(d)) bad_value(c, v);
  return d;
}

// roundup_power2_divisions: a single N for every size, or [MB:N,...,>:N] per size interval, as
// PyTorch reads it: the first interval's N also covers smaller sizes, `>` every larger one.
void parse_roundup(const Ctx& c, std::string_view v, AllocConf& conf) {
  auto& div = conf.roundup_power2_divisions;
  if (v.empty() || v.front() != '[') {
    div.fill(parse_divisions(c, v));
    return;
  }
  if (v.back() != ']' || v.size() < 3) bad_value(c, v);
  div.fill(0);
  bool first = true;
  size_t last_index = 0;
  for (std::string_view pair : split_top(v.substr(1, v.size() - 2), ',')) {
    size_t colon = pair.find(':');
    if (colon == std::string_view::npos) bad_value(c, pair);
    std::string_view mb = trim(pair.substr(0, colon));
    size_t n = parse_divisions(c, trim(pair.substr(colon + 1)));
    if (mb == ">") {
      std::fill(div.begin() + static_cast<ptrdiff_t>(std::min(last_index + 1, div.size())), div.end(), n);
      continue;
    }
    size_t size_mb = parse_size(c, mb);
    if (!std::has_single_bit(size_mb)) bad_value(c, pair);
    size_t index = std::min<size_t>(static_cast<size_t>(std::bit_width(size_mb) - 1), div.size() - 1);
    if (first) std::fill(div.begin(), div.begin() + static_cast<ptrdiff_t>(index), n);
    first = false;
    div[index] = n;
    last_index = index;
  }
}

struct Knob {
  const char* key;
  const char* allowed;
  void (*apply)(const Ctx&, std::string_view, AllocConf&);
};

const Knob kKnobs[] = {
    {"backend", "native | cudaMallocAsync",
     [](const Ctx& c, std::string_view v, AllocConf& conf) {
       if (v == "native") conf.backend = AllocBackend::Native;
       else if (v == "cudaMallocAsync") conf.backend = AllocBackend::CudaMallocAsync;
       else bad_value(c, v);
     }},
    {"max_split_size_mb", "an integer number of MB greater than 20",
     [](const Ctx& c, std::string_view v, AllocConf& conf) {
       size_t mb = parse_size(c, v);
       if (mb <= 20) bad_value(c, v);  // below a large segment it would forbid splitting them
       conf.max_split_size =
           mb > std::numeric_limits<size_t>::max() / kMB ? std::numeric_limits<size_t>::max() : mb * kMB;
     }},
    {"max_non_split_rounding_mb", "an integer number of MB",
     [](const Ctx& c, std::string_view v, AllocConf& conf) {
       size_t mb = parse_size(c, v);
       if (mb > std::numeric_limits<size_t>::max() / kMB) bad_value(c, v);
       conf.max_non_split_rounding_size = mb * kMB;
     }},
    {"roundup_power2_divisions", "0 or a power of two, or [MB:N,...,>:N] with power-of-two MB and N",
     [](const Ctx& c, std::string_view v, AllocConf& conf) { parse_roundup(c, v, conf); }},
    {"garbage_collection_threshold", "a number t with 0 < t < 1",
     [](const Ctx& c, std::string_view v, AllocConf& conf) {
       double t = parse_double(c, v);
       if (!(t > 0.0 && t < 1.0)) bad_value(c, v);
       conf.garbage_collection_threshold = t;
     }},
    {"expandable_segments", "True | False",
     [](const Ctx& c, std::string_view v, AllocConf& conf) { conf.expandable_segments = parse_bool(c, v); }},
    {"per_process_memory_fraction", "a number f with 0 < f <= 1",
     [](const Ctx& c, std::string_view v, AllocConf& conf) {
       double f = parse_double(c, v);
       if (!(f > 0.0 && f <= 1.0)) bad_value(c, v);
       conf.per_process_memory_fraction = f;
     }},
    {"release_lock_on_cudamalloc", "True | False",
     [](const Ctx& c, std::string_view v, AllocConf& conf) { conf.release_lock_on_cudamalloc = parse_bool(c, v); }},
    {"pinned_use_cuda_host_register", "True | False",
     [](const Ctx& c, std::string_view v, AllocConf& conf) { conf.pinned_use_cuda_host_register = parse_bool(c, v); }},
    {"release_before_new_peak", "True | False",
     [](const Ctx& c, std::string_view v, AllocConf& conf) { conf.release_before_new_peak = parse_bool(c, v); }},
};

std::string known_keys() {
  std::string out;
  for (const Knob& k : kKnobs) out += (out.empty() ? "" : ", ") + std::string(k.key);
  return out;
}

}  // namespace

size_t AllocConf::divisions_for(size_t size) const {
  // Interval i holds sizes in [2^i MB, 2^(i+1) MB); smaller sizes use interval 0.
  size_t log_size = static_cast<size_t>(std::bit_width(size | 1) - 1);
  size_t index = log_size > 20 ? log_size - 20 : 0;
  return roundup_power2_divisions[std::min(index, kRoundupIntervals - 1)];
}

AllocConf parse_alloc_conf(std::string_view text, std::string_view source) {
  AllocConf conf;
  if (trim(text).empty()) return conf;
  for (std::string_view item : split_top(text, ',')) {
    size_t colon = item.find(':');
    ANATOMY_CHECK(colon != std::string_view::npos, ValueError, "{}: '{}' is not key:value; keys: {}", source, item,
                  known_keys());
    std::string_view key = trim(item.substr(0, colon)), value = trim(item.substr(colon + 1));
    const Knob* knob = nullptr;
    for (const Knob& k : kKnobs) {
      if (key == k.key) knob = &k;
    }
    ANATOMY_CHECK(knob != nullptr, ValueError, "{}: unknown key '{}'; allowed keys: {}", source, key, known_keys());
    knob->apply(Ctx{source, knob->key, knob->allowed}, value, conf);
  }
  return conf;
}

AllocConf alloc_conf_from_env() {
  AllocConf conf;
  for (const char* name : {"ANATOMY_CUDA_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
    if (const char* text = std::getenv(name)) {
      conf = parse_alloc_conf(text, name);
      break;
    }
  }
  for (const char* name : {"ANATOMY_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_CUDA_MEMORY_CACHING"}) {
    if (const char* flag = std::getenv(name)) {
      conf.caching = std::string_view(flag).empty() || std::string_view(flag) == "0";
      break;
    }
  }
  return conf;
}

std::string to_string(const AllocConf& conf) {
  const AllocConf d;
  std::vector<std::string> parts;
  if (conf.backend != d.backend) parts.push_back("backend:cudaMallocAsync");
  if (conf.max_split_size != d.max_split_size)
    parts.push_back(fmt::format("max_split_size_mb:{}", conf.max_split_size / kMB));
  if (conf.max_non_split_rounding_size != d.max_non_split_rounding_size)
    parts.push_back(fmt::format("max_non_split_rounding_mb:{}", conf.max_non_split_rounding_size / kMB));
  const auto& div = conf.roundup_power2_divisions;
  if (div != d.roundup_power2_divisions) {
    if (std::all_of(div.begin(), div.end(), [&](size_t n) { return n == div[0]; })) {
      parts.push_back(fmt::format("roundup_power2_divisions:{}", div[0]));
    } else {
      std::string list;
      for (size_t i = 0; i + 1 < div.size(); ++i) list += fmt::format("{}:{},", size_t{1} << i, div[i]);
      parts.push_back(fmt::format("roundup_power2_divisions:[{}>:{}]", list, div.back()));
    }
  }
  if (conf.garbage_collection_threshold != d.garbage_collection_threshold)
    parts.push_back(fmt::format("garbage_collection_threshold:{}", conf.garbage_collection_threshold));
  if (conf.expandable_segments) parts.push_back("expandable_segments:True");
  if (conf.per_process_memory_fraction != d.per_process_memory_fraction)
    parts.push_back(fmt::format("per_process_memory_fraction:{}", conf.per_process_memory_fraction));
  if (conf.release_lock_on_cudamalloc) parts.push_back("release_lock_on_cudamalloc:True");
  if (conf.pinned_use_cuda_host_register) parts.push_back("pinned_use_cuda_host_register:True");
  if (!conf.release_before_new_peak) parts.push_back("release_before_new_peak:False");
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace anatomy::alloc
