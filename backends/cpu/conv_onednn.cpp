// CPU convolutions: oneDNN (Debian's libdnnl-dev, the library PyTorch's CPU convolutions use)
// for fp32 and bf16, forward and both backward passes, plain and transposed; everything else
// (fp16, fp64, a layout or padding oneDNN refuses, a build without oneDNN) takes the composite
// of dispatch/ops/convolution_matmul.cpp: im2col and the matrix product.
//
// The tensors go to oneDNN as they lie in memory: the input made dense in the convolution's
// layout (NCHW, or NHWC when the input or weight is channels_last), described by its strides, so
// a channels_last convolution runs oneDNN's NHWC kernels with no reorder of the activations. The
// weights are handed over with format "any" and reordered into the layout the chosen kernel
// wants (blocked, on AVX-512 machines), which is cheap next to the convolution. oneDNN keeps
// its own cache of created primitives, so a shape seen before is not compiled again.
//
// oneDNN runs on OpenMP's threads (Debian builds it so): OMP_NUM_THREADS sets how many, not
// set_num_threads (docs/ops.md, "Convolutions").
#include <optional>
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/convolution_matmul.h"

#if defined(ANATOMY_WITH_ONEDNN)
#include <oneapi/dnnl/dnnl.hpp>
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

// A weight memory in the layout a primitive wants: the tensor's own memory when that is it,
// else a reorder of it.
memory weights_for(const memory::desc& wanted, const memory::desc& have, void* data, dnnl::stream& stream) {
  memory given(have, cpu_engine(), data);
  if (wanted == have) return given;
  memory reordered(wanted, cpu_engine());
  dnnl::reorder(given, reordered).execute(stream, given, reordered);
  return reordered;
}

template <bool Transposed>
typename Kinds<Transposed>::Forward::primitive_desc forward_pd(const memory::desc& src, const memory::desc& wei,
                                                               const memory::desc& bias, const memory::desc& dst,
                                                               const OnednnGeometry& o) {
  using F = typename Kinds<Transposed>::Forward;
  typename F::desc d(dnnl::prop_kind::forward_training, Kinds<Transposed>::algorithm, src, any_like(wei), bias, dst,
                     o.stride, o.dilation, o.padding_l, o.padding_r);
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
  auto pd = forward_pd<Transposed>(src, wei, bias_md, dst, o);
  dnnl::stream stream(cpu_engine());
  memory weights = weights_for(pd.weights_desc(), wei, w.data_ptr(), stream);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, cpu_engine(), x.data_ptr())},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, memory(dst, cpu_engine(), out.data_ptr())}};
  if (has_bias) args.emplace(DNNL_ARG_BIAS, memory(bias_md, cpu_engine(), b.data_ptr()));
  typename Kinds<Transposed>::Forward(pd).execute(stream, args);
  stream.wait();
  return out;
}

template <bool Transposed>
Tensor3 onednn_backward(const Tensor& dy, const Tensor& x, const Tensor& w, const ConvGeometry& g,
                        const OnednnGeometry& o, memory::data_type type, std::array<bool, 3> mask) {
  const memory::desc src = strided_desc(x, type), ddst = strided_desc(dy, type), wei = weight_desc(w, g, type);
  const memory::desc bias_md = mask[2] ? memory::desc({g.out_channels}, type, memory::format_tag::a) : memory::desc();
  auto hint = forward_pd<Transposed>(src, wei, bias_md, ddst, o);
  dnnl::stream stream(cpu_engine());
  Tensor dx, dw, db;
  if (mask[0]) {
    using B = typename Kinds<Transposed>::BackwardData;
    dx = empty(x.sizes(), x.options(), g.format);
    const memory::desc dsrc = strided_desc(dx, type);
    typename B::desc d(Kinds<Transposed>::algorithm, dsrc, any_like(wei), ddst, o.stride, o.dilation, o.padding_l,
                       o.padding_r);
    typename B::primitive_desc pd(d, cpu_engine(), hint);
    memory weights = weights_for(pd.weights_desc(), wei, w.data_ptr(), stream);
    B(pd).execute(stream, {{DNNL_ARG_DIFF_DST, memory(ddst, cpu_engine(), dy.data_ptr())},
                           {DNNL_ARG_WEIGHTS, weights},
                           {DNNL_ARG_DIFF_SRC, memory(dsrc, cpu_engine(), dx.data_ptr())}});
  }
  if (mask[1] || mask[2]) {
    using B = typename Kinds<Transposed>::BackwardWeights;
    dw = empty(w.sizes(), w.options(), g.format);
    if (mask[2]) db = empty({g.out_channels}, x.options());
    const memory::desc dwei = weight_desc(dw, g, type);
    typename B::desc d(Kinds<Transposed>::algorithm, src, any_like(dwei), bias_md, ddst, o.stride, o.dilation,
                       o.padding_l, o.padding_r);
    typename B::primitive_desc pd(d, cpu_engine(), hint);
    memory dw_plain(dwei, cpu_engine(), dw.data_ptr());
    const bool reorder = pd.diff_weights_desc() != dwei;
    memory dw_kernel = reorder ? memory(pd.diff_weights_desc(), cpu_engine()) : dw_plain;
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, cpu_engine(), x.data_ptr())},
                                         {DNNL_ARG_DIFF_DST, memory(ddst, cpu_engine(), dy.data_ptr())},
                                         {DNNL_ARG_DIFF_WEIGHTS, dw_kernel}};
    if (mask[2]) args.emplace(DNNL_ARG_DIFF_BIAS, memory(bias_md, cpu_engine(), db.data_ptr()));
    B(pd).execute(stream, args);
    if (reorder) dnnl::reorder(dw_kernel, dw_plain).execute(stream, dw_kernel, dw_plain);
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
