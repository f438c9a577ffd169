// Where a training step's time goes (--breakdown): the host's time in each phase of the step, from
// the steady clock at the phase boundaries, and on CUDA the device's, from timing events recorded
// on the device's current stream at the same boundaries. The events are read only when the table
// is asked for, after the last step, so measuring adds no synchronization to the steps: the host
// runs ahead of the device as it does without --breakdown, and where it does, a phase's host time
// is what enqueuing its work costs and its device time what running it costs.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace char_gpt {

class StepPhases {
 public:
  // `phases` in the order a step runs them; `max_steps` bounds the steps recorded (their events
  // are made here, before the first step, so that making them costs no step anything).
  StepPhases(std::vector<std::string> phases, const anatomy::Device& device, int64_t max_steps);

  // Before the step's first phase; then end_phase() after each phase, in order.
  void begin_step();
  void end_phase();

  // `title`, then a row per phase and one for the whole step: the mean milliseconds per step of
  // the host and, on CUDA, of the device, over the recorded steps. Waits for the device.
  std::string table(const std::string& title) const;

 private:
  using Clock = std::chrono::steady_clock;

  std::vector<std::string> phases_;
  anatomy::Device device_;
  int64_t max_steps_;
  int64_t steps_ = 0;            // begun so far
  size_t next_mark_ = 0;         // the boundary the next end_phase() marks, within the step
  std::vector<double> host_ms_;  // per phase, summed over the steps
  Clock::time_point last_;
  // (phases + 1) boundaries per step, step after step.
  std::vector<anatomy::cuda::Event> events_;
};

}  // namespace char_gpt
