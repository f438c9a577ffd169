// SavedTensor (see saved_tensor.h).
#include "anatomy/autograd/saved_tensor.h"

#include <fmt/format.h>

#include "anatomy/autograd/autograd_meta.h"

namespace anatomy::autograd {

Tensor detach(const Tensor& t) {
  if (!t.defined()) return t;
  return Tensor(IntrusivePtr<TensorImpl>::make(*t.impl(), t.sizes(), t.strides(), t.storage_offset()));
}

void check_saveable(const Tensor& t, std::string_view op) {
  ANATOMY_CHECK(!t.defined() || !t.is_inference(), ValueError,
                "{}: Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
                "normal tensor and use it in autograd (a tensor of shape [{}])",
                op, fmt::join(t.sizes(), ", "));
}

SavedTensor::SavedTensor(const Tensor& t, bool is_output, uint32_t output_nr)
    : data_(is_output ? detach(t) : t),
      version_(t.defined() ? t.version() : 0),
      is_output_(is_output),
      output_nr_(output_nr),
      requires_grad_(t.defined() && t.requires_grad()) {}

Tensor SavedTensor::unpack(Node* node) const {
  const std::string op = node ? node->name() : std::string("backward");
  ANATOMY_CHECK(!released_, ValueError,
                "{}: trying to backward through the graph a second time (or to use saved tensors after they were "
                "freed); pass retain_graph=true to the first backward if you need to run it again",
                op);
  if (!data_.defined()) return data_;
  ANATOMY_CHECK(data_.version() == version_, ValueError,
                "{}: one of the tensors needed for gradient computation has been modified by an in-place operation: "
                "a tensor of shape [{}] is at version {}; expected version {} instead",
                op, fmt::join(data_.sizes(), ", "), data_.version(), version_);
  if (!is_output_ || !requires_grad_ || node == nullptr) return data_;
  // A fresh alias with the node as grad_fn, so double backward sees the graph.
  Tensor out = detach(data_);
  AutogradMeta& m = meta_of(out);
  m.grad_fn_ = IntrusivePtr<Node>(node);
  m.output_nr_ = output_nr_;
  return out;
}

std::string SavedTensor::describe() const {
  if (released_) return "(freed)";
  if (!data_.defined()) return "None";
  return fmt::format("[{}] {}", fmt::join(data_.sizes(), ", "), name(data_.dtype()));
}

}  // namespace anatomy::autograd
