// gelu(x) = x Phi(x) for the AVX-512 loop: Phi from polynomial pieces held in registers.
//
// Note [gelu by polynomial pieces]
//   vec::gelu (vec_math.h) takes Phi through erfc: a division, an exponential and a polynomial of
//   degree 8 per element, about 1.3 ns an element on one core of a GPU host's Xeon, bound by that
//   arithmetic over 16 threads, where PyTorch's erf form (Abramowitz and Stegun 7.1.26: an
//   exponential and a division, absolute error 1.5e-7, so no correct digit in x Phi(x) below
//   x = -3) runs at its exp's speed (docs/perf.md). Here p(a) = Phi(-a) on [0, 5.5] is 32 pieces of width
//   11/64, each a polynomial of degree 6 in the distance u from the piece's centre, fitted for
//   relative error (scripts/fit-gelu-pieces.py). An AVX-512 register holds 16 floats, so two
//   hold one coefficient of all 32 pieces, and one vpermt2ps picks each lane's: 7 permutes and 6
//   FMAs for 16 values, no division and no exponential. Then gelu(x) = max(x, 0) - |x| p(|x|) in
//   one FMA: x p(-x) at or below 0, x - x p(x) above, where p <= 1/2, so the result keeps p's
//   relative error in both halves (-0 stays -0). Past 5.5, p is below half an ulp of 1: x - x p
//   is x.
//   The tail, x in [-13, -5.5): gelu(x) = -r(a) e^(-a^2 / 2) with a = -x and r(a) = a p(a)
//   e^(a^2 / 2), which is nearly constant (1 / sqrt(2 pi) (1 - 1/a^2 + ...)): 16 pieces of width
//   1/2 and degree 4 (one register a coefficient), and the exponential of a's exact square (split
//   in two, as vec::gelu's). A vector of 16 values computes it only when one of them lies there.
//   Below -13, at +inf and for NaN the lanes take vec::gelu (computed for the block only where
//   one such lane is in it). Each element's value depends on the element alone, never on its
//   neighbours. Accuracy: 3.05 ulp at most over every float in [-5.5, 5.5] (measured
//   exhaustively), and the tail's within the test's bound (tests/core/test_vec_math.cpp).
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <limits>

#include "anatomy/backends/cpu/polynomial_pieces.h"
#include "anatomy/backends/cpu/vec_math.h"

namespace anatomy::cpu::vec {

inline constexpr int kGeluPieces = kPiecesInRegisters, kGeluPieceDegree = 6;
inline constexpr float kGeluPieceWidth = 11.0f / 64.0f, kGeluPiecesEnd = 5.5f;
inline constexpr int kGeluTailPieces = 16, kGeluTailDegree = 4;
inline constexpr float kGeluTailWidth = 0.5f, kGeluTailEnd = 13.0f;

// kGeluPieceCoefficients[j][i]: the coefficient of u^j in piece i of p.
alignas(64) inline constexpr float kGeluPieceCoefficients[kGeluPieceDegree + 1][kGeluPieces] = {
    {4.657580554e-01f, 3.982758224e-01f, 3.337114751e-01f, 2.737326920e-01f, 2.196317464e-01f, 1.722496748e-01f,
     1.319570839e-01f, 9.868817776e-02f, 7.201629877e-02f, 5.125422031e-02f, 3.556180000e-02f, 2.404555306e-02f,
     1.583950780e-02f, 1.016198937e-02f, 6.347949617e-03f, 3.860160941e-03f, 2.284569433e-03f, 1.315677189e-03f,
     7.371697575e-04f, 4.017844913e-04f, 2.129937784e-04f, 1.098082503e-04f, 5.504888759e-05f, 2.683263301e-05f,
     1.271565543e-05f, 5.857847100e-06f, 2.623175533e-06f, 1.141762596e-06f, 4.830087619e-07f, 1.985815175e-07f,
     7.934200141e-08f, 3.080532096e-08f},
    {-3.974718451e-01f, -3.859018683e-01f, -3.637624681e-01f, -3.329119384e-01f, -2.958090007e-01f, -2.551901340e-01f,
     -2.137405276e-01f, -1.738122553e-01f, -1.372285187e-01f, -1.051910669e-01f, -7.828596234e-02f, -5.656651035e-02f,
     -3.968308121e-02f, -2.702849545e-02f, -1.787346974e-02f, -1.147536095e-02f, -7.153101265e-03f, -4.329052754e-03f,
     -2.543676412e-03f, -1.451113494e-03f, -8.037321968e-04f, -4.322070745e-04f, -2.256539155e-04f, -1.143837580e-04f,
     -5.629325460e-05f, -2.689793109e-05f, -1.247819819e-05f, -5.620246611e-06f, -2.457702749e-06f, -1.043455313e-06f,
     -4.301192575e-07f, -1.721370637e-07f},
    {1.707886904e-02f, 4.974516109e-02f, 7.815209031e-02f, 1.001336724e-01f, 1.143948883e-01f, 1.206172109e-01f,
     1.193941236e-01f, 1.120274216e-01f, 1.002411470e-01f, 8.587864786e-02f, 7.064084709e-02f, 5.590362102e-02f,
     4.262830690e-02f, 3.135727718e-02f, 2.227201872e-02f, 1.528554037e-02f, 1.014287397e-02f, 6.510489155e-03f,
     4.044048022e-03f, 2.431748668e-03f, 1.415950013e-03f, 7.985700504e-04f, 4.363229673e-04f, 2.310015552e-04f,
     1.185236761e-04f, 5.894428614e-05f, 2.841714013e-05f, 1.328221970e-05f, 6.019449756e-06f, 2.645321274e-06f,
     1.127382234e-06f, 4.659800936e-07f},
    {6.575601548e-02f,  6.004195660e-02f,  4.943339154e-02f,  3.540643305e-02f,  1.980908774e-02f,  4.524738062e-03f,
     -8.838411421e-03f, -1.916803792e-02f, -2.594389953e-02f, -2.920938097e-02f, -2.944721840e-02f, -2.740458585e-02f,
     -2.391424961e-02f, -1.974815875e-02f, -1.552311704e-02f, -1.166132838e-02f, -8.396008983e-03f, -5.805938970e-03f,
     -3.862325102e-03f, -2.474866807e-03f, -1.529047382e-03f, -9.116193978e-04f, -5.248372327e-04f, -2.919448016e-04f,
     -1.569821761e-04f, -8.163031453e-05f, -4.106363122e-05f, -1.998946027e-05f, -9.418871741e-06f, -4.296878615e-06f,
     -1.898253686e-06f, -8.122370900e-07f},
    {-4.259237554e-03f, -1.216075663e-02f, -1.833548397e-02f, -2.201371640e-02f, -2.289599553e-02f, -2.117211558e-02f,
     -1.743040793e-02f, -1.249397825e-02f, -7.231217809e-03f, -2.389742294e-03f, 1.512266113e-03f,  4.224406555e-03f,
     5.739812739e-03f,  6.229221821e-03f,  5.959589500e-03f,  5.219007842e-03f,  4.262140952e-03f,  3.280702513e-03f,
     2.396236407e-03f,  1.668378944e-03f,  1.110889600e-03f,  7.090910804e-04f,  4.346966161e-04f,  2.563007001e-04f,
     1.455105084e-04f,  7.962133532e-05f,  4.202367563e-05f,  2.140782999e-05f,  1.053190226e-05f,  5.006146239e-06f,
     2.300073902e-06f,  1.021827529e-06f},
    {-9.774969891e-03f, -8.367089555e-03f, -5.832526367e-03f, -2.661815844e-03f, 5.651692627e-04f,  3.314871807e-03f,
     5.209373776e-03f,  6.085917354e-03f,  5.996430758e-03f,  5.157055799e-03f,  3.869818989e-03f,  2.441949211e-03f,
     1.123742084e-03f,  7.507950068e-05f,  -6.385616143e-04f, -1.028766390e-03f, -1.156119280e-03f, -1.101587899e-03f,
     -9.441109141e-04f, -7.471586578e-04f, -5.537713878e-04f, -3.877062700e-04f, -2.578601707e-04f, -1.635647204e-04f,
     -9.923670586e-05f, -5.771401629e-05f, -3.222965461e-05f, -1.730551958e-05f, -8.944315596e-06f, -4.453881502e-06f,
     -2.138408036e-06f, -9.905668321e-07f},
    {7.101253723e-04f,  1.979464199e-03f,  2.851460129e-03f,  3.196711885e-03f,  2.968991874e-03f,  2.291752025e-03f,
     1.346435398e-03f,  3.527547815e-04f,  -4.986207932e-04f, -1.084256102e-03f, -1.362853101e-03f, -1.362659503e-03f,
     -1.163306530e-03f, -8.552322979e-04f, -5.256114528e-04f, -2.362915984e-04f, -2.011205834e-05f, 1.155660430e-04f,
     1.808575471e-04f,  1.944824326e-04f,  1.764141198e-04f,  1.435252925e-04f,  1.075928521e-04f,  7.540771185e-05f,
     4.984975021e-05f,  3.126490265e-05f,  1.867976243e-05f,  1.066364712e-05f,  5.829715974e-06f,  3.057507456e-06f,
     1.540575454e-06f,  7.466147167e-07f},
};
// The same for r's pieces, from a = 5.5.
alignas(64) inline constexpr float kGeluTailCoefficients[kGeluTailDegree + 1][kGeluTailPieces] = {
    {3.878330886e-01f, 3.894280493e-01f, 3.907077610e-01f, 3.917491138e-01f, 3.926071227e-01f, 3.933219612e-01f,
     3.939235508e-01f, 3.944343328e-01f, 3.948715925e-01f, 3.952486813e-01f, 3.955760598e-01f, 3.958620727e-01f,
     3.961133361e-01f, 3.963352144e-01f, 3.965321481e-01f, 3.967076838e-01f},
    {3.571323352e-03f, 2.844499890e-03f, 2.299644053e-03f, 1.883841120e-03f, 1.561434474e-03f, 1.307857921e-03f,
     1.105843112e-03f, 9.430296486e-04f, 8.104232838e-04f, 7.013799041e-04f, 6.109237438e-04f, 5.352811422e-04f,
     4.715565883e-04f, 4.175046633e-04f, 3.713665938e-04f, 3.317520896e-04f},
    {-8.416207274e-04f, -6.251591840e-04f, -4.732065427e-04f, -3.642431984e-04f, -2.846033312e-04f, -2.253892744e-04f,
     -1.806754735e-04f, -1.464339584e-04f, -1.198750469e-04f, -9.903339378e-05f, -8.250256360e-05f, -6.926152855e-05f,
     -5.855911513e-05f, -4.983591134e-05f, -4.267051918e-05f, -3.674216714e-05f},
    {1.730115910e-04f, 1.201136547e-04f, 8.528251055e-05f, 6.177914474e-05f, 4.556655040e-05f, 3.415873289e-05f,
     2.598598439e-05f, 2.003431291e-05f, 1.563493788e-05f, 1.233827606e-05f, 9.836760000e-06f, 7.916563845e-06f,
     6.426799246e-06f, 5.259522368e-06f, 4.336510756e-06f, 3.600403033e-06f},
    {-3.261934762e-05f, -2.121789112e-05f, -1.416083342e-05f, -9.671504813e-06f, -6.744172879e-06f, -4.792152595e-06f,
     -3.463760777e-06f, -2.542849870e-06f, -1.893512035e-06f, -1.428487963e-06f, -1.090666842e-06f, -8.419882533e-07f,
     -6.566964430e-07f, -5.170531949e-07f, -4.107023699e-07f, -3.289211747e-07f},
};

// GCC 12's AVX-512 headers start some intrinsics' results from an undefined vector
// (_mm512_undefined_ps), which -Wmaybe-uninitialized reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// e^(hi + lo) for hi in [-87, 88]: vec::exp_normal in 16 lanes.
[[gnu::target("avx512f,prefer-vector-width=512"), gnu::always_inline]] inline __m512 exp_normal_avx512(__m512 hi,
                                                                                                       __m512 lo) {
  const __m512 round = _mm512_set1_ps(kRound);
  const __m512 kn = _mm512_fmadd_ps(hi, _mm512_set1_ps(kLog2e), round);
  const __m512 n = _mm512_sub_ps(kn, round);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), hi);
  r = _mm512_add_ps(_mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r), lo);
  __m512 poly = _mm512_set1_ps(kExpm1Reduced[0]);
  for (int j = 1; j < 6; ++j) poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(kExpm1Reduced[j]));
  const __m512 p = _mm512_add_ps(_mm512_fmadd_ps(poly, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  // 2^n: n's bits in kn's mantissa, moved to the exponent with its bias.
  const __m512i biased =
      _mm512_sub_epi32(_mm512_castps_si512(kn), _mm512_set1_epi32(static_cast<int>(bits(kRound)) - 127));
  return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(biased, 23)));
}

// gelu(x) for the lanes with x in [-13, -5.5) (the others' values are meaningless).
[[gnu::target("avx512f,prefer-vector-width=512"), gnu::always_inline]] inline __m512 gelu_tail_avx512(__m512 x) {
  const __m512 a = _mm512_sub_ps(_mm512_setzero_ps(), x);
  // The piece (a - 5.5) / width and a minus its centre, both exact; a lane beyond the tail gets
  // any index, of which the permutes take the low four bits.
  const __m512i k = _mm512_cvttps_epi32(
      _mm512_fmsub_ps(a, _mm512_set1_ps(1.0f / kGeluTailWidth), _mm512_set1_ps(kGeluPiecesEnd / kGeluTailWidth)));
  const __m512 u = _mm512_sub_ps(a, _mm512_fmadd_ps(_mm512_cvtepi32_ps(k), _mm512_set1_ps(kGeluTailWidth),
                                                    _mm512_set1_ps(kGeluPiecesEnd + kGeluTailWidth / 2)));
  __m512 r = _mm512_permutexvar_ps(k, _mm512_load_ps(kGeluTailCoefficients[kGeluTailDegree]));
  for (int j = kGeluTailDegree - 1; j >= 0; --j) {
    r = _mm512_fmadd_ps(r, u, _mm512_permutexvar_ps(k, _mm512_load_ps(kGeluTailCoefficients[j])));
  }
  // -a^2 / 2 = (a / 2) x = hi + lo exactly: a / 2 is exact, and the FMA gives the product's
  // rounding error.
  const __m512 half_a = _mm512_mul_ps(a, _mm512_set1_ps(0.5f));
  const __m512 hi = _mm512_mul_ps(half_a, x);
  const __m512 lo = _mm512_fmsub_ps(half_a, x, hi);
  return _mm512_fnmadd_ps(r, exp_normal_avx512(hi, lo), _mm512_setzero_ps());
}

// The 64 values of one block (prefetch_loop.h), in place or not: every input is read before an
// output is written.
[[gnu::target("avx512f,prefer-vector-width=512"), gnu::always_inline]] inline void gelu_pieces_avx512(const float* in,
                                                                                                      float* out) {
  constexpr int kVectors = 4;
  const PiecesAvx512<kGeluPieceDegree> pieces = load_pieces_avx512<kGeluPieceDegree>(kGeluPieceCoefficients);
  __m512 x[kVectors], y[kVectors];
  __mmask16 outside[kVectors];
  bool any_outside = false;
  for (int v = 0; v < kVectors; ++v) x[v] = _mm512_loadu_ps(in + 16 * v);
  for (int v = 0; v < kVectors; ++v) {
    const __m512 ax = _mm512_abs_ps(x[v]);
    const __m512 a = _mm512_min_ps(ax, _mm512_set1_ps(kGeluPiecesEnd));
    const __m512i k = _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(a, _mm512_set1_ps(1.0f / kGeluPieceWidth))),
                                       _mm512_set1_epi32(kGeluPieces - 1));
    // a minus the piece's centre (k + 1/2) * width: both products exact.
    const __m512 u = _mm512_sub_ps(a, _mm512_fmadd_ps(_mm512_cvtepi32_ps(k), _mm512_set1_ps(kGeluPieceWidth),
                                                      _mm512_set1_ps(kGeluPieceWidth / 2)));
    const __m512 p = eval_pieces_avx512(pieces, k, u);
    // x Phi(x) = max(x, 0) - |x| p: x - x p above 0 and x p at or below it, in one FMA (max(0, x)
    // returns its second operand for two zeros, so -0 stays -0).
    y[v] = _mm512_fnmadd_ps(ax, p, _mm512_max_ps(_mm512_setzero_ps(), x[v]));
    // Below -5.5, +inf and NaN: the tail's pieces for [-13, -5.5), vec::gelu for the rest.
    const __mmask16 rare = _mm512_cmp_ps_mask(x[v], _mm512_set1_ps(-kGeluPiecesEnd), _CMP_NGE_UQ) |
                           _mm512_cmp_ps_mask(x[v], _mm512_set1_ps(std::numeric_limits<float>::max()), _CMP_NLE_UQ);
    outside[v] = 0;
    if (rare != 0) [[unlikely]] {
      const __mmask16 tail =
          _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(x[v], _mm512_set1_ps(-kGeluPiecesEnd), _CMP_LT_OQ), x[v],
                                  _mm512_set1_ps(-kGeluTailEnd), _CMP_GE_OQ);
      if (tail != 0) y[v] = _mm512_mask_blend_ps(tail, y[v], gelu_tail_avx512(x[v]));
      outside[v] = rare & static_cast<__mmask16>(~tail);
      any_outside |= outside[v] != 0;
    }
  }
  if (any_outside) [[unlikely]] {
    alignas(64) float xs[16 * kVectors], full[16 * kVectors];
    for (int v = 0; v < kVectors; ++v) _mm512_store_ps(xs + 16 * v, x[v]);
    for (int i = 0; i < 16 * kVectors; ++i) full[i] = gelu(xs[i]);
    for (int v = 0; v < kVectors; ++v) y[v] = _mm512_mask_blend_ps(outside[v], y[v], _mm512_load_ps(full + 16 * v));
  }
  for (int v = 0; v < kVectors; ++v) _mm512_storeu_ps(out + 16 * v, y[v]);
}

#pragma GCC diagnostic pop

}  // namespace anatomy::cpu::vec

#endif
