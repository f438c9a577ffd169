// 32 polynomial pieces held in AVX-512 registers, for the loops that take a function from them
// (gelu_pieces.h, tanh_pieces.h): two registers hold one coefficient of all 32 pieces, and one
// vpermt2ps picks each lane's (Note [gelu by polynomial pieces]).
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

namespace anatomy::cpu::vec {

inline constexpr int kPiecesInRegisters = 32;

template <int Degree>
struct PiecesAvx512 {
  __m512 lo[Degree + 1], hi[Degree + 1];  // pieces 0-15 and 16-31 of each coefficient
};

// table[j][i]: the coefficient of u^j in piece i.
template <int Degree>
[[gnu::target("avx512f,prefer-vector-width=512"), gnu::always_inline]] inline PiecesAvx512<Degree> load_pieces_avx512(
    const float (&table)[Degree + 1][kPiecesInRegisters]) {
  PiecesAvx512<Degree> c;
  for (int j = 0; j <= Degree; ++j) {
    c.lo[j] = _mm512_load_ps(&table[j][0]);
    c.hi[j] = _mm512_load_ps(&table[j][16]);
  }
  return c;
}

// Each lane's piece k at u, by Horner's rule in FMAs.
template <int Degree>
[[gnu::target("avx512f,prefer-vector-width=512"), gnu::always_inline]] inline __m512 eval_pieces_avx512(
    const PiecesAvx512<Degree>& c, __m512i k, __m512 u) {
  __m512 p = _mm512_permutex2var_ps(c.lo[Degree], k, c.hi[Degree]);
  for (int j = Degree - 1; j >= 0; --j) p = _mm512_fmadd_ps(p, u, _mm512_permutex2var_ps(c.lo[j], k, c.hi[j]));
  return p;
}

}  // namespace anatomy::cpu::vec

#endif
