// See step_phases.h.
#include "anatomy/examples/char_gpt/step_phases.h"

#include <fmt/format.h>

namespace char_gpt {

namespace cuda = anatomy::cuda;

StepPhases::StepPhases(std::vector<std::string> phases, const anatomy::Device& device, int64_t max_steps)
    : phases_(std::move(phases)), device_(device), max_steps_(max_steps), host_ms_(phases_.size(), 0.0) {
  if (!device_.is_cuda()) return;
  const cuda::Stream stream = cuda::current_stream(device_.index());
  events_.reserve(static_cast<size_t>(max_steps_) * (phases_.size() + 1));
  for (int64_t i = 0; i < max_steps_ * static_cast<int64_t>(phases_.size() + 1); ++i) {
    // The first record makes the cudaEvent_t; the step's records reuse it.
    events_.emplace_back(/*enable_timing=*/true).record(stream);
  }
}

void StepPhases::begin_step() {
  if (steps_ == max_steps_) return;
  ++steps_;
  next_mark_ = 0;
  last_ = Clock::now();
  if (!events_.empty()) {
    events_[static_cast<size_t>(steps_ - 1) * (phases_.size() + 1)].record(cuda::current_stream(device_.index()));
  }
}

void StepPhases::end_phase() {
  if (steps_ == 0 || next_mark_ == phases_.size()) return;
  const Clock::time_point now = Clock::now();
  host_ms_[next_mark_] += std::chrono::duration<double, std::milli>(now - last_).count();
  last_ = now;
  ++next_mark_;
  if (!events_.empty()) {
    events_[static_cast<size_t>(steps_ - 1) * (phases_.size() + 1) + next_mark_].record(
        cuda::current_stream(device_.index()));
  }
}

std::string StepPhases::table(const std::string& title) const {
  if (steps_ == 0) return title + ": no step recorded\n";
  const size_t n = phases_.size();
  std::vector<double> device_ms(n, 0.0);
  if (!events_.empty()) {
    events_[static_cast<size_t>(steps_) * (n + 1) - 1].synchronize();
    for (int64_t s = 0; s < steps_; ++s) {
      const size_t base = static_cast<size_t>(s) * (n + 1);
      for (size_t p = 0; p < n; ++p) device_ms[p] += events_[base + p].elapsed_time(events_[base + p + 1]);
    }
  }
  const bool on_cuda = !events_.empty();
  const auto row = [&](const std::string& name, double host, double device) {
    std::string line = fmt::format("  {:<10} {:>9.3f}", name, host / static_cast<double>(steps_));
    if (on_cuda) line += fmt::format(" {:>9.3f}", device / static_cast<double>(steps_));
    return line + "\n";
  };
  std::string out = fmt::format("{} (ms per step, mean of {}):\n  {:<10} {:>9}{}\n", title, steps_, "phase", "host",
                                on_cuda ? fmt::format(" {:>9}", "device") : "");
  double host_total = 0, device_total = 0;
  for (size_t p = 0; p < n; ++p) {
    out += row(phases_[p], host_ms_[p], device_ms[p]);
    host_total += host_ms_[p];
    device_total += device_ms[p];
  }
  return out + row("step", host_total, device_total);
}

}  // namespace char_gpt
