"""DLPack with PyTorch, CuPy and JAX on the GPU machine (each skipped where not installed): both
ways, on CUDA and on the CPU, with the zero-copy check (a write through one side read on the
other; JAX arrays are immutable, so for JAX the buffer pointer must be the same), the stream
handshake with a consumer on another stream, and lifetimes."""

import gc
import weakref

import pytest

import anatomy

torch = pytest.importorskip("torch")


def cuda_tensor(n=1024):
    return anatomy.from_dlpack(torch.arange(n, dtype=torch.float32, device="cuda"))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int8",
                                   "uint8", "bool"])
def test_torch_both_ways_share_memory(device, dtype):
    tdtype = getattr(torch, dtype)
    x = (torch.rand(4, 6, device=device) * 100).to(tdtype)
    t = anatomy.from_dlpack(x)
    assert t.dtype == getattr(anatomy, dtype)
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()
    assert torch.equal(y, x)
    x[1, 2] = 1  # written through torch, read back through anatomy's export
    assert torch.from_dlpack(t)[1, 2].item() == 1


def test_torch_views_and_device_index():
    x = torch.randn(8, 9, 10, device="cuda")[:, 1::2].transpose(0, 2)
    t = anatomy.from_dlpack(x)
    assert t.stride() == x.stride()
    y = torch.from_dlpack(t)
    assert torch.equal(y, x) and y.device == x.device
    if torch.cuda.device_count() > 1:
        z = torch.ones(3, device="cuda:1")
        assert anatomy.from_dlpack(z).device == anatomy.device("cuda:1")


def test_stream_handshake_orders_the_consumer_after_the_producer():
    # anatomy's work is queued on a side stream; torch consumes on its own stream. __dlpack__
    # must make torch's stream wait for the pending work with an event, not a device sync.
    x = torch.zeros(1 << 24, device="cuda")
    t = anatomy.from_dlpack(x)
    side = anatomy.cuda.Stream()
    with anatomy.cuda.stream(side):
        for _ in range(20):
            t.add_(1)  # long enough that an unordered read would see the old values
        consumer = torch.cuda.Stream()
        with torch.cuda.stream(consumer):
            y = torch.from_dlpack(t)  # torch passes its current stream: `consumer`
            total = y.sum()
    consumer.synchronize()
    assert total.item() == 20 * (1 << 24)


def test_from_dlpack_on_a_side_stream_orders_after_the_producer():
    # torch's adds are pending on its stream; anatomy imports and reads on a non-blocking side
    # stream of its own, which the import (through torch's C entry points) makes wait for torch's
    # current stream with an event.
    x = torch.zeros(1 << 24, device="cuda")
    for _ in range(20):
        x.add_(1)
    side = anatomy.cuda.Stream()
    with anatomy.cuda.stream(side):
        total = anatomy.from_dlpack(x).sum()
    side.synchronize()
    assert total.item() == 20 * (1 << 24)


@pytest.fixture
def dlpack_calls(monkeypatch):
    """The stream argument of each torch.Tensor.__dlpack__ call: none when anatomy imports through
    torch's C entry points (Note [Importing a torch.Tensor])."""
    calls = []
    original = torch.Tensor.__dlpack__

    def counting(self, *args, **kwargs):
        calls.append(kwargs.get("stream"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "__dlpack__", counting)
    return calls


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_torch_tensor_is_imported_without_its_python_dlpack(device, dlpack_calls):
    base = torch.arange(40, dtype=torch.float32, device=device).reshape(5, 8)
    x = base[1:, 1::3]  # an offset, strided view
    t = anatomy.from_dlpack(x)
    assert dlpack_calls == []
    assert t.data_ptr() == x.data_ptr() and t.shape == tuple(x.shape) and t.stride() == x.stride()
    x[0, 0] = -1  # written through torch, read through anatomy
    assert t[0, 0].item() == -1
    del base, x
    gc.collect()
    assert t[0, 1].item() == 12  # the import keeps torch's memory


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_what_torch_exports_otherwise_takes_the_protocol(device, dlpack_calls):
    # A tensor that requires grad: torch's own error, from its __dlpack__.
    with pytest.raises(BufferError, match="require"):
        anatomy.from_dlpack(torch.ones(3, device=device, requires_grad=True))
    assert len(dlpack_calls) == 1
    # A subclass may export its own way.
    p = torch.nn.Parameter(torch.ones(3, device=device), requires_grad=False)
    assert anatomy.from_dlpack(p).data_ptr() == p.data_ptr()
    assert len(dlpack_calls) == 2

    # So may a torch function mode.
    class Passing(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    x = torch.ones(3, device=device)
    with Passing():
        assert anatomy.from_dlpack(x).data_ptr() == x.data_ptr()
    assert len(dlpack_calls) > 2


def test_from_dlpack_waits_for_torch_on_a_side_stream():
    # torch's adds are pending on a side stream of its own, current when anatomy imports; anatomy
    # then reads on its default stream, which the import made wait for torch's stream.
    x = torch.zeros(1 << 24, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(20):
            x.add_(1)
        t = anatomy.from_dlpack(x)
    total = t.sum()
    assert total.item() == 20 * (1 << 24)


def test_lifetimes_both_ways():
    x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    before = torch.cuda.memory_allocated()
    t = anatomy.from_dlpack(x)
    del x
    gc.collect()
    assert torch.cuda.memory_allocated() == before  # anatomy holds torch's memory
    del t
    gc.collect()
    assert torch.cuda.memory_allocated() < before  # and lets it go with its last view
    a = anatomy.from_dlpack(torch.ones(1 << 20, device="cuda"))
    owned = anatomy.from_dlpack(torch.from_dlpack(a))
    allocated = anatomy.cuda.memory_allocated()
    y = torch.from_dlpack(owned)
    del owned, a
    gc.collect()
    assert y.sum().item() == 1 << 20
    assert anatomy.cuda.memory_allocated() == allocated
    del y
    gc.collect()


def test_cupy_both_ways():
    cupy = pytest.importorskip("cupy")
    a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    t = anatomy.from_dlpack(a)
    b = cupy.from_dlpack(t)
    assert b.data.ptr == a.data.ptr
    a[0, 0] = 42
    assert float(cupy.from_dlpack(t)[0, 0]) == 42
    c = cupy.asarray(t)  # through __cuda_array_interface__
    assert c.data.ptr == a.data.ptr


def test_jax_both_ways_same_buffer():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    for device in jax.devices():
        x = jax.device_put(jnp.arange(16, dtype=jnp.float32), device)
        t = anatomy.from_dlpack(x)
        pointer = x.unsafe_buffer_pointer()
        assert t.data_ptr() == pointer
        y = jax.dlpack.from_dlpack(t)
        assert y.unsafe_buffer_pointer() == pointer
        assert jnp.array_equal(y, x)


def test_torch_cpu_and_numpy_through_anatomy():
    x = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    t = anatomy.from_dlpack(x)
    n = t.numpy()
    n[0, 0] = 7
    assert x[0, 0].item() == 7
