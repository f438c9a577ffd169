"""anatomy.utils.checkpoint (activation checkpointing, as torch.utils.checkpoint's reentrant
form): outputs and every gradient equal the plain call's, bit for bit, with dropout inside (the
recomputation draws the same masks) and under autocast (the recomputation runs under the first
call's autocast state); the function runs twice, once in forward and once in backward; non-tensor
arguments pass through; a bad function or result is a TypeError."""

import pytest

import anatomy
from anatomy import nn
from anatomy.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.drop = nn.Linear(8, 16), nn.Linear(16, 8), nn.Dropout(0.3)

    def forward(self, x, scale=1.0):
        return x + self.fc2(self.drop(self.fc1(x).gelu())) * scale


def run(block, x, use_checkpoint, amp, scale=1.0):
    """The output and every gradient; the forward under autocast when amp, backward outside."""
    for p in block.parameters():
        p.grad = None
    x = x.detach().requires_grad_(True)
    anatomy.manual_seed(5)
    with anatomy.autocast("cpu", anatomy.bfloat16, enabled=amp):
        y = checkpoint(block, x, scale) if use_checkpoint else block(x, scale)
    (y * y).sum().backward()
    return y.detach(), x.grad, [p.grad for p in block.parameters()]


@pytest.mark.parametrize("amp", [False, True])
def test_gradients_are_those_of_the_plain_call(amp):
    anatomy.manual_seed(0)
    block, x = Block(), anatomy.randn(4, 8)
    plain = run(block, x, False, amp, 0.5)
    ckpt = run(block, x, True, amp, 0.5)
    assert anatomy.equal(plain[0], ckpt[0])
    assert anatomy.equal(plain[1], ckpt[1])
    for a, b in zip(plain[2], ckpt[2]):
        assert anatomy.equal(a, b)
    # Under autocast the products ran in bf16: the numbers differ from fp32's, so the equality
    # above says that the recomputation (in backward, outside the region) ran under autocast too.
    if amp:
        fp32 = run(block, x, False, False, 0.5)
        assert not anatomy.equal(fp32[0], plain[0]) and not anatomy.equal(fp32[1], plain[1])


def test_the_function_runs_again_in_backward_and_keeps_no_graph():
    calls = []
    w = anatomy.randn(3, 3, requires_grad=True)

    def f(x):
        calls.append(anatomy.is_grad_enabled())
        return x @ w, (x * 2)

    x = anatomy.randn(2, 3, requires_grad=True)
    a, b = checkpoint(f, x)
    assert calls == [False]  # forward records nothing
    assert a.grad_fn is not None and a.requires_grad
    (a.sum() + b.sum()).backward()
    assert calls == [False, True]  # backward recomputed with grad on
    assert anatomy.allclose(x.grad, w.sum(1).reshape(1, 3).expand(2, 3) + 2)
    assert anatomy.allclose(w.grad, x.detach().sum(0).reshape(3, 1).expand(3, 3))


def test_bad_functions_and_results():
    x = anatomy.randn(2, requires_grad=True)
    with pytest.raises(TypeError, match="callable"):
        checkpoint(3, x)
    with pytest.raises(TypeError, match="Tensor or a tuple of Tensors"):
        checkpoint(lambda t: 1.0, x)
    with pytest.raises(TypeError, match="Tensor or a tuple of Tensors"):
        checkpoint(lambda t: (t, "no"), x)
    with pytest.raises(ZeroDivisionError):
        checkpoint(lambda t: 1 / 0, x)
    with pytest.raises(NotImplementedError):
        checkpoint(lambda t: t, x, use_reentrant=False)
