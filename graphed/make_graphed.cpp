// make_graphed (make_graphed.h): warm-up, the forward and backward captures, and the autograd
// function whose forward and backward replay them.
#include "anatomy/graphed/make_graphed.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace anatomy::cuda {

struct GraphedState {
  std::vector<Tensor> static_inputs;
  std::vector<Tensor> params;
  std::vector<Tensor> static_outputs;
  // Per output: its gradient buffer (undefined for an output that does not require grad).
  std::vector<Tensor> static_grad_outputs;
  // Per differentiable position (inputs, then params): its gradient from the backward graph, or
  // undefined where none flows (not requiring grad, or unused).
  std::vector<Tensor> static_grads;
  Graph forward;
  Graph backward;
  int64_t id = 0;  // in the registry below, while the state lives
  ~GraphedState();
};

namespace {

// The autograd node's state is found by number: saved_data holds values, not objects.
struct Registry {
  std::mutex mutex;
  int64_t next = 1;
  std::unordered_map<int64_t, std::weak_ptr<GraphedState>> states;
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

void unregister_state(int64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.states.erase(id);
}

int64_t register_state(const std::shared_ptr<GraphedState>& s) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const int64_t id = r.next++;
  r.states[id] = s;
  return id;
}

std::shared_ptr<GraphedState> find_state(int64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.states.find(id);
  std::shared_ptr<GraphedState> s = it == r.states.end() ? nullptr : it->second.lock();
  ANATOMY_CHECK(s != nullptr, ValueError,
                "make_graphed: backward of a graphed call whose GraphedCallable no longer exists");
  return s;
}

void copy_unless_same(const Tensor& dst, const Tensor& src) {
  if (!src.is_same(dst) || src.data_ptr() != dst.data_ptr()) dst.copy_(src);
}

// forward replays the forward graph; backward replays the backward graph. Positions: the state's
// id (no gradient), then inputs and params in order.
struct GraphedFunction : autograd::Function<GraphedFunction> {
  static std::vector<Tensor> forward(autograd::AutogradContext* ctx, int64_t id, const std::vector<Tensor>& args) {
    const std::shared_ptr<GraphedState> s = find_state(id);
    for (size_t i = 0; i < s->static_inputs.size(); ++i) copy_unless_same(s->static_inputs[i], args[i]);
    s->forward.replay();
    ctx->saved_data["id"] = id;
    std::vector<Tensor> out;
    out.reserve(s->static_outputs.size());
    for (const Tensor& o : s->static_outputs) out.push_back(o.detach());
    return out;
  }

  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    const std::shared_ptr<GraphedState> s = find_state(ctx->saved_data["id"].get<int64_t>());
    for (size_t k = 0; k < s->static_grad_outputs.size(); ++k) {
      const Tensor& buffer = s->static_grad_outputs[k];
      if (!buffer.defined()) continue;
      if (grads[k].defined()) copy_unless_same(buffer, grads[k]);
      else buffer.zero_();
    }
    s->backward.replay();
    autograd::variable_list result;
    result.reserve(1 + s->static_grads.size());
    result.emplace_back();  // the id
    for (const Tensor& g : s->static_grads) result.push_back(g.defined() ? g.detach() : Tensor());
    return result;
  }
};

void check_arguments(const std::vector<Tensor>& inputs, const std::vector<Tensor>& params) {
  ANATOMY_CHECK(!inputs.empty() || !params.empty(), ValueError, "make_graphed: no sample inputs and no params");
  const Tensor& first = inputs.empty() ? params[0] : inputs[0];
  for (const auto* list : {&inputs, &params}) {
    for (const Tensor& t : *list) {
      ANATOMY_CHECK(t.defined() && t.is_cuda(), ValueError,
                    "make_graphed: every sample input and param must be a CUDA tensor, got one on {}",
                    t.defined() ? t.device().str() : std::string("(undefined)"));
      ANATOMY_CHECK(t.device() == first.device(), ValueError,
                    "make_graphed: the sample inputs and params must be on one device, got {} and {}",
                    first.device().str(), t.device().str());
    }
  }
  for (const Tensor& p : params) {
    ANATOMY_CHECK(p.is_leaf() && p.requires_grad(), ValueError,
                  "make_graphed: a param must be a leaf that requires grad (shape {})", fmt::join(p.sizes(), ", "));
  }
}

// The outputs that require grad and the tensors gradients flow to (inputs requiring grad, then
// params), in order.
std::vector<Tensor> requiring_grad(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) {
    if (t.defined() && t.requires_grad()) out.push_back(t);
  }
  return out;
}

}  // namespace

GraphedState::~GraphedState() {
  if (id != 0) unregister_state(id);
}

std::vector<Tensor> GraphedCallable::operator()(const std::vector<Tensor>& inputs) const {
  ANATOMY_CHECK(state_ != nullptr, ValueError, "make_graphed: a moved-from GraphedCallable was called");
  const std::vector<Tensor>& want = state_->static_inputs;
  ANATOMY_CHECK(inputs.size() == want.size(), ValueError, "make_graphed: the graphed function takes {} inputs, got {}",
                want.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    ANATOMY_CHECK(
        t.defined() && t.sizes() == want[i].sizes() && t.dtype() == want[i].dtype() && t.device() == want[i].device(),
        ValueError, "make_graphed: input {} must match the sample input ({} [{}] on {}), got {}", i,
        name(want[i].dtype()), fmt::join(want[i].sizes(), ", "), want[i].device().str(),
        t.defined() ? fmt::format("{} [{}] on {}", name(t.dtype()), fmt::join(t.sizes(), ", "), t.device().str())
                    : std::string("an undefined tensor"));
  }
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), state_->params.begin(), state_->params.end());
  return GraphedFunction::apply(state_->id, args);
}

const Graph& GraphedCallable::forward_graph() const { return state_->forward; }
const Graph& GraphedCallable::backward_graph() const { return state_->backward; }

GraphedCallable make_graphed(std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn,
                             std::vector<Tensor> sample_inputs, std::vector<Tensor> params, GraphedOptions options) {
  check_arguments(sample_inputs, params);
  ANATOMY_CHECK(options.warmup_iters >= 0, ValueError, "make_graphed: warmup_iters must be at least 0, got {}",
                options.warmup_iters);
  auto s = std::make_shared<GraphedState>();
  s->static_inputs = std::move(sample_inputs);
  s->params = std::move(params);
  std::vector<Tensor> differentiable = requiring_grad(s->static_inputs);
  const std::vector<Tensor> params_needing = requiring_grad(s->params);
  differentiable.insert(differentiable.end(), params_needing.begin(), params_needing.end());

  const int device = s->static_inputs.empty() ? s->params[0].device().index() : s->static_inputs[0].device().index();
  DeviceGuard device_guard(device);
  const Stream capture_stream = graph_capture_stream();
  capture_stream.wait_stream(current_stream(-1));  // the inputs' producers come first
  {
    StreamGuard guard(capture_stream);
    for (int i = 0; i < options.warmup_iters; ++i) {
      const std::vector<Tensor> outs = requiring_grad(fn(s->static_inputs));
      if (outs.empty() || differentiable.empty()) continue;
      std::vector<Tensor> ones_like_outs;
      for (const Tensor& o : outs) ones_like_outs.push_back(ones_like(o));
      (void)autograd::grad(outs, differentiable, ones_like_outs, false, false, /*allow_unused=*/true);
    }
  }

  const GraphPool pool = options.pool.is_none() ? graph_pool_handle(device) : options.pool;
  {
    GraphCapture capture(s->forward, capture_stream, pool, options.mode);
    s->static_outputs = fn(s->static_inputs);
  }
  std::vector<Tensor> outs_needing;
  std::vector<Tensor> grad_buffers;
  for (const Tensor& o : s->static_outputs) {
    const bool needs = o.defined() && o.requires_grad();
    s->static_grad_outputs.push_back(needs ? empty_like(o) : Tensor());
    if (needs) {
      outs_needing.push_back(o);
      grad_buffers.push_back(s->static_grad_outputs.back());
    }
  }
  std::vector<Tensor> grads;
  if (!outs_needing.empty() && !differentiable.empty()) {
    GraphCapture capture(s->backward, capture_stream, pool, options.mode);
    grads = autograd::grad(outs_needing, differentiable, grad_buffers, false, false, /*allow_unused=*/true);
  }
  // One gradient per position (inputs, then params): undefined where none flows.
  size_t next = 0;
  for (const auto* list : {&s->static_inputs, &s->params}) {
    for (const Tensor& t : *list) {
      const bool flows = t.requires_grad() && next < grads.size();
      s->static_grads.push_back(flows ? grads[next++] : Tensor());
    }
  }
  for (Tensor& o : s->static_outputs) o = o.defined() ? o.detach() : o;  // the capture's graph is not kept
  current_stream(-1).wait_stream(capture_stream);
  s->id = register_state(s);
  GraphedCallable graphed;
  graphed.state_ = std::move(s);
  return graphed;
}

}  // namespace anatomy::cuda
