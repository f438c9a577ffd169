// nn::BatchNorm1d, nn::BatchNorm2d and nn::GroupNorm (see channel_norm.h) on the engine's
// batch_norm and group_norm.
#include "anatomy/nn/channel_norm.h"

#include <cmath>

#include "anatomy/nn/init.h"
#include "anatomy/nn/layer_args.h"

namespace anatomy::nn {

namespace {

std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

int64_t checked_features(const std::string& layer, int64_t num_features) {
  return checked_size(layer, "num_features", num_features);
}

std::optional<double> checked_momentum(const std::string& layer, std::optional<double> momentum) {
  ANATOMY_CHECK(!momentum || std::isfinite(*momentum), ValueError, "{}: momentum must be finite, got {}", layer,
                momentum.value_or(0));
  return momentum;
}

}  // namespace

BatchNorm::BatchNorm(const std::string& type, int64_t features, double eps_, std::optional<double> momentum_,
                     bool affine_, bool track, TensorOptions options)
    : Module(type),
      num_features(checked_features(type, features)),
      eps(eps_),
      momentum(checked_momentum(type, momentum_)),
      affine(affine_),
      track_running_stats(track),
      weight(register_parameter("weight", affine_ ? empty({features}, options) : Tensor())),
      bias(register_parameter("bias", affine_ ? empty({features}, options) : Tensor())),
      running_mean(register_buffer("running_mean", track ? zeros({features}, options) : Tensor())),
      running_var(register_buffer("running_var", track ? ones({features}, options) : Tensor())),
      num_batches_tracked(
          register_buffer("num_batches_tracked", track ? zeros({}, options.dtype(DType::Int64)) : Tensor())) {
  reset_parameters();
}

void BatchNorm::reset_running_stats() {
  if (!track_running_stats) return;
  autograd::NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNorm::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm::forward(const Tensor& input) {
  check_input_dim(input);
  // PyTorch's F.batch_norm refuses to normalize a single value per channel while training.
  const int64_t per_channel = input.size(1) > 0 ? input.numel() / input.size(1) : 0;
  ANATOMY_CHECK(!is_training() || per_channel != 1, ValueError,
                "{}: expected more than 1 value per channel when training, got input size {}", type_name(),
                shape_string(input.sizes()));
  double factor = momentum.value_or(0.0);
  if (is_training() && track_running_stats) {
    {
      autograd::NoGradGuard no_grad;
      num_batches_tracked.add_(1);
    }
    if (!momentum) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // Eval normalizes by the running statistics when there are any; training always by the batch's,
  // updating the running ones only when they are tracked.
  const bool use_batch_stats = is_training() || !running_mean.defined();
  const bool pass_running = !is_training() || track_running_stats;
  return batch_norm(input, maybe(weight), maybe(bias), pass_running ? maybe(running_mean) : std::nullopt,
                    pass_running ? maybe(running_var) : std::nullopt, use_batch_stats, factor, eps);
}

std::string BatchNorm::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", num_features, py_float(eps),
                     momentum ? py_float(*momentum) : std::string("None"), py_bool(affine),
                     py_bool(track_running_stats));
}

BatchNorm1d::BatchNorm1d(int64_t features, double eps, std::optional<double> momentum, bool affine, bool track,
                         TensorOptions options)
    : BatchNorm("BatchNorm1d", features, eps, momentum, affine, track, options) {}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  ANATOMY_CHECK(input.dim() == 2 || input.dim() == 3, ValueError,
                "BatchNorm1d: expected 2D or 3D input (got {}D input)", input.dim());
}

BatchNorm2d::BatchNorm2d(int64_t features, double eps, std::optional<double> momentum, bool affine, bool track,
                         TensorOptions options)
    : BatchNorm("BatchNorm2d", features, eps, momentum, affine, track, options) {}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  ANATOMY_CHECK(input.dim() == 4, ValueError, "BatchNorm2d: expected 4D input (got {}D input)", input.dim());
}

namespace {

int64_t checked_groups(int64_t num_groups, int64_t num_channels) {
  ANATOMY_CHECK(num_groups > 0, ValueError, "GroupNorm: num_groups must be positive, got {}", num_groups);
  checked_size("GroupNorm", "num_channels", num_channels);
  ANATOMY_CHECK(num_channels % num_groups == 0, ValueError,
                "GroupNorm: num_channels ({}) must be divisible by num_groups ({})", num_channels, num_groups);
  return num_groups;
}

}  // namespace

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps_, bool affine_, TensorOptions options)
    : Module("GroupNorm"),
      num_groups(checked_groups(groups, channels)),
      num_channels(channels),
      eps(eps_),
      affine(affine_),
      weight(register_parameter("weight", affine_ ? empty({channels}, options) : Tensor())),
      bias(register_parameter("bias", affine_ ? empty({channels}, options) : Tensor())) {
  reset_parameters();
}

void GroupNorm::reset_parameters() {
  if (!affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNorm::forward(const Tensor& input) {
  return group_norm(input, num_groups, maybe(weight), maybe(bias), eps);
}

std::string GroupNorm::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}", num_groups, num_channels, py_float(eps), py_bool(affine));
}

}  // namespace anatomy::nn
