// Op-table entries of pooling and upsampling: max_pool2d_with_indices (and max_pool2d),
// avg_pool2d, _adaptive_avg_pool2d (and adaptive_avg_pool2d), upsample_nearest2d and
// upsample_bilinear2d. The references follow PyTorch's CPU formulas with plain loops over the
// (planes, H, W) of a row-major RefTensor. Samples carry:
//   max:      ints = {kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode}      (sh = sw = 0: stride omitted)
//   avg:      ints = {kh, kw, sh, sw, ph, pw, ceil_mode, count_include_pad, divisor (0: none)}
//   adaptive: dims = output_size
//   upsample: dims = output_size, ints = {align_corners}, scalars = {scale_h, scale_w} (0: none)
#include <cmath>
#include <limits>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kMaxDtypes = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64,
                                       DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64};
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- the (planes, H, W) view of a reference ----

struct Planes {
  int64_t planes, h, w;
};
Planes planes_of(const RefTensor& x) {
  int64_t p = 1;
  for (int64_t d = 0; d + 2 < x.dim(); ++d) p *= x.shape[d];
  return {p, x.shape[x.dim() - 2], x.shape[x.dim() - 1]};
}
std::vector<int64_t> with_hw(std::vector<int64_t> shape, int64_t h, int64_t w) {
  shape[shape.size() - 2] = h;
  shape[shape.size() - 1] = w;
  return shape;
}

// PyTorch's pooling_output_shape.
int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0));
  int64_t out = static_cast<int64_t>(std::floor(span / static_cast<double>(s))) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// ---- references ----

std::vector<RefTensor> max_pool_ref(const RefTensor& x, const SampleInput& s) {
  const auto& a = s.ints;
  const int64_t kh = a[0], kw = a[1], sh = a[2] || a[3] ? a[2] : kh, sw = a[2] || a[3] ? a[3] : kw, ph = a[4],
                pw = a[5], dh = a[6], dw = a[7];
  const Planes p = planes_of(x);
  const int64_t oh = pooled(p.h, kh, sh, ph, dh, a[8] != 0), ow = pooled(p.w, kw, sw, pw, dw, a[8] != 0);
  RefTensor y(with_hw(x.shape, oh, ow), x.dtype), idx(with_hw(x.shape, oh, ow), DType::Int64);
  for (int64_t q = 0; q < p.planes; ++q) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t u = 0; u < kh; ++u) {
          for (int64_t v = 0; v < kw; ++v) {
            const int64_t r = i * sh - ph + u * dh, c = j * sw - pw + v * dw;
            if (r < 0 || r >= p.h || c < 0 || c >= p.w) continue;
            const double val = x.data[(q * p.h + r) * p.w + c];
            if (at < 0) at = r * p.w + c;
            if (val > best || std::isnan(val)) {
              best = val;
              at = r * p.w + c;
            }
          }
        }
        y.data[(q * oh + i) * ow + j] = best;
        idx.data[(q * oh + i) * ow + j] = static_cast<double>(at);
      }
    }
  }
  return {y, idx};
}

RefTensor avg_pool_ref(const RefTensor& x, const SampleInput& s) {
  const auto& a = s.ints;
  const int64_t kh = a[0], kw = a[1], sh = a[2] || a[3] ? a[2] : kh, sw = a[2] || a[3] ? a[3] : kw, ph = a[4],
                pw = a[5];
  const bool ceil_mode = a[6] != 0, count_include_pad = a[7] != 0;
  const int64_t divisor = a[8];
  const Planes p = planes_of(x);
  const int64_t oh = pooled(p.h, kh, sh, ph, 1, ceil_mode), ow = pooled(p.w, kw, sw, pw, 1, ceil_mode);
  RefTensor y(with_hw(x.shape, oh, ow), x.dtype);
  for (int64_t q = 0; q < p.planes; ++q) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int64_t h0 = i * sh - ph, w0 = j * sw - pw;
        int64_t h1 = std::min(h0 + kh, p.h + ph), w1 = std::min(w0 + kw, p.w + pw);
        const int64_t pool_size = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, p.h);
        w1 = std::min(w1, p.w);
        double sum = 0;
        for (int64_t r = h0; r < h1; ++r) {
          for (int64_t c = w0; c < w1; ++c) sum += x.data[(q * p.h + r) * p.w + c];
        }
        const int64_t div = divisor != 0 ? divisor : (count_include_pad ? pool_size : (h1 - h0) * (w1 - w0));
        y.data[(q * oh + i) * ow + j] = sum / static_cast<double>(div);
      }
    }
  }
  return y;
}

RefTensor adaptive_ref(const RefTensor& x, const SampleInput& s) {
  const int64_t oh = s.dims[0], ow = s.dims[1];
  const Planes p = planes_of(x);
  RefTensor y(with_hw(x.shape, oh, ow), x.dtype);
  for (int64_t q = 0; q < p.planes; ++q) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t h0 = i * p.h / oh, h1 = ((i + 1) * p.h + oh - 1) / oh;
        const int64_t w0 = j * p.w / ow, w1 = ((j + 1) * p.w + ow - 1) / ow;
        double sum = 0;
        for (int64_t r = h0; r < h1; ++r) {
          for (int64_t c = w0; c < w1; ++c) sum += x.data[(q * p.h + r) * p.w + c];
        }
        y.data[(q * oh + i) * ow + j] = sum / static_cast<double>((h1 - h0) * (w1 - w0));
      }
    }
  }
  return y;
}

// PyTorch's nearest_idx, whose scale is a float.
int64_t nearest_source(int64_t o, int64_t in, int64_t out, double scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  const float f = scale > 0 ? static_cast<float>(1.0 / scale) : static_cast<float>(in) / static_cast<float>(out);
  const float pos = std::floor(static_cast<float>(o) * f);
  return pos >= static_cast<float>(in - 1) ? in - 1 : static_cast<int64_t>(pos);
}

// PyTorch's area_pixel_compute_scale and area_pixel_compute_source_index (linear).
struct Linear {
  int64_t i0, i1;
  double l0, l1;
};
Linear linear_source(int64_t o, int64_t in, int64_t out, bool align_corners, double scale) {
  double sc = 0;
  if (align_corners) sc = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  else sc = scale > 0 ? 1.0 / scale : static_cast<double>(in) / static_cast<double>(out);
  // Clamped to the input, as PyTorch's guard_index_and_lambda.
  const double src =
      std::min(align_corners ? sc * static_cast<double>(o) : std::max(sc * (static_cast<double>(o) + 0.5) - 0.5, 0.0),
               static_cast<double>(in - 1));
  const int64_t i0 = static_cast<int64_t>(src);
  return {i0, i0 < in - 1 ? i0 + 1 : i0, 1.0 - (src - static_cast<double>(i0)), src - static_cast<double>(i0)};
}

RefTensor upsample_ref(const RefTensor& x, const SampleInput& s, bool bilinear) {
  const int64_t oh = s.dims[0], ow = s.dims[1];
  const bool align = !s.ints.empty() && s.ints[0] != 0;
  const Planes p = planes_of(x);
  RefTensor y(with_hw(x.shape, oh, ow), x.dtype);
  auto at = [&](int64_t q, int64_t r, int64_t c) { return x.data[(q * p.h + r) * p.w + c]; };
  for (int64_t q = 0; q < p.planes; ++q) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double v = 0;
        if (!bilinear) {
          v = at(q, nearest_source(i, p.h, oh, s.scalars[0]), nearest_source(j, p.w, ow, s.scalars[1]));
        } else {
          const Linear r = linear_source(i, p.h, oh, align, s.scalars[0]);
          const Linear c = linear_source(j, p.w, ow, align, s.scalars[1]);
          v = r.l0 * (c.l0 * at(q, r.i0, c.i0) + c.l1 * at(q, r.i0, c.i1)) +
              r.l1 * (c.l0 * at(q, r.i1, c.i0) + c.l1 * at(q, r.i1, c.i1));
        }
        y.data[(q * oh + i) * ow + j] = v;
      }
    }
  }
  return y;
}

// ---- calls ----

std::vector<int64_t> stride_of(const SampleInput& s) {
  if (s.ints[2] == 0 && s.ints[3] == 0) return {};
  return {s.ints[2], s.ints[3]};
}
std::tuple<Tensor, Tensor> call_max_pool(const SampleInput& s) {
  const auto& a = s.ints;
  return max_pool2d_with_indices(s.tensors[0], {a[0], a[1]}, stride_of(s), {a[4], a[5]}, {a[6], a[7]}, a[8] != 0);
}
Tensor call_avg_pool(const SampleInput& s) {
  const auto& a = s.ints;
  return avg_pool2d(s.tensors[0], {a[0], a[1]}, stride_of(s), {a[4], a[5]}, a[6] != 0, a[7] != 0,
                    a[8] ? std::optional<int64_t>(a[8]) : std::nullopt);
}
std::optional<double> scale_of(const SampleInput& s, int i) {
  return s.scalars[i] > 0 ? std::optional<double>(s.scalars[i]) : std::nullopt;
}

// ---- samples ----

// The layouts every entry is tried on: NCHW, channels_last, an offset non-contiguous view, H and
// W transposed, a 3-D input (where the op takes one), a zero-size batch, and small inputs (for
// gradcheck, which perturbs each element, and gradgradcheck, which takes 16 at most).
std::vector<std::pair<std::string, Tensor>> inputs(DType t, bool three_d) {
  std::vector<std::pair<std::string, Tensor>> out;
  out.emplace_back("NCHW", random_tensor({2, 3, 7, 8}, t));
  out.emplace_back("channels_last", random_tensor({2, 3, 7, 8}, t).contiguous(MemoryFormat::ChannelsLast));
  out.emplace_back("offset non-contiguous", random_tensor({2, 4, 9, 11}, t).slice(1, 1).slice(2, 1).slice(3, 2));
  out.emplace_back("H and W transposed", random_tensor({2, 3, 8, 7}, t).transpose(2, 3));
  if (three_d) out.emplace_back("3-D", random_tensor({3, 7, 6}, t));
  out.emplace_back("zero-size batch", random_tensor({0, 3, 7, 8}, t));
  out.emplace_back("small", random_tensor({1, 2, 4, 5}, t));
  out.emplace_back("tiny", random_tensor({1, 1, 4, 4}, t));
  out.emplace_back("tiny channels_last", random_tensor({1, 2, 2, 4}, t).contiguous(MemoryFormat::ChannelsLast));
  out.emplace_back("tiny offset", random_tensor({1, 1, 5, 6}, t).slice(2, 1).slice(3, 2));
  return out;
}

std::vector<SampleInput> max_pool_samples(DType t) {
  std::vector<SampleInput> out;
  for (auto& [label, x] : inputs(t, true)) {
    out.push_back(make_sample(label + ", 2x2", {x}, {}, {2, 2, 0, 0, 0, 0, 1, 1, 0}));
    out.push_back(make_sample(label + ", 3x3 stride 2 padding 1", {x}, {}, {3, 3, 2, 2, 1, 1, 1, 1, 0}));
  }
  const Tensor x = random_tensor({2, 3, 9, 10}, t);
  out.push_back(make_sample("ceil_mode", {x}, {}, {3, 2, 2, 3, 0, 1, 1, 1, 1}));
  out.push_back(make_sample("ceil_mode, padding", {x}, {}, {3, 3, 2, 2, 1, 1, 1, 1, 1}));
  out.push_back(make_sample("dilation", {x}, {}, {3, 2, 1, 2, 1, 1, 2, 3, 0}));
  out.push_back(make_sample("dilation, ceil_mode", {x}, {}, {2, 3, 3, 2, 1, 1, 2, 2, 1}));
  out.push_back(make_sample("odd sizes, 1x3", {random_tensor({1, 5, 5, 7}, t)}, {}, {1, 3, 1, 2, 0, 1, 1, 1, 0}));
  out.push_back(
      make_sample("kernel the whole input", {random_tensor({2, 2, 3, 4}, t)}, {}, {3, 4, 0, 0, 0, 0, 1, 1, 0}));
  out.push_back(make_sample("channels_last, many channels",
                            {random_tensor({2, 17, 6, 5}, t).contiguous(MemoryFormat::ChannelsLast)}, {},
                            {3, 3, 2, 2, 1, 1, 1, 1, 1}));
  if (t == DType::Float32 || t == DType::Float64) {
    Tensor nan = random_tensor({1, 2, 4, 4}, t);
    nan.select(0, 0).select(0, 1).select(0, 2).select(0, 3).fill_(kNaN);
    out.push_back(make_sample("a NaN wins its windows", {nan}, {}, {2, 2, 1, 1, 0, 0, 1, 1, 0}));
  }
  return out;
}

std::vector<SampleInput> avg_pool_samples(DType t) {
  std::vector<SampleInput> out;
  for (auto& [label, x] : inputs(t, true)) {
    out.push_back(make_sample(label + ", 2x2", {x}, {}, {2, 2, 0, 0, 0, 0, 0, 1, 0}));
    out.push_back(make_sample(label + ", 3x3 stride 2 padding 1", {x}, {}, {3, 3, 2, 2, 1, 1, 0, 1, 0}));
  }
  const Tensor x = random_tensor({2, 3, 9, 10}, t);
  for (int64_t cip : {0, 1}) {
    const std::string c = cip ? ", count_include_pad" : ", count_include_pad=False";
    out.push_back(make_sample("padding" + c, {x}, {}, {3, 3, 2, 2, 1, 1, 0, cip, 0}));
    out.push_back(make_sample("ceil_mode" + c, {x}, {}, {3, 2, 2, 3, 1, 1, 1, cip, 0}));
    out.push_back(
        make_sample("ceil_mode, tiny" + c, {random_tensor({1, 1, 4, 4}, t)}, {}, {3, 3, 2, 2, 1, 1, 1, cip, 0}));
  }
  out.push_back(make_sample("divisor_override", {x}, {}, {3, 3, 2, 2, 1, 1, 1, 1, 5}));
  out.push_back(
      make_sample("divisor_override, tiny", {random_tensor({1, 1, 4, 4}, t)}, {}, {2, 3, 1, 2, 1, 1, 0, 0, 4}));
  out.push_back(make_sample("odd sizes", {random_tensor({1, 5, 5, 7}, t)}, {}, {1, 3, 1, 2, 0, 1, 0, 1, 0}));
  out.push_back(make_sample("channels_last, many channels",
                            {random_tensor({2, 17, 6, 5}, t).contiguous(MemoryFormat::ChannelsLast)}, {},
                            {3, 3, 2, 2, 1, 1, 1, 0, 0}));
  return out;
}

std::vector<SampleInput> adaptive_samples(DType t) {
  std::vector<SampleInput> out;
  for (auto& [label, x] : inputs(t, true)) {
    out.push_back(make_sample(label + ", to 3x3", {x}, {3, 3}));
    out.push_back(make_sample(label + ", to 1x1", {x}, {1, 1}));
  }
  out.push_back(make_sample("larger than the input", {random_tensor({1, 2, 3, 4}, t)}, {5, 7}));
  out.push_back(make_sample("zero-size output", {random_tensor({1, 2, 3, 4}, t)}, {0, 2}));
  out.push_back(make_sample("channels_last, many channels",
                            {random_tensor({2, 17, 6, 5}, t).contiguous(MemoryFormat::ChannelsLast)}, {4, 2}));
  return out;
}

std::vector<SampleInput> upsample_samples(DType t, bool bilinear) {
  std::vector<SampleInput> out;
  std::vector<int64_t> aligns = bilinear ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
  for (int64_t align : aligns) {
    const std::string a = !bilinear ? "" : align ? ", align_corners" : ", align_corners=False";
    for (auto& [label, x] : inputs(t, false)) {
      const int64_t h = x.size(2), w = x.size(3);
      out.push_back(make_sample(label + ", x2" + a, {x}, {2 * h, 2 * w}, {align}, {0, 0}));
      out.push_back(make_sample(label + ", odd ratio" + a, {x}, {h + 3, w - 1}, {align}, {0, 0}));
    }
    const Tensor x = random_tensor({2, 3, 5, 6}, t);
    out.push_back(make_sample("scale factors" + a, {x}, {10, 15}, {align}, {2.0, 2.5}));
    out.push_back(make_sample("scale factors unlike the sizes" + a, {x}, {9, 13}, {align}, {1.7, 2.5}));
    out.push_back(make_sample("downsampling" + a, {x}, {3, 4}, {align}, {0, 0}));
    out.push_back(make_sample("to one pixel" + a, {x}, {1, 1}, {align}, {0, 0}));
    out.push_back(
        make_sample("tiny, scale factors" + a, {random_tensor({1, 1, 2, 3}, t)}, {5, 4}, {align}, {2.5, 1.5}));
    out.push_back(make_sample("channels_last, many channels" + a,
                              {random_tensor({2, 17, 4, 3}, t).contiguous(MemoryFormat::ChannelsLast)}, {7, 6}, {align},
                              {0, 0}));
  }
  return out;
}

// ---- bad inputs ----

std::vector<ErrorInput> max_pool_errors() {
  const std::string op = "max_pool2d_with_indices";
  std::vector<ErrorInput> e;
  auto bad = [&](std::string label, Tensor x, std::vector<int64_t> ints, const std::type_info& type,
                 std::vector<std::string> needles) {
    needles.insert(needles.begin(), op);
    e.push_back(make_error(std::move(label), {std::move(x)}, type, std::move(needles), {}, std::move(ints)));
  };
  bad("2-D input", randn({4, 4}), {2, 2, 0, 0, 0, 0, 1, 1, 0}, typeid(ValueError), {"(4, 4)"});
  bad("zero channels", randn({2, 0, 4, 4}), {2, 2, 0, 0, 0, 0, 1, 1, 0}, typeid(ValueError), {"(2, 0, 4, 4)"});
  bad("kernel 0", randn({1, 4, 4}), {0, 2, 0, 0, 0, 0, 1, 1, 0}, typeid(ValueError), {"kernel_size", "(0, 2)"});
  bad("stride 0", randn({1, 4, 4}), {2, 2, 0, 1, 0, 0, 1, 1, 0}, typeid(ValueError), {"stride", "(0, 1)"});
  bad("negative stride", randn({1, 4, 4}), {2, 2, -1, 1, 0, 0, 1, 1, 0}, typeid(ValueError), {"stride", "(-1, 1)"});
  bad("dilation 0", randn({1, 4, 4}), {2, 2, 0, 0, 0, 0, 1, 0, 0}, typeid(ValueError), {"dilation", "(1, 0)"});
  bad("padding over half the kernel", randn({1, 4, 4}), {2, 2, 0, 0, 2, 0, 1, 1, 0}, typeid(ValueError),
      {"padding", "(2, 0)", "(2, 2)"});
  bad("output too small", randn({1, 3, 3}), {4, 4, 0, 0, 0, 0, 1, 1, 0}, typeid(ValueError), {"too small", "0x0"});
  bad("bool input", ones({1, 4, 4}, DType::Bool), {2, 2, 0, 0, 0, 0, 1, 1, 0}, typeid(TypeError), {"bool"});
  return e;
}

std::vector<ErrorInput> avg_pool_errors() {
  const std::string op = "avg_pool2d";
  std::vector<ErrorInput> e;
  e.push_back(make_error("integer input", {tensor({1, 2, 3, 4}).reshape({1, 2, 2})}, typeid(TypeError), {op, "int64"},
                         {}, {2, 2, 0, 0, 0, 0, 0, 1, 0}));
  e.push_back(make_error("5-D input", {randn({1, 1, 1, 4, 4})}, typeid(ValueError), {op, "(1, 1, 1, 4, 4)"}, {},
                         {2, 2, 0, 0, 0, 0, 0, 1, 0}));
  e.push_back(make_error("padding over half the kernel", {randn({1, 4, 4})}, typeid(ValueError), {op, "padding"}, {},
                         {3, 3, 0, 0, 1, 2, 0, 1, 0}));
  e.push_back(make_error("output too small", {randn({1, 2, 2})}, typeid(ValueError), {op, "too small"}, {},
                         {3, 3, 0, 0, 0, 0, 0, 1, 0}));
  return e;
}

OpInfo entry(std::string name, std::vector<DType> dtypes, std::string notes) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::NN;
  info.schemas = {std::move(name)};
  info.dtypes = std::move(dtypes);
  info.differentiable = true;
  info.notes = std::move(notes);
  return info;
}

OpInfo adaptive_entry(const std::string& name) {
  OpInfo info = entry(name, kFloat, "cell (i, j) averages rows [iH/OH, ceil((i+1)H/OH)) by the columns likewise");
  info.samples = adaptive_samples;
  info.op = [name](const SampleInput& s) {
    return std::vector<Tensor>{name == "adaptive_avg_pool2d" ? adaptive_avg_pool2d(s.tensors[0], s.dims)
                                                             : _adaptive_avg_pool2d(s.tensors[0], s.dims)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{adaptive_ref(in[0], s)};
  };
  info.error_inputs = [] {
    const std::string op = "_adaptive_avg_pool2d";
    std::vector<ErrorInput> e;
    e.push_back(make_error("2-D input", {randn({4, 4})}, typeid(ValueError), {op, "(4, 4)"}, {2, 2}));
    e.push_back(make_error("negative output size", {randn({1, 4, 4})}, typeid(ValueError), {op, "(-1, 2)"}, {-1, 2}));
    e.push_back(make_error("three output sizes", {randn({1, 4, 4})}, typeid(ValueError), {op, "(2, 2, 2)"}, {2, 2, 2}));
    return e;
  };
  return info;
}

OpInfo upsample_entry(bool bilinear) {
  const std::string name = bilinear ? "upsample_bilinear2d" : "upsample_nearest2d";
  OpInfo info = entry(name, kFloat,
                      bilinear ? "align_corners both ways; given scales set the source-index scale as PyTorch's"
                               : "source index floor(o * scale) in float, as PyTorch's");
  info.samples = [bilinear](DType t) { return upsample_samples(t, bilinear); };
  info.op = [bilinear](const SampleInput& s) {
    return std::vector<Tensor>{
        bilinear ? upsample_bilinear2d(s.tensors[0], s.dims, s.ints[0] != 0, scale_of(s, 0), scale_of(s, 1))
                 : upsample_nearest2d(s.tensors[0], s.dims, scale_of(s, 0), scale_of(s, 1))};
  };
  info.reference = [bilinear](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{upsample_ref(in[0], s, bilinear)};
  };
  info.error_inputs = [name] {
    std::vector<ErrorInput> e;
    e.push_back(make_error("3-D input", {randn({2, 4, 4})}, typeid(ValueError), {name, "4-D", "(2, 4, 4)"}, {8, 8}, {0},
                           {0, 0}));
    e.push_back(make_error("zero output size", {randn({1, 2, 4, 4})}, typeid(ValueError), {name, "(0, 8)"}, {0, 8}, {0},
                           {0, 0}));
    e.push_back(make_error("integer input", {tensor({1, 2, 3, 4}).reshape({1, 1, 2, 2})}, typeid(TypeError),
                           {name, "int64"}, {4, 4}, {0}, {0, 0}));
    return e;
  };
  return info;
}

SampleInput bench_images(int64_t numel, std::vector<int64_t> dims, std::vector<int64_t> ints,
                         std::vector<double> scalars = {}) {
  const int64_t n = std::max<int64_t>(1, numel / (64 * 56 * 56));
  return make_sample("bench", {randn({n, 64, 56, 56}).contiguous(MemoryFormat::ChannelsLast)}, std::move(dims),
                     std::move(ints), std::move(scalars));
}

}  // namespace

ANATOMY_REGISTER_OPS(pooling) {
  std::vector<OpInfo> ops;

  OpInfo mpi = entry("max_pool2d_with_indices", kMaxDtypes,
                     "indices into each (n, c)'s flattened H*W plane; NaN wins; integer dtypes too");
  mpi.samples = max_pool_samples;
  mpi.op = [](const SampleInput& s) {
    auto [y, i] = call_max_pool(s);
    return std::vector<Tensor>{y, i};
  };
  mpi.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) { return max_pool_ref(in[0], s); };
  mpi.error_inputs = max_pool_errors;
  mpi.bench_input = [](int64_t n) { return bench_images(n, {}, {3, 3, 2, 2, 1, 1, 1, 1, 0}); };
  ops.push_back(mpi);

  OpInfo mp = mpi;
  mp.name = "max_pool2d";
  mp.schemas = {"max_pool2d"};
  mp.notes = "composite: max_pool2d_with_indices' values";
  mp.op = [](const SampleInput& s) { return std::vector<Tensor>{std::get<0>(call_max_pool(s))}; };
  mp.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{max_pool_ref(in[0], s)[0]};
  };
  mp.bench_input = nullptr;
  ops.push_back(mp);

  OpInfo avg = entry("avg_pool2d", kFloat, "ceil_mode, count_include_pad and divisor_override as PyTorch's");
  avg.samples = avg_pool_samples;
  avg.op = [](const SampleInput& s) { return std::vector<Tensor>{call_avg_pool(s)}; };
  avg.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{avg_pool_ref(in[0], s)};
  };
  avg.error_inputs = avg_pool_errors;
  avg.bench_input = [](int64_t n) { return bench_images(n, {}, {3, 3, 2, 2, 1, 1, 0, 1, 0}); };
  ops.push_back(avg);

  ops.push_back(adaptive_entry("_adaptive_avg_pool2d"));
  OpInfo adaptive = adaptive_entry("adaptive_avg_pool2d");
  adaptive.notes = "composite over _adaptive_avg_pool2d";
  ops.push_back(adaptive);

  ops.push_back(upsample_entry(false));
  OpInfo bilinear = upsample_entry(true);
  bilinear.bench_input = [](int64_t n) { return bench_images(n, {112, 112}, {0}, {0, 0}); };
  ops.push_back(bilinear);
  return ops;
}

}  // namespace anatomy::testing
