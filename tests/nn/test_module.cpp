// nn::Module's bookkeeping: registration, dotted names in registration order, counts, modes,
// conversions, zero_grad, apply, the repr, and the registration errors.
#include <doctest/doctest.h>

#include <sstream>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

namespace {

std::vector<std::string> names(const nn::NamedTensors& list) {
  std::vector<std::string> out;
  for (const auto& [name, _] : list) out.push_back(name);
  return out;
}

// A block with a parameter, two buffers (one non-persistent) and nested children, like a
// transformer block's layout.
struct Block : nn::Module {
  Tensor& scale = register_parameter("scale", ones({4}));
  Tensor& steps = register_buffer("steps", zeros({1}, DType::Int64));
  Tensor& cache = register_buffer("cache", zeros({2}), /*persistent=*/false);
  std::shared_ptr<nn::MultiheadAttention> attn =
      register_module("attn", std::make_shared<nn::MultiheadAttention>(4, 2));
  std::shared_ptr<nn::Linear> fc = register_module("fc", std::make_shared<nn::Linear>(4, 4));
  Block() : Module("Block") {}
  Tensor forward(const Tensor& x) override { return fc->forward(attn->forward(x)) * scale; }
};

struct Net : nn::Module {
  std::shared_ptr<nn::Embedding> embed = register_module("embed", std::make_shared<nn::Embedding>(10, 4));
  std::shared_ptr<nn::ModuleList> blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
  Net() : Module("Net") {
    for (int i = 0; i < 2; ++i) blocks->push_back(std::make_shared<Block>());
  }
};

}  // namespace

TEST_CASE("nn: named_parameters, named_buffers and named_modules use dotted names in registration order") {
  Net net;
  CHECK(names(net.named_parameters()) ==
        std::vector<std::string>{
            "embed.weight", "blocks.0.scale", "blocks.0.attn.in_proj_weight", "blocks.0.attn.in_proj_bias",
            "blocks.0.attn.out_proj.weight", "blocks.0.attn.out_proj.bias", "blocks.0.fc.weight", "blocks.0.fc.bias",
            "blocks.1.scale", "blocks.1.attn.in_proj_weight", "blocks.1.attn.in_proj_bias",
            "blocks.1.attn.out_proj.weight", "blocks.1.attn.out_proj.bias", "blocks.1.fc.weight", "blocks.1.fc.bias"});
  CHECK(names(net.named_buffers()) ==
        std::vector<std::string>{"blocks.0.steps", "blocks.0.cache", "blocks.1.steps", "blocks.1.cache"});
  std::vector<std::string> modules;
  for (const auto& [name, m] : net.named_modules()) modules.push_back(name + ":" + m->type_name());
  CHECK(modules == std::vector<std::string>{":Net", "embed:Embedding", "blocks:ModuleList", "blocks.0:Block",
                                            "blocks.0.attn:MultiheadAttention", "blocks.0.attn.out_proj:Linear",
                                            "blocks.0.fc:Linear", "blocks.1:Block", "blocks.1.attn:MultiheadAttention",
                                            "blocks.1.attn.out_proj:Linear", "blocks.1.fc:Linear"});
  CHECK(net.children().size() == 2);
  CHECK(net.named_parameters(/*recurse=*/false).empty());
  CHECK(net.parameters().size() == 15);
  CHECK(net.buffers().size() == 4);
  // 10*4 + 2 * (4 + 12*4 + 12 + 4*4 + 4 + 4*4 + 4)
  CHECK(net.num_parameters() == 40 + 2 * (4 + 48 + 12 + 16 + 4 + 16 + 4));
  for (const Tensor& p : net.parameters()) CHECK((p.is_leaf() && p.requires_grad()));
}

TEST_CASE("nn: a parameter shared by two modules is listed once; an absent bias is not listed") {
  auto a = std::make_shared<nn::Linear>(3, 3, /*bias=*/false);
  nn::Sequential seq(a, a);
  CHECK(names(seq.named_parameters()) == std::vector<std::string>{"0.weight"});
  CHECK(names(seq.state_dict()) == std::vector<std::string>{"0.weight", "1.weight"});
  CHECK_FALSE(a->bias.defined());
}

TEST_CASE("nn: a parameter tied between two modules stays one tensor, through to(dtype) too") {
  auto embed = std::make_shared<nn::Embedding>(6, 4);
  auto head = std::make_shared<nn::Linear>(4, 6, false);
  nn::Module lm("LM");
  lm.register_module("embed", embed);
  lm.register_module("head", head);
  lm.register_parameter("head_weight", embed->weight);  // tied: the same tensor, listed once
  CHECK(names(lm.named_parameters()) == std::vector<std::string>{"head_weight", "head.weight"});  // as PyTorch's order
  CHECK(names(lm.state_dict()) == std::vector<std::string>{"head_weight", "embed.weight", "head.weight"});
  lm.to(DType::Float64);
  CHECK(embed->weight.dtype() == DType::Float64);
  CHECK(lm.named_parameters().size() == 2);
  CHECK(lm.named_parameters()[0].second.is_same(embed->weight));
  // A tensor with history is detached into a new leaf.
  Tensor w = ones({2}).requires_grad_() * 2;
  nn::Module m("M");
  CHECK(m.register_parameter("w", w).is_leaf());
}

TEST_CASE("nn: train() and eval() reach every descendant") {
  Net net;
  CHECK(net.is_training());
  net.eval();
  for (const auto& [_, m] : net.named_modules()) CHECK_FALSE(m->is_training());
  net.blocks->train();
  CHECK_FALSE(net.is_training());
  CHECK((*net.blocks)[1]->is_training());
  net.train();
  for (const auto& [_, m] : net.named_modules()) CHECK(m->is_training());
}

TEST_CASE("nn: to(dtype) converts floating parameters and buffers, keeps leaves that require grad") {
  Block block;
  const Tensor handle = block.fc->weight;  // taken before the call, as an optimizer takes it
  const Tensor old_weight = block.fc->weight.detach().clone();
  block.fc->weight.set_grad(ones({4, 4}));
  block.to(DType::Float64);
  for (const auto& [name, p] : block.named_parameters()) {
    CAPTURE(name);
    CHECK(p.dtype() == DType::Float64);
    CHECK(p.is_leaf());
    CHECK(p.requires_grad());
  }
  CHECK(block.steps.dtype() == DType::Int64);  // integer buffers stay
  CHECK(block.cache.dtype() == DType::Float64);
  // The layer reads the registered slot: its member and the listing see the converted tensor.
  CHECK(block.fc->weight.is_same(block.named_parameters()[5].second));
  CHECK(block.fc->weight.grad().dtype() == DType::Float64);
  CHECK(block.fc->weight.allclose(old_weight.to(DType::Float64)));
  // Converted in place: the handle taken before is the converted parameter.
  CHECK(handle.is_same(block.fc->weight));
  CHECK(handle.dtype() == DType::Float64);
  Tensor y = block.forward(randn({3, 1, 4}, DType::Float64));
  CHECK(y.dtype() == DType::Float64);
  // Unchanged dtype and device keep the same tensors.
  const Tensor w = block.fc->weight;
  block.to(DType::Float64).to(Device(kCPU));
  CHECK(w.is_same(block.fc->weight));
  CHECK_THROWS_AS(block.to(DType::Int32), TypeError);
}

TEST_CASE("nn: to(device) moves parameters and buffers, which stay leaves that require grad") {
  nn::Sequential seq(std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::LayerNorm>(std::vector<int64_t>{3}));
  seq.register_buffer("steps", zeros({1}, DType::Int64));
  seq.to(kMeta);
  for (const Tensor& p : seq.parameters()) {
    CHECK(p.is_meta());
    CHECK(p.is_leaf());
    CHECK(p.requires_grad());
  }
  CHECK(seq.buffers()[0].is_meta());
  CHECK(seq.buffers()[0].dtype() == DType::Int64);
  const Tensor y = seq.forward(empty({2, 4}, kMeta));
  CHECK(y.is_meta());
  CHECK(y.sizes() == IntArrayRef{2, 3});
}

TEST_CASE("nn: zero_grad clears or zeroes every parameter's grad") {
  nn::Sequential seq(std::make_shared<nn::Linear>(3, 2), std::make_shared<nn::Tanh>(),
                     std::make_shared<nn::Linear>(2, 1));
  seq.forward(randn({5, 3})).sum().backward();
  for (const Tensor& p : seq.parameters()) CHECK(p.grad().defined());
  seq.zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : seq.parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(p.grad().abs().sum().item<double>() == 0);
  }
  seq.zero_grad();
  for (const Tensor& p : seq.parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("nn: apply visits children before their parent") {
  Net net;
  std::vector<std::string> order;
  net.apply([&](nn::Module& m) { order.push_back(m.type_name()); });
  CHECK(order == std::vector<std::string>{"Embedding", "Linear", "MultiheadAttention", "Linear", "Block", "Linear",
                                          "MultiheadAttention", "Linear", "Block", "ModuleList", "Net"});
  // The usual use: re-initialise every Linear.
  net.apply([](nn::Module& m) {
    if (auto* lin = dynamic_cast<nn::Linear*>(&m)) nn::init::zeros_(lin->weight);
  });
  auto* block = dynamic_cast<Block*>((*net.blocks)[0].get());
  REQUIRE(block != nullptr);
  CHECK(block->fc->weight.abs().sum().item<double>() == 0);
}

TEST_CASE("nn: the repr is PyTorch's, and summary adds the parameter counts") {
  nn::Sequential seq(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::GELU>("tanh"),
                     std::make_shared<nn::Dropout>(0.0), std::make_shared<nn::LayerNorm>(std::vector<int64_t>{8}),
                     std::make_shared<nn::Linear>(8, 2, false));
  CHECK(seq.repr() ==
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): GELU(approximate='tanh')\n"
        "  (2): Dropout(p=0.0, inplace=False)\n"
        "  (3): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "  (4): Linear(in_features=8, out_features=2, bias=False)\n"
        ")");
  CHECK(seq.summary() == seq.repr() +
                             "\n  0.weight  (8, 4)  32"
                             "\n  0.bias    (8,)     8"
                             "\n  3.weight  (8,)     8"
                             "\n  3.bias    (8,)     8"
                             "\n  4.weight  (2, 8)  16"
                             "\nTotal parameters: 72\nTrainable parameters: 72");
  // A frozen parameter is marked and left out of the trainable count.
  seq.named_parameters()[1].second.requires_grad_(false);
  CHECK(seq.summary().find("\n  0.bias    (8,)     8  frozen\n") != std::string::npos);
  CHECK(seq.summary().ends_with("\nTotal parameters: 72\nTrainable parameters: 64"));
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.1, "gelu");
  CHECK(layer.repr() ==
        "TransformerEncoderLayer(\n"
        "  (self_attn): MultiheadAttention(\n"
        "    (out_proj): Linear(in_features=8, out_features=8, bias=True)\n"
        "  )\n"
        "  (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
        "  (dropout): Dropout(p=0.1, inplace=False)\n"
        "  (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
        "  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "  (dropout1): Dropout(p=0.1, inplace=False)\n"
        "  (dropout2): Dropout(p=0.1, inplace=False)\n"
        ")");
  CHECK(nn::Embedding(10, 3, 0).repr() == "Embedding(10, 3, padding_idx=0)");
  CHECK(nn::RMSNorm({2, 3}).repr() == "RMSNorm((2, 3), eps=None, elementwise_affine=True)");
  CHECK(nn::Softmax(-1).repr() == "Softmax(dim=-1)");
  CHECK(nn::ReLU().repr() == "ReLU()");
  std::ostringstream os;
  os << nn::SiLU();
  CHECK(os.str() == "SiLU()");
}

TEST_CASE("nn: bad registrations and bad layer arguments are typed errors naming the module") {
  nn::Linear lin(2, 2);
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no ValueError");
  };
  CHECK(message([&] { lin.register_parameter("weight", ones({1})); }).find("'weight' is already registered") !=
        std::string::npos);
  CHECK(message([&] { lin.register_buffer("a.b", ones({1})); }).find("Linear.register_buffer") != std::string::npos);
  CHECK_THROWS_AS(lin.register_module("", std::make_shared<nn::ReLU>()), ValueError);
  CHECK_THROWS_AS(lin.register_module("bias", std::make_shared<nn::ReLU>()), ValueError);
  CHECK_THROWS_AS(lin.register_module("relu", std::shared_ptr<nn::ReLU>()), ValueError);
  // A cycle is refused: a module inside itself, directly or through a child.
  auto outer = std::make_shared<nn::Sequential>();
  auto inner = std::make_shared<nn::Sequential>();
  outer->push_back(inner);
  CHECK_THROWS_AS(inner->push_back(outer), ValueError);
  CHECK_THROWS_AS(outer->push_back(outer), ValueError);
  CHECK(outer->size() == 1);
  CHECK(inner->size() == 0);
  CHECK_THROWS_AS(lin.register_parameter("steps", zeros({1}, DType::Int64)), TypeError);
  CHECK(lin.named_parameters().size() == 2);  // the failed registrations left nothing behind

  CHECK(message([] { nn::Linear(-1, 4); }).find("Linear: in_features must be non-negative, got -1") !=
        std::string::npos);
  CHECK_NOTHROW(nn::Linear(0, 4));  // as PyTorch's
  CHECK_THROWS_AS(nn::Embedding(4, -2), ValueError);
  CHECK_THROWS_AS(nn::Embedding(4, 2, 4), ValueError);
  CHECK(nn::Embedding(4, 2, -1).padding_idx == 3);
  CHECK_THROWS_AS(nn::LayerNorm({-3}), ValueError);
  CHECK_THROWS_AS(nn::Dropout(1.5), ValueError);
  CHECK_THROWS_AS(nn::GELU("fast"), ValueError);
  CHECK(message([] { nn::MultiheadAttention(10, 3); }).find("embed_dim 10 must be divisible by num_heads 3") !=
        std::string::npos);
  CHECK_THROWS_AS(nn::MultiheadAttention(8, 0), ValueError);
  CHECK_THROWS_AS(nn::TransformerEncoderLayer(8, 2, 16, 0.1, "tanh"), ValueError);
  CHECK_THROWS_AS(nn::ModuleList().forward(ones({1})), NotImplementedError);
  nn::Sequential seq(std::make_shared<nn::ReLU>());
  CHECK_THROWS_AS(seq[1], IndexError);
  CHECK(seq[-1]->type_name() == "ReLU");
  nn::ModuleDict dict{{"act", std::make_shared<nn::ReLU>()}};
  CHECK(dict.contains("act"));
  CHECK(dict.keys() == std::vector<std::string>{"act"});
  CHECK_THROWS_AS(dict["missing"], ValueError);
  CHECK_THROWS_AS(dict.insert("act", std::make_shared<nn::Tanh>()), ValueError);
}

TEST_CASE("nn: an optimizer made before to() steps the converted parameters") {
  nn::Linear lin(3, 2);
  optim::SGD opt(lin.parameters(), optim::SGDOptions{.lr = 0.1});
  lin.to(DType::Float64);
  const Tensor before = lin.weight.detach().clone();
  lin.forward(randn({4, 3}, DType::Float64)).sum().backward();
  opt.step();
  CHECK(lin.weight.dtype() == DType::Float64);
  CHECK(lin.weight.grad().dtype() == DType::Float64);
  CHECK(lin.weight.allclose(before - lin.weight.grad() * 0.1));
  CHECK_FALSE(lin.weight.allclose(before));
}
