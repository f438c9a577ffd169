// See sample.h.
#include "anatomy/examples/char_gpt/sample.h"

#include <algorithm>
#include <vector>

namespace char_gpt {

using anatomy::DType;
using anatomy::Tensor;
using anatomy::TensorOptions;

namespace {

// The index that the cumulative probabilities reach u at (the last one if rounding keeps the sum below u).
int64_t draw(const Tensor& probs, double u) {
  const Tensor cpu = probs.to(anatomy::kCPU).to(DType::Float64).contiguous();
  const double* p = cpu.data_ptr<double>();
  double total = 0;
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    total += p[i];
    if (u < total) return i;
  }
  return cpu.numel() - 1;
}

}  // namespace

std::string generate(CharGpt& model, const TextData& data, const std::string& prompt, int64_t count,
                     double temperature) {
  const bool was_training = model.is_training();
  model.eval();
  anatomy::autograd::NoGradGuard no_grad;
  const anatomy::Device device = model.tok_emb->weight.device();
  std::vector<int64_t> context = data.encode(prompt);
  std::string out;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t t = std::min<int64_t>(static_cast<int64_t>(context.size()), model.config.seq);
    const std::vector<int64_t> window(context.end() - t, context.end());
    const Tensor tokens = anatomy::tensor(window, {1, t}, TensorOptions().dtype(DType::Int64).device(device));
    const Tensor logits = model.forward(tokens).select(0, 0).select(0, t - 1).to(DType::Float32);
    int64_t next = 0;
    if (temperature == 0) {
      next = anatomy::argmax(logits).item<int64_t>();
    } else {
      const double u = anatomy::rand({}, TensorOptions().dtype(DType::Float64)).item<double>();
      next = draw(anatomy::softmax(logits / temperature, 0), u);
    }
    context.push_back(next);
    out.push_back(data.decode(next));
  }
  model.train(was_training);
  return out;
}

}  // namespace char_gpt
