"""bench/python/cpu_rows.py --quick runs on the CPU and prints its rows (and JSON)."""

import json
import os
import pathlib
import re
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python" / "cpu_rows.py"
ROWS = ["exp", "sigmoid", "gelu", "gelu, tanh form", "tanh", "add", "mul", "sum", "mm 128^3"]


def test_quick_run_prints_every_row_and_json(tmp_path):
    out_file = tmp_path / "rows.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--threads", "2", "--reps", "3", "--settle", "0.01",
                             "--json", str(out_file)], capture_output=True, text=True,
                            env=dict(os.environ, ANATOMY_CPU_CAPABILITY="avx2"), timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("anatomy beside torch")
    assert "2 threads, fp32, 1 MiB operands, median of 3, 0.01 s settled before each engine" in lines[0]
    # Each engine's CPU capability: the environment's cap (set here) for anatomy, torch's own.
    assert re.match(r"^CPU capability: anatomy avx2, torch \S+$", lines[1]), lines[1]
    assert lines[2].split()[:3] == ["row", "anatomy", "ms"]
    assert len(lines) == 3 + len(ROWS)
    number = r"\d+\.\d{3}"
    for line, row in zip(lines[3:], ROWS):
        assert line.startswith(row)
        assert re.match(rf"^{re.escape(row)}\s+{number}\s+({number}|-)\s+(\d+\.\d\d|-)$", line), line
    data = json.loads(out_file.read_text())
    assert data["threads"] == 2 and data["elements"] == 1 << 18 and data["settle_s"] == 0.01
    assert [r["row"] for r in data["rows"]] == ROWS
    assert all(r["anatomy_ms"] > 0 for r in data["rows"])


def test_a_count_below_one_is_a_usage_error():
    for flag in ("--threads", "--reps"):
        result = subprocess.run([sys.executable, str(SCRIPT), "--quick", flag, "0"], capture_output=True, text=True,
                                env=dict(os.environ), timeout=300)
        assert result.returncode == 2
        assert f"argument {flag}: must be at least 1, got 0" in result.stderr
        assert "Traceback" not in result.stderr
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--settle", "-1"], capture_output=True, text=True,
                            env=dict(os.environ), timeout=300)
    assert result.returncode == 2
    assert "argument --settle: must be from 0 to 60 seconds, got -1" in result.stderr
