// state_dict / load_state_dict: PyTorch's keys, round trips into a fresh model, strict-load
// errors that list every problem and change nothing, non-strict reports.
#include <doctest/doctest.h>

#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

namespace {

std::shared_ptr<nn::Sequential> make_model() {
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::TransformerEncoderLayer>(8, 2, 16, 0.0, "gelu", 1e-5, /*batch_first=*/true),
      std::make_shared<nn::RMSNorm>(std::vector<int64_t>{8}));
}

std::vector<std::string> keys(const nn::StateDict& sd) {
  std::vector<std::string> out;
  for (const auto& [k, _] : sd) out.push_back(k);
  return out;
}

std::vector<Tensor> snapshot(const nn::Module& m) {
  std::vector<Tensor> out;
  for (const auto& [_, t] : m.state_dict()) out.push_back(t.clone());
  return out;
}

bool unchanged(const nn::Module& m, const std::vector<Tensor>& before) {
  auto sd = m.state_dict();
  for (size_t i = 0; i < sd.size(); ++i) {
    if (!sd[i].second.equal(before[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("nn: state_dict keys are PyTorch's and leave out non-persistent buffers") {
  auto model = make_model();
  CHECK(keys(model->state_dict()) ==
        std::vector<std::string>{"0.weight", "0.bias", "2.self_attn.in_proj_weight", "2.self_attn.in_proj_bias",
                                 "2.self_attn.out_proj.weight", "2.self_attn.out_proj.bias", "2.linear1.weight",
                                 "2.linear1.bias", "2.linear2.weight", "2.linear2.bias", "2.norm1.weight",
                                 "2.norm1.bias", "2.norm2.weight", "2.norm2.bias", "3.weight"});
  nn::Module holder("Holder");
  holder.register_buffer("mean", zeros({3}));
  holder.register_buffer("scratch", zeros({3}), /*persistent=*/false);
  CHECK(keys(holder.state_dict()) == std::vector<std::string>{"mean"});
  CHECK(holder.named_buffers().size() == 2);
  // The values share the registered storage and carry no history.
  auto sd = model->state_dict();
  CHECK_FALSE(sd[0].second.requires_grad());
  CHECK(sd[0].second.is_alias_of(std::dynamic_pointer_cast<nn::Linear>((*model)[0])->weight));
}

TEST_CASE("nn: a state_dict loaded into a fresh model gives identical outputs") {
  manual_seed(1);
  auto a = make_model();
  auto b = make_model();  // different random initialisation
  const Tensor x = randn({2, 5, 4});
  a->eval();
  b->eval();
  CHECK_FALSE(a->forward(x).equal(b->forward(x)));
  const auto result = b->load_state_dict(a->state_dict());
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  CHECK(a->forward(x).equal(b->forward(x)));
  // Copied, not shared: changing a afterwards leaves b alone.
  auto lin = std::dynamic_pointer_cast<nn::Linear>((*a)[0]);
  nn::init::zeros_(lin->weight);
  CHECK_FALSE(a->forward(x).equal(b->forward(x)));
  // Values are converted to each tensor's dtype, as copy_ does; the model keeps its dtype.
  nn::StateDict sd64;
  for (const auto& [k, t] : a->state_dict()) sd64.emplace_back(k, t.to(DType::Float64));
  b->load_state_dict(sd64);
  for (const Tensor& p : b->parameters()) CHECK(p.dtype() == DType::Float32);
  CHECK(a->forward(x).equal(b->forward(x)));
}

TEST_CASE("nn: a strict load names every missing key, unexpected key and shape mismatch in one error") {
  auto model = make_model();
  const auto before = snapshot(*model);
  nn::StateDict sd = model->state_dict();
  sd.erase(sd.begin() + 1);  // 0.bias missing
  sd.erase(sd.end() - 1);    // 3.weight missing
  sd.emplace_back("extra.weight", zeros({2}));
  sd[0].second = zeros({8, 5});  // 0.weight: wrong shape
  std::string message;
  try {
    model->load_state_dict(sd);
  } catch (const ValueError& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("Error(s) in loading state_dict for Sequential") != std::string::npos);
  CHECK(message.find("Missing key(s) in state_dict: \"0.bias\", \"3.weight\"") != std::string::npos);
  CHECK(message.find("Unexpected key(s) in state_dict: \"extra.weight\"") != std::string::npos);
  CHECK(message.find("size mismatch for 0.weight: copying a param with shape (8, 5) from checkpoint, the shape in "
                     "current model is (8, 4)") != std::string::npos);
  CHECK(unchanged(*model, before));

  // A value that cannot be copied (a Meta tensor has no data) fails the load before any copy.
  nn::StateDict meta_sd = model->state_dict();
  meta_sd.back().second = meta_sd.back().second.to(kMeta);
  std::string meta_message;
  try {
    model->load_state_dict(meta_sd);
  } catch (const ValueError& e) {
    meta_message = e.what();
  }
  CAPTURE(meta_message);
  CHECK(meta_message.find("the value for 3.weight cannot be converted to fp32 on cpu") != std::string::npos);
  CHECK(unchanged(*model, before));

  // Non-strict: the missing and unexpected keys are returned, a shape mismatch still fails.
  CHECK_THROWS_AS(model->load_state_dict(sd, /*strict=*/false), ValueError);
  CHECK(unchanged(*model, before));
  sd[0].second = ones({8, 4});
  const auto result = model->load_state_dict(sd, /*strict=*/false);
  CHECK(result.missing_keys == std::vector<std::string>{"0.bias", "3.weight"});
  CHECK(result.unexpected_keys == std::vector<std::string>{"extra.weight"});
  CHECK(std::dynamic_pointer_cast<nn::Linear>((*model)[0])->weight.equal(ones({8, 4})));
}
