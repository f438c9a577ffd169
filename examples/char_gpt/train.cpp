// See train.h.
#include "anatomy/examples/char_gpt/train.h"

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <optional>

#include "anatomy/cuda.h"
#include "anatomy/examples/char_gpt/checkpoint.h"
#include "anatomy/examples/char_gpt/next_char_loss.h"
#include "anatomy/examples/char_gpt/step_phases.h"

namespace char_gpt {

using anatomy::Tensor;
namespace optim = anatomy::optim;

namespace {

// The learning rate decays to a tenth of --lr at --steps.
constexpr double kMinLrRatio = 0.1;

// --breakdown leaves out a run's first steps, which fill the allocator's cache and make the
// libraries' handles and plans (bench/python/gpt_step.py leaves out as many of PyTorch's).
constexpr int64_t kBreakdownWarmup = 20;

// --sync-debug: the mode on for the steps' operators, off again for what the loop reads on
// purpose (the logged loss), and off when the loop leaves, by an exception too.
class StepSyncDebug {
 public:
  explicit StepSyncDebug(const std::string& mode)
      : mode_(mode == "error"  ? anatomy::cuda::SyncDebugMode::Error
              : mode == "warn" ? anatomy::cuda::SyncDebugMode::Warn
                               : anatomy::cuda::SyncDebugMode::Off) {}
  ~StepSyncDebug() { pause(); }
  StepSyncDebug(const StepSyncDebug&) = delete;
  StepSyncDebug& operator=(const StepSyncDebug&) = delete;
  void resume() const {
    if (mode_ != anatomy::cuda::SyncDebugMode::Off) anatomy::cuda::set_sync_debug_mode(mode_);
  }
  void pause() const {
    if (mode_ != anatomy::cuda::SyncDebugMode::Off)
      anatomy::cuda::set_sync_debug_mode(anatomy::cuda::SyncDebugMode::Off);
  }

 private:
  anatomy::cuda::SyncDebugMode mode_;
};

std::unique_ptr<optim::AdamW> make_optimizer(const anatomy::nn::Module& model, const Options& o) {
  std::vector<Tensor> decay, no_decay;
  for (const auto& [name, p] : model.named_parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  // foreach: one _fused_adam_ call per group (a few CUDA launches instead of several per parameter).
  const optim::AdamWOptions base{
      .lr = o.lr, .beta1 = 0.9, .beta2 = 0.99, .weight_decay = o.weight_decay, .foreach = true};
  optim::AdamWOptions none = base;
  none.weight_decay = 0;
  return std::make_unique<optim::AdamW>(std::vector<optim::ParamGroup<optim::AdamWOptions>>{
      {.params = decay, .options = base}, {.params = no_decay, .options = none}});
}

}  // namespace

Trainer::Trainer(const Options& options, const TextData& data)
    : options_(options), data_(data), device_(options.device) {
  const ModelConfig config{.vocab = data.vocab_size(),
                           .seq = options.seq,
                           .layers = options.layers,
                           .d_model = options.d_model,
                           .heads = options.heads,
                           .dropout = options.dropout};
  model_ = std::make_shared<CharGpt>(config, device_);
  model_->set_checkpointing(options.checkpointing);
  // Made after the model moved to its device (docs/nn.md, "Conversions").
  optimizer_ = make_optimizer(*model_, options);
  schedule_ = std::make_unique<optim::CosineWithWarmup>(*optimizer_, options.warmup, options.steps, kMinLrRatio);
}

void Trainer::resume(const std::string& path) {
  step_ = load_checkpoint(path, *model_, *optimizer_, device_);
  // The rates follow from the base rate and the step; the loaded ones are the same numbers.
  schedule_->set_last_step(step_);
}

void Trainer::save(const std::string& path) const {
  save_checkpoint(path, *model_, *optimizer_, trajectory_options(options_), data_.chars(), step_, device_);
}

void Trainer::train_until(int64_t last_step) {
  const bool bf16 = options_.autocast == "bf16";
  const int64_t first_step = step_;
  const int64_t skipped = last_step - first_step > kBreakdownWarmup ? kBreakdownWarmup : 0;
  std::optional<StepPhases> phases;
  if (options_.breakdown) {
    phases.emplace(std::vector<std::string>{"batch", "forward", "backward", "clip", "optimizer"}, device_,
                   last_step - first_step - skipped);
  }
  const StepSyncDebug sync_debug(options_.sync_debug);
  const auto start = std::chrono::steady_clock::now();
  model_->train();
  while (step_ < last_step) {
    sync_debug.resume();
    const bool timed = phases && step_ - first_step >= skipped;
    const auto phase_done = [&] {
      if (timed) phases->end_phase();
    };
    if (timed) phases->begin_step();
    const double lr = optimizer_->lr(0);
    optimizer_->zero_grad();
    const TextData::Batch batch = data_.sample(options_.batch, options_.seq, device_);
    phase_done();
    Tensor loss;
    {
      anatomy::autocast::AutocastGuard amp(anatomy::DeviceType::CUDA, anatomy::DType::BFloat16, bf16);
      loss = next_char_loss(model_->forward(batch.inputs), batch.targets);
    }
    phase_done();
    loss.backward();  // outside the autocast scope, as PyTorch advises
    phase_done();
    Tensor grad_norm;
    if (options_.clip > 0) grad_norm = optim::clip_grad_norm_(optimizer_->params(), options_.clip);
    phase_done();
    optimizer_->step();
    schedule_->step();
    phase_done();
    sync_debug.pause();
    ++step_;
    if (step_ % options_.log_every == 0 || step_ == last_step) {
      // The loss's bits too, so that two runs can be compared exactly.
      const float value = loss.item<float>();
      std::string line = fmt::format("step {}/{}  loss {:.6f} [{:08x}]  lr {:.4e}", step_, options_.steps, value,
                                     std::bit_cast<uint32_t>(value), lr);
      if (grad_norm.defined()) line += fmt::format("  grad-norm {:.4f}", grad_norm.item<double>());
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t steps = step_ - first_step;
  if (steps > 0) {
    std::printf("trained %lld steps in %.2f s: %.2f steps/s\n", static_cast<long long>(steps), seconds,
                static_cast<double>(steps) / seconds);
  }
  if (phases) {
    std::printf("%s",
                phases->table(fmt::format("breakdown of steps {}..{}", first_step + skipped + 1, last_step)).c_str());
  }
}

}  // namespace char_gpt
