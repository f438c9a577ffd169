// Op-table entries of the losses: mse_loss, l1_loss, smooth_l1_loss,
// binary_cross_entropy_with_logits, nll_loss and cross_entropy (class indices, with and without
// weights, ignore_index and label smoothing; class probabilities). Samples carry the reduction
// in ints[0] (0 none, 1 mean, 2 sum), ignore_index in ints[1], and beta or label_smoothing in
// scalars[0].
#include <cmath>
#include <limits>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
constexpr int64_t kIgnore = -100;

SampleInput loss_sample(std::string label, std::vector<Tensor> tensors, int64_t reduction,
                        std::vector<double> scalars = {}, int64_t ignore_index = kIgnore) {
  return make_sample(std::move(label) + (reduction == 0   ? ", none"
                                         : reduction == 1 ? ", mean"
                                                          : ", sum"),
                     std::move(tensors), {}, {reduction, ignore_index}, std::move(scalars));
}

// The per-element values folded as the reduction says; the mean of nothing is NaN (0 / 0).
RefTensor reduce_ref(RefTensor per, int64_t reduction, DType dtype, double denominator = -1) {
  per.dtype = dtype;
  if (reduction == 0) return per;
  double s = 0;
  for (double v : per.data) s += v;
  RefTensor r({}, dtype);
  if (reduction == 2) r.data[0] = s;
  else r.data[0] = s / (denominator >= 0 ? denominator : static_cast<double>(per.numel()));
  return r;
}

// ---- element-wise losses ----

std::vector<SampleInput> pair_samples(DType t) {
  std::vector<SampleInput> out;
  for (int64_t r : {0, 1, 2})
    out.push_back(loss_sample("contiguous", {random_tensor({5, 7}, t), random_tensor({5, 7}, t)}, r));
  out.push_back(loss_sample("broadcast target", {random_tensor({4, 6}, t), random_tensor({6}, t)}, 0));
  out.push_back(loss_sample("broadcast target", {random_tensor({4, 6}, t), random_tensor({6}, t)}, 1));
  out.push_back(loss_sample("transposed", {random_tensor({7, 5}, t).t(), random_tensor({5, 7}, t)}, 1));
  out.push_back(loss_sample("offset", {random_tensor({6, 9}, t).slice(0, 1).slice(1, 2), random_tensor({5, 7}, t)}, 2));
  out.push_back(loss_sample("0-dim", {random_tensor({}, t), random_tensor({}, t)}, 1));
  out.push_back(loss_sample("zero-size", {random_tensor({0, 3}, t), random_tensor({0, 3}, t)}, 1));
  out.push_back(loss_sample("zero-size", {random_tensor({0, 3}, t), random_tensor({0, 3}, t)}, 2));
  out.push_back(loss_sample("large", {random_tensor({300, 257}, t), random_tensor({300, 257}, t)}, 1));
  return out;
}

std::vector<ErrorInput> pair_errors(const std::string& name) {
  std::vector<ErrorInput> e;
  e.push_back(make_error("bad reduction", {randn({3}), randn({3})}, typeid(ValueError), {name, "reduction", "3"}, {},
                         {3, kIgnore}, {1.0}));
  e.push_back(make_error("integer input", {tensor({1, 2, 3}), tensor({1, 2, 3})}, typeid(TypeError), {name, "int64"},
                         {}, {1, kIgnore}, {1.0}));
  e.push_back(make_error("shapes that do not broadcast", {randn({3}), randn({4})}, typeid(ValueError), {name}, {},
                         {1, kIgnore}, {1.0}));
  return e;
}

OpInfo pair_entry(std::string name, std::function<Tensor(const SampleInput&)> call,
                  std::function<double(double, double, const SampleInput&)> per_element) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::NN;
  info.schemas = {name};
  info.dtypes = kFloat;
  info.differentiable = true;
  info.samples = pair_samples;
  info.op = [call](const SampleInput& s) { return std::vector<Tensor>{call(s)}; };
  info.reference = [per_element](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType dtype = promoted_dtype(s.tensors);
    const RefTensor per =
        map_binary(in[0], in[1], DType::Float64, [&](double a, double b) { return per_element(a, b, s); });
    return std::vector<RefTensor>{reduce_ref(per, s.ints[0], dtype)};
  };
  info.error_inputs = [name] { return pair_errors(name); };
  info.bench_input = [](int64_t n) { return loss_sample("bench", {randn({n}), randn({n})}, 1); };
  return info;
}

double smooth_l1(double d, double beta) {
  const double ad = std::fabs(d);
  return beta == 0 || ad >= beta ? ad - 0.5 * beta : 0.5 * d * d / beta;
}

std::vector<SampleInput> smooth_l1_samples(DType t) {
  std::vector<SampleInput> out = pair_samples(t);
  for (SampleInput& s : out) s.scalars = {1.0};
  out.push_back(loss_sample("beta 0.5", {random_tensor({5, 7}, t), random_tensor({5, 7}, t)}, 0, {0.5}));
  out.push_back(loss_sample("beta 0 (L1)", {random_tensor({5, 7}, t), random_tensor({5, 7}, t)}, 1, {0.0}));
  return out;
}

// ---- binary cross entropy with logits ----

double bce_with_logits(double x, double t, double w, double pw) {
  const double sp = std::max(-x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  return w * ((1 - t) * x + (1 + (pw - 1) * t) * sp);
}

std::vector<SampleInput> bce_samples(DType t) {
  Domain unit;
  unit.low = 0;
  unit.high = 1;
  Domain wide;
  wide.low = -60;
  wide.high = 60;
  Domain positive;
  positive.low = 0.5;
  positive.high = 3;
  auto x = [&](std::vector<int64_t> shape) { return random_tensor(std::move(shape), t); };
  auto p = [&](std::vector<int64_t> shape) { return random_tensor(std::move(shape), t, unit); };
  std::vector<SampleInput> out;
  for (int64_t r : {0, 1, 2}) out.push_back(loss_sample("plain", {x({5, 7}), p({5, 7}), Tensor(), Tensor()}, r));
  out.push_back(loss_sample("weight", {x({5, 7}), p({5, 7}), random_tensor({7}, t, positive), Tensor()}, 1));
  out.push_back(loss_sample("pos_weight", {x({5, 7}), p({5, 7}), Tensor(), random_tensor({7}, t, positive)}, 0));
  out.push_back(loss_sample("weight and pos_weight",
                            {x({5, 7}), p({5, 7}), random_tensor({5, 1}, t, positive), random_tensor({7}, t, positive)},
                            2));
  out.push_back(
      loss_sample("wide logits (stable form)", {random_tensor({4, 9}, t, wide), p({4, 9}), Tensor(), Tensor()}, 0));
  out.push_back(loss_sample("zero logits", {zeros({3, 4}, t), p({3, 4}), Tensor(), Tensor()}, 0));
  out.push_back(loss_sample("transposed", {x({7, 5}).t(), p({5, 7}), Tensor(), Tensor()}, 1));
  out.push_back(loss_sample("zero-size", {x({0, 3}), p({0, 3}), Tensor(), Tensor()}, 2));
  out.push_back(loss_sample("large", {x({300, 257}), p({300, 257}), Tensor(), Tensor()}, 1));
  return out;
}

RefTensor bce_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor& x = in[0];
  RefTensor per(x.shape, DType::Float64);
  // weight and pos_weight broadcast against x from the right.
  auto broadcast_at = [&](const RefTensor& b, const std::vector<int64_t>& idx) {
    if (!b.defined) return 1.0;
    std::vector<int64_t> bi(b.shape.size());
    for (size_t k = 0; k < bi.size(); ++k) {
      const size_t d = idx.size() - bi.size() + k;
      bi[k] = b.shape[k] == 1 ? 0 : idx[d];
    }
    return b.at(bi);
  };
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    per.at(idx) = bce_with_logits(x.at(idx), in[1].at(idx), broadcast_at(in[2], idx), broadcast_at(in[3], idx));
  });
  return reduce_ref(per, s.ints[0], x.dtype);
}

OpInfo bce_entry() {
  OpInfo info;
  info.name = "binary_cross_entropy_with_logits";
  info.family = OpFamily::NN;
  info.schemas = {"binary_cross_entropy_with_logits"};
  info.dtypes = kFloat;
  info.differentiable = true;
  info.notes = "the stable form (1 - t) x + lw (max(-x, 0) + log1p(exp(-|x|))); its own derivative";
  info.samples = bce_samples;
  info.op = [](const SampleInput& s) {
    auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
    return std::vector<Tensor>{
        binary_cross_entropy_with_logits(s.tensors[0], s.tensors[1], opt(s.tensors[2]), opt(s.tensors[3]), s.ints[0])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{bce_ref(in, s)};
  };
  info.error_inputs = [] {
    const std::string name = "binary_cross_entropy_with_logits";
    std::vector<ErrorInput> e;
    e.push_back(make_error("target of another shape", {randn({3, 2}), rand({3}), Tensor(), Tensor()},
                           typeid(ValueError), {name, "size"}, {}, {1, kIgnore}));
    e.push_back(make_error("bad reduction", {randn({3}), rand({3}), Tensor(), Tensor()}, typeid(ValueError),
                           {name, "reduction", "-1"}, {}, {-1, kIgnore}));
    e.push_back(make_error("weight that widens the input", {randn({3}), rand({3}), rand({2, 3}), Tensor()},
                           typeid(ValueError), {name, "weight"}, {}, {0, kIgnore}));
    return e;
  };
  info.bench_input = [](int64_t n) { return loss_sample("bench", {randn({n}), rand({n}), Tensor(), Tensor()}, 1); };
  return info;
}

// ---- class losses: nll_loss and cross_entropy ----

// A target for input of `shape` (class dim 1, or 0 for 1-D) with classes in [0, C) and, when
// `ignored`, every third element set to ignore_index.
Tensor class_target(const std::vector<int64_t>& input_shape, bool ignored) {
  std::vector<int64_t> shape = input_shape;
  const int64_t classes = shape.size() == 1 ? shape[0] : shape[1];
  shape.erase(shape.begin() + (shape.size() == 1 ? 0 : 1));
  Tensor t = randint(0, std::max<int64_t>(classes, 1), shape, DType::Int64);
  if (ignored && t.numel() > 0) t.view({-1}).slice(0, 0, std::nullopt, 3).fill_(kIgnore);
  return t;
}

// Each target element's input index with the class dim set to c.
std::vector<int64_t> class_index(const std::vector<int64_t>& target_index, size_t input_dims, int64_t c) {
  std::vector<int64_t> idx = target_index;
  idx.insert(idx.begin() + (input_dims == 1 ? 0 : 1), c);
  return idx;
}

// loss per target element and its weight (0 when ignored), from fn(row values, target class).
struct ClassLossRef {
  RefTensor per;
  double weight_sum = 0;
};

template <typename F>
ClassLossRef class_loss_ref(const RefTensor& x, const RefTensor& target, const RefTensor& weight, int64_t ignore,
                            F&& fn) {
  const int64_t classes = x.dim() == 1 ? x.shape[0] : x.shape[1];
  ClassLossRef r{RefTensor(target.shape, DType::Float64), 0};
  for_each_index(target.shape, [&](const std::vector<int64_t>& ti) {
    const int64_t t = static_cast<int64_t>(target.at(ti));
    if (t == ignore) return;
    std::vector<double> row(static_cast<size_t>(classes)), w(static_cast<size_t>(classes), 1.0);
    for (int64_t c = 0; c < classes; ++c) {
      row[c] = x.at(class_index(ti, x.shape.size(), c));
      if (weight.defined) w[c] = weight.data[c];
    }
    r.per.at(ti) = fn(row, w, t);
    r.weight_sum += w[t];
  });
  return r;
}

std::vector<SampleInput> class_samples(DType t, bool log_probs) {
  Domain d;
  if (log_probs) {
    d.low = -5;
    d.high = 0;
  }
  auto x = [&](std::vector<int64_t> shape) { return random_tensor(std::move(shape), t, d); };
  Domain positive;
  positive.low = 0.5;
  positive.high = 2;
  std::vector<SampleInput> out;
  auto add = [&](std::string label, Tensor input, bool ignored, bool weighted, int64_t reduction, double smoothing) {
    std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
    const int64_t classes = shape.size() == 1 ? shape[0] : shape[1];
    Tensor w = weighted ? random_tensor({classes}, t, positive) : Tensor();
    std::vector<double> scalars;
    if (!log_probs) scalars = {smoothing};
    out.push_back(loss_sample(std::move(label), {input, class_target(shape, ignored), w}, reduction, scalars));
  };
  for (int64_t r : {0, 1, 2}) add("rows", x({6, 5}), false, false, r, 0.0);
  add("ignored targets", x({6, 5}), true, false, 1, 0.0);
  add("weights and ignored targets", x({6, 5}), true, true, 1, 0.0);
  add("weights", x({6, 5}), false, true, 0, 0.0);
  add("1-D input, 0-dim target", x({5}), false, false, 1, 0.0);
  add("spatial (N, C, d)", x({2, 4, 3}), true, true, 1, 0.0);
  add("spatial (N, C, d1, d2)", x({2, 3, 2, 2}), false, false, 2, 0.0);
  add("transposed", x({5, 6}).t(), false, false, 1, 0.0);
  add("offset", x({7, 8}).slice(0, 1).slice(1, 2), true, false, 0, 0.0);
  add("zero rows", x({0, 4}), false, false, 2, 0.0);
  add("every target ignored (mean 0 / 0)", x({3, 4}), false, false, 1, 0.0);
  out.back().tensors[1].fill_(kIgnore);
  add("large", x({64, 1000}), true, false, 1, 0.0);
  if (!log_probs) {
    add("label smoothing", x({6, 5}), false, false, 0, 0.1);
    add("label smoothing, weights, ignored", x({6, 5}), true, true, 1, 0.2);
    add("label smoothing, spatial", x({2, 4, 3}), true, false, 2, 0.3);
    add("label smoothing 1", x({4, 3}), false, false, 1, 1.0);
  }
  return out;
}

std::vector<RefTensor> nll_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const ClassLossRef r = class_loss_ref(
      in[0], in[1], in[2], s.ints[1],
      [](const std::vector<double>& row, const std::vector<double>& w, int64_t t) { return -w[t] * row[t]; });
  return {reduce_ref(r.per, s.ints[0], in[0].dtype, r.weight_sum)};
}

std::vector<RefTensor> cross_entropy_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const double smoothing = s.scalars[0];
  const ClassLossRef r = class_loss_ref(in[0], in[1], in[2], s.ints[1],
                                        [&](const std::vector<double>& row, const std::vector<double>& w, int64_t t) {
                                          double m = -std::numeric_limits<double>::infinity(), sum = 0, smooth = 0;
                                          for (double v : row) m = std::max(m, v);
                                          for (double v : row) sum += std::exp(v - m);
                                          const double lse = m + std::log(sum);
                                          for (size_t c = 0; c < row.size(); ++c) smooth += w[c] * (lse - row[c]);
                                          const double classes = static_cast<double>(row.size());
                                          return (1 - smoothing) * w[t] * (lse - row[t]) + smoothing / classes * smooth;
                                        });
  return {reduce_ref(r.per, s.ints[0], in[0].dtype, r.weight_sum)};
}

std::optional<Tensor> optional(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

std::vector<ErrorInput> class_errors(const std::string& name, bool smoothing) {
  const std::vector<double> scalars = smoothing ? std::vector<double>{0.0} : std::vector<double>{};
  auto bad = [&](std::string label, std::vector<Tensor> tensors, const std::type_info& error,
                 std::vector<std::string> needles, int64_t reduction = 1, std::vector<double> sc = {}) {
    return make_error(std::move(label), std::move(tensors), error, std::move(needles), {}, {reduction, kIgnore},
                      sc.empty() ? scalars : sc);
  };
  std::vector<ErrorInput> e;
  e.push_back(
      bad("target out of range", {randn({3, 4}), tensor({0, 5, 1}), Tensor()}, typeid(IndexError), {name, "5"}));
  e.push_back(bad("negative target", {randn({3, 4}), tensor({0, -2, 1}), Tensor()}, typeid(IndexError), {name, "-2"}));
  e.push_back(bad("floating class indices", {randn({3, 4}), randn({3}), Tensor()}, typeid(TypeError), {name, "int64"}));
  e.push_back(
      bad("batch sizes differ", {randn({3, 4}), tensor({0, 1}), Tensor()}, typeid(ValueError), {name, "target"}));
  e.push_back(bad("weight of the wrong length", {randn({3, 4}), tensor({0, 1, 2}), ones({3})}, typeid(ValueError),
                  {name, "weight"}));
  e.push_back(
      bad("bad reduction", {randn({3, 4}), tensor({0, 1, 2}), Tensor()}, typeid(ValueError), {name, "reduction"}, 5));
  e.push_back(bad("0-dim input", {randn({}), tensor({0}), Tensor()}, typeid(ValueError), {name}));
  if (smoothing) {
    e.push_back(bad("label_smoothing above 1", {randn({3, 4}), tensor({0, 1, 2}), Tensor()}, typeid(ValueError),
                    {name, "label_smoothing", "1.5"}, 1, {1.5}));
  }
  return e;
}

OpInfo nll_entry() {
  OpInfo info;
  info.name = "nll_loss";
  info.family = OpFamily::NN;
  info.schemas = {"nll_loss"};
  info.dtypes = kFloat;
  info.differentiable = true;
  info.notes = "the mean divides by the summed weights of the targets not ignored";
  info.samples = [](DType t) { return class_samples(t, true); };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{nll_loss(s.tensors[0], s.tensors[1], optional(s.tensors[2]), s.ints[0], s.ints[1])};
  };
  info.reference = nll_ref;
  info.error_inputs = [] { return class_errors("nll_loss", false); };
  return info;
}

OpInfo cross_entropy_entry() {
  OpInfo info;
  info.name = "cross_entropy";
  info.family = OpFamily::NN;
  info.schemas = {"cross_entropy_loss", "_cross_entropy_rows"};
  info.dtypes = kFloat;
  info.differentiable = true;
  info.notes = "class indices through the fused _cross_entropy_rows (fp16/bf16 compute in fp32)";
  info.samples = [](DType t) { return class_samples(t, false); };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{
        cross_entropy(s.tensors[0], s.tensors[1], optional(s.tensors[2]), s.ints[0], s.ints[1], s.scalars[0])};
  };
  info.reference = cross_entropy_ref;
  info.tolerance = [](DType t) { return t == DType::Float32 ? Tolerance{1e-5, 1e-5} : default_tolerance(t); };
  info.error_inputs = [] { return class_errors("cross_entropy", true); };
  info.bench_input = [](int64_t n) {
    const int64_t rows = std::max<int64_t>(n / 1024, 1);
    return loss_sample("bench", {randn({rows, 1024}), randint(0, 1024, {rows}, DType::Int64), Tensor()}, 1, {0.0});
  };
  return info;
}

// Class probabilities: -sum_c w_c t'_c log_softmax(x)_c, t' = t (1 - s) + s / C.
std::vector<SampleInput> probability_samples(DType t) {
  Domain unit;
  unit.low = 0;
  unit.high = 1;
  Domain positive;
  positive.low = 0.5;
  positive.high = 2;
  std::vector<SampleInput> out;
  auto add = [&](std::string label, std::vector<int64_t> shape, bool weighted, int64_t reduction, double smoothing) {
    const int64_t classes = shape.size() == 1 ? shape[0] : shape[1];
    out.push_back(loss_sample(std::move(label),
                              {random_tensor(shape, t), random_tensor(shape, t, unit),
                               weighted ? random_tensor({classes}, t, positive) : Tensor()},
                              reduction, {smoothing}));
  };
  for (int64_t r : {0, 1, 2}) add("rows", {6, 5}, false, r, 0.0);
  add("weights", {6, 5}, true, 1, 0.0);
  add("label smoothing", {6, 5}, true, 0, 0.2);
  add("1-D", {5}, false, 1, 0.0);
  add("spatial (N, C, d)", {2, 4, 3}, false, 1, 0.1);
  add("zero rows", {0, 4}, false, 2, 0.0);
  return out;
}

std::vector<RefTensor> probability_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor& x = in[0];
  const double smoothing = s.scalars[0];
  std::vector<int64_t> shape = x.shape;
  const size_t class_dim = shape.size() == 1 ? 0 : 1;
  const int64_t classes = shape[class_dim];
  shape.erase(shape.begin() + static_cast<int64_t>(class_dim));
  RefTensor per(shape, DType::Float64);
  for_each_index(shape, [&](const std::vector<int64_t>& ti) {
    double m = -std::numeric_limits<double>::infinity(), sum = 0, loss = 0;
    for (int64_t c = 0; c < classes; ++c) m = std::max(m, x.at(class_index(ti, x.shape.size(), c)));
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(x.at(class_index(ti, x.shape.size(), c)) - m);
    for (int64_t c = 0; c < classes; ++c) {
      const std::vector<int64_t> idx = class_index(ti, x.shape.size(), c);
      const double target = in[1].at(idx) * (1 - smoothing) + smoothing / static_cast<double>(classes);
      const double w = in[2].defined ? in[2].data[c] : 1.0;
      loss -= w * target * (x.at(idx) - m - std::log(sum));
    }
    per.at(ti) = loss;
  });
  return {reduce_ref(per, s.ints[0], x.dtype)};
}

OpInfo probability_entry() {
  OpInfo info = cross_entropy_entry();
  info.name = "cross_entropy_probabilities";
  info.schemas = {"cross_entropy_loss"};
  info.notes = "a floating target of the input's shape; the mean divides by the elements, not the weights";
  info.samples = probability_samples;
  info.reference = probability_ref;
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(make_error("ignore_index with probabilities", {randn({3, 4}), rand({3, 4}), Tensor()},
                           typeid(ValueError), {"cross_entropy", "ignore_index"}, {}, {1, 0}, {0.0}));
    return e;
  };
  info.bench_input = nullptr;
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(loss) {
  std::vector<OpInfo> v;
  v.push_back(pair_entry(
      "mse_loss", [](const SampleInput& s) { return mse_loss(s.tensors[0], s.tensors[1], s.ints[0]); },
      [](double a, double b, const SampleInput&) { return (a - b) * (a - b); }));
  v.push_back(pair_entry(
      "l1_loss", [](const SampleInput& s) { return l1_loss(s.tensors[0], s.tensors[1], s.ints[0]); },
      [](double a, double b, const SampleInput&) { return std::fabs(a - b); }));
  OpInfo smooth = pair_entry(
      "smooth_l1_loss",
      [](const SampleInput& s) { return smooth_l1_loss(s.tensors[0], s.tensors[1], s.ints[0], s.scalars[0]); },
      [](double a, double b, const SampleInput& s) { return smooth_l1(a - b, s.scalars[0]); });
  smooth.samples = smooth_l1_samples;
  smooth.error_inputs = [] {
    std::vector<ErrorInput> e = pair_errors("smooth_l1_loss");
    e.push_back(make_error("negative beta", {randn({3}), randn({3})}, typeid(ValueError),
                           {"smooth_l1_loss", "beta", "-1"}, {}, {1, kIgnore}, {-1.0}));
    return e;
  };
  v.push_back(std::move(smooth));
  v.push_back(bce_entry());
  v.push_back(nll_entry());
  v.push_back(cross_entropy_entry());
  v.push_back(probability_entry());
  return v;
}

}  // namespace anatomy::testing
