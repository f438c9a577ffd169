// docs/nn.md's example: it builds, prints its summary (PyTorch's repr, each parameter), and trains; the page
// shows this file's code verbatim, and the char-gpt example's (examples/char_gpt/) likewise.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

namespace {

struct Block : nn::Module {
  std::shared_ptr<nn::LayerNorm> norm =
      register_module("norm", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{64}));
  std::shared_ptr<nn::MultiheadAttention> attn =
      register_module("attn", std::make_shared<nn::MultiheadAttention>(64, 4, 0.0, true, /*batch_first=*/true));
  Tensor& steps = register_buffer("steps", zeros({1}, DType::Int64));
  Block() : Module("Block") {}
  Tensor forward(const Tensor& x) override {
    Tensor h = norm->forward(x);
    return x + attn->forward(h, h, h, {.is_causal = true});
  }
};

std::shared_ptr<nn::Module> make_model(std::ostream& out) {
  auto model = std::make_shared<nn::Sequential>(std::make_shared<Block>(), std::make_shared<nn::Linear>(64, 10));
  out << model->summary() << "\n";  // PyTorch's repr, a line per parameter, the counts
  return model;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("nn: docs/nn.md's example builds, prints and trains") {
  manual_seed(21);
  std::ostringstream text;
  auto model = make_model(text);
  CHECK(text.str() ==
        "Sequential(\n"
        "  (0): Block(\n"
        "    (norm): LayerNorm((64,), eps=1e-05, elementwise_affine=True)\n"
        "    (attn): MultiheadAttention(\n"
        "      (out_proj): Linear(in_features=64, out_features=64, bias=True)\n"
        "    )\n"
        "  )\n"
        "  (1): Linear(in_features=64, out_features=10, bias=True)\n"
        ")\n"
        "  0.norm.weight           (64,)         64\n"
        "  0.norm.bias             (64,)         64\n"
        "  0.attn.in_proj_weight   (192, 64)  12288\n"
        "  0.attn.in_proj_bias     (192,)       192\n"
        "  0.attn.out_proj.weight  (64, 64)    4096\n"
        "  0.attn.out_proj.bias    (64,)         64\n"
        "  1.weight                (10, 64)     640\n"
        "  1.bias                  (10,)         10\n"
        "Total parameters: 17418\n"
        "Trainable parameters: 17418\n");
  optim::AdamW opt(model->parameters(), {.lr = 1e-2});
  const Tensor x = randn({2, 5, 64});
  const Tensor target = randn({2, 5, 10});
  double first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    opt.zero_grad();
    const Tensor d = model->forward(x) - target;
    Tensor loss = (d * d).mean();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  CHECK(last < first);
}

TEST_CASE("nn: docs/nn.md's example is this file's code, verbatim") {
  const std::string root = ANATOMY_SOURCE_DIR;  // set by tests/CMakeLists.txt
  const std::string source = read(root + "/tests/nn/test_nn_doc.cpp");
  const std::string doc = read(root + "/docs/nn.md");
  const std::string marker = "<!-- excerpt: tests/nn/test_nn_doc.cpp -->\n```cpp\n";
  size_t start = doc.find(marker);
  REQUIRE_MESSAGE(start != std::string::npos, "docs/nn.md lacks the example's marker");
  start += marker.size();
  const size_t end = doc.find("```\n", start);
  REQUIRE(end != std::string::npos);
  const std::string block = doc.substr(start, end - start);
  CHECK(block.find("struct Block") != std::string::npos);
  CHECK_MESSAGE(source.find(block) != std::string::npos,
                "the example in docs/nn.md is not an excerpt of tests/nn/test_nn_doc.cpp");
}

TEST_CASE("nn: docs/nn.md's char-gpt excerpts are the example's code, verbatim") {
  const std::string root = ANATOMY_SOURCE_DIR;
  const std::string doc = read(root + "/docs/nn.md");
  // Each "<!-- excerpt: examples/char_gpt/<file> -->" marker is followed by a ```cpp block that
  // the file holds as it is.
  const std::string opening = "<!-- excerpt: ", marker = opening + "examples/char_gpt/", closing = " -->\n```cpp\n";
  int blocks = 0;
  for (size_t at = doc.find(marker); at != std::string::npos; at = doc.find(marker, at + 1)) {
    const size_t name_end = doc.find(closing, at);
    REQUIRE(name_end != std::string::npos);
    const std::string file = doc.substr(at + opening.size(), name_end - at - opening.size());
    const size_t start = name_end + closing.size();
    const size_t end = doc.find("```\n", start);
    REQUIRE(end != std::string::npos);
    const std::string block = doc.substr(start, end - start);
    CHECK_MESSAGE(read(root + "/" + file).find(block) != std::string::npos,
                  "the excerpt of " << file << " in docs/nn.md is not in the file:\n"
                                    << block);
    ++blocks;
  }
  CHECK(blocks >= 3);
}
