// Op-table entries of the convolutions: `convolution` (1-, 2- and 3-d, plain and transposed,
// strided, padded, dilated, grouped, depthwise; channels_last and channels_last_3d, strided and
// offset operands; an empty batch) and `convolution_backward` with the same samples and a random
// grad_output. Samples: tensors {input, weight, bias (undefined for none)} (and grad_output first
// for the backward); ints {transposed, groups}; dims {stride..., padding..., dilation...,
// output_padding...}, one value per spatial dim each. The fp64 reference visits every
// (output, input, weight) triple a convolution multiplies, once, with plain loops.
#include <algorithm>
#include <functional>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

using Ints = std::vector<int64_t>;
const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const Domain kUnit{-1, 1};

struct Params {
  Ints stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

Params params_of(const SampleInput& s, int64_t spatial) {
  auto part = [&](int64_t i) { return Ints(s.dims.begin() + i * spatial, s.dims.begin() + (i + 1) * spatial); };
  return {part(0), part(1), part(2), part(3), s.ints[0] != 0, s.ints[1]};
}

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

Tensor call_convolution(const SampleInput& s, size_t first) {
  const Tensor& x = s.tensors[first];
  const Tensor& w = s.tensors[first + 1];
  const Params p = params_of(s, w.dim() - 2);
  return convolution(x, w, opt(s.tensors[first + 2]), p.stride, p.padding, p.dilation, p.transposed, p.output_padding,
                     p.groups);
}

// The output shape of a convolution, as PyTorch computes it.
Ints output_shape(const Ints& x, const Ints& w, const Params& p) {
  Ints out{x[0], p.transposed ? w[1] * p.groups : w[0]};
  for (size_t i = 2; i < x.size(); ++i) {
    const size_t j = i - 2;
    const int64_t ext = p.dilation[j] * (w[i] - 1) + 1;
    out.push_back(p.transposed ? (x[i] - 1) * p.stride[j] - 2 * p.padding[j] + ext + p.output_padding[j]
                               : (x[i] + 2 * p.padding[j] - ext) / p.stride[j] + 1);
  }
  return out;
}

// Calls fn(output offset, input offset, weight offset) for every product the convolution adds.
void visit_products(const Ints& x, const Ints& w, const Ints& y, const Params& p,
                    const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  const RefTensor xs(x, DType::Float64), ws(w, DType::Float64), ys(y, DType::Float64);
  const size_t spatial = x.size() - 2;
  // For a plain convolution the loop runs over output positions and reads the input at
  // o s - p + k d; a transposed one runs over input positions and writes the output there.
  const Ints& outer = p.transposed ? x : y;
  const Ints& inner = p.transposed ? y : x;
  const int64_t channels = p.transposed ? x[1] : y[1];
  const int64_t per_group = channels / p.groups;
  const int64_t other = p.transposed ? w[1] : w[1];  // the weight's dim 1: C_in/G plain, C_out/G transposed
  Ints kernel(w.begin() + 2, w.end());
  Ints pos_shape(outer.begin() + 2, outer.end());
  for (int64_t n = 0; n < x[0]; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t group = c / per_group;
      for_each_index(pos_shape, [&](const Ints& o) {
        for (int64_t j = 0; j < other; ++j) {
          const int64_t c2 = group * other + j;
          for_each_index(kernel, [&](const Ints& k) {
            Ints at(spatial);
            for (size_t i = 0; i < spatial; ++i) {
              at[i] = o[i] * p.stride[i] - p.padding[i] + k[i] * p.dilation[i];
              if (at[i] < 0 || at[i] >= inner[i + 2]) return;
            }
            Ints outer_index{n, c}, inner_index{n, c2}, weight_index{c, j};
            outer_index.insert(outer_index.end(), o.begin(), o.end());
            inner_index.insert(inner_index.end(), at.begin(), at.end());
            weight_index.insert(weight_index.end(), k.begin(), k.end());
            const int64_t wo = ws.offset(weight_index);
            if (p.transposed) fn(ys.offset(inner_index), xs.offset(outer_index), wo);
            else fn(ys.offset(outer_index), xs.offset(inner_index), wo);
          });
        }
      });
    }
}

RefTensor forward_ref(const RefTensor& x, const RefTensor& w, const RefTensor& b, const Params& p, DType dtype) {
  RefTensor y(output_shape(x.shape, w.shape, p), dtype);
  if (b.defined) {
    for_each_index(y.shape, [&](const Ints& i) { y.at(i) = b.data[static_cast<size_t>(i[1])]; });
  }
  visit_products(x.shape, w.shape, y.shape, p, [&](int64_t yo, int64_t xo, int64_t wo) {
    y.data[static_cast<size_t>(yo)] += x.data[static_cast<size_t>(xo)] * w.data[static_cast<size_t>(wo)];
  });
  return y;
}

// ---- samples ----

SampleInput conv_sample(std::string label, Tensor x, Tensor w, Tensor b, const Params& p) {
  Ints dims;
  for (const Ints* v : {&p.stride, &p.padding, &p.dilation, &p.output_padding})
    dims.insert(dims.end(), v->begin(), v->end());
  return make_sample(std::move(label), {std::move(x), std::move(w), std::move(b)}, dims,
                     {p.transposed ? 1 : 0, p.groups});
}

Params plain(int64_t spatial, int64_t s, int64_t pad, int64_t d, int64_t groups = 1) {
  const auto n = static_cast<size_t>(spatial);
  return {Ints(n, s), Ints(n, pad), Ints(n, d), Ints(n, 0), false, groups};
}
Params transposed(int64_t spatial, int64_t s, int64_t pad, int64_t d, int64_t op, int64_t groups = 1) {
  const auto n = static_cast<size_t>(spatial);
  return {Ints(n, s), Ints(n, pad), Ints(n, d), Ints(n, op), true, groups};
}

std::vector<SampleInput> conv_samples(DType t) {
  auto r = [t](Ints shape) { return random_tensor(std::move(shape), t, kUnit); };
  std::vector<SampleInput> out;
  out.push_back(conv_sample("2-d, 3x3, padding 1, bias", r({2, 3, 6, 7}), r({4, 3, 3, 3}), r({4}), plain(2, 1, 1, 1)));
  out.push_back(conv_sample("2-d, stride 2, no bias", r({2, 3, 7, 6}), r({4, 3, 3, 3}), Tensor(), plain(2, 2, 0, 1)));
  out.push_back(conv_sample("2-d, dilation 2, padding 2", r({1, 2, 7, 7}), r({3, 2, 3, 3}), r({3}), plain(2, 1, 2, 2)));
  out.push_back(conv_sample("2-d, 2 groups", r({2, 4, 5, 5}), r({6, 2, 3, 3}), r({6}), plain(2, 1, 1, 1, 2)));
  out.push_back(conv_sample("2-d, depthwise", r({1, 3, 6, 5}), r({3, 1, 3, 3}), r({3}), plain(2, 1, 1, 1, 3)));
  out.push_back(conv_sample("2-d, 1x1", r({2, 5, 4, 3}), r({3, 5, 1, 1}), r({3}), plain(2, 1, 0, 1)));
  Params mixed = plain(2, 1, 0, 1);
  mixed.stride = {2, 1};
  mixed.padding = {0, 2};
  mixed.dilation = {1, 2};
  out.push_back(conv_sample("2-d, per-dim stride, padding, dilation", r({2, 2, 7, 6}), r({3, 2, 3, 2}), r({3}), mixed));
  out.push_back(conv_sample("2-d, channels_last input", r({2, 3, 5, 6}).contiguous(MemoryFormat::ChannelsLast),
                            r({4, 3, 3, 3}), r({4}), plain(2, 1, 1, 1)));
  out.push_back(conv_sample("2-d, channels_last input and weight",
                            r({2, 4, 6, 5}).contiguous(MemoryFormat::ChannelsLast),
                            r({4, 2, 3, 3}).contiguous(MemoryFormat::ChannelsLast), r({4}), plain(2, 2, 1, 1, 2)));
  out.push_back(conv_sample("2-d, transposed spatial dims (strided)", r({2, 3, 6, 5}).transpose(2, 3), r({2, 3, 2, 2}),
                            r({2}), plain(2, 1, 0, 1)));
  out.push_back(conv_sample("2-d, offset input", r({3, 4, 7, 7}).slice(0, 1).slice(1, 1).slice(2, 1), r({2, 3, 3, 3}),
                            r({2}), plain(2, 1, 1, 1)));
  out.push_back(
      conv_sample("2-d, kernel as large as the input", r({2, 2, 3, 3}), r({3, 2, 3, 3}), r({3}), plain(2, 1, 0, 1)));
  out.push_back(conv_sample("2-d, empty batch", r({0, 3, 5, 5}), r({2, 3, 3, 3}), r({2}), plain(2, 1, 1, 1)));
  out.push_back(conv_sample("1-d", r({2, 3, 9}), r({4, 3, 3}), r({4}), plain(1, 2, 1, 1)));
  // Every operand of 16 elements or fewer, small enough for gradgradcheck (and so for its strided
  // and offset copies).
  out.push_back(conv_sample("1-d, small", r({1, 2, 5}), r({2, 2, 3}), r({2}), plain(1, 1, 1, 1)));
  out.push_back(conv_sample("3-d", r({1, 2, 4, 5, 4}), r({3, 2, 2, 3, 2}), r({3}), plain(3, 1, 1, 1)));
  out.push_back(conv_sample("3-d, channels_last_3d input", r({2, 2, 4, 5, 4}).contiguous(MemoryFormat::ChannelsLast3d),
                            r({3, 2, 2, 3, 2}), r({3}), plain(3, 2, 1, 1)));
  out.push_back(conv_sample("transposed 2-d, stride 2, output_padding 1", r({2, 4, 4, 3}), r({4, 3, 3, 3}), r({3}),
                            transposed(2, 2, 1, 1, 1)));
  out.push_back(conv_sample("transposed 2-d, 2 groups, dilation 2", r({1, 4, 3, 4}), r({4, 2, 2, 3}), r({4}),
                            transposed(2, 1, 1, 2, 0, 2)));
  out.push_back(conv_sample("transposed 2-d, output_padding beyond the padding", r({2, 2, 3, 3}), r({2, 3, 3, 3}),
                            Tensor(), transposed(2, 2, 0, 1, 1)));
  out.push_back(conv_sample("transposed 2-d, channels_last", r({2, 3, 4, 4}).contiguous(MemoryFormat::ChannelsLast),
                            r({3, 2, 3, 3}), r({2}), transposed(2, 2, 1, 1, 0)));
  out.push_back(conv_sample("transposed 1-d", r({2, 3, 5}), r({3, 2, 4}), r({2}), transposed(1, 3, 2, 1, 2)));
  return out;
}

// ---- errors ----

ErrorInput conv_error(std::string label, Tensor x, Tensor w, Tensor b, const Params& p, const std::type_info& error,
                      std::vector<std::string> needles) {
  SampleInput s = conv_sample(std::move(label), std::move(x), std::move(w), std::move(b), p);
  return {std::move(s), &error, std::move(needles)};
}

std::vector<ErrorInput> conv_errors() {
  std::vector<ErrorInput> e;
  e.push_back(conv_error("input of the wrong rank", randn({3, 5, 5}), randn({2, 3, 3, 3}), Tensor(), plain(2, 1, 0, 1),
                         typeid(ValueError), {"convolution", "4-dimensional", "[3, 5, 5]"}));
  e.push_back(conv_error("channels not divisible by groups", randn({1, 4, 5, 5}), randn({3, 2, 3, 3}), Tensor(),
                         plain(2, 1, 0, 1, 2), typeid(ValueError), {"convolution", "groups=2", "[3, 2, 3, 3]"}));
  e.push_back(conv_error("input channels that do not match", randn({1, 5, 5, 5}), randn({2, 3, 3, 3}), Tensor(),
                         plain(2, 1, 0, 1), typeid(ValueError), {"convolution", "3 channels", "5 channels"}));
  e.push_back(conv_error("kernel larger than the padded input", randn({1, 1, 2, 2}), randn({1, 1, 3, 3}), Tensor(),
                         plain(2, 1, 0, 1), typeid(ValueError), {"convolution", "2 x 2", "3 x 3", "Kernel size"}));
  e.push_back(conv_error("zero stride", randn({1, 1, 5, 5}), randn({1, 1, 3, 3}), Tensor(), plain(2, 0, 0, 1),
                         typeid(ValueError), {"convolution", "stride", "0"}));
  e.push_back(conv_error("negative stride", randn({1, 1, 5, 5}), randn({1, 1, 3, 3}), Tensor(), plain(2, -1, 0, 1),
                         typeid(ValueError), {"convolution", "stride", "-1"}));
  e.push_back(conv_error("negative padding", randn({1, 1, 5, 5}), randn({1, 1, 3, 3}), Tensor(), plain(2, 1, -1, 1),
                         typeid(ValueError), {"convolution", "padding", "-1"}));
  e.push_back(conv_error("zero dilation", randn({1, 1, 5, 5}), randn({1, 1, 3, 3}), Tensor(), plain(2, 1, 0, 0),
                         typeid(ValueError), {"convolution", "dilation", "0"}));
  e.push_back(conv_error("bias of the wrong size", randn({1, 2, 5, 5}), randn({3, 2, 3, 3}), randn({4}),
                         plain(2, 1, 0, 1), typeid(ValueError), {"convolution", "bias", "[4]"}));
  e.push_back(conv_error("weight of another dtype", randn({1, 2, 5, 5}), randn({3, 2, 3, 3}).to(DType::Float64),
                         Tensor(), plain(2, 1, 0, 1), typeid(TypeError), {"convolution", "fp32", "fp64"}));
  e.push_back(conv_error("integer input", tensor({1, 2, 3, 4}).view({1, 1, 2, 2}), tensor({1}).view({1, 1, 1, 1}),
                         Tensor(), plain(2, 1, 0, 1), typeid(TypeError), {"convolution", "int64"}));
  e.push_back(conv_error("output_padding not below stride or dilation", randn({1, 2, 3, 3}), randn({2, 2, 3, 3}),
                         Tensor(), transposed(2, 2, 1, 1, 2), typeid(ValueError), {"convolution", "output padding"}));
  e.push_back(conv_error("5-d weight for a 4-d input", randn({1, 2, 3, 3}), randn({2, 2, 1, 1, 1}), Tensor(),
                         plain(3, 1, 0, 1), typeid(ValueError), {"convolution", "5-dimensional"}));
  return e;
}

// The products of 3x3x(C/G) terms each round in fp16 / bf16 only at the end on oneDNN and in
// the composite's fp32 matrix product; the transposed composite rounds the spread-out input.
Tolerance conv_tolerance(DType t) {
  switch (t) {
    case DType::Float16:
      return {1e-2, 1e-2};
    case DType::BFloat16:
      return {6e-2, 2e-2};
    case DType::Float32:
      return {2e-5, 1e-5};
    default:
      return default_tolerance(t);
  }
}

// ---- the backward: tensors {grad_output, input, weight, bias} ----

std::vector<SampleInput> backward_samples(DType t) {
  std::vector<SampleInput> out;
  for (SampleInput s : conv_samples(t)) {
    const Tensor& x = s.tensors[0];
    const Tensor& w = s.tensors[1];
    const Params p = params_of(s, w.dim() - 2);
    Tensor dy = random_tensor(
        output_shape(Ints(x.sizes().begin(), x.sizes().end()), Ints(w.sizes().begin(), w.sizes().end()), p), t, kUnit);
    if (x.dim() == 4 && x.is_contiguous(MemoryFormat::ChannelsLast)) dy = dy.contiguous(MemoryFormat::ChannelsLast);
    if (x.dim() == 5 && x.is_contiguous(MemoryFormat::ChannelsLast3d)) dy = dy.contiguous(MemoryFormat::ChannelsLast3d);
    s.tensors.insert(s.tensors.begin(), dy);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<RefTensor> backward_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor &dy = in[0], &x = in[1], &w = in[2], &b = in[3];
  const Params p = params_of(s, w.dim() - 2);
  RefTensor dx(x.shape, x.dtype), dw(w.shape, w.dtype);
  visit_products(x.shape, w.shape, dy.shape, p, [&](int64_t yo, int64_t xo, int64_t wo) {
    dx.data[static_cast<size_t>(xo)] += dy.data[static_cast<size_t>(yo)] * w.data[static_cast<size_t>(wo)];
    dw.data[static_cast<size_t>(wo)] += dy.data[static_cast<size_t>(yo)] * x.data[static_cast<size_t>(xo)];
  });
  std::vector<RefTensor> out{dx, dw};
  if (b.defined) {
    RefTensor db({dy.shape[1]}, x.dtype);
    for_each_index(dy.shape, [&](const Ints& i) { db.data[static_cast<size_t>(i[1])] += dy.at(i); });
    out.push_back(db);
  }
  return out;
}

// The weight gradient sums N * spatial products: bf16's rounding of the inputs shows.
Tolerance backward_tolerance(DType t) {
  switch (t) {
    case DType::Float16:
      return {3e-2, 2e-2};
    case DType::BFloat16:
      return {2e-1, 4e-2};
    case DType::Float32:
      return {5e-5, 2e-5};
    default:
      return default_tolerance(t);
  }
}

}  // namespace

ANATOMY_REGISTER_OPS(conv) {
  std::vector<OpInfo> ops;
  OpInfo conv;
  conv.name = "convolution";
  conv.family = OpFamily::NN;
  conv.schemas = {"convolution"};
  conv.dtypes = kFloat;
  conv.differentiable = true;
  conv.notes = "1-, 2-, 3-d; transposed; groups; CPU: oneDNN for fp32/bf16, im2col + matmul otherwise";
  conv.samples = conv_samples;
  conv.op = [](const SampleInput& s) { return std::vector<Tensor>{call_convolution(s, 0)}; };
  conv.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{forward_ref(in[0], in[1], in[2], params_of(s, in[1].dim() - 2), in[0].dtype)};
  };
  conv.tolerance = conv_tolerance;
  conv.error_inputs = conv_errors;
  conv.bench_input = [](int64_t numel) {
    // A 3x3 convolution of 64 channels over (N, 64, 32, 32) inputs of about numel elements.
    const int64_t n = std::max<int64_t>(1, numel / (64 * 32 * 32));
    return conv_sample("3x3, 64 channels", randn({n, 64, 32, 32}), randn({64, 64, 3, 3}), randn({64}),
                       plain(2, 1, 1, 1));
  };
  ops.push_back(conv);

  OpInfo back;
  back.name = "convolution_backward";
  back.family = OpFamily::NN;
  back.schemas = {"convolution_backward"};
  back.dtypes = kFloat;
  back.differentiable = true;
  back.notes = "the input, weight and bias gradients (bias only when the sample has one)";
  back.samples = backward_samples;
  back.op = [](const SampleInput& s) {
    const Tensor& w = s.tensors[2];
    const Params p = params_of(s, w.dim() - 2);
    const bool has_bias = s.tensors[3].defined();
    const Ints bias_sizes{p.transposed ? w.size(1) * p.groups : w.size(0)};
    auto [dx, dw, db] = convolution_backward(
        s.tensors[0], s.tensors[1], w, has_bias ? OptionalIntArrayRef(bias_sizes) : OptionalIntArrayRef(std::nullopt),
        p.stride, p.padding, p.dilation, p.transposed, p.output_padding, p.groups, {true, true, has_bias});
    std::vector<Tensor> out{dx, dw};
    if (has_bias) out.push_back(db);
    return out;
  };
  back.reference = backward_ref;
  back.tolerance = backward_tolerance;
  ops.push_back(back);
  return ops;
}

}  // namespace anatomy::testing
