// Printing: PyTorch-like value pictures (operator<<, fmt "{}", to_string) and the layout report
// `describe`.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;

namespace {

std::string streamed(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// Restores the global print options when a test ends, even on failure.
struct PrintOptionsGuard {
  PrintOptions saved = print_options();
  ~PrintOptionsGuard() { set_print_options(saved); }
};

}  // namespace

TEST_CASE("print: integer tensors") {
  CHECK(to_string(arange(6).view({2, 3})) == "tensor([[0, 1, 2],\n        [3, 4, 5]])");
  CHECK(to_string(tensor({-5, 10, 100})) == "tensor([ -5,  10, 100])");
  CHECK(to_string(arange(3, DType::Int32)) == "tensor([0, 1, 2], dtype=int32)");
  CHECK(to_string(tensor({-1, 2}, DType::Int8)) == "tensor([-1,  2], dtype=int8)");
  CHECK(to_string(tensor({255, 0}, DType::UInt8)) == "tensor([255,   0], dtype=uint8)");
  CHECK(to_string(arange(8).view({2, 2, 2})) ==
        "tensor([[[0, 1],\n"
        "         [2, 3]],\n"
        "\n"
        "        [[4, 5],\n"
        "         [6, 7]]])");
  // A non-contiguous view prints its logical values.
  CHECK(to_string(arange(6).view({2, 3}).t()) == "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])");
  CHECK(to_string(arange(10).slice(0, 1, 10, 4)) == "tensor([1, 5, 9])");
}

TEST_CASE("print: floating tensors") {
  CHECK(to_string(tensor({1.0, 2.5, -3.0})) == "tensor([ 1.0000,  2.5000, -3.0000])");
  CHECK(to_string(tensor({1.0, 2.0, 3.0})) == "tensor([1., 2., 3.])");
  CHECK(to_string(tensor({-1.0, 2.0})) == "tensor([-1.,  2.])");
  CHECK(to_string(tensor({{0.5, 1.0}, {1.5, 2.0}})) == "tensor([[0.5000, 1.0000],\n        [1.5000, 2.0000]])");
  CHECK(to_string(tensor({0.1, 0.25}, DType::Float64)) == "tensor([0.1000, 0.2500], dtype=fp64)");
  // Scientific notation when the magnitudes are far apart, very small or very large.
  CHECK(to_string(tensor({1e-5, 1.0}, DType::Float64)) == "tensor([1.0000e-05, 1.0000e+00], dtype=fp64)");
  CHECK(to_string(tensor({123456.5, 1.5})) == "tensor([1.2346e+05, 1.5000e+00])");
  CHECK(to_string(tensor({0.0, 1e9})) == "tensor([0.0000e+00, 1.0000e+09])");
  // Non-finite values.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(to_string(tensor({nan, 1.5})) == "tensor([   nan, 1.5000])");
  CHECK(to_string(tensor({-inf, 0.5})) == "tensor([  -inf, 0.5000])");
  CHECK(to_string(tensor({nan, inf})) == "tensor([nan, inf])");
}

TEST_CASE("print: all-integer floats with a wide range use scientific notation, as PyTorch") {
  // Known deviation: PyTorch's int_mode also switches to scientific notation when the largest
  // nonzero magnitude is over 1000 times the smallest (torch.tensor([1., 2000.]) prints
  // "tensor([1.0000e+00, 2.0000e+03])"); anatomy prints "tensor([   1., 2000.])".
  CHECK(to_string(tensor({1.0, 2000.0})) == "tensor([1.0000e+00, 2.0000e+03])");
}

TEST_CASE("print: bool, fp16 and bf16 tensors") {
  CHECK(to_string(tensor({true, false})) == "tensor([ True, False])");
  CHECK(to_string(tensor({true, true}).view({2, 1})) == "tensor([[True],\n        [True]])");
  CHECK(to_string(tensor({1.5, 2.0}, DType::Float16)) == "tensor([1.5000, 2.0000], dtype=fp16)");
  CHECK(to_string(tensor({1.0, 2.0}, DType::Float16)) == "tensor([1., 2.], dtype=fp16)");
  // fp16 0.1 is 0.0999755859375, which rounds to 0.1000 at four digits.
  CHECK(to_string(tensor({0.1, -0.1}, DType::Float16)) == "tensor([ 0.1000, -0.1000], dtype=fp16)");
  CHECK(to_string(tensor({1.0, 2.0}, DType::BFloat16)) == "tensor([1., 2.], dtype=bf16)");
  CHECK(to_string(arange(4, DType::Float16).view({2, 2})) == "tensor([[0., 1.],\n        [2., 3.]], dtype=fp16)");
}

TEST_CASE("print: 0-dim, empty, undefined and meta tensors") {
  CHECK(to_string(scalar_tensor(3.5)) == "tensor(3.5000)");
  CHECK(to_string(scalar_tensor(7)) == "tensor(7)");
  CHECK(to_string(scalar_tensor(true)) == "tensor(True)");
  CHECK(to_string(scalar_tensor(2.0, DType::Float16)) == "tensor(2., dtype=fp16)");
  CHECK(to_string(arange(6).view({2, 3})[1][2]) == "tensor(5)");

  CHECK(to_string(zeros({0})) == "tensor([])");
  CHECK(to_string(zeros({2, 0})) == "tensor([], size=(2, 0))");
  CHECK(to_string(zeros({0}, DType::Int32)) == "tensor([], dtype=int32)");
  CHECK(to_string(zeros({0, 3}, DType::Float16)) == "tensor([], size=(0, 3), dtype=fp16)");

  CHECK(to_string(Tensor()) == "tensor(undefined)");

  Tensor meta = empty({2, 3}, Device("meta"));
  std::string m = to_string(meta);
  CHECK(m.rfind("tensor(...", 0) == 0);
  CHECK(m.find("size=(2, 3)") != std::string::npos);
  CHECK(m.find("device='meta'") != std::string::npos);
  CHECK(m.back() == ')');
  CHECK(to_string(empty({4}, TensorOptions().device(Device("meta")).dtype(DType::Float16))).find("fp16") !=
        std::string::npos);
}

TEST_CASE("print: requires_grad suffix") {
  Tensor t = tensor({1.0, 2.0});
  t.requires_grad_();
  CHECK(to_string(t) == "tensor([1., 2.], requires_grad=True)");
  Tensor h = tensor({0.5}, DType::Float16).requires_grad_();
  CHECK(to_string(h) == "tensor([0.5000], dtype=fp16, requires_grad=True)");
  t.requires_grad_(false);
  CHECK(to_string(t) == "tensor([1., 2.])");
}

TEST_CASE("print: operator<< and fmt::format give the same text as to_string") {
  for (const Tensor& t : {arange(6).view({2, 3}), tensor({1.5, -2.0}), tensor({true}), scalar_tensor(1.25),
                          zeros({0, 2}), tensor({1.0, 2.0}, DType::Float16), arange(3000)}) {
    const std::string s = to_string(t);
    CHECK(streamed(t) == s);
    CHECK(fmt::format("{}", t) == s);
  }
  CHECK(fmt::format("x = {}!", tensor({1, 2})) == "x = tensor([1, 2])!");
}

TEST_CASE("print: large tensors are summarized with ...") {
  const std::string s = to_string(arange(2000));
  CHECK(s.find("...") != std::string::npos);
  CHECK(s.rfind("tensor([   0,    1,    2,", 0) == 0);
  CHECK(s.find("1997, 1998, 1999])") != std::string::npos);
  CHECK(s.find("   3,") == std::string::npos);
  CHECK(s.size() < 80);
  // At the threshold (1000 elements) nothing is left out; one more and the middle goes.
  CHECK(to_string(arange(1000)).find("...") == std::string::npos);
  CHECK(to_string(arange(1001)).find("...") != std::string::npos);

  // 2-D: rows and columns are both summarized; the row gap is a line of its own.
  const std::string m = to_string(zeros({100, 100}, DType::Int64));
  CHECK(m.rfind("tensor([[0, 0, 0,", 0) == 0);
  CHECK(m.find("\n        ...,\n") != std::string::npos);
  size_t lines = 1;
  for (char c : m) lines += c == '\n';
  CHECK(lines == 7);

  // The threshold is a print option.
  PrintOptionsGuard guard;
  PrintOptions o = print_options();
  o.threshold = 5;
  o.edgeitems = 2;
  set_print_options(o);
  CHECK(to_string(arange(6)).find("...") != std::string::npos);
  CHECK(to_string(arange(5)) == "tensor([0, 1, 2, 3, 4])");
}

TEST_CASE("print: the summarized gap matches PyTorch's spacing") {
  // Known deviation: PyTorch writes the 1-D gap as " ..." after ", ", i.e. "2,  ..., 1997";
  // anatomy writes "2, ..., 1997".
  CHECK(to_string(arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
}

TEST_CASE("print: precision is a print option") {
  PrintOptionsGuard guard;
  PrintOptions o = print_options();
  o.precision = 2;
  set_print_options(o);
  CHECK(to_string(tensor({1.2345, -0.5})) == "tensor([ 1.23, -0.50])");
  o.precision = 6;
  set_print_options(o);
  CHECK(to_string(tensor({0.125}, DType::Float64)) == "tensor([0.125000], dtype=fp64)");
}

TEST_CASE("print: describe() of a sliced fp16 view matches the layout report format") {
  // The 8x8 analogue of the seed's sliced_offset_view: A[:, 1:] of a (2048, 2048) fp16 matrix.
  Tensor a = zeros({8, 8}, DType::Float16);
  Tensor v = a.slice(1, 1);
  CHECK(describe(v) ==
        "  shape          : (8, 7)\n"
        "  dtype          : torch.float16\n"
        "  device         : cpu\n"
        "  is_contiguous  : no\n"
        "  strides        : (8, 1)\n"
        "  storage_offset : 1\n"
        "  offset_bytes   : 2  (mod 128 = 2)\n");
  CHECK(describe(a) ==
        "  shape          : (8, 8)\n"
        "  dtype          : torch.float16\n"
        "  device         : cpu\n"
        "  is_contiguous  : yes\n"
        "  strides        : (8, 1)\n"
        "  storage_offset : 0\n"
        "  offset_bytes   : 0  (mod 128 = 0)\n");
  CHECK(describe(a.t()).find("  strides        : (1, 8)\n") != std::string::npos);
  CHECK(describe(a.t()).find("  is_contiguous  : no\n") != std::string::npos);
  // The offset in bytes and its remainder modulo 128 (a 128-byte line).
  Tensor rows = zeros({8, 80}, DType::Float16).slice(0, 1);
  CHECK(describe(rows).find("  offset_bytes   : 160  (mod 128 = 32)\n") != std::string::npos);
  CHECK(describe(rows).find("  storage_offset : 80\n") != std::string::npos);
  Tensor f = zeros({10}, DType::Float64).slice(0, 3);
  CHECK(describe(f).find("  offset_bytes   : 24  (mod 128 = 24)\n") != std::string::npos);
  CHECK(describe(f).find("  shape          : (7,)\n") != std::string::npos);
  CHECK(describe(scalar_tensor(1.0)).find("  shape          : ()\n") != std::string::npos);
  CHECK(describe(scalar_tensor(1.0)).find("  strides        : ()\n") != std::string::npos);
  CHECK(describe(empty({2}, Device("meta"))).find("  device         : meta\n") != std::string::npos);
}

TEST_CASE("print: shape_string prints Python tuples") {
  CHECK(shape_string({}) == "()");
  CHECK(shape_string({5}) == "(5,)");
  CHECK(shape_string({2, 3}) == "(2, 3)");
  CHECK(shape_string({2048, 2047}) == "(2048, 2047)");
  CHECK(shape_string({0, 1, 2}) == "(0, 1, 2)");
}
