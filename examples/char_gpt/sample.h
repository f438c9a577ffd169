// Text from the trained model: one character at a time, each from the logits of the last
// position given the last `seq` characters (the whole context is run again for each: no cache).
#pragma once

#include <string>

#include "anatomy/examples/char_gpt/model.h"
#include "anatomy/examples/char_gpt/text_data.h"

namespace char_gpt {

// `count` characters that follow `prompt` (whose bytes are all in the vocabulary): the most
// likely one with temperature 0, else drawn from softmax(logits / temperature) with a uniform
// number from the CPU generator. Runs in eval mode without grad and puts the mode back.
std::string generate(CharGpt& model, const TextData& data, const std::string& prompt, int64_t count,
                     double temperature);

}  // namespace char_gpt
