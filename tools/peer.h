// --peer torch: PyTorch's figure beside the engine's, measured in the same process on the same
// memory. The tool reaches PyTorch only through this interface; tools/peer_torch.cpp implements it
// over libtorch in a module of its own when the tool was built against libtorch, which
// tools/peer_module.cpp loads for a run given --peer torch (tools/CMakeLists.txt), and
// tools/peer_unavailable.cpp says why there is none otherwise (docs/cli.md, "Beside PyTorch").
//
// A peer call wraps the experiment's own anatomy tensors as the peer's tensors (the same pointer,
// sizes and strides: the same alignment and layout, no copy), so both engines read the same
// bytes. run() is one call of the workload, timed by the experiment as it times its own (CUDA
// events on the current stream: both engines queue on CUDA's legacy default stream); result()
// copies the last result into a new anatomy tensor on the same device, which the experiment checks
// against its reference as it checks its own result before anything is timed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/tools/experiment.h"

namespace anatomy::tools {

class PeerCall {
 public:
  virtual ~PeerCall() = default;
  virtual void run() = 0;
  virtual Tensor result() = 0;
};

// An operator as the peer's profiler recorded it: its calls, and its CPU time over them in
// microseconds, with what it called (total) and without (self).
struct PeerOperator {
  std::string name;
  int64_t calls = 0;
  double cpu_total_us = 0, cpu_self_us = 0;
};

class Peer {
 public:
  virtual ~Peer() = default;
  // "torch 2.15.0+cu132": the engine and its version, as reports name it.
  virtual std::string engine() const = 0;

  // Every factory first gives the peer the engine's settings of the moment: the CPU threads, TF32
  // for products and convolutions, the reduced-precision reductions and fp16 accumulation.
  virtual std::unique_ptr<PeerCall> matmul(const Tensor& a, const Tensor& b) = 0;
  virtual std::unique_ptr<PeerCall> add(const Tensor& a, const Tensor& b) = 0;
  // layer_norm over the last dim, without weight and bias (F.layer_norm(a, a.shape[-1:], eps=eps)).
  virtual std::unique_ptr<PeerCall> layer_norm(const Tensor& a, double eps) = 0;
  // `op` ("matmul" or "add") of two CPU tensors on `device` with the copies: both inputs copied
  // there, the operation, the result copied back to the CPU (which waits for the device).
  virtual std::unique_ptr<PeerCall> with_copies(const std::string& op, const Tensor& a, const Tensor& b,
                                                Device device) = 0;
  // dst.copy_(src, non_blocking) between the experiment's own tensors (host and device).
  virtual std::unique_ptr<PeerCall> copy(const Tensor& dst, const Tensor& src, bool non_blocking) = 0;
  // src.to(device, non_blocking): a new tensor of the peer's (from its allocator) each call.
  virtual std::unique_ptr<PeerCall> to(const Tensor& src, Device device, bool non_blocking) = 0;
  // src.clone().
  virtual std::unique_ptr<PeerCall> clone(const Tensor& src) = 0;
  // Two independent chains of `chain` products (x <- x @ w) from x1 and from x2: one after the
  // other on the current stream, or (two_streams) x2's on a side stream that first waits for the
  // current one and x1's on the current stream. result() is x1's chain's output.
  virtual std::unique_ptr<PeerCall> matmul_chains(const Tensor& x1, const Tensor& x2, const Tensor& w, int chain,
                                                  bool two_streams) = 0;
  // `adds` dependent additions of 1.0 to a view of the one-element CUDA tensor x (y = x; y = y +
  // 1 ...): launched one by one (graphed false), or as the replay of the peer's CUDA graph of
  // them, captured on construction after a warm-up on the capture stream (graphed true). result()
  // is the last chain's output; a replay reads x as it is then.
  virtual std::unique_ptr<PeerCall> add_chain(const Tensor& x, int adds, bool graphed) = 0;
  // c09's MLP training step in torch's own terms: leaves of torch's own cloned from `params` ([w0,
  // b0, w1, b1, ...]: linear layers with ReLU between them), the loss the mean of (h - batch[1])^2
  // for h the MLP of batch[0], and torch::optim::SGD (lr, momentum). One run() is one step on the
  // next of `batches` in turn, from batches[0]: zero_grad (set_to_none), the loss, backward, the
  // optimizer's step; eagerly (graphed false), or as the replay of one CUDA graph of the whole step
  // after the batch is copied into its static inputs (torch's "whole-network capture"), captured
  // after a warm-up of the forward and backward on a side stream and one eager step on
  // batches[0] (graphed true, so its first run() is the step on batches[1]). result() is the last
  // step's loss (one step is run first where none has been).
  virtual std::unique_ptr<PeerCall> mlp_training_step(const std::vector<Tensor>& params,
                                                      const std::vector<std::vector<Tensor>>& batches, double lr,
                                                      double momentum, bool graphed) = 0;
  // The transformer of transformer_loss_backward below, trained with AdamW (`adamw`'s lr, betas,
  // eps and weight decay; amsgrad off) in torch's fused, capturable form (_fused_adamw_, its step
  // counts on the device), one step a run() over the next of `batches` ({tokens, targets}) in turn,
  // from batches[0]: zero_grad (set_to_none), the loss, backward, the step; eagerly, or as the
  // replay of one CUDA graph of the whole step (graphed true: warmed up and captured as
  // mlp_training_step's, so its first run() is the step on batches[1]). result() is the last
  // step's loss (one step first where none has been).
  virtual std::unique_ptr<PeerCall> transformer_training_step(const std::vector<Tensor>& params, int64_t heads,
                                                              const std::vector<std::vector<Tensor>>& batches,
                                                              const optim::AdamWOptions& adamw, bool graphed) = 0;
  // The transformer of testing/transformer_step.h in torch's terms, without dropout: torch's own
  // leaves cloned from `params` (in TransformerModel::parameters()'s order, of a model with
  // `heads` heads) and ATen's operators in the model's order. run() is the loss of (tokens,
  // targets) and its backward (the gradients add up in torch's leaves, as in the engine's model);
  // result() is the last loss (one run first where none has been).
  virtual std::unique_ptr<PeerCall> transformer_loss_backward(const std::vector<Tensor>& params, int64_t heads,
                                                              const Tensor& tokens, const Tensor& targets) = 0;
  // call.run() once under the peer's profiler (torch.profiler's Kineto: the CPU's events, and the
  // kernels on a CUDA device), `device` waited for before the profile stops: the CPU events by
  // name, largest total first, and the kernels' summed device time in `device_us` (0 on the CPU).
  virtual std::vector<PeerOperator> profile(PeerCall& call, Device device, double& device_us) = 0;
  // A DLPack round trip in the peer of a view of t: its export (a capsule of the unversioned
  // DLManagedTensor, which every PyTorch has), its import, and the imported tensor dropped. run()
  // throws ExperimentFailed if the import does not point at t's memory.
  virtual std::unique_ptr<PeerCall> dlpack_round_trip(const Tensor& t) = 0;
  // c11's workloads, forward and backward: "conv3x3" (a 3x3 convolution, padding 1, weight
  // params[0]) or "bottleneck" (ResNet-50's: 1x1 conv params[0], batch norm params[1..2], ReLU,
  // 3x3 conv params[3] padding 1, BN params[4..5], ReLU, 1x1 conv params[6], BN params[7..8], + x,
  // ReLU; batch norm in training mode, momentum 0.1, eps 1e-5). One call is the forward and the
  // gradients of x and of every parameter for `grad_out` (autograd.grad); result() is the output.
  virtual std::unique_ptr<PeerCall> conv_workload(const std::string& workload, const Tensor& x,
                                                  const std::vector<Tensor>& params, const Tensor& grad_out) = 0;
  // a + b on one-element fp32 tensors of the peer's own on `device`: a requires grad when
  // `requires_grad`, and the call runs under no_grad when `no_grad` (c06 overhead's paths).
  virtual std::unique_ptr<PeerCall> small_add(Device device, bool requires_grad, bool no_grad) = 0;
};

// The peer --peer names: nullptr for "" (no peer); "torch" in a build against libtorch. A
// UsageError for a build without libtorch (how to build one) or any other name.
std::unique_ptr<Peer> open_peer(const std::string& name);
// What open_peer checks before it loads anything: the same UsageErrors, without PyTorch in the
// process (the suite's runner checks --peer so, and each experiment's process opens the peer).
void check_peer(const std::string& name);
// PyTorch as the peer: the module of peer_torch.cpp, loaded by peer_module.cpp, in a build
// against libtorch; else peer_unavailable.cpp's UsageError.
std::unique_ptr<Peer> make_torch_peer();
// Checks the peer's result first (`error` of call.result() at most `tolerance`: ExperimentFailed
// naming `group`, `name` and the engine otherwise), then times call.run() as the experiment times
// its own calls on `device` (time_iterations with the common options' warm-up and iterations).
std::vector<double> time_peer(const std::string& group, const std::string& name, PeerCall& call, const Peer& peer,
                              const CommonOptions& o, Device device, const std::function<double(const Tensor&)>& error,
                              double tolerance);

// What open_peer("torch") would give: "torch 2.15.0+cu132", or "" in a build without libtorch or
// where its module is missing (c00 device-info reports it); nothing is loaded to answer.
std::string peer_available();

}  // namespace anatomy::tools
