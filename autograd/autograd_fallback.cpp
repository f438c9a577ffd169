// The autograd fallback (Note [Autograd fallback] in autograd_fallback.h), registered for the
// four autograd keys, and autograd's warning handler.
#include "anatomy/autograd/autograd_fallback.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "anatomy/autograd/derivative.h"

namespace anatomy::autograd {
namespace {

std::mutex& warning_mutex() {
  static auto* m = new std::mutex();  // leaked: warnings may come from static destructors
  return *m;
}
WarningHandler& warning_handler() {
  static auto* h = new WarningHandler();
  return *h;
}

void warn(const std::string& message) {
  WarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(warning_mutex());
    handler = warning_handler();
  }
  if (handler) {
    handler(message);
  } else {
    std::fprintf(stderr, "anatomy: warning: %s\n", message.c_str());
  }
}

std::string namespace_of(const std::string& op) { return op.substr(0, op.find("::")); }

variable_list not_implemented_formula(BackwardContext& ctx, const variable_list&) {
  const std::string op = ctx.entry().op;
  ANATOMY_THROW(NotImplementedError,
                "{}: backward reached an operator that has no autograd kernel, so its derivative is unknown. "
                "Register one at its Autograd key (ANATOMY_LIBRARY_IMPL({}, Autograd, m)), or write the operation "
                "as an autograd::Function",
                op, namespace_of(op));
}

// The entry of each operator that reached the fallback while recording: its node's name, and
// the formula that raises. Kept for the life of the process (nodes refer to them).
struct FallbackEntry {
  std::string op;
  std::string node_name;
  DerivativeEntry entry{};
};

const DerivativeEntry& entry_for(const dispatch::OperatorHandle& op) {
  static std::mutex mutex;
  static auto* entries = new std::unordered_map<const dispatch::OperatorEntry*, std::unique_ptr<FallbackEntry>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*entries)[&op.entry()];
  if (!slot) {
    slot = std::make_unique<FallbackEntry>();
    slot->op = op.name();
    slot->node_name = fmt::format("NotImplemented({})", op.name());
    slot->entry = DerivativeEntry{slot->op.c_str(), slot->node_name.c_str(), 0, 0, &not_implemented_formula};
  }
  return slot->entry;
}

void warn_once(const std::string& op) {
  static std::mutex mutex;
  static auto* warned = new std::unordered_set<std::string>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!warned->insert(op).second) return;
  }
  warn(fmt::format(
      "{}: an input requires grad, but the operator has no autograd kernel: its result gets a NotImplemented node, "
      "and backward through it raises. Register a derivative at its Autograd key "
      "(ANATOMY_LIBRARY_IMPL({}, Autograd, m)), write it as an autograd::Function, or, if it is not differentiable, "
      "make that key a fallthrough (m.impl_fallthrough). This warning is shown once per operator.",
      op, namespace_of(op)));
}

bool requires_grad(const dispatch::IValue& v) {
  if (v.is<Tensor>()) return detail::arg_requires_grad(v.get<Tensor>());
  if (v.is<std::vector<Tensor>>()) return detail::arg_requires_grad(TensorList(v.get<std::vector<Tensor>>()));
  return false;
}

void autograd_fallback(const dispatch::OperatorHandle& op, DispatchKeySet ks, dispatch::Stack& stack, void*) {
  const DispatchKeySet below = ks & DispatchKeySet::below(DispatchKey::AutogradCPU);
  const dispatch::Schema& schema = op.schema();
  const auto first_arg = static_cast<std::ptrdiff_t>(stack.size() - schema.arguments.size());
  bool records = false;
  if (GradMode::is_enabled()) {
    for (auto it = stack.begin() + first_arg; it != stack.end() && !records; ++it) records = requires_grad(*it);
  }
  if (!records) {
    op.redispatch_boxed(below, stack);
    return;
  }
  detail::Recorder recorder(entry_for(op), op, dispatch::Stack(stack.begin() + first_arg, stack.end()));
  {
    dispatch::ExcludeDispatchKeyGuard guard(dispatch::kAutogradKeys);
    op.redispatch_boxed(below, stack);
  }
  dispatch::Stack outputs;
  bool differentiable = false;
  auto add = [&](const Tensor& t) {
    if (!t.defined()) return;
    outputs.emplace_back(t);
    differentiable = differentiable || is_floating(t.dtype());
  };
  for (auto it = stack.end() - static_cast<std::ptrdiff_t>(schema.returns.size()); it != stack.end(); ++it) {
    if (it->is<Tensor>()) add(it->get<Tensor>());
    if (it->is<std::vector<Tensor>>()) {
      for (const Tensor& t : it->get<std::vector<Tensor>>()) add(t);
    }
  }
  if (!differentiable) return;
  warn_once(op.name());
  recorder.finish(std::move(outputs));
}

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(warning_mutex());
  WarningHandler previous = std::move(warning_handler());
  warning_handler() = std::move(handler);
  return previous;
}

ANATOMY_LIBRARY_IMPL(_, AutogradCPU, m) { m.fallback(&autograd_fallback, "autograd_fallback"); }
ANATOMY_LIBRARY_IMPL(_, AutogradCUDA, m) { m.fallback(&autograd_fallback, "autograd_fallback"); }
ANATOMY_LIBRARY_IMPL(_, AutogradMeta, m) { m.fallback(&autograd_fallback, "autograd_fallback"); }
ANATOMY_LIBRARY_IMPL(_, AutogradPrivateUse1, m) { m.fallback(&autograd_fallback, "autograd_fallback"); }

}  // namespace anatomy::autograd
