// print_graph and to_dot (see autograd.h).
#include <fmt/format.h>

#include <unordered_map>

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/autograd.h"

namespace anatomy::autograd {
namespace {

std::string leaf_label(const Node& node) {
  if (const auto* acc = dynamic_cast<const AccumulateGrad*>(&node)) {
    return fmt::format("AccumulateGrad (leaf [{}] {})", fmt::join(acc->leaf().sizes(), ", "),
                       name(acc->leaf().dtype()));
  }
  return node.name();
}

void print_node(const Node& node, int depth, std::unordered_map<const Node*, int>& ids, std::string& out) {
  const std::string indent(2 * depth, ' ');
  if (auto it = ids.find(&node); it != ids.end()) {
    out += fmt::format("{}{} #{} (see above)\n", indent, node.name(), it->second);
    return;
  }
  const int id = static_cast<int>(ids.size());
  ids[&node] = id;
  out += fmt::format("{}{} #{}\n", indent, leaf_label(node), id);
  for (const std::string& s : node.saved_descriptions()) out += fmt::format("{}  saved {}\n", indent, s);
  for (const Edge& e : node.next_edges()) {
    if (!e.is_valid()) {
      out += fmt::format("{}  (no gradient)\n", indent);
      continue;
    }
    if (e.input_nr != 0) out += fmt::format("{}  -> input {} of:\n", indent, e.input_nr);
    print_node(*e.function, depth + 1, ids, out);
  }
}

}  // namespace

std::string print_graph(const Tensor& t) {
  Node* root = t.grad_fn();
  if (root == nullptr) {
    return t.requires_grad()
               ? fmt::format("leaf [{}] {} (requires grad)\n", fmt::join(t.sizes(), ", "), name(t.dtype()))
               : "no graph (the tensor does not require grad)\n";
  }
  std::unordered_map<const Node*, int> ids;
  std::string out;
  print_node(*root, 0, ids, out);
  return out;
}

std::string to_dot(const Tensor& t) {
  std::string out = "digraph autograd {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n";
  std::unordered_map<const Node*, int> ids;
  std::vector<const Node*> todo;
  auto id_of = [&](const Node* n) {
    auto [it, fresh] = ids.emplace(n, static_cast<int>(ids.size()));
    if (fresh) todo.push_back(n);
    return it->second;
  };
  if (Node* root = t.grad_fn()) id_of(root);
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    std::string label = leaf_label(*n);
    for (const std::string& s : n->saved_descriptions()) label += "\\n" + s;
    out += fmt::format("  n{} [label=\"{}\"];\n", ids[n], label);
    for (const Edge& e : n->next_edges()) {
      if (!e.is_valid()) continue;
      out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", ids[n], id_of(e.function.get()), e.input_nr);
    }
  }
  out += "}\n";
  return out;
}

}  // namespace anatomy::autograd
