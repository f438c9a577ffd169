// An optimizer step that cannot be captured into a CUDA graph refuses to be (nn/optim/optimizer.cpp):
// AdamW's bias correction uses a host-side step count that a replay would not advance. Checked on
// the CPU through a DeviceStreams table whose streams say they are capturing.
#include <doctest/doctest.h>

#include "../core/test_util.h"
#include "anatomy/anatomy.h"
#include "anatomy/core/device_streams.h"

using namespace anatomy;

namespace {

struct CapturingStreams {
  static uint64_t current_stream(Device) { return 0; }
  static void set_current_stream(Device, uint64_t) noexcept {}
  static void wait_stream(Device, uint64_t, uint64_t) {}
  static void record_stream(const Tensor&, uint64_t) {}
  static bool is_capturing(Device) { return true; }
  static constexpr DeviceStreams table{&current_stream, &set_current_stream, &wait_stream, &record_stream,
                                       &is_capturing};
};

}  // namespace

TEST_CASE("optim: AdamW's step refuses a CUDA graph capture and changes nothing; SGD's is captured") {
  Tensor w = ones({3}).requires_grad_();
  (w * 2).sum().backward();
  optim::AdamW adamw({w}, {.lr = 0.1});
  optim::SGD sgd({w}, {.lr = 0.1});
  const DeviceStreams* saved = device_streams(DeviceType::CPU);
  set_device_streams(DeviceType::CPU, &CapturingStreams::table);
  EXPECT_ERROR(ValueError, adamw.step(), "AdamW::step: cannot be captured in a CUDA graph");
  CHECK(w.detach().eq(1.0).all().item<bool>());
  sgd.step();  // all device work: allowed
  set_device_streams(DeviceType::CPU, saved);
  CHECK(w.detach().eq(0.8).all().item<bool>());
  adamw.step();  // not capturing: the first step, as if the refused one never happened
  CHECK(w.detach().lt(0.8).all().item<bool>());
}

TEST_CASE("optim: capturable AdamW takes the same steps, and captures once its state exists") {
  auto run = [](bool capturable, int steps) {
    manual_seed(5);
    Tensor w = randn({4, 3}).requires_grad_();
    optim::AdamW opt({w}, {.lr = 0.05, .weight_decay = 0.1, .capturable = capturable});
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      (w * w * 0.5 + w).sum().backward();
      opt.step();
    }
    return w.detach();
  };
  CHECK(allclose(run(true, 5), run(false, 5), 1e-6, 1e-6));

  Tensor w = ones({3}).requires_grad_();
  (w * 2).sum().backward();
  optim::AdamW opt({w}, {.lr = 0.1, .capturable = true});
  const DeviceStreams* saved = device_streams(DeviceType::CPU);
  set_device_streams(DeviceType::CPU, &CapturingStreams::table);
  EXPECT_ERROR(ValueError, opt.step(), "the first step makes the optimizer's state");
  set_device_streams(DeviceType::CPU, saved);
  CHECK(w.detach().eq(1.0).all().item<bool>());
  opt.step();
  set_device_streams(DeviceType::CPU, &CapturingStreams::table);
  opt.step();  // the state exists: a capture is allowed
  set_device_streams(DeviceType::CPU, saved);
}
