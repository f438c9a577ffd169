"""anatomy.nn, anatomy.nn.functional and anatomy.optim (pure Python on the package's operators):
module bookkeeping, state_dict, each layer and loss against NumPy, default initialization by
statistics, the optimizers' steps against hand-computed numbers, clip_grad_norm_."""

import math

import numpy as np
import pytest

import anatomy
from anatomy import nn, optim
from anatomy.nn import functional as F
import nn_reference as ref
from nn_reference import arr, tensor


@pytest.fixture(autouse=True)
def _seed():
    anatomy.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.norm = nn.LayerNorm(4)
        self.register_buffer("running", anatomy.zeros(4))
        self.register_buffer("scratch", anatomy.ones(2), persistent=False)
        self.plain = anatomy.zeros(2)  # a tensor that does not require grad: an attribute

    def forward(self, x):
        return self.norm(self.fc(x)) + self.running


# ---- Module bookkeeping ----

def test_registration_and_listings():
    m = nn.Sequential(Block(), nn.ReLU(), nn.Linear(4, 2, bias=False))
    assert [n for n, _ in m.named_parameters()] == ["0.fc.weight", "0.fc.bias", "0.norm.weight", "0.norm.bias",
                                                    "2.weight"]
    assert [n for n, _ in m.named_buffers()] == ["0.running", "0.scratch"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "0.fc", "0.norm", "1", "2"]
    assert [type(c).__name__ for c in m.children()] == ["Block", "ReLU", "Linear"]
    # PyTorch's order: a module's own parameters and buffers, then its children's.
    assert list(m.state_dict()) == ["0.running", "0.fc.weight", "0.fc.bias", "0.norm.weight", "0.norm.bias",
                                    "2.weight"]
    assert m[2].bias is None and "plain" not in dict(m[0].named_buffers())
    assert len(list(m.parameters())) == 5 and len(m) == 3
    assert isinstance(m[0].fc.weight, nn.Parameter) and not isinstance(m[0].plain, nn.Parameter)


def test_shared_parameter_listed_once_and_reassignment():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight  # tied
    pair = nn.ModuleList([a, b])
    assert len(list(pair.parameters())) == 3
    assert len(pair.state_dict()) == 4  # state_dict keeps both names, as PyTorch's
    b.bias = None
    assert [n for n, _ in b.named_parameters()] == ["weight"]
    with pytest.raises(TypeError):
        b.weight = 3.0
    with pytest.raises(KeyError):
        b.register_buffer("a.b", anatomy.zeros(1))
    with pytest.raises(TypeError):
        b.register_module("child", object())
    del b.weight
    assert [n for n, _ in b.named_parameters()] == []


def test_train_eval_zero_grad_apply_to():
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    assert m.training and m[1].training
    m.eval()
    assert not m.training and not m[1].training
    m.train()
    m(anatomy.randn(2, 3)).sum().backward()
    assert m[0].weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert arr(m[0].weight.grad).sum() == 0
    m.zero_grad()
    assert m[0].weight.grad is None
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Dropout", "Sequential"]
    weight = m[0].weight
    m.to(anatomy.float64)  # in place: the same parameter objects, converted (t.data = ...)
    assert m[0].weight is weight
    assert m[0].weight.dtype == anatomy.float64 and m[0].weight.is_leaf and m[0].weight.requires_grad
    m.to("cpu")  # nothing to do
    assert m[0].weight is weight
    with pytest.raises(TypeError):
        m.to(anatomy.int64)


def test_an_optimizer_made_before_to_steps_the_converted_parameters():
    lin = nn.Linear(3, 2)
    opt = optim.SGD(lin.parameters(), lr=0.1)
    lin.double()
    before = arr(lin.weight).copy()
    lin(anatomy.randn(4, 3, dtype=anatomy.float64)).sum().backward()
    opt.step()
    assert lin.weight.dtype == anatomy.float64 and lin.weight.grad.dtype == anatomy.float64
    np.testing.assert_allclose(arr(lin.weight), before - 0.1 * arr(lin.weight.grad))


def test_data_shares_memory_and_setting_it_changes_every_handle():
    w = anatomy.randn(2, 3, requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.data_ptr() == w.data_ptr()
    y = (w * w).sum()  # saves w
    d.add_(1)  # through .data: autograd does not see it (its own version counter)
    y.backward()
    np.testing.assert_allclose(arr(w.grad), 2 * arr(w))
    handle = w
    w.data = anatomy.zeros(4, dtype=anatomy.float64)
    assert handle.shape == (4,) and handle.dtype == anatomy.float64 and handle.requires_grad
    with pytest.raises(TypeError, match="floating-point data only"):
        w.data = anatomy.zeros(2, dtype=anatomy.int64)


def test_repr_as_pytorch():
    m = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Dropout(0.1), nn.Embedding(5, 2, padding_idx=0))
    assert repr(m) == ("Sequential(\n"
                       "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
                       "  (1): GELU(approximate='none')\n"
                       "  (2): Dropout(p=0.1, inplace=False)\n"
                       "  (3): Embedding(5, 2, padding_idx=0)\n"
                       ")")
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    assert repr(nn.ReLU()) == "ReLU()"


def test_forward_missing_is_not_implemented():
    with pytest.raises(NotImplementedError):
        nn.Module()(anatomy.zeros(1))


# ---- state_dict ----

def test_state_dict_round_trip_gives_same_outputs():
    a, b = Block(), Block()
    a.running.fill_(0.5)
    x = anatomy.randn(2, 3)
    assert not np.allclose(arr(a(x)), arr(b(x)))
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(arr(a(x)), arr(b(x)))
    assert b.fc.weight.requires_grad and b.fc.weight.is_leaf


def test_transformer_keys_are_pytorchs():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
        "norm2.weight", "norm2.bias"]


def test_strict_load_reports_everything_and_changes_nothing():
    m = Block()
    before = {k: arr(v) for k, v in m.state_dict().items()}
    sd = dict(m.state_dict())
    del sd["norm.bias"]
    sd["extra"] = anatomy.zeros(1)
    sd["fc.weight"] = anatomy.zeros(2, 2)
    sd["fc.bias"] = anatomy.full([4], 7.0)  # valid, but must not be copied since the load fails
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    msg = str(e.value)
    assert 'Unexpected key(s) in state_dict: "extra"' in msg
    assert 'Missing key(s) in state_dict: "norm.bias"' in msg
    assert "size mismatch for fc.weight" in msg
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(arr(v), before[k])
    # Not strict: the keys are returned; a shape mismatch is still an error.
    del sd["fc.weight"]
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc.weight", "norm.bias"] and result.unexpected_keys == ["extra"]
    np.testing.assert_array_equal(arr(m.fc.bias), np.full(4, 7.0))
    with pytest.raises(TypeError):
        m.load_state_dict([1, 2])


def test_load_converts_dtype():
    m = nn.Linear(2, 2)
    sd = {k: v.double() for k, v in nn.Linear(2, 2).state_dict().items()}
    m.load_state_dict(sd)
    assert m.weight.dtype == anatomy.float32
    np.testing.assert_allclose(arr(m.weight), arr(sd["weight"]), rtol=1e-6)


# ---- layers against NumPy ----

def test_linear_and_functional():
    m = nn.Linear(3, 2)
    x = anatomy.randn(4, 3)
    sd = {k: arr(v) for k, v in m.state_dict().items()}
    np.testing.assert_allclose(arr(m(x)), ref.linear(arr(x), sd["weight"], sd["bias"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(F.relu(x)), ref.relu(arr(x)))
    np.testing.assert_allclose(arr(nn.GELU()(x)), ref.gelu(arr(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(F.softmax(x, 1)), ref.softmax(arr(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(F.log_softmax(x, -1)), ref.log_softmax(arr(x)), rtol=1e-5, atol=1e-6)


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

# (module, functional call, NumPy formula): torch.nn's definitions of each activation.
ACTIVATIONS = [
    (nn.SiLU(), F.silu, lambda x: x / (1 + np.exp(-x))),
    (nn.Sigmoid(), F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), F.tanh, np.tanh),
    (nn.Softplus(), F.softplus, _softplus),
    (nn.Softplus(beta=2.0, threshold=1.0), lambda x: F.softplus(x, 2.0, 1.0), lambda x: _softplus(x, 2.0, 1.0)),
    (nn.ELU(), F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    (nn.ELU(alpha=0.5), lambda x: F.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.SELU(), F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    (nn.LeakyReLU(0.2), lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.Hardtanh(-0.5, 0.7), lambda x: F.hardtanh(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7)),
    (nn.ReLU6(), F.relu6, lambda x: np.clip(x, 0, 6)),
    (nn.Mish(), F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Hardswish(), F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Hardsigmoid(), F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
]


@pytest.mark.parametrize("module,function,formula", ACTIVATIONS,
                         ids=lambda v: repr(v) if isinstance(v, nn.Module) else "")
def test_activations_match_their_formulas(module, function, formula):
    x = anatomy.randn(5, 7) * 4
    want = formula(arr(x).astype(np.float64))
    np.testing.assert_allclose(arr(module(x)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(function(x)), want, rtol=1e-5, atol=1e-6)
    # Differentiable through the module, as the operator's derivative says.
    xg = x.detach().requires_grad_(True)
    module(xg).sum().backward()
    assert xg.grad is not None and xg.grad.shape == x.shape


def test_inplace_activations_write_into_their_input():
    for module, formula in [(nn.SiLU(inplace=True), lambda x: x / (1 + np.exp(-x))),
                            (nn.ELU(inplace=True), lambda x: np.where(x > 0, x, np.expm1(x))),
                            (nn.LeakyReLU(inplace=True), lambda x: np.where(x > 0, x, 0.01 * x)),
                            (nn.Hardtanh(inplace=True), lambda x: np.clip(x, -1, 1)),
                            (nn.ReLU6(inplace=True), lambda x: np.clip(x, 0, 6)),
                            (nn.SELU(inplace=True),
                             lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
                            (nn.Mish(inplace=True), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
                            (nn.Hardswish(inplace=True), lambda x: x * np.clip(x + 3, 0, 6) / 6),
                            (nn.Hardsigmoid(inplace=True), lambda x: np.clip(x + 3, 0, 6) / 6)]:
        x = anatomy.randn(3, 4) * 4
        want = formula(arr(x).astype(np.float64))
        y = module(x)
        np.testing.assert_allclose(arr(x), want, rtol=1e-5, atol=1e-6, err_msg=repr(module))
        assert y.data_ptr() == x.data_ptr()


def test_activation_reprs_and_bad_options():
    assert repr(nn.SiLU()) == "SiLU()"
    assert repr(nn.SiLU(inplace=True)) == "SiLU(inplace=True)"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.LogSoftmax(dim=-1)) == "LogSoftmax(dim=-1)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.Tanh()) == "Tanh()"
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(1.0, -1.0)
    # The functional form is torch's clamp: min_val above max_val gives max_val everywhere.
    np.testing.assert_array_equal(arr(F.hardtanh(anatomy.tensor([-3.0, 0.0, 3.0]), 1.0, -1.0)), [-1.0, -1.0, -1.0])
    x = anatomy.randn(4, 3)
    np.testing.assert_allclose(arr(nn.Softmax(dim=1)(x)), ref.softmax(arr(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(nn.LogSoftmax(dim=1)(x)), ref.log_softmax(arr(x)), rtol=1e-5, atol=1e-6)


def test_rms_norm_module_and_functional():
    x = anatomy.randn(4, 6)
    m = nn.RMSNorm(6)
    assert [n for n, _ in m.named_parameters()] == ["weight"] and arr(m.weight).tolist() == [1.0] * 6
    assert repr(m) == "RMSNorm((6,), eps=None, elementwise_affine=True)"
    with anatomy.no_grad():
        m.weight.copy_(anatomy.arange(6, dtype=anatomy.float32) * 0.5 + 0.25)
    a, w = arr(x).astype(np.float64), arr(m.weight).astype(np.float64)
    eps = float(np.finfo(np.float32).eps)
    want = a / np.sqrt((a * a).mean(-1, keepdims=True) + eps) * w
    np.testing.assert_allclose(arr(m(x)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(F.rms_norm(x, 6, m.weight, 1e-3)),
                               a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-3) * w, rtol=1e-5, atol=1e-6)
    assert list(nn.RMSNorm((2, 3), elementwise_affine=False).parameters()) == []


def test_module_dict_registers_its_modules_by_key():
    d = nn.ModuleDict({"enc": nn.Linear(3, 4), "dec": nn.Linear(4, 3)})
    d["act"] = nn.ReLU()
    assert list(d.keys()) == ["enc", "dec", "act"] and len(d) == 3 and "enc" in d
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert sorted(d.state_dict()) == ["dec.bias", "dec.weight", "enc.bias", "enc.weight"]
    assert isinstance(d.pop("act"), nn.ReLU) and list(d) == ["enc", "dec"]
    x = anatomy.randn(2, 3)
    assert d["dec"](d["enc"](x)).shape == (2, 3)
    del d["dec"]
    assert list(d.keys()) == ["enc"]
    with pytest.raises(KeyError):
        d["missing"]


def test_embedding_padding_row_gets_no_gradient():
    m = nn.Embedding(5, 3, padding_idx=-1)
    assert m.padding_idx == 4 and arr(m.weight)[4].tolist() == [0, 0, 0]
    idx = anatomy.tensor([[0, 4, 2], [4, 4, 1]])
    out = m(idx)
    np.testing.assert_array_equal(arr(out), arr(m.weight)[arr(idx)])
    (out * 2).sum().backward()
    g = arr(m.weight.grad)
    assert g[4].tolist() == [0, 0, 0] and g[0].tolist() == [2, 2, 2]
    with pytest.raises(ValueError):
        nn.Embedding(5, 3, padding_idx=5)


def test_layer_norm():
    m = nn.LayerNorm(4, eps=1e-5)
    with anatomy.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-1, 1)
    x = anatomy.randn(2, 3, 4)
    expect = ref.layer_norm(arr(x), arr(m.weight), arr(m.bias))
    np.testing.assert_allclose(arr(m(x)), expect, rtol=1e-4, atol=1e-5)
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None


def test_dropout():
    m = nn.Dropout(0.5)
    x = anatomy.ones(1000)
    y = arr(m(x))
    assert set(np.unique(y)) <= {0.0, 2.0} and 300 < (y == 0).sum() < 700
    m.eval()
    np.testing.assert_array_equal(arr(m(x)), arr(x))
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
    with pytest.raises(ValueError):
        F.dropout(x, -0.1)


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_attention_batch_first(causal):
    m = nn.MultiheadAttention(8, 2, batch_first=True)
    with anatomy.no_grad():  # non-zero biases, so that they are checked too
        m.in_proj_bias.uniform_(-0.5, 0.5)
        m.out_proj.bias.uniform_(-0.5, 0.5)
    x = anatomy.randn(2, 5, 8)
    sd = {k: arr(v) for k, v in m.state_dict().items()}
    mask = ref.causal_mask(5) if causal else None
    expect = ref.mha(arr(x), arr(x), arr(x), sd["in_proj_weight"], sd["in_proj_bias"], sd["out_proj.weight"],
                     sd["out_proj.bias"], 2, mask)
    out, weights = m(x, x, x, is_causal=causal)
    np.testing.assert_allclose(arr(out), expect, rtol=1e-4, atol=1e-5)
    assert tuple(weights.shape) == (2, 5, 5)
    np.testing.assert_allclose(arr(weights).sum(-1), np.ones((2, 5)), rtol=1e-5)
    if causal:
        assert np.all(np.triu(arr(weights)[0], 1) == 0)
    out2, none = m(x, x, x, need_weights=False, is_causal=causal)
    assert none is None
    np.testing.assert_allclose(arr(out2), expect, rtol=1e-4, atol=1e-5)


def test_multihead_attention_masks_and_sequence_first():
    m = nn.MultiheadAttention(4, 2)  # [L, N, E]
    x = anatomy.randn(3, 2, 4)
    pad = anatomy.tensor([[False, False, True], [False, False, False]])
    out, _ = m(x, x, x, key_padding_mask=pad)
    sd = {k: arr(v) for k, v in m.state_dict().items()}
    xb = arr(x).transpose(1, 0, 2)
    mask = np.where(arr(pad), -np.inf, 0.0)[:, None, None, :]
    expect = ref.mha(xb, xb, xb, sd["in_proj_weight"], sd["in_proj_bias"], sd["out_proj.weight"],
                     sd["out_proj.bias"], 2, mask).transpose(1, 0, 2)
    np.testing.assert_allclose(arr(out), expect, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        m(x, x, x, attn_mask=anatomy.zeros(2, 2))
    with pytest.raises(ValueError):
        nn.MultiheadAttention(6, 4)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_transformer_encoder_layer(norm_first, activation):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=activation, batch_first=True,
                                       norm_first=norm_first)
    with anatomy.no_grad():
        for name, p in layer.named_parameters():
            if name.endswith("bias"):
                p.uniform_(-0.3, 0.3)
    x = anatomy.randn(2, 5, 8)
    sd = {k: arr(v) for k, v in layer.state_dict().items()}
    act = ref.gelu if activation == "gelu" else ref.relu
    expect = ref.encoder_layer(arr(x), sd, 2, act, norm_first, ref.causal_mask(5))
    np.testing.assert_allclose(arr(layer(x, is_causal=True)), expect, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_gradients_flow_through_a_stack():
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                                                 norm_first=True))
    model(anatomy.randn(2, 3, 4)).pow(2).mean().backward()
    assert all(p.grad is not None for p in model.parameters())


# ---- default initialization (PyTorch's bounds) ----

def test_default_init_bounds():
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = arr(lin.weight), arr(lin.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound and abs(w.mean()) < 0.01 * bound
    assert np.abs(b).max() <= bound
    emb = arr(nn.Embedding(1000, 100).weight)
    assert abs(emb.mean()) < 0.01 and abs(emb.std() - 1) < 0.01
    mha = nn.MultiheadAttention(64, 4)
    xavier = math.sqrt(6 / (64 + 192))
    w = arr(mha.in_proj_weight)
    assert np.abs(w).max() <= xavier and abs(w.std() - xavier / math.sqrt(3)) < 0.02 * xavier
    assert np.all(arr(mha.in_proj_bias) == 0) and np.all(arr(mha.out_proj.bias) == 0)
    assert np.abs(arr(mha.out_proj.weight)).max() <= 1 / 8
    norm = nn.LayerNorm(5)
    assert np.all(arr(norm.weight) == 1) and np.all(arr(norm.bias) == 0)


def test_init_functions():
    t = anatomy.empty(200, 100)
    nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(arr(t).std() - math.sqrt(2 / 200)) < 0.005
    nn.init.xavier_normal_(t)
    assert abs(arr(t).std() - math.sqrt(2 / 300)) < 0.005
    assert nn.init.calculate_gain("tanh") == 5 / 3
    with pytest.raises(ValueError):
        nn.init.xavier_uniform_(anatomy.empty(3))
    with pytest.raises(ValueError):
        nn.init.calculate_gain("swish")


# ---- losses ----

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(reduction):
    logits = np.random.default_rng(1).normal(size=(6, 5))
    target = np.array([0, 4, -100, 2, 2, 1])
    weight = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    x, t, w = tensor(logits), anatomy.tensor(target.tolist()), tensor(weight)
    for kw in [{}, {"label_smoothing": 0.2}, {"weight": w}, {"weight": w, "label_smoothing": 0.1}]:
        got = F.cross_entropy(x, t, reduction=reduction, **kw)
        ref_kw = {k: (weight if k == "weight" else v) for k, v in kw.items()}
        expect = ref.cross_entropy(logits, target, reduction=reduction, **ref_kw)
        np.testing.assert_allclose(arr(got), expect, rtol=1e-5, atol=1e-6, err_msg=str(kw))
    got = F.cross_entropy(x, anatomy.tensor([1, 1, 9, 1, 1, 1]), ignore_index=9, reduction=reduction)
    np.testing.assert_allclose(arr(got), ref.cross_entropy(logits, np.array([1, 1, 9, 1, 1, 1]), ignore_index=9,
                                                           reduction=reduction), rtol=1e-5, atol=1e-6)


def test_cross_entropy_gradient_and_probabilities():
    logits = np.random.default_rng(2).normal(size=(3, 4))
    x = tensor(logits, requires_grad=True)
    F.cross_entropy(x, anatomy.tensor([1, 0, 3])).backward()
    onehot = np.eye(4)[[1, 0, 3]]
    np.testing.assert_allclose(arr(x.grad), (ref.softmax(logits) - onehot) / 3, rtol=1e-5, atol=1e-6)
    probs = ref.softmax(np.random.default_rng(3).normal(size=(3, 4)))
    got = F.cross_entropy(tensor(logits), tensor(probs))
    np.testing.assert_allclose(arr(got), -(probs * ref.log_softmax(logits)).sum(-1).mean(), rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_and_nll_losses(reduction):
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    x, y = tensor(a), tensor(b)
    tol = {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(arr(F.mse_loss(x, y, reduction=reduction)), ref.reduce((a - b) ** 2, reduction), **tol)
    np.testing.assert_allclose(arr(F.l1_loss(x, y, reduction=reduction)), ref.reduce(np.abs(a - b), reduction), **tol)
    for beta in (1.0, 0.5):
        np.testing.assert_allclose(arr(F.smooth_l1_loss(x, y, reduction=reduction, beta=beta)),
                                   ref.reduce(ref.smooth_l1(a - b, beta), reduction), **tol)
    target = (b > 0).astype(np.float64)
    pos_weight, weight = np.array([1.0, 2.0, 0.5]), rng.uniform(0.5, 1.5, size=(4, 3))
    np.testing.assert_allclose(
        arr(F.binary_cross_entropy_with_logits(x, tensor(target), weight=tensor(weight),
                                               pos_weight=tensor(pos_weight), reduction=reduction)),
        ref.reduce(ref.bce_with_logits(a, target, weight, pos_weight), reduction), **tol)
    logp = ref.log_softmax(a)
    cls = np.array([0, 2, -100, 1])
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(arr(F.nll_loss(tensor(logp), anatomy.tensor(cls.tolist()), weight=tensor(w),
                                              reduction=reduction)),
                               ref.nll_loss(logp, cls, w, reduction), **tol)


def test_loss_argument_errors():
    x = anatomy.randn(2, 3)
    with pytest.raises(ValueError):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError):
        F.cross_entropy(x, anatomy.tensor([0, 1]), label_smoothing=1.5)
    # The legacy pair, read as PyTorch reads it.
    np.testing.assert_allclose(arr(F.l1_loss(x, x * 0, reduce=False)), np.abs(arr(x)), rtol=1e-6)
    with pytest.raises((ValueError, IndexError, RuntimeError)):
        F.cross_entropy(x, anatomy.tensor([0, 1, 2]))


def test_scaled_dot_product_attention():
    q, k, v = anatomy.randn(2, 3, 4), anatomy.randn(2, 5, 4), anatomy.randn(2, 5, 4)
    mask = anatomy.tensor([[True] * 5, [True, True, False, False, False], [True, False, True, False, True]])
    expect = ref.attention(arr(q), arr(k), arr(v), np.where(arr(mask), 0.0, -np.inf))
    np.testing.assert_allclose(arr(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)), expect, rtol=1e-5,
                               atol=1e-6)


# ---- optimizers ----

def _run(opt_factory, p0, grads):
    """The parameter after one step per gradient, and the optimizer."""
    p = nn.Parameter(tensor(p0))
    opt = opt_factory([p])
    for g in grads:
        opt.zero_grad()
        p.grad = tensor(g)
        opt.step()
    return p, opt


def test_adamw_matches_torch_arithmetic():
    p0 = np.array([1.0, -2.0, 0.5])
    grads = [np.array([0.1, -0.3, 2.0]), np.array([-0.5, 0.2, 1.0]), np.array([0.3, 0.3, -0.7])]
    kw = {"lr": 0.1, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.05}
    p, opt = _run(lambda ps: optim.AdamW(ps, **kw), p0, grads)
    np.testing.assert_allclose(arr(p), ref.adamw_steps(p0, grads, **kw), rtol=1e-5, atol=1e-6)
    # One step by hand: m = 0.2 g, v = 0.05 g^2, so the update is lr * sign(g) (eps aside).
    q, _ = _run(lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.0), np.array([1.0]), [np.array([4.0])])
    np.testing.assert_allclose(arr(q), [0.9], rtol=1e-6)
    assert arr(opt.state[0]["step"]) == 3
    # capturable: the same steps, the count a float64 tensor on the parameter's device.
    c, copt = _run(lambda ps: optim.AdamW(ps, capturable=True, **kw), p0, grads)
    np.testing.assert_allclose(arr(c), arr(p), rtol=1e-6, atol=1e-7)
    assert copt.state[0]["step"].dtype == anatomy.float64 and arr(copt.state[0]["step"]) == 3


def test_adamw_groups_lr_and_state_dict():
    a, b = nn.Parameter(anatomy.ones(2)), nn.Parameter(anatomy.ones(2))
    opt = optim.AdamW([{"params": [a]}, {"params": [b], "weight_decay": 0.0}], lr=0.01)
    assert opt.param_groups[1]["weight_decay"] == 0.0 and opt.param_groups[0]["weight_decay"] == 0.01
    opt.param_groups[1]["lr"] = 0.0  # a settable rate: this group does not move
    a.grad, b.grad = anatomy.ones(2), anatomy.ones(2)
    opt.step()
    assert arr(b).tolist() == [1, 1] and arr(a)[0] < 1
    # A second optimizer loaded from the first's state takes the same next step.
    sd = opt.state_dict()
    assert sd["param_groups"][1]["params"] == [1] and set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    a2, b2 = nn.Parameter(a.detach().clone()), nn.Parameter(b.detach().clone())
    opt2 = optim.AdamW([{"params": [a2]}, {"params": [b2]}])
    opt2.load_state_dict(sd)
    for o, ps in ((opt, (a, b)), (opt2, (a2, b2))):
        for p in ps:
            p.grad = anatomy.full([2], 0.5)
        o.step()
    np.testing.assert_array_equal(arr(a), arr(a2))
    assert opt2.param_groups[1]["lr"] == 0.0
    with pytest.raises(ValueError):
        optim.AdamW([a]).load_state_dict(sd)
    bad = {"state": {0: dict(sd["state"][0], exp_avg=anatomy.zeros(5))}, "param_groups": sd["param_groups"]}
    with pytest.raises(ValueError):
        opt2.load_state_dict(bad)
    assert opt2.param_groups[1]["lr"] == 0.0 and tuple(opt2.state[0]["exp_avg"].shape) == (2,)  # unchanged
    with pytest.raises(ValueError):
        optim.AdamW([a], lr=-1)
    with pytest.raises(ValueError):
        optim.AdamW([a, a])
    with pytest.raises(ValueError):
        optim.AdamW([anatomy.ones(2)])


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"lr": 0.1, "momentum": 0.9},
                                {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01},
                                {"lr": 0.1, "momentum": 0.5, "nesterov": True}])
def test_sgd_matches_torch_arithmetic(kw):
    p0 = np.array([1.0, -2.0])
    grads = [np.array([0.5, 1.0]), np.array([-1.0, 0.25]), np.array([2.0, 0.0])]
    p, _ = _run(lambda ps: optim.SGD(ps, **kw), p0, grads)
    np.testing.assert_allclose(arr(p), ref.sgd_steps(p0, grads, **kw), rtol=1e-6, atol=1e-7)


def test_sgd_by_hand_and_errors():
    p, _ = _run(lambda ps: optim.SGD(ps, lr=0.5, momentum=0.9), np.array([1.0]), [np.array([1.0])] * 2)
    np.testing.assert_allclose(arr(p), [1 - 0.5 - 0.5 * 1.9], rtol=1e-6)  # buffers 1, then 1.9
    with pytest.raises(ValueError):
        optim.SGD([nn.Parameter(anatomy.ones(1))], lr=0.1, nesterov=True)
    with pytest.raises(TypeError):
        optim.SGD(anatomy.ones(1))


def test_lambda_lr():
    p = nn.Parameter(anatomy.ones(1))
    opt = optim.SGD([{"params": [p]}], lr=0.2)
    sched = optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    assert opt.param_groups[0]["lr"] == 0.2
    sched.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05) and sched.get_last_lr() == [pytest.approx(0.05)]
    assert "lr_lambdas" not in sched.state_dict() and sched.state_dict()["last_epoch"] == 2


def test_clip_grad_norm():
    a, b = nn.Parameter(anatomy.zeros(2)), nn.Parameter(anatomy.zeros(1))
    a.grad, b.grad = anatomy.tensor([3.0, 0.0]), anatomy.tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert arr(total) == pytest.approx(5.0)
    np.testing.assert_allclose(arr(a.grad), [0.6, 0.0], rtol=1e-5)
    np.testing.assert_allclose(arr(b.grad), [0.8], rtol=1e-5)
    total = nn.utils.clip_grad_norm_([a, b], 10.0)  # under the limit: unchanged
    np.testing.assert_allclose(arr(b.grad), [0.8], rtol=1e-5)
    a.grad = anatomy.tensor([-3.0, 1.0])
    assert arr(nn.utils.clip_grad_norm_([a, b], 1.5, norm_type=math.inf)) == pytest.approx(3.0)
    np.testing.assert_allclose(arr(a.grad), [-1.5, 0.5], rtol=1e-5)
    a.grad = anatomy.tensor([3.0, 4.0])
    assert arr(nn.utils.clip_grad_norm_([a], 100.0, norm_type=3)) == pytest.approx(91 ** (1 / 3), rel=1e-6)
    assert arr(nn.utils.clip_grad_norm_([nn.Parameter(anatomy.zeros(1))], 1.0)) == 0
    with pytest.raises(ValueError):
        nn.utils.clip_grad_norm_([a], -1.0)
    a.grad = anatomy.tensor([math.nan, 1.0])
    with pytest.raises(RuntimeError):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)


@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_norm_dtypes(foreach):
    """Gradients of two dtypes: one total (fp32), each gradient scaled in its own dtype."""
    a, b = nn.Parameter(anatomy.zeros(2)), nn.Parameter(anatomy.zeros(1, dtype=anatomy.float64))
    a.grad, b.grad = anatomy.tensor([1.0, 2.0]), anatomy.tensor([2.0], dtype=anatomy.float64)
    total = nn.utils.clip_grad_norm_([a, b], 1.0, norm_type=3, foreach=foreach)
    assert arr(total) == pytest.approx(17 ** (1 / 3), rel=1e-6)
    np.testing.assert_allclose(arr(a.grad), [1 / 17 ** (1 / 3), 2 / 17 ** (1 / 3)], rtol=1e-6)
    assert b.grad.dtype == anatomy.float64 and arr(b.grad)[0] == pytest.approx(2 / 17 ** (1 / 3), rel=1e-6)
    norms = anatomy.ops.aten._foreach_norm([a.grad, b.grad], 2.0)
    assert [n.dtype for n in norms] == [anatomy.float32, anatomy.float64]


@pytest.mark.parametrize("call, error", [
    (lambda: nn.Linear(3, 2)(anatomy.randn(2, 4)), ValueError),
    (lambda: nn.Embedding(3, 2)(anatomy.tensor([5])), IndexError),
    (lambda: nn.Embedding(3, 2)(anatomy.randn(2)), TypeError),
    (lambda: nn.LayerNorm(4)(anatomy.randn(2, 3)), ValueError),
    (lambda: F.cross_entropy(anatomy.randn(2, 3), anatomy.tensor([0, 7])), IndexError),
    (lambda: F.nll_loss(anatomy.randn(2, 3), anatomy.randn(2)), TypeError),
    (lambda: F.mse_loss(anatomy.randn(2), anatomy.randn(3)), ValueError),
    (lambda: nn.MultiheadAttention(4, 2)(*[anatomy.randn(2, 3, 5)] * 3), ValueError),
    (lambda: nn.MultiheadAttention(4, 2)(anatomy.randn(4), anatomy.randn(4), anatomy.randn(4)), ValueError),
    (lambda: nn.Linear(-1, 2), ValueError),
    (lambda: nn.Parameter(anatomy.tensor([1, 2])), TypeError),
    (lambda: nn.Parameter([1.0]), TypeError),
])
def test_bad_inputs_raise(call, error):
    with pytest.raises(error):
        call()


def test_to_keeps_tied_weights_tied():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight
    pair = nn.ModuleList([a, b]).double()
    assert pair[0].weight is pair[1].weight and pair[0].weight.dtype == anatomy.float64
    assert len(list(pair.parameters())) == 3


def test_multihead_attention_unbatched_and_per_head_weights():
    m = nn.MultiheadAttention(4, 2, batch_first=True)
    x = anatomy.randn(3, 4)
    out, w = m(x, x, x, average_attn_weights=False)
    batched, wb = m(x.unsqueeze(0), x.unsqueeze(0), x.unsqueeze(0), average_attn_weights=False)
    np.testing.assert_allclose(arr(out), arr(batched)[0], rtol=1e-6)
    assert tuple(w.shape) == (2, 3, 3) and tuple(wb.shape) == (1, 2, 3, 3)


def test_registration_refuses_to_shadow_attributes():
    m = nn.Linear(2, 2)
    with pytest.raises(KeyError):
        m.register_buffer("forward", anatomy.zeros(1))
    with pytest.raises(KeyError):
        m.register_parameter("", None)
    with pytest.raises(TypeError):
        m.register_buffer("b", [1.0])
    with pytest.raises(KeyError):
        m.register_buffer("weight", anatomy.zeros(1))  # a parameter's name
    m.register_parameter("bias", None)  # a parameter is replaced by another (or None)
    m.register_buffer("b", anatomy.zeros(1))
    m.register_buffer("b", anatomy.ones(1), persistent=False)
    assert [n for n, _ in m.named_parameters()] == ["weight"] and list(m.state_dict()) == ["weight"]


def test_functional_forms():
    x = anatomy.randn(2, 3)
    np.testing.assert_allclose(arr(F.softmax(x)), ref.softmax(arr(x), 1), rtol=1e-6)  # PyTorch's implicit dim
    np.testing.assert_allclose(arr(F.log_softmax(x[0])), ref.log_softmax(arr(x)[0]), rtol=1e-6, atol=1e-6)
    w = nn.Parameter(anatomy.randn(4, 2))
    F.embedding(anatomy.tensor([3, 1, 3]), w, padding_idx=-1).sum().backward()
    assert arr(w.grad).tolist() == [[0, 0], [1, 1], [0, 0], [0, 0]]
    y = anatomy.tensor([-1.0, 2.0])
    F.relu(y, inplace=True)
    assert arr(y).tolist() == [0, 2]
    with pytest.raises(NotImplementedError):
        F.scaled_dot_product_attention(x, x, x, enable_gqa=True)


def test_refused_adamw_step_changes_nothing():
    p = nn.Parameter(anatomy.ones(3))
    opt = optim.AdamW([p])
    p.grad = anatomy.ones(3)
    opt.step()
    opt.state[0]["exp_avg"] = anatomy.zeros(4)  # corrupted by hand: the engine refuses the step
    with pytest.raises(ValueError):
        opt.step()
    assert arr(opt.state[0]["step"]) == 1 and arr(p).tolist() == pytest.approx([1 - 1e-3 - 1e-5] * 3, rel=1e-6)
