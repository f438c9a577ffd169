// The autograd kernel of a built-in operator, registered at the Autograd alias key from the
// operator's DerivativeEntry (autograd/formula_node.h):
//
//   ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
//     register_derivative<&kAddTensor, Tensor(const Tensor&, const Tensor&, const Scalar&)>(m, "add.Tensor");
//   }
//
// Note [Autograd kernel fast path]
// Every tensor carries its backend's autograd key, so every call of a differentiable operator
// reaches its autograd kernel. When grad mode is off or no tensor argument requires grad, the
// kernel redispatches below autograd with the typed arguments: a thread-local load, a pointer
// test per tensor, and one indirect call. Only a call that records boxes its arguments
// (Recorder, derivative.cpp), saves what the formula needs, runs the operator below autograd,
// and attaches a FormulaNode to the outputs.
//
// View operators register with register_view_derivative: their outputs get a ViewInfo on
// both paths (Note [View + in-place] in view_info.h), which costs the fast path of views (and
// only of views) one out-of-line call.
#pragma once

#include <tuple>
#include <type_traits>

#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/formula_node.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/core/call_path.h"
#include "anatomy/dispatch/boxing.h"
#include "anatomy/dispatch/dispatcher.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/local_key_set.h"

namespace anatomy::autograd {

namespace detail {

inline bool arg_requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_or_null(t);
  return m != nullptr && m->requires_grad();
}
inline bool arg_requires_grad(const std::optional<Tensor>& t) { return t && arg_requires_grad(*t); }
inline bool arg_requires_grad(TensorList ts) {
  for (const Tensor& t : ts) {
    if (arg_requires_grad(t)) return true;
  }
  return false;
}
template <typename T>
bool arg_requires_grad(const T&) {
  return false;
}

// Collects the edges and saved arguments of a recording call, and attaches the node to the
// outputs (derivative.cpp).
class Recorder {
 public:
  // `view_op`: the operator returns views of its first argument (several when `multi`).
  Recorder(const DerivativeEntry& entry, const dispatch::OperatorHandle& op, dispatch::Stack&& args,
           bool view_op = false, bool multi = false);
  void finish(dispatch::Stack&& outputs);

 private:
  const DerivativeEntry& entry_;
  const dispatch::OperatorHandle& op_;
  dispatch::Stack args_;
  std::vector<Edge> edges_;
  std::vector<SavedArg> saved_;
  int mutated_arg_ = -1;       // the argument an in-place op writes (its output 0)
  bool mutates_view_ = false;  // that argument is a tracked view: its base gets a CopySlices
  bool view_op_ = false;
  bool multi_ = false;
};

// The fast path's view tracking (view_info.h) for one or several outputs.
inline void track_view_outputs(const DerivativeEntry& e, const Tensor& input, const Tensor& out) {
  track_view(e, input, out, 0, false);
}
inline void track_view_outputs(const DerivativeEntry& e, const Tensor& input, const std::vector<Tensor>& outs) {
  for (size_t j = 0; j < outs.size(); ++j) track_view(e, input, outs[j], static_cast<uint32_t>(j), true);
}
template <typename First, typename... Rest>
const First& first_arg(const First& first, const Rest&...) {
  return first;
}

template <typename R>
void box_outputs(dispatch::Stack& s, const R& r) {
  using T = std::remove_cvref_t<R>;
  if constexpr (std::is_same_v<T, Tensor>) {
    s.emplace_back(r);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (const Tensor& t : r) s.emplace_back(t);
  } else {
    std::apply([&](const auto&... x) { (box_outputs(s, x), ...); }, r);
  }
}

}  // namespace detail

// kView: a view operator, whose first argument is the tensor its outputs view.
template <const DerivativeEntry* E, typename Sig, bool kView = false>
struct AutogradKernel;

template <const DerivativeEntry* E, bool kView, typename Ret, typename... Args>
struct AutogradKernel<E, Ret(Args...), kView> {
  static Ret call(DispatchKeySet ks, Args... args) {
    ANATOMY_CALL_PATH_STEP();
    static const auto op = dispatch::Dispatcher::singleton().find_or_throw(E->op).template typed<Ret(Args...)>();
    const DispatchKeySet below = ks & DispatchKeySet::below(DispatchKey::AutogradCPU);
    if (!GradMode::is_enabled() || !(detail::arg_requires_grad(args) || ...)) {
      if constexpr (kView) {
        const Tensor& input = detail::first_arg(args...);
        Ret out = op.redispatch(below, std::forward<Args>(args)...);
        detail::track_view_outputs(*E, input, out);
        return out;
      } else {
        return op.redispatch(below, std::forward<Args>(args)...);
      }
    }
    dispatch::Stack boxed;
    dispatch::box_args(boxed, args...);
    detail::Recorder recorder(*E, op, std::move(boxed), kView, std::is_same_v<Ret, std::vector<Tensor>>);
    Ret out = [&]() -> Ret {
      dispatch::ExcludeDispatchKeyGuard guard(dispatch::kAutogradKeys);
      return op.redispatch(below, std::forward<Args>(args)...);
    }();
    dispatch::Stack outputs;
    detail::box_outputs(outputs, out);
    recorder.finish(std::move(outputs));
    return out;
  }
};

template <const DerivativeEntry* E, typename Sig>
void register_derivative(dispatch::Library& m, const char* name) {
  m.impl(name, dispatch::named_kernel(&AutogradKernel<E, Sig>::call, E->node_name));
}

// For view operators: their outputs are tracked as views of the first argument.
template <const DerivativeEntry* E, typename Sig>
void register_view_derivative(dispatch::Library& m, const char* name) {
  m.impl(name, dispatch::named_kernel(&AutogradKernel<E, Sig, true>::call, E->node_name));
}

}  // namespace anatomy::autograd
