// Node bookkeeping: sequence numbers and retained-gradient registrations.
#include "anatomy/autograd/node.h"

#include <algorithm>
#include <atomic>

namespace anatomy::autograd {
namespace {
// Later nodes run first in backward when several are ready (the engine's priority).
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

Node::Node(std::vector<Edge> next_edges)
    : next_edges_(std::move(next_edges)), sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

// A node outlives every tensor that retains its gradient: those tensors own it (grad_fn).
Node::~Node() = default;

void Node::add_retained(uint32_t output_nr, AutogradMeta* meta) { retained_.emplace_back(output_nr, meta); }

void Node::remove_retained(AutogradMeta* meta) {
  std::erase_if(retained_, [&](const auto& r) { return r.second == meta; });
}

}  // namespace anatomy::autograd
