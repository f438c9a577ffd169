"""anatomy.cuda: devices, streams, events and the device allocator, in torch.cuda's spellings.

Without a CUDA device (or in a build without CUDA) is_available() is False and device_count() 0;
every function that needs a device raises the engine's error (NotImplementedError in a build
without CUDA, RuntimeError naming CUDA's reason in a CUDA build on a machine without a GPU).
A device argument is None (the current device), an int, "cuda:1" or an anatomy.device.
"""

import json

from . import _C

Stream = _C.Stream
Event = _C.Event
StreamContext = _C.StreamContext
CUDAGraph = _C.CUDAGraph
GraphPool = _C.GraphPool

__all__ = [
    "CUDAGraph", "Event", "GraphPool", "Stream", "StreamContext", "alloc_conf", "current_device", "current_stream", "default_stream",
    "device_count", "empty_cache", "get_rng_state", "set_rng_state", "get_device_capability", "graph", "graph_capture_stream", "graph_pool_handle",
    "is_current_stream_capturing", "get_device_name", "is_available",
    "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_snapshot",
    "memory_stats", "memory_summary", "record_memory_history", "reset_peak_memory_stats", "set_device",
    "set_stream", "stream", "synchronize", "unavailable_reason",
]


def get_rng_state(device="cuda"):
    """The CUDA generator's state as torch.cuda.get_rng_state gives it: a uint8 CPU tensor of 16
    bytes, the seed then the offset (little-endian uint64 each). The engine has one CUDA
    generator for all devices, so `device` does not choose among them."""
    return _C._cuda_get_rng_state()


def set_rng_state(new_state, device="cuda"):
    """Puts back a state that get_rng_state gave (TypeError for anything else)."""
    _C._cuda_set_rng_state(new_state)


def is_available():
    """Whether a CUDA device can be used."""
    return _C._cuda_is_available()


def device_count():
    """The number of visible CUDA devices (0 without CUDA, never an error)."""
    return _C._cuda_device_count()


def unavailable_reason():
    """Why device_count() is 0; empty when devices exist."""
    return _C._cuda_unavailable_reason()


def current_device():
    return _C._cuda_current_device()


def set_device(device):
    _C._cuda_set_device(device)


def synchronize(device=None):
    """Waits until all work queued on the device is done."""
    _C._cuda_synchronize(device)


def get_device_name(device=None):
    return _C._cuda_get_device_name(device)


def get_device_capability(device=None):
    return _C._cuda_get_device_capability(device)


def current_stream(device=None):
    """The calling thread's current stream of the device: the one its ops are queued on."""
    return _C._cuda_current_stream(device)


def default_stream(device=None):
    return _C._cuda_default_stream(device)


def set_stream(stream):
    """Makes stream the current stream of its device (prefer `with anatomy.cuda.stream(s):`)."""
    _C._cuda_set_stream(stream)


class _NoStream:
    """`with anatomy.cuda.stream(None):` changes nothing, as in torch.cuda."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream):
    """A context manager that makes `stream` (and its device) current inside the with-block."""
    return _NoStream() if stream is None else StreamContext(stream)


def memory_stats(device=None):
    """The allocator's counters, keyed as torch.cuda.memory_stats ("allocated_bytes.all.current")."""
    return _C._cuda_memory_stats(device)


def memory_allocated(device=None):
    return _C._cuda_memory_allocated(device)


def max_memory_allocated(device=None):
    return _C._cuda_max_memory_allocated(device)


def memory_reserved(device=None):
    return _C._cuda_memory_reserved(device)


def max_memory_reserved(device=None):
    return _C._cuda_max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    _C._cuda_reset_peak_memory_stats(device)


def memory_summary(device=None):
    """The allocator's counters as a table for people."""
    return _C._cuda_memory_summary(device)


def empty_cache():
    """Gives cached segments with no block in use back to the driver."""
    _C._cuda_empty_cache()


def record_memory_history(enabled=True, max_entries=100000, device=None):
    """Starts (or stops) recording each allocation and free in the snapshot's device_traces."""
    _C._cuda_record_memory_history(enabled, max_entries, device)


def memory_snapshot(device=None):
    """The allocator's segments, blocks and recorded history, as torch.cuda.memory._snapshot():
    {"segments": [{"address", "total_size", ..., "blocks": [...]}], "device_traces": [...], ...}."""
    return json.loads(_C._cuda_memory_snapshot_json(device))


def alloc_conf():
    """The allocator settings that ANATOMY_CUDA_ALLOC_CONF (else PYTORCH_CUDA_ALLOC_CONF) gives,
    parsed, with "text" holding those that differ from the defaults in the variable's syntax.
    A device's allocator reads them when it is made (at its first allocation). ValueError when
    the variable is malformed."""
    return _C._cuda_alloc_conf()


def graph_pool_handle(device=None):
    """A private pool for CUDA graphs captured in order to share, as torch.cuda.graph_pool_handle()."""
    return _C._cuda_graph_pool_handle(device)


def graph_capture_stream(device=None):
    """The stream `graph` captures on unless told otherwise (one per device); warm up on it first."""
    return _C._cuda_graph_capture_stream(device)


def is_current_stream_capturing():
    """Whether the current stream is being captured into a CUDA graph."""
    return _C._cuda_is_current_stream_capturing()


class graph:
    """`with anatomy.cuda.graph(g):` captures the block into CUDAGraph `g`, as torch.cuda.graph.

    The block runs on `stream` (graph_capture_stream() when None), made current for it; its
    allocations come from `pool` (a new pool when None). Leaving the block normally ends the capture
    and instantiates the graph; leaving it by an exception abandons the capture. Unlike
    torch.cuda.graph, entering neither synchronizes the device nor empties the cache: warm up on the
    capture stream first (docs/cuda-graphs.md).
    """

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode
        self._stream_context = None

    def __enter__(self):
        capture_stream = self.capture_stream if self.capture_stream is not None else graph_capture_stream()
        self._stream_context = StreamContext(capture_stream)
        self._stream_context.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._stream_context.__exit__(None, None, None)
            raise
        return None

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is not None:
                self.cuda_graph.reset()  # abandons the capture
            else:
                self.cuda_graph.capture_end()
        finally:
            self._stream_context.__exit__(None, None, None)
        return False
