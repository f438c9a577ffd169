"""bench/python/overhead.py --quick runs on the CPU and prints its table (and JSON)."""

import json
import os
import pathlib
import re
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python" / "overhead.py"


def test_quick_run_prints_a_table_and_json(tmp_path):
    out_file = tmp_path / "overhead.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out_file)], capture_output=True,
                            text=True, env=dict(os.environ), timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("host time per call, median of 3 runs of 2000 calls")
    assert lines[1].split()[:5] == ["device", "case", "anatomy", "torch", "ratio"]
    rows = [line for line in lines[3:] if line.startswith(("cpu", "cuda"))]
    notes = [line for line in lines[3:] if line.startswith("note:")]
    assert len(rows) + len(notes) == len(lines) - 3
    # a + b is measured where anatomy.Tensor binds __add__, and said to be missing otherwise.
    assert any(row.split()[1:4] == ["a", "+", "b"] for row in rows) or "no __add__" in "".join(notes)
    assert any("anatomy.ops.aten.add(a, b)" in row for row in rows)
    assert any(row.split()[1:5] == ["a", "+", "b,", "profiled"] for row in rows)
    number = r"\d+\.\d{3}"
    for row in rows:
        assert re.match(rf"^(cpu|cuda)\s+\S.*\s+{number}\s+({number}|-)\s+(\d+\.\d\d|-)$", row), row
    data = json.loads(out_file.read_text())
    assert data["number"] == 2000 and data["repeats"] == 3
    assert len(data["rows"]) == len(rows)
    for r in data["rows"]:
        assert r["device"] in ("cpu", "cuda") and 0 < r["anatomy_us"] < 1e4
