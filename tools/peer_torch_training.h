// The --peer torch module's training workloads and its profiler (peer_torch_training.cpp), for
// TorchPeer (peer_torch.cpp): each as the Peer method of the same name says (tools/peer.h).
#pragma once

#include <memory>
#include <vector>

#include "anatomy/tools/peer.h"
#include "anatomy/tools/peer_torch_util.h"

namespace anatomy::tools::torch_peer {

std::unique_ptr<PeerCall> mlp_training_step(const std::vector<Tensor>& params,
                                            const std::vector<std::vector<Tensor>>& batches, double lr, double momentum,
                                            bool graphed);
std::unique_ptr<PeerCall> transformer_training_step(const std::vector<Tensor>& params, int64_t heads,
                                                    const std::vector<std::vector<Tensor>>& batches,
                                                    const optim::AdamWOptions& adamw, bool graphed);
std::unique_ptr<PeerCall> transformer_loss_backward(const std::vector<Tensor>& params, int64_t heads,
                                                    const Tensor& tokens, const Tensor& targets);
std::vector<PeerOperator> profile(PeerCall& call, Device device, double& device_us);

}  // namespace anatomy::tools::torch_peer
