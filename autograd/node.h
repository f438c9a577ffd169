// Node and Edge: the autograd graph. Each operator call that records makes one Node (its
// backward); the Node's next edges point at the nodes that made its inputs (or at the
// AccumulateGrad node of a leaf), so the graph runs from outputs back to leaves.
//
// Note [Autograd graph ownership]
// A tensor owns its grad_fn, and a node owns the nodes of its next edges: the graph lives as long
// as some output that needs it. A node never owns the tensors it produced (that would be a
// cycle): saved outputs are kept as detached aliases (autograd/saved_tensor.h), and a leaf's
// AccumulateGrad owns the leaf while the leaf only caches a plain pointer to it.
//
// Note [Node streams]
// A node whose forward outputs live on a device with streams (CUDA) records that device and the
// stream current on it when the node was made (the forward op's stream; for AccumulateGrad, the
// stream current when the leaf was first used): the engine runs the node's backward with that
// stream current (docs/autograd.md, "CUDA streams"). The first such output decides. CPU nodes
// record nothing, and cost one compare per output for it.
//
// Note [Releasing deep graphs]
// Freeing a node frees the nodes only its edges own, and theirs, and so on: done by nested
// destructors that is one stack frame per node, and a chain of 100000 ops overflows the stack.
// ~Node instead moves the nodes its edges alone own onto a local stack and frees them one at a
// time (PyTorch's deleteNode): each releases its saved tensors first (a saved input owns its
// grad_fn, often the node behind an edge, which would otherwise not be sole-owned by the edge),
// then hands its sole-owned edges to the same stack, and dies with no edges left.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "anatomy/core/dim_vector.h"
#include "anatomy/core/intrusive_ptr.h"
#include "anatomy/core/tensor.h"

namespace anatomy::autograd {

class Node;
class AutogradMeta;
using variable_list = std::vector<Tensor>;

// An input of a backward node: which node receives the gradient, and at which of its inputs
// (the forward op's output number).
struct Edge {
  IntrusivePtr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return static_cast<bool>(function); }
};

// A hook on a tensor's gradient: returns a replacement, or an undefined tensor to keep it.
using TensorHook = std::function<Tensor(const Tensor& grad)>;
// A hook that runs after a node: sees the gradients it produced and the ones it received.
using NodePostHook = std::function<void(const variable_list& grad_inputs, const variable_list& grad_outputs)>;

// What a backward needs to know of each forward output, to make zeros when no gradient
// reaches it.
struct OutputInfo {
  DimVector sizes;
  DType dtype = DType::Float32;
  Device device;
};

class Node : public RefCounted {
 public:
  // A leaf's metadata reaches its AccumulateGrad through a plain pointer, from any thread
  // (Note [Weak references] in core/intrusive_ptr.h): every release of a node decrements.
  static constexpr bool kWeaklyReferenced = true;

  explicit Node(std::vector<Edge> next_edges = {});
  ~Node() override;

  // PyTorch's names: "AddBackward0", "MmBackward0", "AccumulateGrad".
  virtual std::string name() const = 0;
  // Gradients for the next edges (one each, undefined where none) from the gradients of the
  // forward outputs (one per output).
  virtual variable_list apply(variable_list&& grads) = 0;
  // Frees the saved tensors (after a backward without retain_graph).
  virtual void release_saved() {}
  // Nodes this one owns other than through its edges (CopySlices' wrapped node): moved onto
  // `sole_owned` where nothing else owns them, so that freeing a deep graph does not recurse
  // (Note [Releasing deep graphs]).
  virtual void release_owned_nodes(std::vector<IntrusivePtr<Node>>& sole_owned) { (void)sole_owned; }
  // One line per saved value, "self: [2, 3] float32", for print_graph.
  virtual std::vector<std::string> saved_descriptions() const { return {}; }

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  uint64_t sequence_nr() const { return sequence_nr_; }
  const std::vector<OutputInfo>& outputs() const { return outputs_; }
  void add_output(const Tensor& t) {
    outputs_.push_back({DimVector(t.sizes()), t.dtype(), t.device()});
    if (!has_stream() && t.defined() && !t.device().is_cpu()) record_stream(t.device());
  }

  // The stream the backward runs on (Note [Node streams]): none when stream_device() is the CPU.
  bool has_stream() const { return !stream_device_.is_cpu(); }
  Device stream_device() const { return stream_device_; }
  // The DeviceStreams id of the stream (core/device_streams.h; 0: the device's default stream).
  uint64_t stream_id() const { return stream_id_; }

  // Hooks registered on a non-leaf tensor made by this node run on the gradient of its output
  // `output_nr` before apply.
  void add_tensor_pre_hook(uint32_t output_nr, TensorHook hook) {
    tensor_pre_hooks_.emplace_back(output_nr, std::move(hook));
  }
  const std::vector<std::pair<uint32_t, TensorHook>>& tensor_pre_hooks() const { return tensor_pre_hooks_; }
  void add_post_hook(NodePostHook hook) { post_hooks_.push_back(std::move(hook)); }
  const std::vector<NodePostHook>& post_hooks() const { return post_hooks_; }

  // Tensors (non-leaf) that asked for retain_grad(): their .grad is set from output `output_nr`.
  // The tensor's metadata removes itself when it dies (Note [Autograd graph ownership]).
  void add_retained(uint32_t output_nr, AutogradMeta* meta);
  void remove_retained(AutogradMeta* meta);
  const std::vector<std::pair<uint32_t, AutogradMeta*>>& retained() const { return retained_; }

  // Anomaly mode: the forward operator that made this node (empty when anomaly mode was off).
  const std::string& forward_op() const { return forward_op_; }
  void set_forward_op(std::string op) { forward_op_ = std::move(op); }

 protected:
  std::vector<Edge> next_edges_;

 private:
  // Records the calling thread's current stream of `device`, if its backend registered streams.
  void record_stream(Device device);

  uint64_t sequence_nr_;
  Device stream_device_;  // the CPU: no stream
  uint64_t stream_id_ = 0;
  std::vector<OutputInfo> outputs_;
  std::vector<std::pair<uint32_t, TensorHook>> tensor_pre_hooks_;
  std::vector<NodePostHook> post_hooks_;
  std::vector<std::pair<uint32_t, AutogradMeta*>> retained_;
  std::string forward_op_;
};

}  // namespace anatomy::autograd
