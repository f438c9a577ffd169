"""bench/python/memory_format.py (gpu-anatomy c11's torch twin) at tiny sizes on the CPU: its
table, its JSON rows with the chapter's keys, the layouts checked against each other, and its
usage errors. It measures PyTorch, so the test skips where torch does not import."""

import json
import pathlib
import re
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python" / "memory_format.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(autouse=True)
def needs_torch():
    if subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode != 0:
        pytest.skip("[anatomy-skip] torch does not import here")


def test_cpu_rows_table_and_json(tmp_path):
    out_file = tmp_path / "torch.json"
    result = run("--device", "cpu", "--batch", "1", "--size", "8", "--iters", "2", "--warmup", "1", "--json",
                 str(out_file))
    assert result.returncode == 0, result.stderr
    assert re.search(r"^torch \S+ on cpu: forward \+ backward, batch 1, 8x8, median of 2 \(host time, ms\)$",
                     result.stdout, re.M), result.stdout
    rows = re.findall(r"^(3x3 conv 64->64|ResNet-50 bottleneck 256-64-256) +fp32 +([0-9.]+) +([0-9.]+) +([0-9.]+)x$",
                      result.stdout, re.M)
    assert [r[0] for r in rows] == ["3x3 conv 64->64", "ResNet-50 bottleneck 256-64-256"], result.stdout
    data = json.loads(out_file.read_text())
    assert data["library"] == "torch" and data["device"] == "cpu"
    assert data["options"] == {"batch": 1, "size": 8, "precisions": "fp32", "iters": 2, "warmup": 1,
                               "cudnn_benchmark": False}
    assert [(r["workload"], r["precision"]) for r in data["rows"]] == [("conv3x3", "fp32"), ("bottleneck", "fp32")]
    for r in data["rows"]:
        assert r["nchw_ms"] > 0 and r["nhwc_ms"] > 0
        assert r["speedup"] == pytest.approx(r["nchw_ms"] / r["nhwc_ms"])
        assert 0 <= r["mismatched_fraction"] <= 0.01 and 0 <= r["max_layout_error"] < 1
        assert r["nhwc_output_channels_last"]


@pytest.mark.parametrize("args, needle", [
    (["--device", "cpu", "--precisions", "bf16"], "'bf16' needs a CUDA device"),
    (["--device", "cpu", "--precisions", "fp32,fp8"], "'fp8' is not one of"),
    (["--device", "cpu", "--batch", "0"], "--batch: 0 is not at least 1"),
    (["--device", "cpu", "--iters", "0"], "--iters: 0 is not at least 1"),
])
def test_usage_errors(args, needle):
    result = run(*args)
    assert result.returncode == 2 and needle in result.stderr, result.stderr
