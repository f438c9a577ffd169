// GPU tests of CUDA graphs (cuda::Graph, GraphCapture, GraphPool in cuda.h; docs/cuda-graphs.md):
// replays recompute from what the static inputs hold (element-wise kernels, cuBLAS products,
// reductions, softmax, layer_norm), the capture's memory comes from a private pool that graphs can
// share, random ops give fresh numbers per replay and an eager run's numbers, and every call that
// cannot be captured raises, ends the capture cleanly and leaves the engine usable.
#include <sstream>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

TensorOptions on_cuda() { return TensorOptions().device(kCuda); }

// Runs `fn` once on the capture stream (cuBLAS's workspace for the stream, lazy lookups) and waits.
template <typename F>
void warm_up(F&& fn) {
  {
    cuda::StreamGuard guard(cuda::graph_capture_stream());
    fn();
  }
  cuda::synchronize();
}

bool close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  return a.sizes() == b.sizes() && allclose(a.cpu(), b.cpu(), tol, tol);
}

}  // namespace

TEST_CASE("cuda graph: a chain of dependent adds replays with the inputs' new values") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = zeros({1000}, on_cuda());
  auto chain = [&] {
    Tensor y = x;
    for (int i = 0; i < 100; ++i) y = y + 1.0;
    return y;
  };
  warm_up(chain);
  cuda::Graph g;
  Tensor out;
  {
    cuda::GraphCapture capture(g);
    CHECK(cuda::is_current_stream_capturing());
    out = chain();
  }
  CHECK_FALSE(cuda::is_current_stream_capturing());
  CHECK(g.has_graph());
  CHECK_FALSE(g.is_capturing());
  for (double v : {0.0, 3.0, -7.5}) {
    x.fill_(v);
    g.replay();
    CHECK(out.cpu().eq(v + 100.0).all().item<bool>());
  }
}

TEST_CASE("cuda graph: products, reductions, softmax and layer_norm replay to the eager results") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = randn({64, 96}).to(kCuda), w = randn({96, 32}).to(kCuda), gamma = randn({32}).to(kCuda);
  auto step = [&] {
    Tensor h = a.matmul(w);
    Tensor s = softmax(h, 1);
    Tensor n = layer_norm(h, {32}, gamma);
    return std::vector<Tensor>{h, s, n, h.sum({0}), h.amax({1}), (s * n).mean()};
  };
  warm_up(step);
  cuda::Graph g;
  std::vector<Tensor> outs;
  {
    cuda::GraphCapture capture(g);
    outs = step();
  }
  for (int round = 0; round < 3; ++round) {
    a.copy_(randn({64, 96}).to(kCuda));
    w.copy_(randn({96, 32}).to(kCuda));
    g.replay();
    const std::vector<Tensor> want = step();
    for (size_t i = 0; i < want.size(); ++i) CHECK_MESSAGE(close(outs[i], want[i], 1e-4), "output ", i);
  }
}

TEST_CASE("cuda graph: the capture allocates from a private pool that lives with the graph") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = ones({1 << 20}, on_cuda());
  warm_up([&] { (void)(x * 2.0); });
  cuda::Graph g;
  CHECK(g.pool().is_none());
  Tensor y;
  {
    cuda::GraphCapture capture(g);
    y = (x * 2.0).exp();
  }
  const cuda::GraphPool pool = g.pool();
  REQUIRE_FALSE(pool.is_none());
  CHECK(pool.device_index() == 0);
  const std::string summary = cuda::memory_summary();
  CHECK_MESSAGE(summary.find(fmt::format("private pool {}", pool.id())) != std::string::npos, summary);
  g.replay();
  CHECK(close(y, (x * 2.0).exp()));
  g.reset();
  CHECK_FALSE(g.has_graph());
  CHECK(g.pool().is_none());
  CHECK(close(y, (x * 2.0).exp()));  // y's memory is still y's: the pool outlives the graph for it
}

TEST_CASE("cuda graph: graphs captured in order share one pool") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = randn({4096}).to(kCuda);
  warm_up([&] { (void)(x + 1.0).sin(); });
  const cuda::GraphPool pool = cuda::graph_pool_handle();
  cuda::Graph first, second;
  Tensor mid, out;
  {
    cuda::GraphCapture capture(first, pool);
    mid = x + 1.0;
  }
  {
    cuda::GraphCapture capture(second, pool);
    out = mid.sin();
  }
  CHECK(first.pool().id() == pool.id());
  CHECK(second.pool().id() == pool.id());
  x.copy_(randn({4096}).to(kCuda));
  first.replay();
  second.replay();
  CHECK(close(out, (x + 1.0).sin()));
}

TEST_CASE("cuda graph: random ops give fresh numbers on every replay, an eager run's numbers") {
  ANATOMY_REQUIRE_GPU();
  Tensor u = empty({1000}, on_cuda()), z = empty({333}, on_cuda());
  auto draw = [&] {
    u.uniform_(0, 1);
    z.normal_(0, 1);
  };
  warm_up(draw);
  cuda::Graph g;
  {
    cuda::GraphCapture capture(g);
    draw();
  }
  manual_seed(7);
  std::vector<Tensor> replayed;
  for (int i = 0; i < 3; ++i) {
    g.replay();
    replayed.push_back(cat({u, z}).cpu());
  }
  manual_seed(7);
  for (int i = 0; i < 3; ++i) {
    draw();
    CHECK(gpu_test::same_values(replayed[static_cast<size_t>(i)], cat({u, z}).cpu()));
  }
  CHECK_FALSE(gpu_test::same_values(replayed[0], replayed[1]));
  Tensor mask = empty({256}, on_cuda());
  cuda::Graph d;
  Tensor dropped, ones_in = ones({256}, on_cuda());
  warm_up([&] { (void)dropout(ones_in, 0.5, true); });
  {
    cuda::GraphCapture capture(d);
    dropped = dropout(ones_in, 0.5, true);
  }
  d.replay();
  const Tensor first = dropped.cpu();
  d.replay();
  CHECK_FALSE(gpu_test::same_values(first, dropped.cpu()));
}

TEST_CASE("cuda graph: uncapturable calls raise, end the capture, and the engine goes on") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = ones({16}, on_cuda());
  warm_up([&] { (void)x.sum(); });
  const Tensor host = ones({16});
  struct Case {
    const char* name;
    std::function<void()> call;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"item", [&] { (void)x.sum().item<float>(); }, "aten::_local_scalar_dense"},
      {"cpu", [&] { (void)x.cpu(); }, "a copy from the device to host memory"},
      {"print",
       [&] {
         std::ostringstream os;
         os << x;
       },
       "cannot be captured"},
      {"synchronize", [] { cuda::synchronize(); }, "cuda::synchronize"},
      {"pageable upload", [&] { x.copy_(host); }, "a copy from pageable host memory"},
      {"stream synchronize", [] { cuda::current_stream(-1).synchronize(); }, "Stream::synchronize"},
      {"empty_cache", [] { cuda::empty_cache(); }, "cuda::empty_cache"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    cuda::Graph g;
    {
      cuda::StreamGuard guard(cuda::graph_capture_stream());
      g.capture_begin();
      Tensor partial = x * 3.0;
      CHECK_THROWS_WITH_AS(c.call(), doctest::Contains(c.message), DeviceError);
      CHECK_FALSE(g.is_capturing());
      CHECK_FALSE(cuda::is_current_stream_capturing());
      CHECK_THROWS_WITH_AS(g.capture_end(), doctest::Contains("no capture is underway"), DeviceError);
    }
    CHECK(x.sum().item<float>() == 16.0f);  // eager work, waits included, runs again
    Tensor y;
    {
      cuda::GraphCapture capture(g);  // and the same graph captures
      y = x * 5.0;
    }
    g.replay();
    CHECK(y.cpu().eq(5.0).all().item<bool>());
  }
}

TEST_CASE("cuda graph: an exception leaving the capture scope abandons the capture") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = ones({8}, on_cuda());
  warm_up([&] { (void)(x + 1.0); });
  cuda::Graph g;
  CHECK_THROWS_AS(
      [&] {
        cuda::GraphCapture capture(g);
        (void)(x + 1.0);
        throw ValueError("user code failed");
      }(),
      ValueError);
  CHECK_FALSE(g.is_capturing());
  CHECK_FALSE(g.has_graph());
  CHECK(x.sum().item<float>() == 8.0f);
}

TEST_CASE("cuda graph: misuse is a DeviceError that changes nothing") {
  ANATOMY_REQUIRE_GPU();
  cuda::Graph g;
  CHECK_THROWS_WITH_AS(g.replay(), doctest::Contains("no graph to replay"), DeviceError);
  CHECK_THROWS_WITH_AS(g.capture_end(), doctest::Contains("no capture is underway"), DeviceError);
  {
    cuda::StreamGuard guard(cuda::default_stream());
    CHECK_THROWS_WITH_AS(g.capture_begin(), doctest::Contains("legacy default stream"), DeviceError);
  }
  CHECK_FALSE(g.is_capturing());
  Tensor x = ones({8}, on_cuda());
  warm_up([&] { (void)(x + 1.0); });
  {
    cuda::GraphCapture capture(g);
    CHECK_THROWS_WITH_AS(g.capture_begin(), doctest::Contains("already capturing"), DeviceError);
    (void)(x + 1.0);
  }
  CHECK_THROWS_WITH_AS(g.capture_begin(), doctest::Contains("reset()"), DeviceError);
  g.reset();
  cuda::Graph moved = std::move(g);
  CHECK_FALSE(moved.has_graph());
}
