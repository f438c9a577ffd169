// tanh for the AVX-512 loop: tanh from polynomial pieces held in registers past |x| = 0.625.
//
// Note [tanh by polynomial pieces]
//   vec::tanh (vec_math.h) computes both its formulas for every lane: Cephes' odd polynomial for
//   |x| < 0.625 and 1 - 2 / (e^(2|x|) + 1) above, an exponential and a division per element,
//   which over all of a GPU host's cores left tanh at 0.71x PyTorch's speed (docs/perf.md). Here,
//   as gelu's pieces do (Note [gelu by polynomial pieces]), tanh(a) on [0.625, 9.625) is 32 pieces
//   of width 9/32, each a polynomial of degree 5 in the distance u from the piece's centre,
//   fitted for relative error (scripts/fit-tanh-pieces.py): two registers hold one coefficient of
//   all 32 pieces and one vpermt2ps picks each lane's, 6 permutes and 5 FMAs for 16 values, no
//   division and no exponential. Below 0.625 the lanes keep the odd polynomial (5 FMAs); from
//   9.625 on tanh is 1 in fp32 (1 - 2 e^-19.25 rounds to 1); NaN stays NaN and the sign is x's.
//   Each element's value depends on the element alone. Accuracy: 1.00 ulp at most over every
//   float of [0.625, 9.625) (the script's exhaustive check), the odd polynomial's below.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include "anatomy/backends/cpu/polynomial_pieces.h"
#include "anatomy/backends/cpu/vec_math.h"

namespace anatomy::cpu::vec {

inline constexpr int kTanhPieces = kPiecesInRegisters, kTanhPieceDegree = 5;
inline constexpr float kTanhPiecesStart = 0.625f, kTanhPieceWidth = 9.0f / 32.0f;
inline constexpr float kTanhPiecesEnd = kTanhPiecesStart + kTanhPieces * kTanhPieceWidth;  // 9.625, exact

// kTanhPieceCoefficients[j][i]: the coefficient of u^j in piece i.
alignas(64) inline constexpr float kTanhPieceCoefficients[kTanhPieceDegree + 1][kTanhPieces] = {
    {6.443782449e-01f, 7.805884480e-01f, 8.687903285e-01f, 9.230676293e-01f, 9.554276466e-01f, 9.743575454e-01f,
     9.853083491e-01f, 9.916024208e-01f, 9.952065349e-01f, 9.972659349e-01f, 9.984412789e-01f, 9.991115928e-01f,
     9.994936585e-01f, 9.997114539e-01f, 9.998356104e-01f, 9.999063015e-01f, 9.999465942e-01f, 9.999696016e-01f,
     9.999826550e-01f, 9.999901056e-01f, 9.999943972e-01f, 9.999967813e-01f, 9.999981523e-01f, 9.999989867e-01f,
     9.999994040e-01f, 9.999996424e-01f, 9.999998212e-01f, 9.999998808e-01f, 9.999999404e-01f, 9.999999404e-01f,
     1.000000000e+00f, 1.000000000e+00f},
    {5.847766995e-01f, 3.906816542e-01f, 2.452033609e-01f, 1.479461640e-01f, 8.715804666e-02f, 5.062732100e-02f,
     2.916746214e-02f, 1.672466099e-02f, 9.563946165e-03f, 5.460627843e-03f, 3.115034895e-03f, 1.776084187e-03f,
     1.012369175e-03f, 5.769562558e-04f, 3.287805594e-04f, 1.873467700e-04f, 1.067512712e-04f, 6.082643813e-05f,
     3.465831469e-05f, 1.974785846e-05f, 1.125203835e-05f, 6.411233699e-06f, 3.653015938e-06f, 2.081427283e-06f,
     1.185962105e-06f, 6.757409778e-07f, 3.850258281e-07f, 2.193811213e-07f, 1.249995734e-07f, 7.122261536e-08f,
     4.058142267e-08f, 2.312259717e-08f},
    {-3.768175840e-01f, -3.049659729e-01f, -2.130331844e-01f, -1.365653425e-01f, -8.327332139e-02f, -4.932896793e-02f,
     -2.873877436e-02f, -1.658408716e-02f, -9.518018924e-03f, -5.445647053e-03f, -3.110148944e-03f, -1.774488599e-03f,
     -1.011846354e-03f, -5.767839029e-04f, -3.287231666e-04f, -1.873272995e-04f, -1.067444828e-04f, -6.082396794e-05f,
     -3.465735790e-05f, -1.974746192e-05f, -1.125186100e-05f, -6.411146842e-06f, -3.652972055e-06f, -2.081403409e-06f,
     -1.185949259e-06f, -6.757339861e-07f, -3.850207975e-07f, -2.193790607e-07f, -1.249985502e-07f, -7.122154955e-08f,
     -4.058092884e-08f, -2.312256697e-08f},
    {4.787952080e-02f, 1.078246012e-01f, 1.033478603e-01f, 7.674460858e-02f, 5.050947517e-02f, 3.118853830e-02f,
     1.859419420e-02f, 1.086999755e-02f, 6.284445990e-03f, 3.610567190e-03f, 2.066966146e-03f, 1.180889551e-03f,
     6.738808588e-04f, 3.843005397e-04f, 2.190766390e-04f, 1.248614280e-04f, 7.115535846e-05f, 4.054682722e-05f,
     2.310408127e-05f, 1.316472844e-05f, 7.501136679e-06f, 4.274081675e-06f, 2.435294846e-06f, 1.387607881e-06f,
     7.906210726e-07f, 4.504876188e-07f, 2.566628154e-07f, 1.462441759e-07f, 8.332592927e-08f, 4.747996130e-08f,
     2.705291990e-08f, 1.541240735e-08f},
    {9.477908909e-02f,  1.807000488e-02f,  -1.839467511e-02f, -2.518310957e-02f, -2.048417367e-02f, -1.396525465e-02f,
     -8.763846010e-03f, -5.267555360e-03f, -3.092669416e-03f, -1.792232506e-03f, -1.031031832e-03f, -5.906770239e-04f,
     -3.376034729e-04f, -1.927006233e-04f, -1.099081201e-04f, -6.265966658e-05f, -3.571403795e-05f, -2.035303260e-05f,
     -1.159800922e-05f, -6.608824606e-06f, -3.765624115e-06f, -2.145738108e-06f, -1.222562446e-06f, -6.966328101e-07f,
     -3.969020952e-07f, -2.261512293e-07f, -1.289164402e-07f, -7.341069619e-08f, -4.182341584e-08f, -2.385351117e-08f,
     -1.358683033e-08f, -7.720612594e-09f},
    {-6.327873468e-02f, -4.099874198e-02f, -1.293551922e-02f, 9.369420004e-04f, 4.637794569e-03f, 4.307777621e-03f,
     3.065954428e-03f,  1.959634945e-03f,  1.188370283e-03f,  7.009454421e-04f, 4.072230076e-04f, 2.345894754e-04f,
     1.345001947e-04f,  7.690883649e-05f,  4.390809409e-05f,  2.504672921e-05f, 1.428079486e-05f, 8.139933925e-06f,
     4.639545750e-06f,  2.642557320e-06f,  1.507168122e-06f,  8.576182040e-07f, 4.895110806e-07f, 2.784327648e-07f,
     1.594340517e-07f,  9.055735006e-08f,  5.207494880e-08f,  2.955097322e-08f, 1.698120400e-08f, 9.562373116e-09f,
     5.467943431e-09f,  3.274482241e-09f},
};

// GCC 12's AVX-512 headers start some intrinsics' results from an undefined vector (GCC bug
// 105593), as in gelu_pieces.h.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// The 64 values of one block (prefetch_loop.h), in place or not: every input is read before an
// output is written.
[[gnu::target("avx512f,prefer-vector-width=512"), gnu::always_inline]] inline void tanh_pieces_avx512(const float* in,
                                                                                                      float* out) {
  constexpr int kVectors = 4;
  const PiecesAvx512<kTanhPieceDegree> pieces = load_pieces_avx512<kTanhPieceDegree>(kTanhPieceCoefficients);
  __m512 x[kVectors];
  for (int v = 0; v < kVectors; ++v) x[v] = _mm512_loadu_ps(in + 16 * v);
  for (int v = 0; v < kVectors; ++v) {
    const __m512 ax = _mm512_abs_ps(x[v]);
    // The piece (a - 0.625) / width, clamped to the first and last, and a minus its centre (k +
    // 1/2) * width + 0.625: both products exact. Lanes outside the pieces get any piece.
    const __m512 a = _mm512_min_ps(_mm512_max_ps(ax, _mm512_set1_ps(kTanhPiecesStart)), _mm512_set1_ps(kTanhPiecesEnd));
    const __m512i k =
        _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(_mm512_sub_ps(a, _mm512_set1_ps(kTanhPiecesStart)),
                                                           _mm512_set1_ps(1.0f / kTanhPieceWidth))),
                         _mm512_set1_epi32(kTanhPieces - 1));
    const __m512 u = _mm512_sub_ps(a, _mm512_fmadd_ps(_mm512_cvtepi32_ps(k), _mm512_set1_ps(kTanhPieceWidth),
                                                      _mm512_set1_ps(kTanhPiecesStart + kTanhPieceWidth / 2)));
    __m512 p = eval_pieces_avx512(pieces, k, u);
    // 1 from 9.625 on (and for +inf); NaN compares false here and takes the odd polynomial below.
    p = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(kTanhPiecesEnd), _CMP_GE_OQ), p,
                             _mm512_set1_ps(1.0f));
    // The odd polynomial below 0.625 (and NaN through it), then x's sign on every lane: p > 0, and
    // the polynomial's value has x's sign but turns -0 into +0.
    const __m512 z = _mm512_mul_ps(x[v], x[v]);
    __m512 poly = _mm512_set1_ps(kTanhSmall[0]);
    for (int j = 1; j < 5; ++j) poly = _mm512_fmadd_ps(poly, z, _mm512_set1_ps(kTanhSmall[j]));
    const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(poly, z), x[v], x[v]);
    const __mmask16 keep = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(kTanhPiecesStart), _CMP_NGE_UQ);  // < 0.625, NaN
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x[v]), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
    const __m512 y =
        _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_mask_blend_ps(keep, p, small)), sign));
    _mm512_storeu_ps(out + 16 * v, y);
  }
}

#pragma GCC diagnostic pop

}  // namespace anatomy::cpu::vec

#endif
