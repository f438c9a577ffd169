// GPU tests of the engine's stream rules (Note [Backward streams], docs/autograd.md "CUDA
// streams"): each node's backward runs on its forward's stream, gradients crossing streams are
// ordered, and after backward() the caller's stream sees complete gradients with no device
// synchronize; a gradient read on another stream than the one that made it is recorded for it
// (record_stream), so its memory is not reused before that stream is done.
//
// The checks read results with .cpu(), which waits for the caller's current stream only. To make
// a missing wait show, long device work (repeated in-place adds over 256 MiB tensors, tens of
// milliseconds) is queued ahead of the backward on a pool stream, which the default stream does
// not wait for by itself.
#include <algorithm>
#include <vector>

#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

constexpr int64_t kBig = int64_t{1} << 26;  // fp32 elements: 256 MiB
constexpr int kLongRepeats = 200;

// Keeps the current stream busy for tens of milliseconds.
struct Busy {
  Tensor x = zeros({kBig}, kCuda);
  Tensor y = ones({kBig}, kCuda);
  void run() const {
    for (int i = 0; i < kLongRepeats; ++i) x.add_(y);
  }
};

// Same shape, and every element within `tol` of b's largest magnitude (read through .cpu()).
bool close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  const Tensor x = a.cpu(), y = b.cpu();
  if (x.sizes() != y.sizes()) return false;
  const double scale = std::max(1.0, y.abs().max().item<double>());
  return (x - y).abs().max().item<double>() <= tol * scale;
}

// The forward of the first test: loss = sum(tanh(x @ w) * 3).
Tensor mlp_loss(const Tensor& x, const Tensor& w) { return (x.mm(w).tanh() * 3).sum(); }

}  // namespace

TEST_CASE("cuda autograd streams: a forward on a pool stream, backward from the default stream") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x_cpu = randn({256, 128}), w_cpu = randn({128, 64});

  // All on the default stream: the reference.
  Tensor x_ref = x_cpu.to(kCuda).requires_grad_(), w_ref = w_cpu.to(kCuda).requires_grad_();
  mlp_loss(x_ref, w_ref).backward();
  const Tensor gx_ref = x_ref.grad().cpu(), gw_ref = w_ref.grad().cpu();

  const cuda::Stream def = cuda::current_stream(0);
  REQUIRE(def.is_default());
  const cuda::Stream side = cuda::get_stream_from_pool();
  Busy busy;
  Tensor x = x_cpu.to(kCuda).requires_grad_(), w = w_cpu.to(kCuda).requires_grad_();
  Tensor loss;
  side.wait_stream(def);  // the inputs were made on the default stream
  {
    cuda::StreamGuard guard(side);
    busy.run();  // everything queued on `side` from here runs tens of ms from now
    loss = mlp_loss(x, w);
  }
  def.wait_stream(side);  // the root gradient is made on the default stream; loss is read there
  REQUIRE(loss.grad_fn() != nullptr);
  CHECK(loss.grad_fn()->has_stream());
  CHECK(loss.grad_fn()->stream_device() == kCuda);
  CHECK(loss.grad_fn()->stream_id() == reinterpret_cast<uint64_t>(side.handle()));
  // The default stream waited for the forward; the backward's nodes queue on `side` again, behind
  // nothing, so make `side` slow once more: only the end-of-backward wait orders .cpu() after it.
  {
    cuda::StreamGuard guard(side);
    busy.run();
  }
  loss.backward();
  CHECK(cuda::current_stream(0) == def);
  REQUIRE(x.grad().defined());
  CHECK(x.grad().device() == kCuda);
  CHECK(w.grad().device() == kCuda);
  CHECK(close(x.grad(), gx_ref));  // .cpu() waits for the default stream only
  CHECK(close(w.grad(), gw_ref));
}

TEST_CASE("cuda autograd streams: two branches on two streams run backward on their own streams") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x_cpu = randn({1 << 16});
  // The reference, on the CPU: d/dx sum(exp(2x) + sin(3x)).
  Tensor x_host = x_cpu.clone().requires_grad_();
  ((x_host * 2).exp() + (x_host * 3).sin()).sum().backward();

  const cuda::Stream def = cuda::current_stream(0);
  const cuda::Stream s1 = cuda::get_stream_from_pool(), s2 = cuda::get_stream_from_pool();
  REQUIRE(s1 != s2);
  Busy busy;
  Tensor x = x_cpu.to(kCuda).requires_grad_();
  s1.wait_stream(def);
  s2.wait_stream(def);

  // Where each hook ran: a tensor hook runs with its node's stream current.
  std::vector<cudaStream_t> seen_a, seen_b, seen_leaf;
  Tensor a, b;
  {
    cuda::StreamGuard guard(s1);
    a = (x * 2).exp();  // x's first use: its AccumulateGrad records s1
    a.register_hook([&](const Tensor&) {
      seen_a.push_back(cuda::current_stream());
      return Tensor();
    });
  }
  {
    cuda::StreamGuard guard(s2);
    b = (x * 3).sin();
    // Branch b's backward is slow: its gradient for x is ready long after branch a's, so the
    // sum into x.grad (on s1) is right only if s1 waits for s2.
    b.register_hook([&](const Tensor&) {
      seen_b.push_back(cuda::current_stream());
      busy.run();
      return Tensor();
    });
  }
  x.register_hook([&](const Tensor&) {
    seen_leaf.push_back(cuda::current_stream());
    return Tensor();
  });
  def.wait_stream(s1);
  def.wait_stream(s2);
  Tensor loss = (a + b).sum();  // on the default stream
  CHECK(a.grad_fn()->stream_id() == reinterpret_cast<uint64_t>(s1.handle()));
  CHECK(b.grad_fn()->stream_id() == reinterpret_cast<uint64_t>(s2.handle()));
  CHECK(loss.grad_fn()->stream_id() == 0);  // the default stream

  loss.backward();
  CHECK(cuda::current_stream(0) == def);
  REQUIRE(seen_a.size() == 1);
  REQUIRE(seen_b.size() == 1);
  REQUIRE(seen_leaf.size() == 1);
  CHECK(seen_a[0] == s1.handle());
  CHECK(seen_b[0] == s2.handle());
  CHECK(seen_leaf[0] == s1.handle());
  REQUIRE(x.grad().defined());
  CHECK(x.grad().device() == kCuda);
  CHECK(close(x.grad(), x_host.grad(), 1e-4));
}

TEST_CASE("cuda autograd streams: backward under a pool stream, forward on the default stream") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x_cpu = randn({1 << 16});
  Tensor x = x_cpu.to(kCuda).requires_grad_();
  Tensor loss = (x * x).sum();  // every node on the default stream
  const cuda::Stream side = cuda::get_stream_from_pool();
  side.wait_stream(cuda::current_stream(0));
  std::vector<cudaStream_t> seen;
  x.register_hook([&](const Tensor&) {
    seen.push_back(cuda::current_stream());
    return Tensor();
  });
  Busy busy;
  {
    cuda::StreamGuard guard(side);
    // The root gradient is made on `side`, and the nodes (default stream) must wait for it.
    busy.run();
    loss.backward();
    CHECK(cuda::current_stream(0) == side);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == cudaStreamLegacy);  // the node ran on its forward's stream
    // `side`, the caller's stream, waited for the default stream's backward.
    Tensor g = x.grad() * 1;  // queued on side
    CHECK(close(g, x_cpu * 2));
  }
}

namespace {

// Blocks of device 0's caching allocator that were freed and wait for another stream's work.
int pending_free_blocks() {
  int n = 0;
  for (const alloc::SegmentInfo& segment : cuda::caching_allocator(0).segments()) {
    for (const alloc::BlockInfo& block : segment.blocks) n += block.pending_free ? 1 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("cuda autograd streams: a gradient read on another stream keeps its memory until that stream is done") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x_cpu = randn({1 << 16});
  Tensor x = x_cpu.to(kCuda).requires_grad_();
  const cuda::Stream def = cuda::current_stream(0);
  const cuda::Stream side = cuda::get_stream_from_pool();
  Busy busy;
  side.wait_stream(def);
  Tensor y;
  {
    cuda::StreamGuard guard(side);
    y = x * x;  // MulBackward0 runs on `side`
  }
  def.wait_stream(side);
  Tensor loss = y.sum();  // SumBackward0 on the default stream, where the root gradient is made
  {
    cuda::StreamGuard guard(side);
    busy.run();  // the backward's work on `side` starts tens of ms from now
  }
  const int pending_before = pending_free_blocks();
  loss.backward();
  // SumBackward0's gradient (made on the default stream) was read by MulBackward0's kernels on
  // `side`, still queued; the engine freed it when the node finished, and its block must wait
  // for `side` instead of going back to the default stream's pool at once.
  CHECK(pending_free_blocks() > pending_before);
  CHECK(close(x.grad(), x_cpu * 2));  // .cpu() waits for the default stream, which waited for side
  side.synchronize();
  // A new allocation processes the deferred frees: nothing waits any more.
  const Tensor after = empty({1}, kCuda);
  CHECK(pending_free_blocks() == pending_before);
}
