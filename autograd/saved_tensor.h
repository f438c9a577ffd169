// SavedTensor: a tensor a backward formula needs, with the version it had when it was saved.
// Unpacking checks the version: a saved tensor changed in place since would give a wrong
// gradient, so that is an error naming the operator, the shape and both versions.
//
// An output of the node that saves it is kept as a detached alias (same storage and version
// counter, no autograd metadata) so the node does not own its own output (Note [Autograd graph
// ownership]); unpacking reattaches the node as its grad_fn, so a double backward through the
// saved output reaches the node again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "anatomy/core/tensor.h"

namespace anatomy::autograd {

class Node;

class SavedTensor {
 public:
  SavedTensor() = default;
  // `output_nr`: which output of the saving node `t` is (for saved outputs).
  SavedTensor(const Tensor& t, bool is_output, uint32_t output_nr = 0);

  // The saved tensor; `node` is the node that saved it (reattached as grad_fn of a saved
  // output). ValueError when it was modified in place, or released by an earlier backward.
  Tensor unpack(Node* node) const;
  void release() {
    data_ = Tensor();
    released_ = true;
  }
  bool defined() const { return data_.defined() || released_; }
  std::string describe() const;  // "[2, 3] float32"

 private:
  Tensor data_;
  uint32_t version_ = 0;
  bool is_output_ = false;
  uint32_t output_nr_ = 0;
  bool requires_grad_ = false;
  bool released_ = false;
};

// A tensor sharing `t`'s storage, geometry and version counter, with no autograd metadata.
Tensor detach(const Tensor& t);

// ValueError naming `op` when `t` is an inference tensor, which has no version to save.
void check_saveable(const Tensor& t, std::string_view op);

}  // namespace anatomy::autograd
