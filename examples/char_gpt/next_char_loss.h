// The training loss of the character-level GPT: the mean cross-entropy of predicting each next
// character, written as log_softmax (in fp32, also under autocast), gather of the targets'
// log-probabilities and a negated mean. A fused cross_entropy operator will replace it.
#pragma once

#include "anatomy/anatomy.h"

namespace char_gpt {

// logits [batch, seq, vocab] (any floating dtype), targets int64 [batch, seq]: a 0-d fp32 tensor.
anatomy::Tensor next_char_loss(const anatomy::Tensor& logits, const anatomy::Tensor& targets);

}  // namespace char_gpt
