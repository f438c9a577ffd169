// See next_char_loss.h.
#include "anatomy/examples/char_gpt/next_char_loss.h"

namespace char_gpt {

using anatomy::DType;
using anatomy::Tensor;

Tensor next_char_loss(const Tensor& logits, const Tensor& targets) {
  ANATOMY_CHECK(
      logits.dim() == 3 && targets.dim() == 2 && logits.size(0) == targets.size(0) && logits.size(1) == targets.size(1),
      ValueError, "next_char_loss: expected logits [batch, seq, vocab] and targets [batch, seq], got {} and {}",
      anatomy::shape_string(logits.sizes()), anatomy::shape_string(targets.sizes()));
  // One fused operator over (tokens, vocabulary) rows; under autocast it runs in fp32, as PyTorch's.
  return anatomy::cross_entropy(logits.flatten(0, 1), targets.flatten()).to(DType::Float32);
}

}  // namespace char_gpt
