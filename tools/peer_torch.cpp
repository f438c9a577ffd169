// --peer torch over libtorch (tools/peer.h): PyTorch's calls on the memory of the experiment's own
// tensors. Compiled only in a build against libtorch, as the module gpu-anatomy-peer-torch.so with
// libtorch's flags confined to its files (this one, peer_torch_training.cpp and the headers
// peer_torch_util.h and peer_torch_training.h; tools/CMakeLists.txt), which the tool loads when a
// run asks for the peer (peer_module.cpp).
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>

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
#include "anatomy/tools/peer_torch_training.h"
#include "anatomy/tools/peer_torch_util.h"

namespace anatomy::tools {
namespace {

using namespace torch_peer;

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
    return torch_peer::mlp_training_step(params, batches, lr, momentum, graphed);
  }

  std::unique_ptr<PeerCall> transformer_training_step(const std::vector<Tensor>& params, int64_t heads,
                                                      const std::vector<std::vector<Tensor>>& batches,
                                                      const optim::AdamWOptions& adamw, bool graphed) override {
    match_settings();
    return torch_peer::transformer_training_step(params, heads, batches, adamw, graphed);
  }

  std::unique_ptr<PeerCall> transformer_loss_backward(const std::vector<Tensor>& params, int64_t heads,
                                                      const Tensor& tokens, const Tensor& targets) override {
    match_settings();
    return torch_peer::transformer_loss_backward(params, heads, tokens, targets);
  }

  std::vector<PeerOperator> profile(PeerCall& call, Device device, double& device_us) override {
    return torch_peer::profile(call, device, device_us);
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
