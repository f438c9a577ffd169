// The stream rules of a backward run (Note [Backward streams] in backward_streams.h).
#include "anatomy/autograd/backward_streams.h"

#include <algorithm>

#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {

void BackwardStreams::enter(const Node& node, std::optional<DeviceStreamGuard>& guard) {
  const std::pair<Device, uint64_t> stream{node.stream_device(), node.stream_id()};
  guard.emplace(stream.first, stream.second);
  if (std::find(used_.begin(), used_.end(), stream) == used_.end()) used_.push_back(stream);
}

void BackwardStreams::pass(const Node& producer, const Node& consumer, Tensor& slot, Tensor&& grad) {
  const Device device = grad.device();
  const DeviceStreams* streams = device_streams(device.type());
  // A gradient on another device than the consumer's stream (or one without streams) has
  // nothing to order here: the consumer's own ops order what they read.
  if (streams == nullptr || consumer.stream_device() != device) {
    slot = slot.defined() ? slot + grad : std::move(grad);
    return;
  }
  // The stream current on the gradient's device now is the producer's (rule 2).
  const uint64_t made_on = producer.stream_device() == device ? producer.stream_id() : streams->current_stream(device);
  const uint64_t used_on = consumer.stream_id();
  if (made_on == used_on) {
    slot = slot.defined() ? slot + grad : std::move(grad);
    return;
  }
  streams->wait_stream(device, used_on, made_on);
  // The consumer's stream reads the gradient, and the allocator ties its block to the maker's
  // stream: without this, freeing the gradient once the consumer's work is queued would let the
  // maker's stream reuse the block before that work has read it.
  streams->record_stream(grad, used_on);
  if (!slot.defined()) {
    slot = std::move(grad);
    return;
  }
  // The earlier gradients in the slot are ordered before the consumer's stream, not before
  // this producer's: the sum runs on the consumer's.
  DeviceStreamGuard guard(device, used_on);
  slot = slot + grad;
}

void BackwardStreams::finish() const {
  for (const auto& [device, id] : used_) {
    const DeviceStreams* streams = device_streams(device.type());
    if (streams == nullptr) continue;  // unregistered since the node recorded its stream
    const uint64_t caller = streams->current_stream(device);
    if (caller != id) streams->wait_stream(device, caller, id);
  }
}

}  // namespace anatomy::autograd
