// A small training step on both sides: 10 linear layers 16 wide with relu between them, batch 8,
// loss = sum of squares of the output, backward into every parameter's .grad. The same weights
// and input on both sides (anatomy's random values copied into torch), functional calls on both
// (linear, relu, mul, sum), and the first layer's weight gradient compared before timing.
// Host time per iteration; on CUDA one device synchronize at the end of the loop is counted in.
// A step this small is almost all per-op host overhead: about 60 operators forward and backward,
// and as many autograd nodes.
#include <vector>

#include "peer.h"

namespace peer {
namespace {

constexpr int kLayers = 10, kWidth = 16, kBatch = 8;

struct MlpParams {
  std::vector<anatomy::Tensor> w, b;
  std::vector<at::Tensor> tw, tb;
  anatomy::Tensor x;
  at::Tensor tx;

  explicit MlpParams(const anatomy::Device& device) {
    anatomy::manual_seed(0);
    const bool cuda = device.type() == anatomy::DeviceType::CUDA;
    // Weights scaled by 1/sqrt(width) so that the activations stay of order one.
    auto param = [&](anatomy::IntArrayRef sizes, std::vector<anatomy::Tensor>& mine, std::vector<at::Tensor>& theirs) {
      anatomy::Tensor cpu = anatomy::randn(sizes) * 0.25;
      at::Tensor t = to_torch(cpu);
      mine.push_back(cpu.to(device).requires_grad_());
      theirs.push_back((cuda ? t.to(at::kCUDA) : t).requires_grad_());
    };
    for (int i = 0; i < kLayers; ++i) {
      param({kWidth, kWidth}, w, tw);
      param({kWidth}, b, tb);
    }
    anatomy::Tensor xc = anatomy::randn({kBatch, kWidth});
    x = xc.to(device);
    tx = cuda ? to_torch(xc).to(at::kCUDA) : to_torch(xc);
  }
};

template <bool kCuda>
struct MlpFwdBwd : CaseDefaults {
  static constexpr const char* kName = kCuda ? "mlp10x16_fwd_bwd_cuda" : "mlp10x16_fwd_bwd_cpu";
  static constexpr Timing kTiming = kCuda ? Timing::kHostSynced : Timing::kHost;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr Tolerance kTol{1e-5, 1e-4};  // fp32 through 10 layers, two summation orders
  MlpParams p{kCuda ? anatomy::Device(anatomy::DeviceType::CUDA) : anatomy::Device(anatomy::DeviceType::CPU)};

  anatomy::Tensor run_anatomy() {
    for (int i = 0; i < kLayers; ++i) p.w[i].set_grad({}), p.b[i].set_grad({});  // zero_grad, set to none
    anatomy::Tensor h = p.x;
    for (int i = 0; i < kLayers; ++i) {
      h = anatomy::linear(h, p.w[i], p.b[i]);
      if (i + 1 < kLayers) h = anatomy::relu(h);
    }
    (h * h).sum().backward();
    return p.w[0].grad();
  }
  at::Tensor run_torch() {
    for (int i = 0; i < kLayers; ++i) p.tw[i].mutable_grad().reset(), p.tb[i].mutable_grad().reset();
    at::Tensor h = p.tx;
    for (int i = 0; i < kLayers; ++i) {
      h = at::linear(h, p.tw[i], p.tb[i]);
      if (i + 1 < kLayers) h = at::relu(h);
    }
    (h * h).sum().backward();
    return p.tw[0].grad();
  }
};

const int registered_mlp_cpu = register_pair<MlpFwdBwd<false>>();
const int registered_mlp_cuda = register_pair<MlpFwdBwd<true>>();

}  // namespace
}  // namespace peer
