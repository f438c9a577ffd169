// time_iterations, the host timers and Progress (timing.h).
#include "anatomy/tools/timing.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "anatomy/cuda.h"

namespace anatomy::tools {

std::vector<double> time_iterations(Device device, int warmup, int iters, const std::function<void()>& fn) {
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(iters));
  if (device.is_cuda()) {
    const cuda::DeviceGuard guard(device);
    for (int i = 0; i < warmup; ++i) fn();
    std::vector<cuda::Event> starts, ends;
    for (int i = 0; i < iters; ++i) {
      starts.emplace_back(true);
      ends.emplace_back(true);
    }
    for (int i = 0; i < iters; ++i) {
      starts[i].record();
      fn();
      ends[i].record();
    }
    ends.back().synchronize();
    for (int i = 0; i < iters; ++i) samples.push_back(starts[i].elapsed_time(ends[i]));
    return samples;
  }
  for (int i = 0; i < warmup; ++i) fn();
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return samples;
}

void wait_for(Device device) {
  if (device.is_cuda()) cuda::synchronize(device.index());
}

std::vector<double> host_times_with_wait(Device device, int warmup, int iters, const std::function<void()>& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  wait_for(device);
  std::vector<double> samples;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    wait_for(device);
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return samples;
}

double host_batch_time(int batch, const std::function<void()>& before, const std::function<void(int)>& call,
                       const std::function<void()>& after) {
  before();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < batch; ++i) call(i);
  const auto t1 = std::chrono::steady_clock::now();
  after();
  return std::chrono::duration<double, std::milli>(t1 - t0).count() / batch;
}

Progress::Progress(std::string label, bool quiet)
    : label_(std::move(label)),
      enabled_(!quiet && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

void Progress::update(const std::string& what) {
  if (!enabled_) return;
  if (!shown_ && std::chrono::steady_clock::now() - start_ < std::chrono::seconds(2)) return;
  shown_ = true;
  fmt::print(stderr, "\r\033[K{}: {}", label_, what);
  std::fflush(stderr);
}

}  // namespace anatomy::tools
