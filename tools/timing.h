// Honest timing for gpu-anatomy's experiments: warm-up calls first (untimed), then one sample per
// iteration. Device work is timed with CUDA events recorded around each call on the current
// stream (read after one synchronize at the end, so queuing is not serialized by the timing);
// host work with a steady clock around each call. Samples are in milliseconds.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::tools {

std::vector<double> time_iterations(Device device, int warmup, int iters, const std::function<void()>& fn);

// Waits for the work queued on a CUDA device (nothing on the CPU).
void wait_for(Device device);
// Host milliseconds of each call of fn followed by a wait for the device, after `warmup` calls
// and a wait: what a program that waits sees (transfers, synchronized loops).
std::vector<double> host_times_with_wait(Device device, int warmup, int iters, const std::function<void()>& fn);
// Host milliseconds per call of one batch, for calls too short to time one by one (a clock read
// costs tens of nanoseconds): call(i) for i = 0..batch-1, timed together and divided by `batch`.
// `before` prepares the batch's inputs and `after` releases what its calls made, both untimed.
double host_batch_time(int batch, const std::function<void()>& before, const std::function<void(int)>& call,
                       const std::function<void()>& after);

// A single updating progress line on stderr for runs longer than about two seconds: nothing
// until two seconds have passed, nothing when stderr is not a terminal or with --quiet; the line
// is cleared when the Progress ends.
class Progress {
 public:
  Progress(std::string label, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // "label: what" replaces the line (when shown at all).
  void update(const std::string& what);

 private:
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace anatomy::tools
