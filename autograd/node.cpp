// Node bookkeeping: sequence numbers, retained-gradient registrations, and the release of a
// graph without recursion (Note [Releasing deep graphs] in node.h).
#include "anatomy/autograd/node.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "anatomy/core/device_streams.h"

namespace anatomy::autograd {
namespace {
// Later nodes run first in backward when several are ready (the engine's priority).
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

Node::Node(std::vector<Edge> next_edges)
    : next_edges_(std::move(next_edges)), sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

// A node outlives every tensor that retains its gradient: those tensors own it (grad_fn).
// The nodes only this one owns are freed here, one after the other, rather than each from its
// owner's destructor (Note [Releasing deep graphs]).
Node::~Node() {
  std::vector<IntrusivePtr<Node>> stack;
  // Moves the nodes that `edges` alone own onto the stack; drops the edges to nodes that others
  // own too (their count goes down, they live on).
  auto take_sole_owned = [&stack](std::vector<Edge>& edges) {
    for (Edge& e : edges) {
      if (e.function && e.function.use_count() == 1) stack.push_back(std::move(e.function));
    }
    edges.clear();
  };
  take_sole_owned(next_edges_);
  while (!stack.empty()) {
    IntrusivePtr<Node> node = std::move(stack.back());
    stack.pop_back();
    // A saved input owns its grad_fn too, often a node behind an edge: release the saved tensors
    // first, so that the edges are the last owners.
    node->release_saved();
    node->release_owned_nodes(stack);
    take_sole_owned(node->next_edges_);
    // `node` is freed here with no edges left, so its destructor does not recurse.
  }
}

void Node::record_stream(Device device) {
  if (const DeviceStreams* streams = device_streams(device.type())) {
    stream_id_ = streams->current_stream(device);
    stream_device_ = device;
  }
}

void Node::add_retained(uint32_t output_nr, AutogradMeta* meta) { retained_.emplace_back(output_nr, meta); }

void Node::remove_retained(AutogradMeta* meta) {
  std::erase_if(retained_, [&](const auto& r) { return r.second == meta; });
}

}  // namespace anatomy::autograd
