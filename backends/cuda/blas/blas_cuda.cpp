// CUDA matrix products: mm, bmm, addmm, baddbmm (and their out= forms) over cuBLAS.
//
// Row-major products in a column-major library: c = a @ b is c^T = b^T @ a^T, and a row-major
// [rows, cols] matrix read column-major is its transpose. So cuBLAS is called with b first, a
// second, m and n swapped, and c's leading dimension m. An operand whose matrices are row-major
// ([ld, 1] strides) goes as CUBLAS_OP_N, a column-major one ([1, ld], a transposed view: w.t()
// in linear) as CUBLAS_OP_T, without a copy; any other layout is copied once to a contiguous
// tensor. A batch goes to cublasGemmStridedBatchedEx with the operands' batch strides (0 for a
// broadcast batch).
//
// Precision (core/precision_switches.h): fp32 computes in fp32, or TF32 when
// allow_tf32_matmul(); fp64 in fp64; fp16 and bf16 in fp32 (fp16 in fp16 with
// allow_fp16_accumulation()), with cuBLAS's reduced-precision split-k reductions forbidden when
// the switch of that dtype is off. Integers run the exact kernel of gemm_integer.cu, except int8
// products that cuBLASLt's integer kernels compute exactly (Note [Exact int8 products on
// cuBLASLt], gemm_int8_lt.cpp). addmm with a bias vector (linear) adds it in cuBLASLt's
// epilogue instead (addmm_lt.cpp). Small floating products skip cuBLAS (Note [Small products skip
// cuBLAS], launch.h).
//
// Note [Misaligned cuBLAS operands]
// An operand whose address or leading dimension is not a multiple of 16 bytes (a storage offset
// such as x[:, 1:], an odd K in fp16) keeps cuBLAS off its tensor-core kernels, several times
// slower than the aligned product, and a contiguous staging copy with the same odd leading
// dimension (K = 2047) does not help (docs/perf.md, "K padding measured"). A large
// product therefore stages such an operand through an aligned copy whose rows are padded to 16
// bytes (a view of the first K columns of a wider buffer), and computes a c it could not write
// aligned in such a temporary: the copy reads and writes the operand once, a small price next to
// the product's O(n m k). Small products keep the operand as it is, where an extra launch would
// cost more than the slower kernel.
//
// Note [Padding K for the tensor cores]
// Aligned operands are not enough: with both operands aligned and their rows padded to 16 bytes,
// a product whose K is not a multiple of 8 halves still runs several times the aligned one's time,
// since NVIDIA's guidance for the tensor cores asks K in multiples of 8 halves; with K rounded up
// the product comes within the cost of its copies (docs/perf.md, "K padding measured"). A large
// fp16 or bf16 product whose K is not copies both
// operands into buffers whose K is rounded up, the added columns of a and rows of b zero: each
// element of c gains terms 0 * 0 and is the same sum (in cuBLAS's own order of additions). The
// copies keep each operand's layout (row- or column-major), so none of them transposes, and each
// is one pass of pad_operand.cu over its buffer.
//
// Note [Splitting K around a misaligned head]
// The copies are most of what a padded product costs beyond the aligned one. Where a product may
// round a partial sum to its
// own dtype (allow_fp16/bf16_reduced_precision_reduction, on by default as in PyTorch: cuBLAS's
// split-K kernels do the same), no copy is needed when a is read row by row with its rows 16 bytes
// apart: its first `head` columns (0 to 7) lead up to a 16-byte boundary, the largest multiple of
// 8 columns after them starts there, and at most 7 columns are left after it. cuBLAS computes the
// middle, aligned and with K a multiple of 8 (b's rows from `head` on are aligned when b's are).
// k_remainder.cu first writes beta * c plus the at most 14 other terms of each element, summed in
// fp32 and rounded once; cuBLAS then adds the middle with beta 1 (one pass over c fewer than the
// remainder after cuBLAS). cuBLAS runs K = 2040 as fast as 2048 and K = 2047 several times
// slower, aligned or not (docs/perf.md, "max_pool2d in NHWC words, DLPack's stream objects, the
// CPU rows from 1 to 16 threads", and "The split product's remainder over shared rows" for the
// split product's cost). With the switch off, both operands are copied as above.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>

#include "anatomy/backends/cuda/blas/cublas_handles.h"
#include "anatomy/backends/cuda/blas/gemm_operand.h"
#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/precision_switches.h"
#include "anatomy/dispatch/ops/linalg_registration.h"

namespace anatomy::cuda {
namespace {

// Products at least this large (n * m * k multiply-adds) stage misaligned operands.
constexpr double kStageMisalignedWork = 16777216.0;  // 256^3
// An empty [batch, rows, cols] tensor whose rows start every 16 bytes: the first `cols` columns of
// a buffer as wide as cols rounded up to 16 bytes, so its address, leading dimension and batch
// stride are all multiples of 16 bytes.
int64_t elements_per_16_bytes(DType t) {
  return static_cast<int64_t>(kGemmAlignment) / static_cast<int64_t>(element_size(t));
}

int64_t round_up_to_16_bytes(int64_t n, DType t) {
  const int64_t per_16 = elements_per_16_bytes(t);
  return (n + per_16 - 1) / per_16 * per_16;
}

Tensor padded_rows(const Tensor& like, int64_t batch, int64_t rows, int64_t cols) {
  return empty({batch, rows, round_up_to_16_bytes(cols, like.dtype())}, like.options()).slice(2, 0, cols);
}

Tensor padded_rows_like(const Tensor& t) { return padded_rows(t, t.sizes()[0], t.sizes()[1], t.sizes()[2]); }

// Whether the product pads K (Note [Padding K for the tensor cores]).
bool pads_k(DType t, int64_t k) {
  return (t == DType::Float16 || t == DType::BFloat16) && k % elements_per_16_bytes(t) != 0;
}

// Copies `source` ([batch, rows, cols] of 2-byte elements, any strides) into the buffer under
// `dst`, a row-major view of its first columns with rows starting on 16 bytes, in one pass of
// pad_operand.cu; the buffer's entries outside `source` (its columns beyond the view, the rows
// beyond source's) are written zero.
void pad_copy(const Tensor& dst, const Tensor& source) {
  ANATOMY_INTERNAL_ASSERT(element_size(source.dtype()) == 2, "pad_copy: 2-byte elements only");
  PadOperandArgs args{};
  args.dst = dst.data_ptr();
  args.batch = dst.sizes()[0];
  args.rows = dst.sizes()[1];
  args.cols = args.ld = dst.strides()[1];  // the buffer's whole row
  args.batch_stride = dst.strides()[0];
  args.src = source.data_ptr();
  args.src_rows = source.sizes()[1];
  args.src_cols = source.sizes()[2];
  args.src_batch_stride = source.strides()[0];
  args.src_row_stride = source.strides()[1];
  args.src_col_stride = source.strides()[2];
  launch_pad_operand(args, current_stream());
}

// The operand t ([batch, rows, cols]) with its K dim (`k_dim`: 2 for a, 1 for b) grown to kp,
// the added entries zero, in t's own layout (column-major when t is a transposed view), rows
// padded to 16 bytes.
Tensor k_padded(const Tensor& t, int64_t k_dim, int64_t kp) {
  DimVector sizes(t.sizes());
  sizes[k_dim] = kp;
  const bool column_major = t.sizes()[2] != 1 && t.strides()[2] != 1 && t.sizes()[1] != 1 && t.strides()[1] == 1;
  const Tensor padded = column_major ? padded_rows(t, sizes[0], sizes[2], sizes[1]).transpose(1, 2)
                                     : padded_rows(t, sizes[0], sizes[1], sizes[2]);
  // In the buffer's own orientation, whose rows are contiguous.
  if (column_major) pad_copy(padded.transpose(1, 2), t.transpose(1, 2));
  else pad_copy(padded, t);
  return padded;
}

// Whether cuBLAS's tensor-core kernels can read the operand as laid out: its address, leading
// dimension and batch stride in multiples of 16 bytes (Note [Misaligned cuBLAS operands]).
bool gemm_friendly(const GemmOperand& l) {
  const auto bytes = [&](int64_t elements) { return elements * static_cast<int64_t>(element_size(l.t.dtype())); };
  const int64_t batch_stride = l.t.sizes()[0] == 1 ? 0 : l.t.strides()[0];
  return is_gemm_aligned(l.t) && bytes(l.ld) % static_cast<int64_t>(kGemmAlignment) == 0 &&
         bytes(batch_stride) % static_cast<int64_t>(kGemmAlignment) == 0;
}

GemmOperand gemm_operand(const Tensor& t, bool stage_misaligned) {
  if (auto l = cublas_layout(t); l && l->ld <= INT_MAX && !(stage_misaligned && !gemm_friendly(*l))) return *l;
  Tensor staged = stage_misaligned ? padded_rows_like(t) : empty(t.sizes(), t.options());
  // fp16 and bf16 (every other column of a tensor, say) in pad_operand.cu's one pass.
  if (stage_misaligned && element_size(t.dtype()) == 2) pad_copy(staged, t);
  else staged.copy_(t);
  return *cublas_layout(staged);
}

void check_int(const char* what, int64_t v) {
  ANATOMY_CHECK(v <= INT_MAX, ValueError, "mm: {} ({}) exceeds cuBLAS's 32-bit int", what, v);
}

// alpha and beta in the type cuBLAS reads them for the compute type.
union GemmScalar {
  float f;
  double d;
  __half h;
  GemmScalar() : d(0) {}
};

void gemm_floating(const Tensor& c, const GemmOperand& a, const GemmOperand& b, const Scalar& alpha,
                   const Scalar& beta) {
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.t.sizes()[2];
  const DType dtype = c.dtype();
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  GemmScalar al, be;
  al.f = alpha.to<float>();
  be.f = beta.to<float>();
  if (dtype == DType::Float64) {
    compute = CUBLAS_COMPUTE_64F;
    al.d = alpha.to<double>();
    be.d = beta.to<double>();
  } else if (dtype == DType::Float32 && allow_tf32_matmul()) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (dtype == DType::Float16 && allow_fp16_accumulation()) {
    compute = CUBLAS_COMPUTE_16F;
    al.h = __float2half(alpha.to<float>());
    be.h = __float2half(beta.to<float>());
  }
  const bool reduced = (dtype == DType::Float16 && allow_fp16_reduced_precision_reduction()) ||
                       (dtype == DType::BFloat16 && allow_bf16_reduced_precision_reduction()) ||
                       (dtype != DType::Float16 && dtype != DType::BFloat16);
  cublasHandle_t h = cublas_handle();
  ANATOMY_CUBLAS_CHECK(cublasSetMathMode(
      h, reduced ? CUBLAS_DEFAULT_MATH
                 : static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  const cudaDataType_t type = cuda_data_type(dtype);
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  const int lda = static_cast<int>(a.ld), ldb = static_cast<int>(b.ld);
  // c's rows are m apart, or further in product_cuda's padded temporary.
  const int ldc = static_cast<int>(c.strides()[1]);
  if (batches == 1) {
    ANATOMY_CUBLAS_CHECK(cublasGemmEx(h, b.op, a.op, im, in, ik, &al, b.t.data_ptr(), type, ldb, a.t.data_ptr(), type,
                                      lda, &be, c.data_ptr(), type, ldc, compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
  const int64_t sa = a.t.sizes()[0] == 1 ? 0 : a.t.strides()[0];
  const int64_t sb = b.t.sizes()[0] == 1 ? 0 : b.t.strides()[0];
  ANATOMY_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, b.op, a.op, im, in, ik, &al, b.t.data_ptr(), type, ldb, sb, a.t.data_ptr(), type, lda, sa, &be, c.data_ptr(),
      type, ldc, c.strides()[0], static_cast<int>(batches), compute, CUBLAS_GEMM_DEFAULT));
}

void gemm_integer(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta) {
  const IntegerGemmArgs args{c.sizes()[0],   c.sizes()[1],   c.sizes()[2],   a.sizes()[2],        a.data_ptr(),
                             a.strides()[0], a.strides()[1], a.strides()[2], b.data_ptr(),        b.strides()[0],
                             b.strides()[1], b.strides()[2], c.data_ptr(),   alpha.to<int64_t>(), beta.to<int64_t>()};
  ANATOMY_CHECK(launch_gemm_integer(a.dtype(), args, current_stream()), TypeError, "mm: no CUDA kernel for {}",
                name(a.dtype()));
}

// Note [Splitting K around a misaligned head]: false (nothing done) where the product does not
// qualify: not fp16/bf16 with its reduced-precision switch on, a batch, an operand or c that the
// split leaves misaligned, nothing to split (a aligned and K a multiple of 8: no copy is made
// then either), or alpha 0 (the remainder's 0 * inf would be NaN; such a product keeps the one
// cuBLAS call of the path below).
bool split_k(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta) {
  const DType t = a.dtype();
  const bool reduced = (t == DType::Float16 && allow_fp16_reduced_precision_reduction()) ||
                       (t == DType::BFloat16 && allow_bf16_reduced_precision_reduction());
  if (!reduced || c.sizes()[0] != 1 || a.strides()[2] != 1 || alpha.to<double>() == 0.0) return false;
  const int64_t k = a.sizes()[2], per_16 = elements_per_16_bytes(t);
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.data_ptr()) % kGemmAlignment) /
                             static_cast<int64_t>(element_size(t));
  const int64_t head = (per_16 - misaligned) % per_16;
  const int64_t middle = (k - head) / per_16 * per_16;
  if ((head == 0 && middle == k) || middle < 8 * per_16) return false;
  const std::optional<GemmOperand> ga = cublas_layout(a.slice(2, head, head + middle)),
                                   gb = cublas_layout(b.slice(1, head, head + middle));
  if (!ga || !gb || !gemm_friendly(*ga) || !gemm_friendly(*gb) ||
      !gemm_friendly(GemmOperand{c, CUBLAS_OP_N, c.sizes()[2]}))
    return false;
  KRemainderArgs r{};
  r.bfloat16 = t == DType::BFloat16;
  r.c = c.data_ptr();
  r.ldc = c.strides()[1];
  r.rows = c.sizes()[1];
  r.cols = c.sizes()[2];
  r.a = a.data_ptr();
  r.a_row_stride = a.strides()[1];
  r.a_col_stride = a.strides()[2];
  r.b = b.data_ptr();
  r.b_row_stride = b.strides()[1];
  r.b_col_stride = b.strides()[2];
  r.head = head;
  r.tail = head + middle;
  r.k = k;
  r.alpha = alpha.to<float>();
  // The remainder first, scaled and added to beta * c; cuBLAS then adds the middle to it, so c
  // is not read back once more after cuBLAS (docs/perf.md, "The transposed 2-byte LayerNorm's
  // chain, the remainder first").
  r.beta = beta.to<float>();
  r.read_c = beta.to<double>() != 0.0;
  launch_k_remainder(r, current_stream());
  gemm_floating(c, *ga, *gb, alpha, Scalar(1.0));
  return true;
}

// c[i] = beta * c[i] + alpha * a[i] @ b[i]; c contiguous (dispatch/ops/linalg_registration.h).
void product_cuda(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta) {
  DeviceGuard guard(c.device());
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.sizes()[2];
  if (!is_floating(a.dtype())) {
    if (batches == 0 || n == 0 || m == 0) return;
    if (a.dtype() == DType::Int8 && gemm_int8_lt(c, a, b, alpha, beta)) return;
    return gemm_integer(c, a, b, alpha, beta);
  }
  if (batches == 0 || n == 0 || m == 0) return;
  if (k == 0) {  // an empty sum: c = beta * c, and beta == 0 writes zeros without reading c
    if (beta.to<double>() == 0.0) c.zero_();
    else c.mul_(scalar_tensor(beta, TensorOptions().dtype(c.dtype())));  // a CPU scalar, by value
    return;
  }
  // Note [Small products skip cuBLAS]: beta reads c itself.
  if (try_gemm_small(c, a, b, alpha, SmallGemmBias{c.data_ptr(), n * m, m, 1}, beta)) return;
  // Sizes first, before any copy; the leading dimensions then fit too (gemm_operand).
  check_int("a matrix dimension", std::max({n, m, k}));
  check_int("the batch count", batches);
  const bool stage = static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(k) >= kStageMisalignedWork;
  if (stage && split_k(c, a, b, alpha, beta)) return;
  const bool pad_k = stage && pads_k(a.dtype(), k);
  const int64_t kp = pad_k ? round_up_to_16_bytes(k, a.dtype()) : k;
  check_int("K rounded up to 16 bytes", kp);
  const GemmOperand ga = gemm_operand(pad_k ? k_padded(a, 2, kp) : a, stage),
                    gb = gemm_operand(pad_k ? k_padded(b, 1, kp) : b, stage);
  if (stage && !gemm_friendly(GemmOperand{c, CUBLAS_OP_N, m})) {
    Tensor tmp = padded_rows_like(c);
    const bool use_c = beta.to<double>() != 0.0;
    if (use_c) tmp.copy_(c);
    gemm_floating(tmp, ga, gb, alpha, use_c ? beta : Scalar(0));
    c.copy_(tmp);
    return;
  }
  gemm_floating(c, ga, gb, alpha, beta);
}

}  // namespace

// addmm with a bias vector takes cuBLASLt's bias epilogue (addmm_lt.cpp) when it can.
ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_product_kernels<&product_cuda, &addmm_bias_epilogue>(m); }

}  // namespace anatomy::cuda
