"""anatomy.cuda on a CUDA device: streams and events in order, the allocator's counters after
allocations, empty_cache and the snapshot's structure (skipped without a device, conftest.py)."""

import anatomy
from anatomy import cuda

A = anatomy.ops.aten


def test_device_queries():
    assert cuda.is_available() and cuda.device_count() >= 1
    assert cuda.current_device() == 0
    cuda.set_device(0)
    assert isinstance(cuda.get_device_name(), str) and cuda.get_device_name()
    assert cuda.get_device_capability(0)[0] >= 3
    cuda.synchronize()
    cuda.synchronize("cuda:0")


def test_streams_and_current_stream():
    default = cuda.default_stream()
    assert cuda.current_stream() == default
    s = cuda.Stream()
    hi = cuda.Stream(priority=-1)
    assert s != default and s.cuda_stream != 0 and s.device == anatomy.device("cuda:0")
    assert hi.priority < s.priority or hi.priority == s.priority == 0
    with cuda.stream(s) as entered:
        assert entered == s and cuda.current_stream() == s
    assert cuda.current_stream() == default
    cuda.set_stream(s)
    assert cuda.current_stream() == s
    cuda.set_stream(default)


def test_events_order_work_across_streams():
    side = cuda.Stream()
    x = A.ones([1 << 20], device="cuda")
    start, stop = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with cuda.stream(side):
        start.record()
        y = A.mul(x, 3)
        stop.record(side)
    done = side.record_event()
    assert isinstance(done, cuda.Event)
    cuda.current_stream().wait_event(stop)
    z = A.add(y, 1)  # on the default stream, after side's work
    stop.synchronize()
    assert stop.query()
    assert start.elapsed_time(stop) >= 0.0
    assert A._local_scalar_dense(A.sum(z)) == 4.0 * (1 << 20)
    cuda.current_stream().wait_stream(side)
    done.synchronize()
    assert done.query()
    side.synchronize()
    assert side.query()


def test_memory_stats_follow_allocations():
    cuda.synchronize()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    # What stays reserved after empty_cache: blocks still in use, such as the cuBLAS workspace
    # an earlier test's matmul left on the stream (32 MiB on Hopper).
    reserved_in_use = cuda.memory_reserved()
    t = A.empty([1 << 20], device="cuda")  # 4 MiB of float32
    assert cuda.memory_allocated() - before >= 4 << 20
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == cuda.memory_allocated()
    assert "Allocated" in cuda.memory_summary() or "allocated" in cuda.memory_summary()
    del t
    assert cuda.memory_allocated() == before
    assert cuda.memory_reserved() > 0  # cached, not given back
    cuda.empty_cache()
    assert cuda.memory_reserved() == reserved_in_use  # the 4 MiB block went back to the driver


def test_snapshot_structure():
    cuda.record_memory_history(True)
    t = A.empty([1 << 18], device="cuda")
    snap = cuda.memory_snapshot()
    assert set(snap) >= {"segments", "device_traces"}
    seg = snap["segments"][0]
    assert {"address", "total_size", "allocated_size", "blocks"} <= set(seg)
    assert any(b["state"] == "active_allocated" for s in snap["segments"] for b in s["blocks"])
    assert any(e["action"] == "alloc" for e in snap["device_traces"][0])
    cuda.record_memory_history(False)
    del t


def test_ops_on_cuda_through_the_schema():
    a = A.ones([4], device="cuda:0")
    out = A.empty([4], device="cuda")
    assert A.add(a, a, alpha=2, out=out) is out
    assert out.device == anatomy.device("cuda:0")
    assert A._local_scalar_dense(A.sum(out)) == 12.0
