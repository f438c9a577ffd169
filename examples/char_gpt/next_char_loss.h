// The training loss of the character-level GPT: the mean cross-entropy of predicting each next
// character, with the fused cross_entropy operator over the (batch * seq, vocab) logits (in fp32,
// also under autocast: the losses are on autocast's fp32 list).
#pragma once

#include "anatomy/anatomy.h"

namespace char_gpt {

// logits [batch, seq, vocab] (any floating dtype), targets int64 [batch, seq]: a 0-d fp32 tensor.
anatomy::Tensor next_char_loss(const anatomy::Tensor& logits, const anatomy::Tensor& targets);

}  // namespace char_gpt
