// The backward engine (Note [Backward engine]).
#include "anatomy/autograd/engine.h"

#include <optional>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/anomaly_mode.h"
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/backward_streams.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/autograd/validate_gradient.h"
#include "anatomy/core/pointer_map.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {
namespace {

class GraphRoot final : public Node {
 public:
  GraphRoot(std::vector<Edge> roots, variable_list grads) : Node(std::move(roots)), grads_(std::move(grads)) {}
  std::string name() const override { return "GraphRoot"; }
  variable_list apply(variable_list&&) override { return grads_; }

 private:
  variable_list grads_;
};

struct NodeState {
  int dependencies = 0;
  bool needed = true;
  variable_list buffer;
};

// The state of every node of one backward run, found by the node's address: an open-addressing
// table of indices into a vector, both growing by doubling, where a std::unordered_map allocated
// a hash node per graph node.
class GraphState {
 public:
  // The node's slot, added when new; `added` says which.
  uint32_t slot_of(Node* node, bool& added) {
    if (const uint32_t* found = slots_.find(node)) {
      added = false;
      return *found;
    }
    const auto slot = static_cast<uint32_t>(states_.size());
    states_.emplace_back();
    slots_.insert(node, slot);
    added = true;
    return slot;
  }
  // A node discovered before (every node of the graph is, before the run starts).
  NodeState& operator[](Node* node) { return states_[*slots_.find(node)]; }
  NodeState& at_slot(uint32_t slot) { return states_[slot]; }

 private:
  PointerMap<uint32_t> slots_;
  std::vector<NodeState> states_;
};

void check_no_nan(const Node& node, const variable_list& grads) {
  for (const Tensor& g : grads) {
    if (!g.defined() || !g.is_floating_point()) continue;
    NoGradGuard no_grad;
    const bool has_nan = isnan(g).any().item().to<bool>();
    ANATOMY_CHECK(!has_nan, ValueError, "{} returned nan values in its output (the forward op was {})", node.name(),
                  node.forward_op().empty() ? "unknown" : node.forward_op());
  }
}

// The hooks registered on the node's outputs (non-leaf tensors). Each runs on a copy of itself,
// by index, over the hooks there were when the node started: a hook may register another one,
// which would move the vector under a range-for (the new hook runs from the next backward on).
void run_tensor_pre_hooks(const Node& node, variable_list& in) {
  for (size_t i = 0, n = node.tensor_pre_hooks().size(); i < n; ++i) {
    const auto [nr, hook] = node.tensor_pre_hooks()[i];
    if (nr < in.size() && in[nr].defined()) {
      Tensor replaced = hook(in[nr]);
      if (!replaced.defined()) continue;
      if (nr < node.outputs().size() && !fits(replaced, node.outputs()[nr])) {
        replaced = validated_gradient(std::move(replaced), node.outputs()[nr],
                                      fmt::format("a hook on output {} of {}", nr, node.name()), nr);
      }
      in[nr] = std::move(replaced);
    }
  }
}

// Whether the innermost backward on this thread is an autograd::grad call.
thread_local bool tls_captures_inputs = false;

// The node whose apply() runs on this thread (current_backward_node, autograd.h).
constinit thread_local const Node* tls_current_node = nullptr;

class CurrentNodeScope {
 public:
  explicit CurrentNodeScope(const Node* node) : saved_(tls_current_node) { tls_current_node = node; }
  CurrentNodeScope(const CurrentNodeScope&) = delete;
  CurrentNodeScope& operator=(const CurrentNodeScope&) = delete;
  ~CurrentNodeScope() { tls_current_node = saved_; }

 private:
  const Node* saved_;
};

class CapturesInputsScope {
 public:
  explicit CapturesInputsScope(bool on) : saved_(tls_captures_inputs) { tls_captures_inputs = on; }
  CapturesInputsScope(const CapturesInputsScope&) = delete;
  CapturesInputsScope& operator=(const CapturesInputsScope&) = delete;
  ~CapturesInputsScope() { tls_captures_inputs = saved_; }

 private:
  bool saved_;
};

}  // namespace

bool engine_captures_inputs() { return tls_captures_inputs; }

variable_list run_backward(const std::vector<Edge>& roots, const variable_list& grads, bool keep_graph,
                           bool create_graph, const std::vector<Edge>& inputs) {
  auto root = IntrusivePtr<GraphRoot>::make(roots, grads);
  GraphState state;

  // 2. dependencies, and which nodes lead to a requested input.
  std::unordered_map<Node*, std::vector<uint32_t>> targets;  // node -> input_nrs to capture
  for (const Edge& e : inputs) {
    if (e.is_valid()) targets[e.function.get()].push_back(e.input_nr);
  }
  std::vector<Node*> order;  // post-order, for the "needed" pass
  {
    std::vector<std::pair<Node*, size_t>> stack{{root.get(), 0}};
    bool added = false;
    state.slot_of(root.get(), added);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == node->next_edges().size()) {
        order.push_back(node);
        stack.pop_back();
        continue;
      }
      const Edge& e = node->next_edges()[next++];
      if (!e.is_valid()) continue;
      Node* child = e.function.get();
      state.at_slot(state.slot_of(child, added)).dependencies++;
      if (added) stack.emplace_back(child, 0);
    }
  }
  if (!inputs.empty()) {
    // Only nodes from which a requested input can be reached run; a leaf's AccumulateGrad never
    // does (autograd::grad leaves .grad alone).
    std::unordered_map<Node*, bool> leads;
    for (Node* node : order) {  // children before parents
      bool l = targets.count(node) > 0;
      for (const Edge& e : node->next_edges()) {
        if (e.is_valid() && leads[e.function.get()]) l = true;
      }
      leads[node] = l;
      state[node].needed = l && dynamic_cast<AccumulateGrad*>(node) == nullptr;
    }
  }

  variable_list captured(inputs.size());
  auto capture = [&](Node* node, const variable_list& buffer) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].function.get() == node && inputs[i].input_nr < buffer.size()) {
        captured[i] = buffer[inputs[i].input_nr];
      }
    }
  };

  // 3. run.
  auto later_first = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  ready.push(root.get());
  AutoGradMode grad_mode(create_graph);
  CapturesInputsScope captures(!inputs.empty());
  BackwardStreams streams;  // Note [Backward streams]
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    NodeState& st = state[node];
    std::optional<DeviceStreamGuard> stream_guard;
    if (node->has_stream()) streams.enter(*node, stream_guard);
    variable_list in = std::move(st.buffer);
    in.resize(std::max<size_t>(in.size(), node->outputs().size()));
    if (node != root.get()) {
      run_tensor_pre_hooks(*node, in);
      // By index: replacing a .grad can free a tensor whose metadata unregisters itself here.
      for (size_t i = 0; i < node->retained().size(); ++i) {
        const auto [nr, meta] = node->retained()[i];
        if (nr < in.size() && in[nr].defined()) {
          meta->grad_ = meta->grad_.defined() ? meta->grad_ + in[nr] : (create_graph ? in[nr] : in[nr].clone());
        }
      }
    }
    if (!inputs.empty()) capture(node, in);
    if (!st.needed) continue;
    variable_list received;
    if (!node->post_hooks().empty()) received = in;
    variable_list out;
    {
      CurrentNodeScope current(node);
      out = node->apply(std::move(in));
    }
    if (AnomalyMode::is_enabled()) check_no_nan(*node, out);
    // A copy of each hook, by index, over the hooks there were: a hook may register more.
    for (size_t i = 0, n = node->post_hooks().size(); i < n; ++i) {
      const NodePostHook hook = node->post_hooks()[i];
      hook(out, received);
    }
    if (!keep_graph) node->release_saved();
    const auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.is_valid()) continue;
      Node* child = e.function.get();
      NodeState& cs = state[child];
      if (i < out.size() && out[i].defined()) {
        if (e.input_nr < child->outputs().size() && !fits(out[i], child->outputs()[e.input_nr])) {
          out[i] = validated_gradient(std::move(out[i]), child->outputs()[e.input_nr], node->name(), i);
        }
        if (cs.buffer.size() <= e.input_nr) cs.buffer.resize(e.input_nr + 1);
        Tensor& slot = cs.buffer[e.input_nr];
        if (child->has_stream() && !out[i].device().is_cpu()) {
          BackwardStreams::pass(*node, *child, slot, std::move(out[i]));
        } else {
          slot = slot.defined() ? slot + out[i] : std::move(out[i]);
        }
      }
      if (--cs.dependencies == 0) ready.push(child);
    }
  }
  streams.finish();
  return captured;
}

const Node* current_backward_node() { return tls_current_node; }

}  // namespace anatomy::autograd
