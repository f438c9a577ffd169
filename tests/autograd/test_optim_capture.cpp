// An optimizer step that cannot be captured into a CUDA graph refuses to be (optim/optim.cpp):
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
