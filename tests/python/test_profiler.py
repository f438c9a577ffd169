"""anatomy.profiler on the CPU (docs/profiler.md): the profile context records operators with
their shapes and nesting, record_function ranges, the table in torch's spellings, the events,
and the Chrome trace; a factory's key and memory."""

import json

import pytest

import anatomy
from anatomy import profiler

A = anatomy.ops.aten


def test_profile_records_operators_and_ranges():
    a, b = A.ones([2, 3]), A.ones([3])
    with profiler.profile() as prof:
        with profiler.record_function("step"):
            c = a + b
        c.sum()
    events = prof.events()
    names = [e["name"] for e in events]
    assert "step" in names and "aten::add.Tensor" in names and "aten::sum.dim_IntList" in names
    step = events[names.index("step")]
    add = events[names.index("aten::add.Tensor")]
    assert step["is_range"] and not add["is_range"]
    assert add["parent"] == names.index("step") and add["depth"] == 1
    assert add["input_shapes"] == ["[2, 3] float32", "[3] float32"]
    assert add["key"] == "CPU" and add["cpu_end_us"] >= add["cpu_start_us"]


def test_table_and_key_averages():
    x = A.ones([4])
    with profiler.profile() as prof:
        for _ in range(3):
            x * 2.0
    table = prof.key_averages().table(sort_by="count", row_limit=5)
    assert "aten::mul.Tensor" in table and "# Calls" in table
    assert prof.table(sort_by="cpu_time_total") == prof.key_averages().table()
    assert "Input shapes" in prof.key_averages(group_by_input_shape=True).table()
    with pytest.raises(ValueError, match="sort_by must be"):
        prof.table(sort_by="flops")


def test_chrome_trace(tmp_path):
    x = A.ones([4])
    with profiler.profile() as prof:
        x + 1.0
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert spans and all(e["pid"] == 0 and e["dur"] >= 0 for e in spans)
    with pytest.raises(ValueError, match="cannot write"):
        prof.export_chrome_trace(str(tmp_path / "missing" / "trace.json"))


def test_nothing_before_start():
    prof = profiler.profile()
    with pytest.raises(RuntimeError, match="nothing was recorded"):
        prof.table()
    prof.start()
    A.ones([2]) + 1.0
    prof.stop()
    assert any(e["name"] == "aten::add.Tensor" for e in prof.events())


def test_factory_key_and_memory():
    """A factory has no tensor argument: its key and its memory are its device's (the CPU's here)."""
    with profiler.profile(profile_memory=True) as prof:
        A.zeros([1024])
    zeros = [e for e in prof.events() if e["name"] == "aten::zeros"]
    assert len(zeros) == 1
    assert zeros[0]["key"] == "CPU" and zeros[0]["memory_delta"] >= 4096
