"""anatomy.cuda without a device: the device-less answers, and the engine's error from every call
that needs a device: NotImplementedError in a build without CUDA, RuntimeError with CUDA's reason
in a CUDA build on a machine without a GPU (CI's CUDA build)."""

import pytest

import anatomy
from anatomy import cuda

pytestmark = pytest.mark.skipif(cuda.is_available(), reason="checks the behaviour without a CUDA device")


def test_no_device():
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert "CUDA" in cuda.unavailable_reason()


@pytest.mark.parametrize("call", [
    lambda: cuda.current_device(),
    lambda: cuda.set_device(0),
    lambda: cuda.synchronize(),
    lambda: cuda.synchronize("cuda:0"),
    lambda: cuda.current_stream(),
    lambda: cuda.default_stream(0),
    lambda: cuda.Stream(),
    lambda: cuda.Stream(priority=-1),
    lambda: cuda.Event().record(),
    lambda: cuda.memory_allocated(),
    lambda: cuda.memory_reserved(),
    lambda: cuda.max_memory_allocated(),
    lambda: cuda.reset_peak_memory_stats(),
    lambda: cuda.memory_summary(),
    lambda: cuda.memory_stats(),
    lambda: cuda.memory_snapshot(),
    lambda: cuda.record_memory_history(True),
    lambda: cuda.get_device_name(),
    lambda: cuda.graph_pool_handle(),
    lambda: cuda.graph_capture_stream(),
    lambda: cuda.CUDAGraph().capture_begin(),
    lambda: cuda.CUDAGraph().replay(),
])
def test_calls_that_need_a_device_raise_the_engines_error(call):
    with pytest.raises((NotImplementedError, RuntimeError), match="built without CUDA|CUDA is not available"):
        call()


def test_what_needs_no_device():
    cuda.empty_cache()  # nothing cached anywhere: nothing to do
    e = cuda.Event(enable_timing=True)
    assert e.query() is True and e.enable_timing is True and e.cuda_event == 0
    e.synchronize()  # never recorded: nothing to wait for
    with cuda.stream(None):  # no stream: changes nothing
        pass


def test_bad_device_arguments():
    with pytest.raises(ValueError, match="expected a CUDA device, got 'cpu'"):
        cuda.memory_allocated("cpu")
    with pytest.raises(TypeError):
        cuda.synchronize(1.5)
    with pytest.raises(ValueError):
        cuda.synchronize(-3)


def test_alloc_conf(monkeypatch):
    monkeypatch.delenv("ANATOMY_CUDA_ALLOC_CONF", raising=False)
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    conf = cuda.alloc_conf()
    assert conf["backend"] == "native" and conf["max_split_size"] is None and conf["text"] == ""
    monkeypatch.setenv("ANATOMY_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:64")
    conf = cuda.alloc_conf()
    assert conf["expandable_segments"] is True and conf["max_split_size"] == 64 << 20
    assert "expandable_segments:True" in conf["text"]
    monkeypatch.setenv("ANATOMY_CUDA_ALLOC_CONF", "no_such_key:1")
    with pytest.raises(ValueError, match="no_such_key"):
        cuda.alloc_conf()


def test_cuda_tensors_need_a_device():
    with pytest.raises((NotImplementedError, RuntimeError)):
        anatomy.ops.aten.ones([1], device="cuda")


def test_graph_without_a_device():
    g = cuda.CUDAGraph()
    assert not g.is_capturing and not g.has_graph
    g.reset()
    with pytest.raises((NotImplementedError, RuntimeError), match="built without CUDA|CUDA is not available"):
        with cuda.graph(g):
            pass
    assert not g.is_capturing
    with pytest.raises(ValueError, match="capture_error_mode must be"):
        g.capture_begin(capture_error_mode="loose")
