// --peer torch over libtorch (tools/peer.h): PyTorch's calls on the memory of the experiment's own
// tensors. Compiled only in a build against libtorch, as the module gpu-anatomy-peer-torch.so with
// libtorch's flags confined to this file (tools/CMakeLists.txt), which the tool loads when a run
// asks for the peer (peer_module.cpp).
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/optim/sgd.h>

// Streams, events and CUDA graphs come with a CUDA build of torch; a CPU-only one has none.
#if __has_include(<ATen/cuda/CUDAGraph.h>)
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define ANATOMY_PEER_CUDA 1
#endif

#include <memory>
#include <vector>

#include "anatomy/cuda.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"

namespace anatomy::tools {
namespace {

at::ScalarType scalar_type(DType t) {
  switch (t) {
    case DType::Float32:
      return at::kFloat;
    case DType::Float64:
      return at::kDouble;
    case DType::Float16:
      return at::kHalf;
    case DType::BFloat16:
      return at::kBFloat16;
    case DType::Int8:
      return at::kChar;
    case DType::UInt8:
      return at::kByte;
    case DType::Int32:
      return at::kInt;
    case DType::Int64:
      return at::kLong;
    case DType::Bool:
      return at::kBool;
  }
  throw UsageError(fmt::format("--peer torch: no torch dtype for {}", name(t)));
}

at::Device torch_device(Device d) {
  return d.is_cuda() ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(d.index())) : at::Device(at::kCPU);
}

std::vector<int64_t> vec(IntArrayRef v) { return {v.begin(), v.end()}; }
std::vector<int64_t> vec(c10::IntArrayRef v) { return {v.begin(), v.end()}; }

// The anatomy tensor's memory as a torch tensor: same pointer, sizes, strides and device. The
// deleter holds a reference to the anatomy tensor, so the memory lives as long as either.
at::Tensor view_of(const Tensor& t) {
  return at::from_blob(
      t.data_ptr(), vec(t.sizes()), vec(t.strides()), [keep = t](void*) {},
      at::TensorOptions().dtype(scalar_type(t.dtype())).device(torch_device(t.device())));
}

// A torch result copied (by torch, on its device) into a new anatomy tensor.
Tensor to_anatomy(const at::Tensor& r, DType dtype, Device device) {
  Tensor out = empty(vec(r.sizes()), TensorOptions().dtype(dtype).device(device));
  view_of(out).copy_(r);
  if (device.is_cuda()) cuda::synchronize(device.index());
  return out;
}

// torch's refusal of a workload (an operator it lacks for a dtype, a shape it does not take) as
// the experiment's failure, with torch's message without its C++ backtrace: exit status 1 and one
// line, not an exception the tool does not know.
template <class Fn>
auto as_experiment_failure(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    throw ExperimentFailed(fmt::format("--peer torch: {}", message.substr(0, message.find('\n'))));
  }
}

// A call whose workload is a function of no arguments returning torch's result.
template <class Fn>
class Call final : public PeerCall {
 public:
  Call(Fn fn, DType dtype, Device device) : fn_(std::move(fn)), dtype_(dtype), device_(device) {}
  void run() override { last_ = as_experiment_failure(fn_); }
  Tensor result() override {
    if (!last_.defined()) run();
    return to_anatomy(last_, dtype_, device_);
  }

 private:
  Fn fn_;
  DType dtype_;
  Device device_;
  at::Tensor last_;
};

template <class Fn>
std::unique_ptr<PeerCall> make_call(Fn fn, DType dtype, Device device) {
  return std::make_unique<Call<Fn>>(std::move(fn), dtype, device);
}

#ifdef ANATOMY_PEER_CUDA
// The adds captured once into a torch CUDAGraph on a side stream (torch cannot capture the
// legacy default stream), replayed on the current one.
class GraphedAdds final : public PeerCall {
 public:
  GraphedAdds(const at::Tensor& x, int adds, DType dtype, Device device) : dtype_(dtype), device_(device) {
    const auto chain = [&x, adds] {
      at::Tensor y = x;
      for (int i = 0; i < adds; ++i) y = y + 1.0;
      return y;
    };
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, x.device().index());
    side.synchronize();
    {
      const c10::cuda::CUDAStreamGuard guard(side);
      (void)chain();  // the warm-up the capture needs (torch's docs ask for it too)
      side.synchronize();
      graph_.capture_begin();
      out_ = chain();
      graph_.capture_end();
    }
    side.synchronize();
  }
  void run() override {
    as_experiment_failure([this] { graph_.replay(); });
  }
  Tensor result() override { return to_anatomy(out_, dtype_, device_); }

 private:
  at::cuda::CUDAGraph graph_;
  at::Tensor out_;
  DType dtype_;
  Device device_;
};
#endif

// c09's MLP and its training step in torch's terms (Peer::mlp_training_step): torch's own leaves
// cloned from the engine's parameters, torch::optim::SGD, and the batches as views of the
// engine's tensors.
class MlpModel {
 public:
  MlpModel(const std::vector<Tensor>& params, double lr, double momentum) {
    for (const Tensor& p : params) params_.push_back(view_of(p).detach().clone().requires_grad_(true));
    optimizer_ = std::make_unique<torch::optim::SGD>(params_, torch::optim::SGDOptions(lr).momentum(momentum));
  }
  at::Tensor loss(const at::Tensor& x, const at::Tensor& y) const {
    at::Tensor h = x;
    for (size_t i = 0; i + 1 < params_.size(); i += 2) {
      h = at::linear(h, params_[i], params_[i + 1]);
      if (i + 2 < params_.size()) h = h.relu();
    }
    return (h - y).pow(2).mean();
  }
  // zero_grad (set_to_none), the loss, backward, the optimizer's step; the loss, detached.
  at::Tensor step(const at::Tensor& x, const at::Tensor& y) {
    optimizer_->zero_grad(/*set_to_none=*/true);
    at::Tensor l = loss(x, y);
    l.backward();
    optimizer_->step();
    return l.detach();
  }
  void forward_backward(const at::Tensor& x, const at::Tensor& y) {
    optimizer_->zero_grad(/*set_to_none=*/true);
    loss(x, y).backward();
    optimizer_->zero_grad(/*set_to_none=*/true);
  }

 private:
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
};

using TorchBatches = std::vector<std::pair<at::Tensor, at::Tensor>>;

TorchBatches torch_batches(const std::vector<std::vector<Tensor>>& batches) {
  TorchBatches out;
  for (const std::vector<Tensor>& b : batches) {
    if (b.size() != 2) throw UsageError("--peer torch: an MLP batch is (input, target)");
    out.emplace_back(view_of(b[0]), view_of(b[1]));
  }
  if (out.empty()) throw UsageError("--peer torch: the MLP step needs a batch");
  return out;
}

// One eager step a run().
class EagerMlpStep final : public PeerCall {
 public:
  EagerMlpStep(MlpModel model, TorchBatches batches, Device device)
      : model_(std::move(model)), batches_(std::move(batches)), device_(device) {}
  void run() override {
    const auto& [x, y] = batches_[next_++ % batches_.size()];
    last_ = as_experiment_failure([&] { return model_.step(x, y); });
  }
  Tensor result() override {
    if (!last_.defined()) run();
    return to_anatomy(last_, DType::Float32, device_);
  }

 private:
  MlpModel model_;
  TorchBatches batches_;
  Device device_;
  size_t next_ = 0;
  at::Tensor last_;
};

#ifdef ANATOMY_PEER_CUDA
// The whole step captured once into a torch CUDAGraph on a side stream (torch's whole-network
// capture): the forward and backward warmed up there first, then one eager step on batches[0]
// (which makes SGD's momentum buffers, so that the capture finds them), then the capture of
// zero_grad, the loss, backward and the step over static inputs. A run() copies the next batch
// into the static inputs and replays.
class GraphedMlpStep final : public PeerCall {
 public:
  GraphedMlpStep(MlpModel model, TorchBatches batches, Device device)
      : model_(std::move(model)), batches_(std::move(batches)), device_(device) {
    static_x_ = batches_[0].first.clone();
    static_y_ = batches_[0].second.clone();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, static_x_.device().index());
    c10::cuda::getCurrentCUDAStream(static_x_.device().index()).synchronize();
    {
      const c10::cuda::CUDAStreamGuard guard(side);
      for (int i = 0; i < 3; ++i) model_.forward_backward(static_x_, static_y_);
      (void)model_.step(static_x_, static_y_);
      side.synchronize();
      graph_.capture_begin();
      static_loss_ = model_.step(static_x_, static_y_);
      graph_.capture_end();
    }
    side.synchronize();
  }
  void run() override {
    const auto& [x, y] = batches_[next_++ % batches_.size()];
    as_experiment_failure([&] {
      static_x_.copy_(x);
      static_y_.copy_(y);
      graph_.replay();
    });
    ran_ = true;
  }
  Tensor result() override {
    if (!ran_) run();
    return to_anatomy(static_loss_, DType::Float32, device_);
  }

 private:
  MlpModel model_;
  TorchBatches batches_;
  Device device_;
  size_t next_ = 1;  // batches[0] was the eager step's
  bool ran_ = false;
  at::Tensor static_x_, static_y_, static_loss_;
  at::cuda::CUDAGraph graph_;
};
#endif

class TorchPeer final : public Peer {
 public:
  // A first product and layer norm on the CPU before anything is timed: torch's first calls
  // start its thread pool and its BLAS (on the dev VM the first variant of c01 read 1.1-3.0 ms
  // against 0.8 ms for the others without this, with the experiment's warm-up calls done).
  TorchPeer() {
    match_settings();
    const at::Tensor x = at::randn({512, 512});
    for (int i = 0; i < 3; ++i) (void)at::layer_norm(at::matmul(x, x), {512});
  }

  std::string engine() const override { return std::string("torch ") + ANATOMY_TORCH_VERSION; }

  std::unique_ptr<PeerCall> matmul(const Tensor& a, const Tensor& b) override {
    match_settings();
    // The engine's int8 product returns int32 (dispatch/ops/matmul_checks.cpp); torch's matmul
    // has no int8 kernel on CUDA and wraps in int8 on the CPU, so the int8 peer is torch's one
    // int8-to-int32 product, _int_mm (matrices only; on CUDA m > 16 and k, n multiples of 8).
    if (a.dtype() == DType::Int8 && b.dtype() == DType::Int8 && a.dim() == 2 && b.dim() == 2) {
      return make_call([x = view_of(a), y = view_of(b)] { return at::_int_mm(x, y); }, DType::Int32, a.device());
    }
    return make_call([x = view_of(a), y = view_of(b)] { return at::matmul(x, y); }, a.dtype(), a.device());
  }

  std::unique_ptr<PeerCall> add(const Tensor& a, const Tensor& b) override {
    match_settings();
    return make_call([x = view_of(a), y = view_of(b)] { return at::add(x, y); }, a.dtype(), a.device());
  }

  std::unique_ptr<PeerCall> layer_norm(const Tensor& a, double eps) override {
    match_settings();
    const int64_t last = a.size(a.dim() - 1);
    return make_call([x = view_of(a), last, eps] { return at::layer_norm(x, {last}, {}, {}, eps); }, a.dtype(),
                     a.device());
  }

  std::unique_ptr<PeerCall> with_copies(const std::string& op, const Tensor& a, const Tensor& b,
                                        Device device) override {
    match_settings();
    const bool product = op == "matmul";
    const at::Device d = torch_device(device);
    return make_call(
        [x = view_of(a), y = view_of(b), d, product] {
          const at::Tensor dx = x.to(d), dy = y.to(d);
          return (product ? at::matmul(dx, dy) : at::add(dx, dy)).to(at::kCPU);
        },
        a.dtype(), kCPU);
  }

  std::unique_ptr<PeerCall> copy(const Tensor& dst, const Tensor& src, bool non_blocking) override {
    match_settings();
    return make_call([d = view_of(dst), s = view_of(src), non_blocking] { return d.copy_(s, non_blocking); },
                     dst.dtype(), dst.device());
  }

  std::unique_ptr<PeerCall> to(const Tensor& src, Device device, bool non_blocking) override {
    match_settings();
    return make_call([s = view_of(src), d = torch_device(device), non_blocking] { return s.to(d, non_blocking); },
                     src.dtype(), device);
  }

  std::unique_ptr<PeerCall> clone(const Tensor& src) override {
    match_settings();
    return make_call([s = view_of(src)] { return s.clone(); }, src.dtype(), src.device());
  }

  std::unique_ptr<PeerCall> matmul_chains(const Tensor& x1, const Tensor& x2, const Tensor& w, int chain,
                                          bool two_streams) override {
    match_settings();
    const auto run_chain = [chain](at::Tensor x, const at::Tensor& m) {
      for (int i = 0; i < chain; ++i) x = at::matmul(x, m);
      return x;
    };
    if (!two_streams) {
      return make_call(
          [a = view_of(x1), b = view_of(x2), m = view_of(w), run_chain] {
            at::Tensor y1 = run_chain(a, m), y2 = run_chain(b, m);
            return y1;
          },
          x1.dtype(), x1.device());
    }
#ifdef ANATOMY_PEER_CUDA
    const c10::cuda::CUDAStream side =
        c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(w.device().index()));
    return make_call(
        [a = view_of(x1), b = view_of(x2), m = view_of(w), run_chain, side] {
          at::cuda::CUDAEvent ready;
          ready.record(c10::cuda::getCurrentCUDAStream(a.device().index()));
          ready.block(side);
          at::Tensor y2;
          {
            const c10::cuda::CUDAStreamGuard guard(side);
            y2 = run_chain(b, m);
          }
          return run_chain(a, m);
        },
        x1.dtype(), x1.device());
#else
    throw UsageError("--peer torch: this libtorch was built without CUDA, so without streams");
#endif
  }

  std::unique_ptr<PeerCall> add_chain(const Tensor& x, int adds, bool graphed) override {
    match_settings();
    if (graphed) {
#ifdef ANATOMY_PEER_CUDA
      return std::make_unique<GraphedAdds>(view_of(x), adds, x.dtype(), x.device());
#else
      throw UsageError("--peer torch: this libtorch was built without CUDA, so without CUDA graphs");
#endif
    }
    return make_call(
        [v = view_of(x), adds] {
          at::Tensor y = v;
          for (int i = 0; i < adds; ++i) y = y + 1.0;
          return y;
        },
        x.dtype(), x.device());
  }

  std::unique_ptr<PeerCall> mlp_training_step(const std::vector<Tensor>& params,
                                              const std::vector<std::vector<Tensor>>& batches, double lr,
                                              double momentum, bool graphed) override {
    match_settings();
    if (params.empty() || params.size() % 2 != 0) {
      throw UsageError("--peer torch: the MLP's parameters are (weight, bias) pairs");
    }
    const Device device = params[0].device();
    MlpModel model(params, lr, momentum);
    if (!graphed) return std::make_unique<EagerMlpStep>(std::move(model), torch_batches(batches), device);
#ifdef ANATOMY_PEER_CUDA
    return as_experiment_failure([&]() -> std::unique_ptr<PeerCall> {
      return std::make_unique<GraphedMlpStep>(std::move(model), torch_batches(batches), device);
    });
#else
    throw UsageError("--peer torch: this libtorch was built without CUDA, so without CUDA graphs");
#endif
  }

  std::unique_ptr<PeerCall> dlpack_round_trip(const Tensor& t) override {
    match_settings();
    return make_call(
        [x = view_of(t)] {
          const at::Tensor u = at::fromDLPack(at::toDLPack(x));
          if (u.data_ptr() != x.data_ptr()) {
            throw ExperimentFailed("c08 dlpack: torch's round trip does not point at the original's memory");
          }
          return x;
        },
        t.dtype(), t.device());
  }

  std::unique_ptr<PeerCall> conv_workload(const std::string& workload, const Tensor& x,
                                          const std::vector<Tensor>& params, const Tensor& grad_out) override {
    match_settings();
    if (workload != "conv3x3" && workload != "bottleneck") {
      throw UsageError(fmt::format("--peer torch: no workload '{}'", workload));
    }
    // Leaves of torch's own over the same memory (ours may require grad; torch's views do not
    // know it).
    std::vector<at::Tensor> inputs = {view_of(x).detach().requires_grad_(true)};
    for (const Tensor& p : params) inputs.push_back(view_of(p).detach().requires_grad_(true));
    const bool block = workload == "bottleneck";
    return make_call(
        [inputs, g = view_of(grad_out), block] {
          const std::vector<at::Tensor>& p = inputs;
          const auto bn = [](const at::Tensor& y, const at::Tensor& w, const at::Tensor& b) {
            return at::batch_norm(y, w, b, {}, {}, /*training=*/true, 0.1, 1e-5, /*cudnn_enabled=*/true);
          };
          at::Tensor out;
          if (!block) {
            out = at::conv2d(p[0], p[1], {}, 1, 1);
          } else {
            at::Tensor y = bn(at::conv2d(p[0], p[1]), p[2], p[3]).relu();
            y = bn(at::conv2d(y, p[4], {}, 1, 1), p[5], p[6]).relu();
            y = bn(at::conv2d(y, p[7]), p[8], p[9]);
            out = (y + p[0]).relu();
          }
          (void)torch::autograd::grad({out}, inputs, {g});
          return out.detach();
        },
        x.dtype(), x.device());
  }

  std::unique_ptr<PeerCall> small_add(Device device, bool requires_grad, bool no_grad) override {
    match_settings();
    const at::TensorOptions options = at::TensorOptions().dtype(at::kFloat).device(torch_device(device));
    at::Tensor a = at::ones({1}, options), b = at::ones({1}, options);
    if (requires_grad) a.requires_grad_(true);
    return make_call(
        [a, b, no_grad] {
          const c10::AutoGradMode mode(!no_grad);
          return at::add(a, b);
        },
        DType::Float32, device);
  }

 private:
  // The engine's settings of the moment, given to torch before each workload is made.
  static void match_settings() {
    at::set_num_threads(get_num_threads());
    at::Context& c = at::globalContext();
    c.setAllowTF32CuBLAS(allow_tf32_matmul());
    c.setAllowTF32CuDNN(allow_tf32_cudnn());
    c.setAllowFP16ReductionCuBLAS(allow_fp16_reduced_precision_reduction());
    c.setAllowBF16ReductionCuBLAS(allow_bf16_reduced_precision_reduction());
    c.setAllowFP16AccumulationCuBLAS(allow_fp16_accumulation());
    c.setBenchmarkCuDNN(cudnn_benchmark());
  }
};

}  // namespace

}  // namespace anatomy::tools

// The module's one entry (peer_module.cpp looks it up with dlsym): a new peer, which the tool
// owns and deletes through Peer's virtual destructor.
extern "C" __attribute__((visibility("default"))) anatomy::tools::Peer* anatomy_tools_make_torch_peer() {
  return new anatomy::tools::TorchPeer();
}
