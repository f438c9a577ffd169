// AllocConf: the caching allocator's settings, and the parser of ANATOMY_CUDA_ALLOC_CONF (the
// syntax of PYTORCH_CUDA_ALLOC_CONF, `key:value,key:value`, which is read when ours is unset).
//
// Keys (docs/allocator.md says what each does and which ones take effect yet):
//   backend                         native | cudaMallocAsync
//   max_split_size_mb               blocks at least this large are never split (> 20)
//   max_non_split_rounding_mb       how much larger than a big request an unsplit block may be
//   roundup_power2_divisions        N, or [256:1,512:2,1024:4,>:8] (MB size -> divisions)
//   garbage_collection_threshold    0 < t < 1
//   expandable_segments             True | False
//   per_process_memory_fraction     0 < f <= 1 of the device's total memory
//   release_lock_on_cudamalloc      True | False
//   pinned_use_cuda_host_register   True | False
//   release_before_new_peak         True | False (anatomy's own: PyTorch's allocator has no such rule)
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace anatomy::alloc {

inline constexpr size_t kMB = size_t{1} << 20;

enum class AllocBackend { Native, CudaMallocAsync };

// Size intervals of roundup_power2_divisions: one per power of two from 1 MB (index 0 also
// covers everything smaller) up to 64 GB and beyond (the last index).
inline constexpr size_t kRoundupIntervals = 17;

struct AllocConf {
  AllocBackend backend = AllocBackend::Native;
  size_t max_split_size = std::numeric_limits<size_t>::max();  // bytes; max = no limit
  size_t max_non_split_rounding_size = 20 * kMB;               // bytes
  // Entry i: divisions for sizes in [2^i MB, 2^(i+1) MB); 0 or 1 means plain 512-byte rounding.
  std::array<size_t, kRoundupIntervals> roundup_power2_divisions{};
  double garbage_collection_threshold = 0.0;  // 0 = off
  bool expandable_segments = false;
  double per_process_memory_fraction = 1.0;
  bool release_lock_on_cudamalloc = false;
  bool pinned_use_cuda_host_register = false;
  // Give back the large pool's wholly free segments before a reservation that sets a new peak of
  // reserved memory (Note [Releasing before a new peak], caching_segments.cpp). False keeps
  // PyTorch's policy exactly: cached segments stay until memory runs out.
  bool release_before_new_peak = true;
  // Not a key: false turns caching off for debugging (every request reserves from the provider
  // and every free releases), set by ANATOMY_NO_CUDA_MEMORY_CACHING=1 (or PyTorch's variable).
  bool caching = true;

  // The divisions that apply to a request of `size` bytes.
  size_t divisions_for(size_t size) const;
};

// Parses `key:value,key:value` onto the defaults. Throws ValueError naming the key and what is
// allowed for an unknown key, a repeated-but-malformed pair or a bad value. `source` (the
// environment variable's name, or "alloc conf") starts every message.
AllocConf parse_alloc_conf(std::string_view text, std::string_view source = "alloc conf");

// ANATOMY_CUDA_ALLOC_CONF, else PYTORCH_CUDA_ALLOC_CONF, else the defaults; caching is off when
// ANATOMY_NO_CUDA_MEMORY_CACHING (else PYTORCH_NO_CUDA_MEMORY_CACHING) is set and not "0".
AllocConf alloc_conf_from_env();

// The settings written back in the parser's syntax (only those that differ from the defaults).
std::string to_string(const AllocConf& conf);

}  // namespace anatomy::alloc
