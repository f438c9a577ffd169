"""anatomy.profiler: per-operator CPU and CUDA time, in torch.profiler's spellings (docs/profiler.md).

    with anatomy.profiler.profile(profile_memory=True) as prof:
        with anatomy.profiler.record_function("step"):
            loss = model(x)
            loss.backward()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

The profile records the thread that enters it, through the engine's Profiler dispatch key; device
times come from CUDA events read when the block ends, so profiling adds no synchronization.
"""

import json

from . import _C

__all__ = ["profile", "record_function"]


class _KeyAverages:
    """What prof.key_averages() returns: its table() is the profile's table, as in torch."""

    def __init__(self, prof, group_by_input_shape):
        self._prof = prof
        self._group = group_by_input_shape

    def table(self, sort_by="cpu_time_total", row_limit=-1):
        return self._prof.table(sort_by=sort_by, group_by_shape=self._group, row_limit=row_limit)

    def __str__(self):
        return self.table()


class profile:
    """Records every operator called on this thread inside the with-block (or between start() and
    stop()): name, input shapes, the backend key, nesting, host time, device time on CUDA."""

    def __init__(self, record_shapes=True, profile_memory=False, cuda=True):
        self._options = dict(record_shapes=record_shapes, profile_memory=profile_memory, cuda=cuda)
        self._profile = None

    def start(self):
        if self._profile is None:
            self._profile = _C._Profile(**self._options)
        else:
            self._profile.start()
        return self

    def stop(self):
        if self._profile is not None:
            self._profile.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _stopped(self):
        if self._profile is None:
            raise RuntimeError("anatomy.profiler.profile: nothing was recorded (start() it first)")
        return self._profile

    def table(self, sort_by="cpu_time_total", group_by_shape=False, row_limit=-1):
        """The table of torch's key_averages().table(): one row per operator (and input shapes)."""
        return self._stopped().table(sort_by=sort_by, group_by_shape=group_by_shape, row_limit=row_limit)

    def key_averages(self, group_by_input_shape=False):
        return _KeyAverages(self, group_by_input_shape)

    def events(self):
        """Every event as a dict: name, input_shapes, key, thread, depth, parent, cpu_start_us,
        cpu_end_us, device, stream, device_start_us, device_end_us, autograd_node, sequence_nr,
        memory_delta, is_range."""
        return json.loads(self._stopped().to_json())["events"]

    def export_chrome_trace(self, path):
        """Writes the Chrome trace event format (chrome://tracing, ui.perfetto.dev) to `path`."""
        self._stopped().export_chrome_trace(path)


class record_function:
    """A named range of this thread: an event of the active profile (operators inside nest under
    it) and an NVTX range, as torch.profiler.record_function."""

    def __init__(self, name):
        self._range = _C._Range(name)

    def __enter__(self):
        self._range.__enter__()
        return self

    def __exit__(self, *exc):
        self._range.__exit__()
        return False
