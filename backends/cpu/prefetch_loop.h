// A contiguous element-wise loop that prefetches its operands ahead of itself.
//
// Note [Prefetching the transcendental loops]
// The vectorized functions of vec_math.h and vec_math_f64.h spend 100-300 instructions on each
// cache line of input (one or two vectors of 16 floats or 8 doubles). An out-of-order core holds
// a few hundred instructions, so it has the next line's load in flight only a line or two ahead,
// and where the hardware prefetcher does not run far enough ahead of so slow a stream, every line
// waits for memory in turn: the loop costs its compute plus the memory's latency per line, not
// the larger of its compute and the bandwidth. A prefetch of the input and of the output (for
// writing) 4 KiB ahead brings such a loop over memory close to its time in cache (docs/perf.md,
// "Prefetching the transcendental loops", has the figures). A prefetch never faults, so
// the addresses past either array's end (formed as integers) are harmless; where the output is a
// block on the stack (a strided or 2-byte operand's blocks), the lines past it are some of the
// stack's own. Because the output's lines are prefetched for writing, a large output is written in
// place rather than through streaming stores (unary_cpu.cpp's run_vec). The same blocks carry
// the functions' fast forms (vec_loops.cpp's FastForm).
#pragma once

#include <cstdint>
#include <type_traits>

namespace anatomy::cpu {

inline constexpr int64_t kPrefetchAheadBytes = 4096;

// A loop without a fast form (below).
struct NoFastForm {};

// A fast form that takes whole blocks (`fast.block(in, out)`: kBlock values, any arguments, in
// place or not) instead of f: every element goes through it, the last partial block through a
// copy padded with zeros, so that an element's value never depends on where it lies.
template <typename Fast, typename T>
concept WholeBlockForm = requires(const Fast& fast, const T* in, T* out) {
  fast.block(in, out);
};

// out[i] = f(in[i]) for i in [0, n), in blocks of four cache lines, each preceded by a prefetch
// of the lines kPrefetchAheadBytes ahead in both arrays (the output's for writing). Always
// inlined, and f's call operator must be too (a function object, not a lambda, whose operator
// GCC compiles for the baseline and may leave out of line): the caller's target (AVX2, AVX-512)
// compiles and vectorizes the loop.
//
// `fast`, where given, is a form of f without its clamps and special cases that gives f's values
// for arguments in [Fast::kLo, Fast::kHi] (exp in the range where e^x is a normal number, say): a
// block whose arguments all lie there (NaN does not) runs it instead of f. Or a WholeBlockForm.
template <typename T, typename F, typename Fast = NoFastForm>
[[gnu::always_inline]] inline void prefetching_loop(const T* in, T* out, int64_t n, F f, Fast fast = {}) {
  constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));
  constexpr int64_t kBlock = 4 * kLine;
  int64_t b = 0;
  for (; b + kBlock <= n; b += kBlock) {
    const uintptr_t in_ahead = reinterpret_cast<uintptr_t>(in + b) + kPrefetchAheadBytes;
    const uintptr_t out_ahead = reinterpret_cast<uintptr_t>(out + b) + kPrefetchAheadBytes;
    for (int64_t line = 0; line < 4; ++line) {
      __builtin_prefetch(reinterpret_cast<const void*>(in_ahead + 64 * line), 0);
      __builtin_prefetch(reinterpret_cast<const void*>(out_ahead + 64 * line), 1);
    }
    if constexpr (WholeBlockForm<Fast, T>) {
      fast.block(in + b, out + b);
      continue;
    } else if constexpr (!std::is_same_v<Fast, NoFastForm>) {
      uint32_t outside = 0;
      for (int64_t i = b; i < b + kBlock; ++i) {
        outside |= static_cast<uint32_t>(!(in[i] >= T(Fast::kLo) && in[i] <= T(Fast::kHi)));
      }
      if (outside == 0) {
        for (int64_t i = b; i < b + kBlock; ++i) out[i] = fast(in[i]);
        continue;
      }
    }
    for (int64_t i = b; i < b + kBlock; ++i) out[i] = f(in[i]);
  }
  if constexpr (WholeBlockForm<Fast, T>) {
    if (b < n) {
      alignas(64) T pad_in[kBlock] = {}, pad_out[kBlock];
      for (int64_t i = b; i < n; ++i) pad_in[i - b] = in[i];
      fast.block(pad_in, pad_out);
      for (int64_t i = b; i < n; ++i) out[i] = pad_out[i - b];
    }
  } else {
    for (int64_t i = b; i < n; ++i) out[i] = f(in[i]);
  }
}

}  // namespace anatomy::cpu
