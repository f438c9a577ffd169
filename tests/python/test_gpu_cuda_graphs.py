"""anatomy.cuda.graph and CUDAGraph on a device (docs/cuda-graphs.md): a captured chain replays
with the inputs' new values, graphs share a pool, random ops draw fresh numbers per replay, an
uncapturable call raises and ends the capture, and a whole training step (loss, backward, the
optimizer's step) captured into one graph trains to the eager losses (skipped without a device,
conftest.py)."""

import pytest

import anatomy
from anatomy import cuda

A = anatomy.ops.aten


def warm_up(fn):
    with cuda.stream(cuda.graph_capture_stream()):
        fn()
    cuda.synchronize()


def test_graph_replays_with_new_inputs():
    x = A.zeros([1024], device="cuda")

    def chain():
        y = x
        for _ in range(10):
            y = y * 2.0 + 1.0
        return y

    warm_up(chain)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        assert cuda.is_current_stream_capturing()
        out = chain()
    assert g.has_graph and not g.is_capturing
    for v in (0.0, 1.0, -3.0):
        x.fill_(v)
        g.replay()
        expected = v
        for _ in range(10):
            expected = expected * 2.0 + 1.0
        assert out.cpu().tolist() == [expected] * 1024


def test_graphs_share_a_pool():
    x = A.ones([256], device="cuda")
    warm_up(lambda: (x + 1.0).exp())
    pool = cuda.graph_pool_handle()
    first, second = cuda.CUDAGraph(), cuda.CUDAGraph()
    with cuda.graph(first, pool=pool):
        mid = x + 1.0
    with cuda.graph(second, pool=pool):
        out = mid.exp()
    assert first.pool().id == second.pool().id == pool.id
    first.replay()
    second.replay()
    assert abs(out.cpu().tolist()[0] - 7.38905609893065) < 1e-5
    assert f"private pool {pool.id}" in cuda.memory_summary()


def test_random_ops_draw_fresh_numbers_per_replay():
    u = A.empty([512], device="cuda")
    warm_up(lambda: u.uniform_())
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        u.uniform_()
    g.replay()
    first = u.cpu().tolist()
    g.replay()
    assert u.cpu().tolist() != first


def test_uncapturable_call_raises_and_ends_the_capture():
    x = A.ones([8], device="cuda")
    warm_up(lambda: x.sum())
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="cannot be captured in a CUDA graph"):
        with cuda.graph(g):
            x.sum().item()
    assert not g.is_capturing and not g.has_graph
    assert x.sum().item() == 8.0
    with cuda.graph(g):
        y = x * 3.0
    g.replay()
    assert y.cpu().tolist() == [3.0] * 8


def test_capturable_adamw_step_replays_and_advances_its_counts():
    # The same gradients into two copies of a parameter: one optimizer steps eagerly, the other's
    # step is captured after its first (which makes the state) and replayed.
    from anatomy import nn, optim
    start = A.randn([33, 7], device="cuda")
    eager, graphed = nn.Parameter(start.clone()), nn.Parameter(start.clone())
    grad = A.zeros([33, 7], device="cuda")
    graphed.grad = grad
    a = optim.AdamW([eager], lr=0.01, capturable=True)
    b = optim.AdamW([graphed], lr=0.01, capturable=True)

    def new_gradient():
        grad.copy_(A.randn([33, 7], device="cuda"))
        eager.grad = grad.clone()

    new_gradient()
    a.step()
    b.step()
    cuda.synchronize()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        b.step()
    for _ in range(3):
        new_gradient()
        a.step()
        g.replay()
    assert b.state[0]["step"].item() == 4.0
    diff = (eager.detach() - graphed.detach()).abs().max().item()
    assert diff <= 1e-6


@pytest.mark.xfail(strict=True, reason="captured from Python, the whole step's losses differ from the eager ones "
                   "(H100: 0.990 against 1.151); the C++ CapturedStep's do not (docs/status.md)")
def test_a_whole_training_step_captured_trains_to_the_eager_losses():
    # The loss, backward() and the optimizer's step in one graph (docs/cuda-graphs.md, "A whole
    # step in one graph"), against the same model trained eagerly from the same weights.
    from anatomy import nn, optim
    from anatomy.nn import functional as F

    def mlp():
        return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16)).to("cuda")

    eager_model, graphed_model = mlp(), mlp()
    graphed_model.load_state_dict(eager_model.state_dict())
    batches = [(A.randn([8, 16], device="cuda"), A.randn([8, 16], device="cuda")) for _ in range(5)]
    eager_opt = optim.SGD(eager_model.parameters(), lr=0.05, momentum=0.9)
    eager_losses = []
    for x, y in batches:
        eager_opt.zero_grad()
        loss = F.mse_loss(eager_model(x), y)
        loss.backward()
        eager_opt.step()
        eager_losses.append(loss.item())

    opt = optim.SGD(graphed_model.parameters(), lr=0.05, momentum=0.9)
    static_x, static_y = batches[0][0].clone(), batches[0][1].clone()

    def step():
        opt.zero_grad()  # to none: the captured backward makes each .grad in the graph's pool
        loss = F.mse_loss(graphed_model(static_x), static_y)
        loss.backward()
        opt.step()
        return loss

    with cuda.stream(cuda.graph_capture_stream()):
        losses = [step().item()]  # the first step, eager: it makes the momentum buffers
    cuda.synchronize()
    opt.zero_grad()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        static_loss = step()
    for x, y in batches[1:]:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        losses.append(static_loss.item())
    assert all(p.grad is not None for p in graphed_model.parameters())
    for got, want in zip(losses, eager_losses):
        assert abs(got - want) <= 1e-4 * abs(want)
