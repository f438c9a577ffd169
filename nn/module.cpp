// nn::Module (see module.h): registration, the dotted-name listings, mode, conversions,
// state_dict loading and PyTorch's repr.
#include "anatomy/nn/module.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace anatomy::nn {

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

Tensor Module::forward(const Tensor& /*input*/) {
  ANATOMY_THROW(NotImplementedError, "{}: this module has no forward taking one tensor", type_name_);
}

void Module::check_new_name(const std::string& name, const char* what) const {
  ANATOMY_CHECK(!name.empty(), ValueError, "{}.register_{}: the name must not be empty", type_name_, what);
  ANATOMY_CHECK(name.find('.') == std::string::npos, ValueError, "{}.register_{}: the name '{}' must not contain '.'",
                type_name_, what, name);
  auto taken = [&](const auto& list) {
    for (const auto& entry : list) {
      if constexpr (std::is_same_v<std::decay_t<decltype(entry)>, Slot>) {
        if (entry.name == name) return true;
      } else if (entry.first == name) {
        return true;
      }
    }
    return false;
  };
  ANATOMY_CHECK(!taken(parameters_) && !taken(buffers_) && !taken(children_), ValueError,
                "{}.register_{}: the name '{}' is already registered", type_name_, what, name);
}

Tensor& Module::register_parameter(const std::string& name, const Tensor& tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  Tensor param;
  if (tensor.defined()) {
    ANATOMY_CHECK(!requires_grad || tensor.is_floating_point(), TypeError,
                  "{}.register_parameter: '{}' is {}, only floating tensors can require grad", type_name_, name,
                  anatomy::name(tensor.dtype()));
    // A leaf that already has the wanted requires_grad is kept as it is, so two modules can
    // share (tie) one parameter; anything else is detached into a new leaf.
    if (tensor.is_leaf() && tensor.requires_grad() == requires_grad) {
      param = tensor;
    } else {
      param = tensor.detach();
      param.requires_grad_(requires_grad);
    }
  }
  parameters_.push_back({name, param, true});
  return parameters_.back().tensor;
}

Tensor& Module::register_buffer(const std::string& name, const Tensor& tensor, bool persistent) {
  check_new_name(name, "buffer");
  buffers_.push_back({name, tensor, persistent});
  return buffers_.back().tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "module");
  ANATOMY_CHECK(module != nullptr, ValueError, "{}.register_module: the module '{}' is null", type_name_, name);
  // A cycle would make every walk of the tree endless.
  for (const auto& [_, m] : module->named_modules()) {
    ANATOMY_CHECK(m != this, ValueError, "{}.register_module: '{}' is this module or contains it", type_name_, name);
  }
  children_.emplace_back(name, std::move(module));
}

const std::shared_ptr<Module>& Module::child(const std::string& name) const {
  for (const auto& [key, module] : children_) {
    if (key == name) return module;
  }
  ANATOMY_THROW(ValueError, "{}: no submodule named '{}'", type_name_, name);
}

// ---- listings ----

namespace {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out;
  std::set<const Module*> seen;
  std::function<void(const std::string&, Module*)> visit = [&](const std::string& prefix, Module* m) {
    if (!seen.insert(m).second) return;
    out.emplace_back(prefix, m);
    for (const auto& [name, child] : m->children_) visit(join(prefix, name), child.get());
  };
  visit("", this);
  return out;
}

NamedTensors Module::named_slots(bool recurse, std::deque<Slot> Module::*list) const {
  NamedTensors out;
  auto* self = const_cast<Module*>(this);  // named_modules only reads
  for (const auto& [prefix, m] : recurse ? self->named_modules() : decltype(self->named_modules()){{"", self}}) {
    for (const Slot& slot : m->*list) {
      if (!slot.tensor.defined()) continue;
      bool repeated = false;  // a tensor registered twice is listed once, as PyTorch's
      for (const auto& [_, t] : out) repeated = repeated || t.is_same(slot.tensor);
      if (!repeated) out.emplace_back(join(prefix, slot.name), slot.tensor);
    }
  }
  return out;
}

NamedTensors Module::named_parameters(bool recurse) const { return named_slots(recurse, &Module::parameters_); }

NamedTensors Module::named_buffers(bool recurse) const { return named_slots(recurse, &Module::buffers_); }

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [_, m] : children_) out.push_back(m);
  return out;
}

int64_t Module::num_parameters(bool trainable_only) const {
  int64_t count = 0;
  for (const auto& [_, t] : named_parameters()) {
    if (!trainable_only || t.requires_grad()) count += t.numel();
  }
  return count;
}

// ---- mode, conversions, gradients ----

Module& Module::train(bool on) {
  for (auto& [_, m] : named_modules()) m->training_ = on;
  return *this;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [_, child] : children_) child->apply(fn);
  fn(*this);
  return *this;
}

void Module::convert(std::optional<Device> device, std::optional<DType> dtype) {
  auto target = [&](const Tensor& t) {
    // PyTorch's module.to(dtype) leaves integer and bool tensors alone.
    const bool cast = dtype.has_value() && (t.is_floating_point());
    return std::pair{device.value_or(t.device()), cast ? *dtype : t.dtype()};
  };
  // Every conversion is made before any tensor takes its new data, so a failed one (out of
  // memory on the device) changes nothing. A tensor registered in several slots is converted once.
  struct Staged {
    Tensor tensor, data, grad;
  };
  std::vector<Staged> staged;
  auto stage = [&](const Tensor& t, bool is_parameter) {
    if (!t.defined()) return;
    auto [dev, dt] = target(t);
    if (dev == t.device() && dt == t.dtype()) return;
    for (const Staged& s : staged) {
      if (s.tensor.is_same(t)) return;
    }
    Staged s{t, t.detach().to(dev, dt), Tensor()};
    if (Tensor g = t.grad(); is_parameter && g.defined()) s.grad = g.detach().to(dev, dt);
    staged.push_back(std::move(s));
  };
  autograd::NoGradGuard no_grad;
  for (auto& [_, m] : named_modules()) {
    for (Slot& slot : m->parameters_) stage(slot.tensor, true);
    for (Slot& slot : m->buffers_) stage(slot.tensor, false);
  }
  for (Staged& s : staged) {
    s.tensor.set_data(s.data);
    if (s.grad.defined()) s.tensor.set_grad(s.grad);
  }
}

Module& Module::to(Device device) {
  convert(device, std::nullopt);
  return *this;
}

Module& Module::to(DType dtype) {
  ANATOMY_CHECK(is_floating(dtype), TypeError, "{}.to: only floating dtypes are accepted, got {}", type_name_,
                name(dtype));
  convert(std::nullopt, dtype);
  return *this;
}

Module& Module::to(Device device, DType dtype) {
  ANATOMY_CHECK(is_floating(dtype), TypeError, "{}.to: only floating dtypes are accepted, got {}", type_name_,
                name(dtype));
  convert(device, dtype);
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters()) {
    if (set_to_none) {
      p.set_grad(Tensor());
    } else if (Tensor g = p.grad(); g.defined()) {
      g.zero_();
    }
  }
}

// ---- state ----

void Module::collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out) {
  for (Slot& slot : parameters_) {
    if (slot.tensor.defined()) out.emplace_back(join(prefix, slot.name), &slot.tensor);
  }
  for (Slot& slot : buffers_) {
    if (slot.tensor.defined() && slot.persistent) out.emplace_back(join(prefix, slot.name), &slot.tensor);
  }
  for (const auto& [name, child] : children_) child->collect_state(join(prefix, name), out);
}

StateDict Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor*>> slots;
  const_cast<Module*>(this)->collect_state("", slots);  // only reads the slots
  StateDict out;
  for (const auto& [name, t] : slots) out.emplace_back(name, t->detach());
  return out;
}

namespace {

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "\"" : ", \"") + k + "\"";
  return out;
}

}  // namespace

LoadResult Module::load_state_dict(const StateDict& state_dict, bool strict) {
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect_state("", slots);
  std::map<std::string, const Tensor*> given;
  for (const auto& [name, t] : state_dict) given[name] = &t;

  LoadResult result;
  std::vector<std::string> mismatches;
  std::set<std::string> expected;
  // Each value converted to its tensor's device and dtype before anything is copied, so a value
  // that cannot be converted (a Meta tensor's missing data, say) fails the load cleanly.
  std::vector<std::pair<Tensor*, Tensor>> staged;
  autograd::NoGradGuard no_grad;
  for (const auto& [name, slot] : slots) {
    expected.insert(name);
    auto it = given.find(name);
    if (it == given.end()) {
      result.missing_keys.push_back(name);
    } else if (!it->second->defined()) {
      mismatches.push_back(fmt::format("the value for {} is an undefined tensor", name));
    } else if (it->second->sizes() != slot->sizes()) {
      mismatches.push_back(fmt::format(
          "size mismatch for {}: copying a param with shape {} from checkpoint, the shape in current model is {}", name,
          shape_string(it->second->sizes()), shape_string(slot->sizes())));
    } else {
      try {
        staged.emplace_back(slot, it->second->to(slot->device(), slot->dtype()));
      } catch (const Error& e) {
        mismatches.push_back(fmt::format("the value for {} cannot be converted to {} on {}: {}", name,
                                         anatomy::name(slot->dtype()), slot->device().str(), e.what()));
      }
    }
  }
  for (const auto& [name, _] : state_dict) {
    if (!expected.count(name)) result.unexpected_keys.push_back(name);
  }

  // Every problem is gathered before anything is copied, so a failed load changes nothing.
  std::string problems;
  if (strict && !result.unexpected_keys.empty()) {
    problems += "\n\tUnexpected key(s) in state_dict: " + quoted_list(result.unexpected_keys) + ".";
  }
  if (strict && !result.missing_keys.empty()) {
    problems += "\n\tMissing key(s) in state_dict: " + quoted_list(result.missing_keys) + ".";
  }
  for (const auto& m : mismatches) problems += "\n\t" + m + ".";
  ANATOMY_CHECK(problems.empty(), ValueError, "Error(s) in loading state_dict for {}:{}", type_name_, problems);

  for (const auto& [slot, value] : staged) slot->copy_(value);
  return result;
}

// ---- printing ----

namespace {

// PyTorch's _addindent: every line after the first indented by two spaces.
std::string add_indent(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

std::string Module::repr() const {
  std::vector<std::string> lines;
  std::string extra = extra_repr();
  size_t extra_lines = 0;
  if (!extra.empty()) {
    std::istringstream in(extra);
    for (std::string line; std::getline(in, line);) lines.push_back(line), ++extra_lines;
  }
  for (const auto& [name, child] : children_) lines.push_back("(" + name + "): " + add_indent(child->repr()));
  std::string out = type_name_ + "(";
  if (extra_lines == 1 && children_.empty()) {
    out += lines[0];
  } else if (!lines.empty()) {
    out += "\n";
    for (const auto& line : lines) out += "  " + line + "\n";
  }
  return out + ")";
}

std::string Module::summary() const {
  // One line per parameter, in named_parameters' order, the columns aligned: the dotted name, the
  // shape as a Python tuple, the element count, and "frozen" where it does not require grad.
  struct Row {
    std::string name, shape, count;
    bool frozen;
  };
  std::vector<Row> rows;
  size_t name_width = 0, shape_width = 0, count_width = 0;
  for (const auto& [name, p] : named_parameters()) {
    rows.push_back({name, shape_string(p.sizes()), std::to_string(p.numel()), !p.requires_grad()});
    name_width = std::max(name_width, rows.back().name.size());
    shape_width = std::max(shape_width, rows.back().shape.size());
    count_width = std::max(count_width, rows.back().count.size());
  }
  std::string out = repr();
  for (const Row& r : rows) {
    out += fmt::format("\n  {:<{}}  {:<{}}  {:>{}}{}", r.name, name_width, r.shape, shape_width, r.count, count_width,
                       r.frozen ? "  frozen" : "");
  }
  return out + fmt::format("\nTotal parameters: {}\nTrainable parameters: {}", num_parameters(), num_parameters(true));
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.repr(); }

}  // namespace anatomy::nn
