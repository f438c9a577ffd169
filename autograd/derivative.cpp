// Recording one operator call (see derivative.h): edges from the inputs' histories, the saved
// arguments, the in-place checks, and the node attached to the outputs.
#include "anatomy/autograd/derivative.h"

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/anomaly_mode.h"
#include "anatomy/autograd/copy_slices.h"

namespace anatomy::autograd::detail {
namespace {

bool is_differentiable_dtype(DType t) { return is_floating(t); }

}  // namespace

Recorder::Recorder(const DerivativeEntry& entry, const dispatch::OperatorHandle& op, dispatch::Stack&& args,
                   bool view_op, bool multi)
    : entry_(entry), op_(op), args_(std::move(args)), view_op_(view_op), multi_(multi) {
  const dispatch::Schema& schema = op.schema();
  ANATOMY_CHECK(entry.formula != nullptr, NotImplementedError,
                "{}: the derivative is not implemented, and an input requires grad", schema.full_name());
  for (size_t i = 0; i < schema.arguments.size(); ++i) {
    const auto& alias = schema.arguments[i].alias;
    if (alias && alias->is_write) mutated_arg_ = static_cast<int>(i);
  }
  if (mutated_arg_ >= 0) {
    const Tensor& self = args_[mutated_arg_].get<Tensor>();
    ANATOMY_CHECK(!schema.returns.empty() && schema.returns[0].alias && mutated_arg_ == 0, NotImplementedError,
                  "{}: functions with out= arguments don't support automatic differentiation, but one of the "
                  "arguments requires grad",
                  schema.full_name());
    const AutogradMeta* m = meta_or_null(self);
    if (m && m->view_info_) {
      check_inplace_on_view(*m, schema.full_name());
      mutates_view_ = true;
    }
    ANATOMY_CHECK(!(m && m->requires_grad_ && !m->grad_fn_), ValueError,
                  "{}: a leaf tensor that requires grad is being used in an in-place operation", schema.full_name());
  }
  saved_.resize(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) {
    SavedArg& a = saved_[i];
    const bool keep = (entry.save_args >> i) & 1;
    auto add_tensor = [&](const Tensor& t) {
      if (a.first_slot < 0) a.first_slot = static_cast<int>(edges_.size());
      edges_.push_back(gradient_edge(t));
      a.infos.push_back(t.defined() ? OutputInfo{DimVector(t.sizes()), t.dtype(), t.device()} : OutputInfo{});
      if (!keep) return;
      // An in-place op overwrites its input: keep the value it had. The copy is recorded
      // (CloneBackward0 into the old history), so double backward through it still works.
      if (static_cast<int>(i) == mutated_arg_) {
        a.tensors.emplace_back(t.clone(), false);
      } else if (mutated_arg_ >= 0 && t.defined() && t.is_alias_of(args_[mutated_arg_].get<Tensor>())) {
        // Another operand aliasing the tensor this op writes (v.mul_(v), v.mul_(base)): the
        // write makes it stale, so backward raises the version error whatever is kept. Kept as
        // a detached alias (as a saved output is): holding it with its history would make a
        // cycle once that history leads back here (its grad_fn, or a CopySlices around this node).
        check_saveable(t, schema.full_name());
        a.tensors.emplace_back(t, /*is_output=*/true);
      } else {
        check_saveable(t, schema.full_name());
        a.tensors.emplace_back(t, false);
      }
    };
    dispatch::IValue& v = args_[i];
    if (v.is<Tensor>()) {
      a.is_tensor = true;
      add_tensor(v.get<Tensor>());
    } else if (v.is<std::vector<Tensor>>()) {
      a.is_tensor = true;
      for (const Tensor& t : v.get<std::vector<Tensor>>()) add_tensor(t);
    } else if (v.is_none() && schema.arguments[i].type == dispatch::ArgType::OptionalTensor) {
      a.is_tensor = true;
      add_tensor(Tensor());
    } else {
      a.value = v;
    }
  }
}

void Recorder::finish(dispatch::Stack&& outputs) {
  auto node = IntrusivePtr<FormulaNode>::make(entry_, std::move(edges_), std::move(saved_));
  if (AnomalyMode::is_enabled()) node->set_forward_op(op_.schema().full_name());
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor& out = outputs[j].get<Tensor>();
    node->add_output(out);
    if (!out.defined()) continue;
    if (!is_differentiable_dtype(out.dtype())) {
      // Integer and bool outputs (max.dim's indices, native_dropout's mask) get no history,
      // but a formula may read them.
      if ((entry_.save_outputs >> j) & 1) {
        check_saveable(out, op_.schema().full_name());
        node->save_output(static_cast<int>(j), out);
      }
      continue;
    }
    AutogradMeta& m = meta_of(out);
    if (m.retains_grad_ && m.grad_fn_) m.grad_fn_->remove_retained(&m);
    m.grad_fn_ = IntrusivePtr<Node>(node.get());
    m.output_nr_ = static_cast<uint32_t>(j);
    if (m.retains_grad_) node->add_retained(m.output_nr_, &m);
    if (view_op_) track_view(entry_, args_[0].get<Tensor>(), out, m.output_nr_, multi_);
    // After the history is set: the saved alias must know that the output requires grad.
    if ((entry_.save_outputs >> j) & 1) {
      check_saveable(out, op_.schema().full_name());
      node->save_output(static_cast<int>(j), out);
    }
    if (j == 0 && mutates_view_) rebase_view_history(out, IntrusivePtr<Node>(node.get()));
  }
}

}  // namespace anatomy::autograd::detail
