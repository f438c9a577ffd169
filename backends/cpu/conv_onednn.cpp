// CPU convolutions: oneDNN (Debian's libdnnl-dev, the library PyTorch's CPU convolutions use)
// for fp32 and bf16, forward and both backward passes, plain and transposed; everything else
// (fp16, fp64, a layout or padding oneDNN refuses, a build without oneDNN) takes the composite
// of dispatch/ops/convolution_matmul.cpp: im2col and the matrix product.
//
// The tensors go to oneDNN dense in the convolution's layout (NCHW, or NHWC when the input or
// weight is channels_last), described by their strides. A channels_last convolution runs
// oneDNN's NHWC kernels on them with no reorder of the activations; an NCHW one lets oneDNN pick
// the activations' layout (blocked on AVX-512 machines), reordering in and out, as PyTorch's
// does. The weights are always handed over with format "any" and reordered into the layout the
// chosen kernel wants, which is cheap next to the convolution. oneDNN keeps
// its own cache of created primitives, so a shape seen before is not compiled again.
//
// oneDNN runs on OpenMP's threads (Debian builds it so); each call sets the calling thread's
// OpenMP count to the engine's (set_num_threads, ANATOMY_NUM_THREADS; openmp_threads.h), so
// OMP_NUM_THREADS does not decide it (docs/ops.md, "Convolutions").
#include <optional>
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/convolution_matmul.h"

#if defined(ANATOMY_WITH_ONEDNN)
#include <oneapi/dnnl/dnnl.hpp>

#include "anatomy/backends/cpu/openmp_threads.h"
#include "anatomy/core/parallel.h"
#endif

namespace anatomy::cpu {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;

#if defined(ANATOMY_WITH_ONEDNN)

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

std::optional<memory::data_type> onednn_type(DType d) {
  if (d == DType::Float32) return memory::data_type::f32;
  if (d == DType::BFloat16) return memory::data_type::bf16;
  return std::nullopt;
}

memory::dims dims_of(IntArrayRef v) { return memory::dims(v.begin(), v.end()); }

memory::desc strided_desc(const Tensor& t, memory::data_type type) {
  return memory::desc(dims_of(t.sizes()), type, dims_of(t.strides()));
}

// The weight as oneDNN's grouped (G, O/G, I/G, *k) view of the same memory, or (O, I, *k) for
// one group. A plain convolution's weight is (O, I/G, *k); a transposed one's is (I, O/G, *k),
// whose per-group roles oneDNN's deconvolution reads the other way round.
memory::desc weight_desc(const Tensor& w, const ConvGeometry& g, memory::data_type type) {
  const IntArrayRef s = w.sizes(), st = w.strides();
  memory::dims dims, strides;
  if (!g.transposed) {
    const int64_t og = s[0] / g.groups;
    dims = {g.groups, og, s[1]};
    strides = {og * st[0], st[0], st[1]};
  } else {
    const int64_t ig = s[0] / g.groups;
    dims = {g.groups, s[1], ig};
    strides = {ig * st[0], st[1], st[0]};
  }
  for (size_t i = 2; i < s.size(); ++i) {
    dims.push_back(s[i]);
    strides.push_back(st[i]);
  }
  // One group: the ungrouped descriptor, which oneDNN's fastest kernels expect.
  if (g.groups == 1) {
    dims.erase(dims.begin());
    strides.erase(strides.begin());
  }
  return memory::desc(dims, type, strides);
}

memory::desc any_like(const memory::desc& d) { return memory::desc(d.dims(), d.data_type(), memory::format_tag::any); }

struct OnednnGeometry {
  memory::dims stride, dilation, padding_l, padding_r;
};

// oneDNN counts dilation from 0 (d - 1); its right padding makes the output size come out of its
// formula: (I + l + r - ext) / s + 1 for a convolution (floor, so r = l serves), and
// (I - 1) s + ext - l - r for a deconvolution (r = padding - output_padding, which must not be
// negative).
std::optional<OnednnGeometry> onednn_geometry(const ConvGeometry& g) {
  OnednnGeometry o;
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    o.stride.push_back(g.stride[i]);
    o.dilation.push_back(g.dilation[i] - 1);
    o.padding_l.push_back(g.padding[i]);
    const int64_t right = g.transposed ? g.padding[i] - g.output_padding[i] : g.padding[i];
    if (right < 0) return std::nullopt;
    o.padding_r.push_back(right);
  }
  return o;
}

// The primitive kinds of a plain convolution and of a transposed one.
template <bool Transposed>
struct Kinds {
  using Forward = std::conditional_t<Transposed, dnnl::deconvolution_forward, dnnl::convolution_forward>;
  using BackwardData =
      std::conditional_t<Transposed, dnnl::deconvolution_backward_data, dnnl::convolution_backward_data>;
  using BackwardWeights =
      std::conditional_t<Transposed, dnnl::deconvolution_backward_weights, dnnl::convolution_backward_weights>;
  static constexpr dnnl::algorithm algorithm =
      Transposed ? dnnl::algorithm::deconvolution_direct : dnnl::algorithm::convolution_direct;
};

// What the primitive may choose for an activation's layout. NHWC as it is: oneDNN's direct
// kernels read it themselves (the reason to ask for channels_last). NCHW with a kernel larger
// than 1x1: anything (format "any"), since oneDNN's fastest kernels want a blocked layout
// (nChw16c on AVX-512) and reordering in and out costs far less than its im2col + GEMM kernel on
// plain NCHW (a 3x3, 64 channels at 56x56, batch 8: 14 ms forward plain, 10-12 ms blocked with
// the reorders, 2 threads). A 1x1 convolution of stride 1 on NCHW is one GEMM per image with no
// im2col, and with many output positions (the GEMM's N) the reorders would double its time
// (256 -> 64 channels at 56x56: 4.2 ms plain, 8.1 ms blocked): plain. With few positions the
// GEMM is thin and blocked wins again (512 -> 2048 at 7x7: 3.9 ms plain, 3.0 ms blocked).
// docs/perf.md, "Convolutions".
constexpr int64_t kPlainGemmPositions = 256;
memory::desc activation_query(const memory::desc& plain, const ConvGeometry& g) {
  if (g.format != MemoryFormat::Contiguous) return plain;
  bool pointwise = true;
  int64_t positions = 1;  // output positions per image: the GEMM's N
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    pointwise = pointwise && g.kernel[i] == 1 && g.stride[i] == 1;
    positions *= g.output_shape[i + 2];
  }
  return pointwise && positions >= kPlainGemmPositions ? plain : any_like(plain);
}

// An operand the primitive reads, in the layout it chose: the tensor's own memory when that is
// it, else a reordered copy.
memory readable(const memory::desc& wanted, const memory::desc& have, void* data, dnnl::stream& stream) {
  memory given(have, cpu_engine(), data);
  if (wanted == have) return given;
  memory reordered(wanted, cpu_engine());
  dnnl::reorder(given, reordered).execute(stream, given, reordered);
  return reordered;
}

// A result the primitive writes: the tensor's own memory when the layouts agree, else scratch
// memory in the primitive's layout that finish() reorders into the tensor.
struct Writable {
  memory plain, kernel;
  bool reorder = false;
  Writable(const memory::desc& wanted, const memory::desc& have, void* data)
      : plain(have, cpu_engine(), data), reorder(wanted != have) {
    kernel = reorder ? memory(wanted, cpu_engine()) : plain;
  }
  void finish(dnnl::stream& stream) {
    if (reorder) dnnl::reorder(kernel, plain).execute(stream, kernel, plain);
  }
};

template <bool Transposed>
typename Kinds<Transposed>::Forward::primitive_desc forward_pd(const memory::desc& src, const memory::desc& wei,
                                                               const memory::desc& bias, const memory::desc& dst,
                                                               const ConvGeometry& g, const OnednnGeometry& o) {
  using F = typename Kinds<Transposed>::Forward;
  typename F::desc d(dnnl::prop_kind::forward_training, Kinds<Transposed>::algorithm, activation_query(src, g),
                     any_like(wei), bias, activation_query(dst, g), o.stride, o.dilation, o.padding_l, o.padding_r);
  return typename F::primitive_desc(d, cpu_engine());
}

template <bool Transposed>
Tensor onednn_forward(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, const ConvGeometry& g,
                      const OnednnGeometry& o, memory::data_type type) {
  Tensor out = empty_convolution_output(g, x);
  const memory::desc src = strided_desc(x, type), dst = strided_desc(out, type), wei = weight_desc(w, g, type);
  const bool has_bias = bias && bias->defined();
  const Tensor b = has_bias ? bias->contiguous() : Tensor();
  const memory::desc bias_md = has_bias ? strided_desc(b, type) : memory::desc();
  auto pd = forward_pd<Transposed>(src, wei, bias_md, dst, g, o);
  dnnl::stream stream(cpu_engine());
  Writable result(pd.dst_desc(), dst, out.data_ptr());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, readable(pd.src_desc(), src, x.data_ptr(), stream)},
                                       {DNNL_ARG_WEIGHTS, readable(pd.weights_desc(), wei, w.data_ptr(), stream)},
                                       {DNNL_ARG_DST, result.kernel}};
  if (has_bias) args.emplace(DNNL_ARG_BIAS, memory(bias_md, cpu_engine(), b.data_ptr()));
  typename Kinds<Transposed>::Forward(pd).execute(stream, args);
  result.finish(stream);
  stream.wait();
  return out;
}

template <bool Transposed>
Tensor3 onednn_backward(const Tensor& dy, const Tensor& x, const Tensor& w, const ConvGeometry& g,
                        const OnednnGeometry& o, memory::data_type type, std::array<bool, 3> mask) {
  const memory::desc src = strided_desc(x, type), ddst = strided_desc(dy, type), wei = weight_desc(w, g, type);
  const memory::desc bias_md = mask[2] ? memory::desc({g.out_channels}, type, memory::format_tag::a) : memory::desc();
  auto hint = forward_pd<Transposed>(src, wei, bias_md, ddst, g, o);
  dnnl::stream stream(cpu_engine());
  Tensor dx, dw, db;
  if (mask[0]) {
    using B = typename Kinds<Transposed>::BackwardData;
    dx = empty(x.sizes(), x.options(), g.format);
    const memory::desc dsrc = strided_desc(dx, type);
    typename B::desc d(Kinds<Transposed>::algorithm, activation_query(dsrc, g), any_like(wei),
                       activation_query(ddst, g), o.stride, o.dilation, o.padding_l, o.padding_r);
    typename B::primitive_desc pd(d, cpu_engine(), hint);
    Writable result(pd.diff_src_desc(), dsrc, dx.data_ptr());
    B(pd).execute(stream, {{DNNL_ARG_DIFF_DST, readable(pd.diff_dst_desc(), ddst, dy.data_ptr(), stream)},
                           {DNNL_ARG_WEIGHTS, readable(pd.weights_desc(), wei, w.data_ptr(), stream)},
                           {DNNL_ARG_DIFF_SRC, result.kernel}});
    result.finish(stream);
  }
  if (mask[1] || mask[2]) {
    using B = typename Kinds<Transposed>::BackwardWeights;
    dw = empty(w.sizes(), w.options(), g.format);
    if (mask[2]) db = empty({g.out_channels}, x.options());
    const memory::desc dwei = weight_desc(dw, g, type);
    typename B::desc d(Kinds<Transposed>::algorithm, activation_query(src, g), any_like(dwei), bias_md,
                       activation_query(ddst, g), o.stride, o.dilation, o.padding_l, o.padding_r);
    typename B::primitive_desc pd(d, cpu_engine(), hint);
    Writable result(pd.diff_weights_desc(), dwei, dw.data_ptr());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, readable(pd.src_desc(), src, x.data_ptr(), stream)},
                                         {DNNL_ARG_DIFF_DST, readable(pd.diff_dst_desc(), ddst, dy.data_ptr(), stream)},
                                         {DNNL_ARG_DIFF_WEIGHTS, result.kernel}};
    if (mask[2]) args.emplace(DNNL_ARG_DIFF_BIAS, memory(bias_md, cpu_engine(), db.data_ptr()));
    B(pd).execute(stream, args);
    result.finish(stream);
    if (!mask[1]) dw = Tensor();
  }
  stream.wait();
  return {dx, dw, db};
}

// oneDNN serves fp32 and bf16 (bf16 only where the CPU has AVX-512: primitive creation fails
// otherwise, and the composite serves), non-empty problems, and non-negative right padding.
template <typename F>
auto try_onednn(const Tensor& input, const ConvGeometry& g, F&& run)
    -> std::optional<decltype(run(memory::data_type::f32, OnednnGeometry{}))> {
  const std::optional<memory::data_type> type = onednn_type(input.dtype());
  if (!type || input.numel() == 0 || g.out_channels == 0) return std::nullopt;
  for (int64_t s : g.output_shape)
    if (s == 0) return std::nullopt;
  const std::optional<OnednnGeometry> o = onednn_geometry(g);
  if (!o) return std::nullopt;
  try {
    // oneDNN's OpenMP team follows the engine's thread count (one inside a parallel_for range).
    const OpenMpThreads threads(in_parallel_region() ? 1 : get_num_threads());
    return run(*type, *o);
  } catch (const dnnl::error&) {
    // No kernel for this problem on this CPU (bf16 without AVX-512, a geometry it refuses): the
    // composite computes it, or names what is wrong with it.
    return std::nullopt;
  }
}

#endif  // ANATOMY_WITH_ONEDNN

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                       int64_t groups) {
  const ConvGeometry g = check_convolution("convolution", input, weight, bias, stride, padding, dilation, transposed,
                                           output_padding, groups);
#if defined(ANATOMY_WITH_ONEDNN)
  const Tensor x = dense_in(input, g.format), w = dense_in(weight, g.format);
  std::optional<Tensor> out = try_onednn(x, g, [&](memory::data_type type, const OnednnGeometry& o) {
    return g.transposed ? onednn_forward<true>(x, w, bias, g, o, type) : onednn_forward<false>(x, w, bias, g, o, type);
  });
  if (out) return *out;
#endif
  return convolution_via_matmul(input, weight, bias, g);
}

Tensor3 convolution_backward_cpu(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                 OptionalIntArrayRef bias_sizes, IntArrayRef stride, IntArrayRef padding,
                                 IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups,
                                 IntArrayRef output_mask) {
  const ConvGeometry g =
      check_convolution_backward("convolution_backward", grad_output, input, weight, bias_sizes, stride, padding,
                                 dilation, transposed, output_padding, groups, output_mask);
  const std::array<bool, 3> mask{output_mask[0] != 0, output_mask[1] != 0, output_mask[2] != 0};
#if defined(ANATOMY_WITH_ONEDNN)
  const Tensor dy = dense_in(grad_output, g.format), x = dense_in(input, g.format), w = dense_in(weight, g.format);
  std::optional<Tensor3> grads = try_onednn(x, g, [&](memory::data_type type, const OnednnGeometry& o) {
    return g.transposed ? onednn_backward<true>(dy, x, w, g, o, type, mask)
                        : onednn_backward<false>(dy, x, w, g, o, type, mask);
  });
  if (grads) return *grads;
#endif
  return convolution_backward_via_convolutions(grad_output, input, weight, g, mask);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("convolution", ANATOMY_KERNEL(convolution_cpu));
  m.impl("convolution_backward", ANATOMY_KERNEL(convolution_backward_cpu));
}

}  // namespace anatomy::cpu
