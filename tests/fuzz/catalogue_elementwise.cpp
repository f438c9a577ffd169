// The element-wise operators in the fuzzer's catalogue (catalogue.h), generated from the engine's
// own op lists (core/op_lists.h), so a row added there is fuzzed here: every unary function and
// its in-place form, every binary function with a tensor and with a number, in place too, and the
// hand-written fronts (add and sub with alpha, div's rounding modes, where, clamp, lerp, addcmul,
// addcdiv). The other operand broadcasts mostly (size-1 dims, fewer dims), sometimes not; its
// dtype is self's mostly, else any, so promotion, in-place results that cannot hold the promoted
// dtype, and bool and integer inputs to floating-only functions all come up.
#include "anatomy/core/op_lists.h"
#include "catalogue.h"
#include "generator.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;
using Out = std::vector<Tensor>;

// A shape that broadcasts against self's (mostly): some dims 1, some leading dims dropped.
std::vector<int64_t> broadcast_shape(Gen& g, const SelfInfo& s) {
  if (g.chance(0.1)) return g.shape();
  std::vector<int64_t> shape = s.sizes;
  for (int64_t& v : shape) {
    if (g.chance(0.25)) v = 1;
  }
  const int64_t drop = g.chance(0.3) ? g.uniform(0, static_cast<int64_t>(shape.size())) : 0;
  shape.erase(shape.begin(), shape.begin() + drop);
  if (g.chance(0.05)) shape.insert(shape.begin(), 2);  // a result larger than self (in place: refused)
  return shape;
}

TensorSpec operand(Gen& g, const SelfInfo& s) {
  return g.tensor(g.chance(0.75) ? s.dtype : g.dtype(), broadcast_shape(g, s));
}

void tensor_arg(Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(operand(g, s)); }
void scalar_arg(Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(g.scalar(s.dtype)); }
void no_args(Gen&, const SelfInfo&, std::vector<Arg>&) {}
void tensor_and_scalar(Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
  args.emplace_back(operand(g, s));
  args.emplace_back(g.scalar(s.dtype));
}
void two_tensors_and_scalar(Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
  args.emplace_back(operand(g, s));
  args.emplace_back(operand(g, s));
  args.emplace_back(g.scalar(s.dtype));
}

// A bool condition that broadcasts, then the other branch.
void where_args(Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
  args.emplace_back(g.mask_for(s.sizes));
  args.emplace_back(operand(g, s));
}

std::optional<std::string_view> rounding(int64_t mode) {
  if (mode == 1) return "trunc";
  if (mode == 2) return "floor";
  return std::nullopt;
}

}  // namespace

// clang-format off
// One generated row: its name, signature and kind, and the call on the bound arguments `a`.
#define ANATOMY_FUZZ_ROW(label, sig, kind, call, gen) \
  OpDef{label, sig, kind, true, [](const Bound& a) -> Out { return {call}; }, gen}

// A unary function: fresh and in place.
#define ANATOMY_FUZZ_UNARY(e, name, ...)                                               \
  ANATOMY_FUZZ_ROW(#name, "T", Kind::Fresh, anatomy::name(a.t(0)), no_args),           \
  ANATOMY_FUZZ_ROW(#name "_", "T", Kind::InPlace, anatomy::name##_(a.t(0)), no_args),

// A binary function: with a tensor and with a number, fresh and in place.
#define ANATOMY_FUZZ_BINARY(e, name, ...)                                                          \
  ANATOMY_FUZZ_ROW(#name, "TT", Kind::Fresh, anatomy::name(a.t(0), a.t(1)), tensor_arg),           \
  ANATOMY_FUZZ_ROW(#name "_scalar", "Ts", Kind::Fresh, anatomy::name(a.t(0), a.s(1)), scalar_arg), \
  ANATOMY_FUZZ_ROW(#name "_", "TT", Kind::InPlace, anatomy::name##_(a.t(0), a.t(1)), tensor_arg),  \
  ANATOMY_FUZZ_ROW(#name "_scalar_", "Ts", Kind::InPlace, anatomy::name##_(a.t(0), a.s(1)), scalar_arg),
// clang-format on

std::vector<OpDef> elementwise_ops() {
  std::vector<OpDef> ops = {ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_FUZZ_UNARY)
                                ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_FUZZ_BINARY)};
#undef ANATOMY_FUZZ_UNARY
#undef ANATOMY_FUZZ_BINARY
#undef ANATOMY_FUZZ_ROW
  const std::vector<OpDef> fronts = {
      {"add", "TTs", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::add(a.t(0), a.t(1), a.s(2))}; },
       tensor_and_scalar},
      {"add_", "TTs", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {anatomy::add_(a.t(0), a.t(1), a.s(2))}; }, tensor_and_scalar},
      {"sub", "TTs", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::sub(a.t(0), a.t(1), a.s(2))}; },
       tensor_and_scalar},
      {"sub_", "TTs", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {anatomy::sub_(a.t(0), a.t(1), a.s(2))}; }, tensor_and_scalar},
      {"mul", "TT", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::mul(a.t(0), a.t(1))}; },
       tensor_arg},
      {"mul_", "TT", Kind::InPlace, true, [](const Bound& a) -> Out { return {anatomy::mul_(a.t(0), a.t(1))}; },
       tensor_arg},
      // rounding: 0 none, 1 "trunc", 2 "floor" (anything else: none).
      {"div", "TTi", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::div(a.t(0), a.t(1), rounding(a.i(2)))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(operand(g, s));
         args.emplace_back(g.uniform(0, 2));
       }},
      {"div_", "TTi", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {anatomy::div_(a.t(0), a.t(1), rounding(a.i(2)))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(operand(g, s));
         args.emplace_back(g.uniform(0, 2));
       }},
      {"where", "TTT", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::where(a.t(1), a.t(0), a.t(2))}; }, where_args},
      {"clamp", "Tss", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::clamp(a.t(0), a.s(1), a.s(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.scalar(s.dtype));
         args.emplace_back(g.scalar(s.dtype));
       }},
      {"clamp_", "Tss", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {anatomy::clamp_(a.t(0), a.s(1), a.s(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.scalar(s.dtype));
         args.emplace_back(g.scalar(s.dtype));
       }},
      {"lerp", "TTs", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::lerp(a.t(0), a.t(1), a.s(2))}; },
       tensor_and_scalar},
      {"lerp_", "TTs", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {anatomy::lerp_(a.t(0), a.t(1), a.s(2))}; }, tensor_and_scalar},
      {"addcmul", "TTTs", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::addcmul(a.t(0), a.t(1), a.t(2), a.s(3))}; },
       two_tensors_and_scalar},
      {"addcdiv_", "TTTs", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {anatomy::addcdiv_(a.t(0), a.t(1), a.t(2), a.s(3))}; },
       two_tensors_and_scalar},
  };
  ops.insert(ops.end(), fronts.begin(), fronts.end());
  return ops;
}

}  // namespace anatomy_fuzz
