// BackwardStreams: the stream rules of one backward run (Note [Backward streams]), kept apart
// from the engine's loop so that a CPU graph touches none of it beyond a compare per node.
//
// Note [Backward streams]
// As PyTorch's engine and input buffer, for nodes that recorded a stream (Note [Node streams]):
//   1. a node's backward (its tensor hooks, retained gradients and apply) runs with its stream
//      current on its device;
//   2. a gradient that a node produced on stream A, passed to a node whose stream on the
//      gradient's device is B != A, is ordered: B waits for an event recorded on A, and a sum
//      with gradients already waiting for that node runs on B. A node without a stream on that
//      device (the graph root) produced on the stream current there, the caller's;
//   3. at the end, the caller's current stream of each device waits for every stream the
//      backward ran a node on, so the caller's later work (reading .grad, .cpu()) sees the
//      gradients without a device synchronize.
// A gradient passed to another stream is also record_stream'ed for it (PyTorch's input buffer
// does the same), so that its memory goes back to the maker's stream only once the consumer's
// work on it is done.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "anatomy/autograd/node.h"
#include "anatomy/core/device_streams.h"

namespace anatomy::autograd {

class BackwardStreams {
 public:
  // Rule 1: makes `node`'s stream current through `guard`, and remembers it for rule 3.
  void enter(const Node& node, std::optional<DeviceStreamGuard>& guard);
  // Rule 2: adds `grad`, made by `producer`, into `slot` of `consumer`'s input buffer. Called
  // only when the consumer has a stream and the gradient is not on the CPU.
  static void pass(const Node& producer, const Node& consumer, Tensor& slot, Tensor&& grad);
  // Rule 3.
  void finish() const;

 private:
  std::vector<std::pair<Device, uint64_t>> used_;
};

}  // namespace anatomy::autograd
