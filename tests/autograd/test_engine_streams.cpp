// The engine's stream rules (Note [Backward streams]) without a GPU: a CPU graph works and costs
// no stream call whether or not streams are registered, and a graph on the meta device, given
// streams that this test defines (a per-thread current stream id and a log of waits), runs each
// node on its recorded stream, orders the root gradient and makes the caller wait at the end.
#include <doctest/doctest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/autograd/node.h"
#include "anatomy/core/device_streams.h"

using namespace anatomy;

namespace {

// Streams as plain ids: what the engine asks for and sets is all there is to see.
struct TestStreams {
  static inline uint64_t current = 0;
  static inline int calls = 0;
  static inline std::vector<std::tuple<uint64_t, uint64_t>> waits;  // (waiter, producer)
  static inline std::vector<uint64_t> records;                      // the stream of each record_stream

  static uint64_t current_stream(Device) {
    ++calls;
    return current;
  }
  static void set_current_stream(Device, uint64_t id) noexcept {
    ++calls;
    current = id;
  }
  static void wait_stream(Device, uint64_t waiter, uint64_t producer) {
    ++calls;
    waits.emplace_back(waiter, producer);
  }
  static void record_stream(const Tensor&, uint64_t id) {
    ++calls;
    records.push_back(id);
  }
  static bool is_capturing(Device) { return false; }
  static constexpr DeviceStreams table{&current_stream, &set_current_stream, &wait_stream, &record_stream,
                                       &is_capturing};
};

// Installs `streams` for `type` for a scope, restoring what was registered before.
class StreamsScope {
 public:
  StreamsScope(DeviceType type, const DeviceStreams* streams) : type_(type), saved_(device_streams(type)) {
    set_device_streams(type, streams);
    TestStreams::current = 0;
    TestStreams::calls = 0;
    TestStreams::waits.clear();
    TestStreams::records.clear();
  }
  ~StreamsScope() { set_device_streams(type_, saved_); }
  StreamsScope(const StreamsScope&) = delete;
  StreamsScope& operator=(const StreamsScope&) = delete;

 private:
  DeviceType type_;
  const DeviceStreams* saved_;
};

// d/dx sum(x * x + 3 x) = 2 x + 3 on the CPU; checks the values.
void check_cpu_backward() {
  Tensor x = tensor(std::vector<double>{1, 2, 3}, {3}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  Tensor y = (x * x + x * 3).sum();
  REQUIRE(y.grad_fn() != nullptr);
  CHECK_FALSE(y.grad_fn()->has_stream());
  y.backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().select(0, 0).item<double>() == 5);
  CHECK(x.grad().select(0, 2).item<double>() == 9);
}

}  // namespace

TEST_CASE("autograd streams: a CPU backward with no streams registered") {
  StreamsScope no_cuda(DeviceType::CUDA, nullptr);
  StreamsScope no_cpu(DeviceType::CPU, nullptr);
  check_cpu_backward();
}

TEST_CASE("autograd streams: a CPU backward makes no stream call with streams registered") {
  StreamsScope cuda(DeviceType::CUDA, &TestStreams::table);
  StreamsScope cpu(DeviceType::CPU, &TestStreams::table);
  check_cpu_backward();
  CHECK(TestStreams::calls == 0);
  CHECK(TestStreams::waits.empty());
}

TEST_CASE("autograd streams: nodes run on their recorded stream, the caller waits at the end") {
  StreamsScope meta(DeviceType::Meta, &TestStreams::table);
  Tensor x = empty({4}, TensorOptions().device(kMeta)).requires_grad_();
  TestStreams::current = 7;  // the forward's stream
  Tensor y = (x * 2).sum();
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->has_stream());
  CHECK(y.grad_fn()->stream_device() == kMeta);
  CHECK(y.grad_fn()->stream_id() == 7);

  std::vector<uint64_t> seen;  // the current stream inside the leaf's hook (AccumulateGrad)
  x.register_hook([&](const Tensor&) {
    seen.push_back(TestStreams::current);
    return Tensor();
  });
  TestStreams::current = 3;  // the caller's stream
  TestStreams::waits.clear();
  y.backward();
  CHECK(TestStreams::current == 3);  // restored
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == 7);
  REQUIRE(x.grad().defined());
  CHECK(x.grad().device() == kMeta);
  CHECK(x.grad().sizes() == IntArrayRef{4});
  // The root gradient, made on 3, is waited for by 7; at the end 3 waits for 7, once.
  const std::vector<std::tuple<uint64_t, uint64_t>> expected{{7, 3}, {3, 7}};
  CHECK(TestStreams::waits == expected);
  // The root gradient is read on 7 once it is freed: its memory is recorded for 7. The other
  // gradients stay on 7, where they were made.
  CHECK(TestStreams::records == std::vector<uint64_t>{7});
}
