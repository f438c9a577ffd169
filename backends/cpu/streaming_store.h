// Streaming (non-temporal) stores for element-wise outputs too large to stay in the cache.
//
// Note [Streaming stores for large outputs]
// A store to a line that is not in the cache first reads the line from memory (a read for
// ownership), so `c = a + b` over arrays larger than the cache moves four arrays through memory
// for three arrays of work, and can reach only three quarters of what memcpy does (memcpy's
// `rep movsb` writes whole lines without reading them). Non-temporal stores write whole lines
// without that read. They also leave the written lines out of the cache, which is what makes
// them wrong for outputs that fit in it: the next op would read them back from memory. So a
// contiguous output of at least streaming_store_threshold() bytes (16 MiB unless set) is
// computed block by block into a 4 KiB buffer on the stack, which stays in L1, and each block is
// copied out with non-temporal stores; a smaller output is written in place as before. The
// elements before the output's first 16-byte boundary and after its last whole block are
// written in place. An in-place op (an output that is also an input, element for element) is
// still right: each block's inputs are read before its outputs are written.
//
// An output whose memory has not been touched yet (a fresh mmap, which is what the allocator
// gets for a new tensor of 32 MiB and more) is written in place too: its first store faults the
// page in, and the kernel fills it with zeros through the cache, so plain stores then hit the
// cache, where streaming stores must first push those zeroed lines out. `x + x` into a new 64 MiB
// fp32 took 47 ms with streaming stores, 26 with plain ones, on the development VM (1 thread);
// into a reused output, streaming stores are the faster. Whether the page in the middle of the
// output is resident (mincore) decides, once per operator call (stream_output; not the first
// page: the allocator's header line shares it with the first elements, so it is always
// resident; and not once per chunk: a broadcast op's chunks are its rows, one system call each).
//
// The binary loops use it; the vectorized transcendental loops do not: they prefetch
// their output for writing and run long enough per line that its reads for ownership overlap
// their arithmetic, where a stack block streamed out after each computation serialized the two
// (Note [Prefetching the transcendental loops]; docs/perf.md "The transcendental loops write in
// place").
//
// Only x86-64 has the instructions the compiler is sure of (SSE2's movntdq, part of the
// baseline); elsewhere every output is written in place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "anatomy/core/macros.h"
#include "anatomy/core/tensor.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace anatomy::cpu {

// Outputs of at least this many bytes are written with streaming stores (0: every output;
// SIZE_MAX: none). Process-wide; for benchmarks and for machines whose caches make another
// threshold better.
size_t streaming_store_threshold();
void set_streaming_store_threshold(size_t bytes);

// Whether the page holding `p` is in memory already (false for a page of a fresh mapping that
// nothing has written yet); true where the system cannot say.
bool page_resident(const void* p);

// Sets the threshold for a scope and puts the previous one back at its end (tests, benchmarks).
class StreamingStoreThreshold {
 public:
  explicit StreamingStoreThreshold(size_t bytes) : saved_(streaming_store_threshold()) {
    set_streaming_store_threshold(bytes);
  }
  ~StreamingStoreThreshold() { set_streaming_store_threshold(saved_); }
  StreamingStoreThreshold(const StreamingStoreThreshold&) = delete;
  StreamingStoreThreshold& operator=(const StreamingStoreThreshold&) = delete;

 private:
  size_t saved_;
};

namespace detail {

inline constexpr int64_t kStreamingBlockBytes = 4096;

#if defined(__SSE2__)
// `bytes` (a multiple of 16) from the 16-byte aligned `src` to the 16-byte aligned `dst`.
inline void copy_streaming(char* dst, const char* src, int64_t bytes) {
  for (int64_t i = 0; i < bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_load_si128(reinterpret_cast<const __m128i*>(src + i)));
  }
}
#endif

}  // namespace detail

// Whether an operator's output `out`, `total_bytes` over every thread's chunks, is to be written
// with streaming stores: at least the threshold, and memory already written. Asked once per
// call, before the chunks; its answer goes to write_output. A small output is answered by the
// first test alone (the tiny ops pay one compare).
inline bool stream_output(const Tensor& out, size_t total_bytes) {
  return total_bytes >= size_t{2} * detail::kStreamingBlockBytes && total_bytes >= streaming_store_threshold() &&
         page_resident(static_cast<const char*>(out.data_ptr()) + total_bytes / 2);
}

namespace detail {
template <typename Out>
constexpr int64_t kStreamingBlock = kStreamingBlockBytes / static_cast<int64_t>(sizeof(Out));

// write_output's streaming path, out of line so that the in-place path stays small enough to
// inline into every kernel's loop (a tiny op pays for nothing but a compare).
template <typename Out, typename Compute>
ANATOMY_NOINLINE void write_output_streaming(Out* out, int64_t n, Compute& compute);
}  // namespace detail

// Writes out[0, n) as compute(dst, begin, count) gives elements [begin, begin + count) into
// dst: with streaming stores when `stream` (stream_output's answer for the whole output) and the
// chunk is long enough, else in place in one call.
template <typename Out, typename Compute>
void write_output(Out* out, int64_t n, bool stream, Compute&& compute) {
#if defined(__SSE2__)
  if (!stream || n < 2 * detail::kStreamingBlock<Out> || reinterpret_cast<uintptr_t>(out) % sizeof(Out) != 0) {
    compute(out, 0, n);
    return;
  }
  detail::write_output_streaming(out, n, compute);
#else
  (void)stream;
  compute(out, 0, n);
#endif
}

#if defined(__SSE2__)
template <typename Out, typename Compute>
void detail::write_output_streaming(Out* out, int64_t n, Compute& compute) {
  constexpr int64_t kBlock = kStreamingBlock<Out>;
  static_assert(16 % sizeof(Out) == 0, "the head below steps to a 16-byte boundary in whole elements");
  const auto address = reinterpret_cast<uintptr_t>(out);
  const int64_t head = std::min<int64_t>(static_cast<int64_t>((16 - address % 16) % 16 / sizeof(Out)), n);
  if (head > 0) compute(out, 0, head);
  alignas(64) Out block[kBlock];
  int64_t i = head;
  for (; i + kBlock <= n; i += kBlock) {
    compute(block, i, kBlock);
    copy_streaming(reinterpret_cast<char*>(out + i), reinterpret_cast<const char*>(block), kStreamingBlockBytes);
  }
  if (i < n) compute(out + i, i, n - i);
  // Streaming stores are weakly ordered: the fence makes them visible before whatever tells
  // another thread that this chunk is done.
  _mm_sfence();
}
#endif

}  // namespace anatomy::cpu
